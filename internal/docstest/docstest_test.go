package docstest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/idkit/idkit/internal/docstest"
)

// TestRead: a file named from the root is read from a package two folders down, and the
// root is the folder with this module's go.mod.
func TestRead(t *testing.T) {
	mod := docstest.Read(t, "go.mod")
	if !strings.HasPrefix(mod, "module github.com/idkit/idkit\n") {
		t.Errorf("go.mod read from the root begins %q", mod[:min(len(mod), 40)])
	}
	root, err := docstest.Root()
	if err != nil {
		t.Fatal(err)
	}
	here, _ := os.Getwd()
	if !strings.HasPrefix(here, root) || here == root {
		t.Errorf("root %s is not above the package folder %s", root, here)
	}
}
