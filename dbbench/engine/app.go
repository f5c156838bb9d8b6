package engine

import (
	"context"
	"fmt"
	"time"
)

// AppSchema is one row's two tables in the app workload, named after its label.
type AppSchema struct {
	Label     string
	Row       Row
	CreatedAt bool // an index on parent(created_at)
	Children  int
}

// Parent, Child and FK name the schema's tables and its foreign key after its label;
// fkIndex and createdIndex its indexes.
func (s AppSchema) Parent() string       { return s.Label + "_parent" }
func (s AppSchema) Child() string        { return s.Label + "_child" }
func (s AppSchema) FK() string           { return s.Label + "_child_parent_fk" }
func (s AppSchema) fkIndex() string      { return s.Label + "_child_parent_id" }
func (s AppSchema) createdIndex() string { return s.Label + "_parent_created_at" }

// KeyRow is a row of a time query's check: its key in the form the dialect read it (int64,
// [16]byte or string) and its created_at in Unix microseconds.
type KeyRow struct {
	Key     any
	Created int64
}

// AppDialect is what the app workload, and any workload that describes its tables as data,
// asks of an engine: its DDL, its row writers (RowWriter: bulk, batch and single-row paths,
// transactions, keys the database makes), the size of a named structure, its query plans; its
// counters are the Measurer's (Marks). The workloads themselves (tables, operations, queries,
// checks) live in package dbbench, once for every engine.
type AppDialect interface {
	// ReservesKeys reports whether the app workload's bulk path can know the keys the
	// database makes, which the children need: its writers are KeyReservers (PostgreSQL), or
	// InsertKey returns them inside the bulk path's transaction (SQLite); LOAD DATA cannot.
	ReservesKeys() bool
	// KeyType is the SQL type of a row's key columns.
	KeyType(r Row) string
	// CreateTables creates the tables of a workload, described as data, in order;
	// dropTables drops them (if they exist) in reverse order.
	CreateTables(ctx context.Context, ts []TableDef) error
	DropTables(ctx context.Context, ts []TableDef) error
	// RowWriters returns one row writer per client, each over a connection of its own. The
	// writers of an earlier call are closed by this one (their statements released), and
	// their connections reused.
	RowWriters(ctx context.Context) ([]RowWriter, error)
	// Settle makes the load's figures readable: checkpoint state, statistics for the
	// planner and the size counters.
	Settle(ctx context.Context, ts []TableDef) error
	// BeforeLoad prepares a measured load (a checkpoint on PostgreSQL).
	BeforeLoad(ctx context.Context) error
	// Structures returns the size of every table and index of ts, by name, in the order of
	// ts: each table, its primary key where it is a structure of its own, its indexes; the
	// roles of a table and its primary key are TableDef.Role of RoleTable, RolePrimary or
	// RoleClustered, those of its indexes IndexDef.Role.
	Structures(ctx context.Context, ts []TableDef) ([]Structure, error)
	// KeyArg is a key as the driver takes it in a query.
	KeyArg(r Row, v *Value) any
	TimeArg(t time.Time) any
	// SQL rewrites a query written with $1, $2 … placeholders for the dialect.
	SQL(q string) string
	// Count runs q and returns the number of rows it returned.
	Count(ctx context.Context, q string, args ...any) (int64, error)
	// KeyRows runs q, whose columns are a key and created_at in Unix microseconds.
	KeyRows(ctx context.Context, r Row, q string, args ...any) ([]KeyRow, error)
	// EpochMicros is the SQL expression of a timestamp column in Unix microseconds.
	EpochMicros(col string) string
	// Plan returns the index EXPLAIN says q uses on table, or "sequential scan".
	Plan(ctx context.Context, q string, args ...any) (string, error)
	// Qualify names a table inside the benchmark schema or database.
	Qualify(name string) string
}

// Children is "1 child" or "n children".
func Children(n int) string {
	if n == 1 {
		return "1 child"
	}
	return fmt.Sprintf("%d children", n)
}
