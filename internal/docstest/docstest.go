// Package docstest reads the repository's committed files for the tests that hold a document's
// figures to the committed run that made them.
package docstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ErrNoRoot is returned when no folder above the working directory holds go.mod.
var ErrNoRoot = errors.New("docstest: no go.mod above the working directory")

// Root returns the repository's root: the nearest folder at or above the working directory
// that holds go.mod (a package's tests run in the package's folder).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("docstest: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", ErrNoRoot
		}
		dir = up
	}
}

// Read returns the text of the file at path, given from the repository's root with slashes
// ("docs/nodes.md"); a file that cannot be read fails the test.
func Read(t testing.TB, path string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
