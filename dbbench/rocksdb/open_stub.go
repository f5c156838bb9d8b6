//go:build !rocksdb

package rocksdb

import (
	"context"

	"github.com/idkit/idkit/dbbench/engine"
)

// Open fails with ErrNotBuilt: this binary was built without the rocksdb build tag, so
// without the C library.
func Open(context.Context, engine.Options) (engine.Engine, func() error, error) {
	return nil, nil, ErrNotBuilt
}

// Built reports whether this binary has the RocksDB engine (the rocksdb build tag).
const Built = false
