package pebble

import (
	"context"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// The app workload's dialect: the pebble engine speaks no SQL beyond the table workload's
// statements, so the app workload's writers and queries are ErrNoApp. The DDL, settling and
// sizing calls are the table workload's.

func (e *pebbleEngine) ReservesKeys() bool { return false }

// KeyType is the CockroachDB column type of a row's key.
func (e *pebbleEngine) KeyType(r engine.Row) string { return e.ColumnTypeOf(r) }

func (e *pebbleEngine) RowWriters(context.Context) ([]engine.RowWriter, error) {
	return nil, ErrNoApp
}

// KeyArg is the key as SampleKeys gives it: the row key's encoding.
func (e *pebbleEngine) KeyArg(r engine.Row, v *engine.Value) any {
	return appendKey(nil, r.Col, v)
}

func (e *pebbleEngine) TimeArg(t time.Time) any { return t.UnixMicro() }

// SQL returns q unchanged: the table workload's statements are recognized as written.
func (e *pebbleEngine) SQL(q string) string { return q }

func (e *pebbleEngine) Count(context.Context, string, ...any) (int64, error) { return 0, ErrNoApp }

func (e *pebbleEngine) KeyRows(context.Context, engine.Row, string, ...any) ([]engine.KeyRow, error) {
	return nil, ErrNoApp
}

func (e *pebbleEngine) EpochMicros(col string) string { return col }

func (e *pebbleEngine) Plan(context.Context, string, ...any) (string, error) { return "", ErrNoApp }

// Qualify returns the table's name: each load's database holds its tables alone.
func (e *pebbleEngine) Qualify(name string) string { return name }

var _ engine.Engine = (*pebbleEngine)(nil)
var _ engine.LSMEngine = (*pebbleEngine)(nil)
