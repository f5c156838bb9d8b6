//go:build !rocksdb

package rocksdb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// TestOpenWithoutTag: a binary built without the rocksdb tag refuses to open the engine with
// an error that says how to build one that can.
func TestOpenWithoutTag(t *testing.T) {
	e, done, err := Open(context.Background(), engine.Options{})
	if !errors.Is(err, ErrNotBuilt) || e != nil || done != nil {
		t.Fatalf("Open = %v, %v: want ErrNotBuilt", e, err)
	}
	for _, want := range []string{"-tags rocksdb", "librocksdb-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if Built {
		t.Error("Built without the tag")
	}
}
