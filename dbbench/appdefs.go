package dbbench

import (
	"context"
	"fmt"
	"time"
)

// appSchema is one row's two tables in the app workload, named after its label.
type appSchema struct {
	label     string
	r         row
	createdAt bool // an index on parent(created_at)
	children  int
}

func (s appSchema) parent() string { return s.label + "_parent" }

func (s appSchema) child() string { return s.label + "_child" }

func (s appSchema) fkIndex() string { return s.label + "_child_parent_id" }

func (s appSchema) fk() string { return s.label + "_child_parent_fk" }

func (s appSchema) createdIndex() string { return s.label + "_parent_created_at" }

// appOp is one business operation: a parent and its children, with the moment the
// application made the parent's ID.
type appOp struct {
	parent   value
	created  time.Time
	customer int64
	payload  int64
	children []value
	// parentArg is the parent's key as the driver takes it, filled after the insert for rows
	// whose keys the database makes.
	parentArg any
}

// keyRow is a row of a time query's check: its key in the form the dialect read it (int64,
// [16]byte or string) and its created_at in Unix microseconds.
type keyRow struct {
	key     any
	created int64
}

// appDialect is what the app workload asks of an engine: its DDL, its writing paths (one
// transaction per operation, the bulk path, and the bare baseline loop), the size of a named
// structure, its WAL/redo counter, its query plans. The workload itself (tables, operations,
// queries, checks) lives in this file, once for every engine.
type appDialect interface {
	// reservesKeys reports whether the bulk path knows the keys the database makes, which
	// the children need.
	reservesKeys() bool
	// keyType is the SQL type of a row's key columns.
	keyType(r row) string
	// createTables creates the tables of a workload, described as data, in order;
	// dropTables drops them (if they exist) in reverse order.
	createTables(ctx context.Context, ts []tableDef) error
	dropTables(ctx context.Context, ts []tableDef) error
	// appConns returns one writer per client.
	appConns(ctx context.Context) ([]appWriter, error)
	// logMark returns a function that reports the WAL/redo bytes written since the call.
	logMark(ctx context.Context) (func(context.Context) (int64, error), error)
	// settle makes the load's figures readable: checkpoint state, statistics for the
	// planner and the size counters.
	settle(ctx context.Context, ts []tableDef) error
	// beforeLoad prepares a measured load (a checkpoint on PostgreSQL).
	beforeLoad(ctx context.Context) error
	// structures returns the size of every table and index of ts, by name, in the order of
	// ts: each table, its primary key where it is a structure of its own, its indexes.
	structures(ctx context.Context, ts []tableDef) ([]Structure, error)
	// keyArg is a key as the driver takes it in a query.
	keyArg(r row, v *value) any
	timeArg(t time.Time) any
	// sql rewrites a query written with $1, $2 … placeholders for the dialect.
	sql(q string) string
	// count runs q and returns the number of rows it returned.
	count(ctx context.Context, q string, args ...any) (int64, error)
	// keyRows runs q, whose columns are a key and created_at in Unix microseconds.
	keyRows(ctx context.Context, r row, q string, args ...any) ([]keyRow, error)
	// epochMicros is the SQL expression of a timestamp column in Unix microseconds.
	epochMicros(col string) string
	// plan returns the index EXPLAIN says q uses on table, or "sequential scan".
	plan(ctx context.Context, q string, args ...any) (string, error)
	// qualify names a table inside the benchmark schema or database.
	qualify(name string) string
}

// appWriter writes business operations over one connection.
type appWriter interface {
	// tx writes op in one transaction.
	tx(ctx context.Context, s appSchema, op *appOp) error
	// bulk writes ops by the engine's bulk path: parents, then children.
	bulk(ctx context.Context, s appSchema, ops []appOp) error
	// bare writes operations first..first+count-1 of the baseline: ascending bigint keys
	// from the operation number, straight through the driver, in mode.
	bare(ctx context.Context, s appSchema, mode string, first, count int64) error
}

// children is "1 child" or "n children".
func children(n int) string {
	if n == 1 {
		return "1 child"
	}
	return fmt.Sprintf("%d children", n)
}
