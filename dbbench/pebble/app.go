package pebble

import (
	"github.com/idkit/idkit/dbbench/engine"
)

// The app workload's dialect: the pebble engine speaks no SQL beyond the table workload's
// statements, so the app workload's writers and queries are ErrNoApp (engine.NoApp, embedded
// in pebbleEngine). The DDL, settling and sizing calls are the table workload's.

// KeyType is the CockroachDB column type of a row's key.
func (e *pebbleEngine) KeyType(r engine.Row) string { return e.ColumnTypeOf(r) }

// KeyArg is the key as SampleKeys gives it: the row key's encoding.
func (e *pebbleEngine) KeyArg(r engine.Row, v *engine.Value) any {
	return appendKey(nil, r.Col, v)
}

var _ engine.Engine = (*pebbleEngine)(nil)
var _ engine.LSMEngine = (*pebbleEngine)(nil)
