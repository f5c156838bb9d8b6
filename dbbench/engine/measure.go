package engine

import (
	"context"
	"database/sql"
)

// A workload measures a load with the instruments every engine provides (Measurer): the
// server's counters since a mark, by name; the sizes of the structures a TableDef built, by
// name (AppDialect.Structures); the leaves of one named B-tree; keys sampled from a table; and
// statements prepared on the measuring connection, to time. What a load does and which of
// these it reads is the workload's description (dbbench's table.go and app.go), once for
// every engine. A figure an engine cannot measure is absent (a counter it does not report, a
// nil field of LeafStats), not a zero.

// Names of the counters Measurer.Marks reports, beside those of engine.go (page splits,
// merges, buffer-pool reads).
const (
	// CounterLogBytes is the bytes of write-ahead log (PostgreSQL's WAL, InnoDB's redo,
	// SQLite's WAL file) written since the mark; every engine reports it.
	CounterLogBytes = "log bytes"
	// CounterFullPageImages is PostgreSQL's pg_stat_wal.wal_fpi since the mark.
	CounterFullPageImages = "full-page images"
	// CounterCheckpoints is the number of checkpoints completed or requested since the mark.
	CounterCheckpoints = "checkpoints"
)

// Roles of a table's structures, as AppDialect.Structures names them after TableDef.Role: a
// heap table, its primary key as a B-tree of its own, or a clustered primary key that holds
// the rows.
const (
	RoleTable     = "table"
	RolePrimary   = "primary key"
	RoleClustered = "clustered index (the table)"
)

// Role is the role of t's structure what ("table", "primary key", …) as Structures reports
// it: prefixed by t.Who when the table has one ("parent table"), else what itself.
func (t TableDef) Role(what string) string {
	if t.Who == "" {
		return what
	}
	return t.Who + " " + what
}

// LeafStats describes the leaf level of one B-tree; a nil field is a figure the engine cannot
// give (InnoDB has no fragmentation figure, a server without pgstattuple none at all).
type LeafStats struct {
	// Density is the average fill of the leaf pages in percent.
	Density *float64
	// Fragmentation is the share of leaf pages, in key order, whose successor lies at a lower
	// page number, in percent (pgstatindex's leaf_fragmentation).
	Fragmentation *float64
	// Pages is the number of leaf pages.
	Pages *int64
}

// Stmt is a query prepared on the engine's measuring connection, to be run and timed many
// times.
type Stmt interface {
	// Rows runs the statement with args, reads every row it returns and returns their number.
	// Its errors are the driver's: the caller, who knows what the statement is for, wraps
	// them (FailLost with the engine's ConnLost).
	Rows(ctx context.Context, args ...any) (int64, error)
	// Close releases the statement.
	Close() error
}

// Measurer is what every workload asks of an engine to measure its loads. The methods run on
// the engine's measuring connection, not on its loading ones, and return errors ready for
// Run (FailLost with the engine's ConnLost).
type Measurer interface {
	// Marks reads the engine's counters now and returns a function that reports, by name,
	// how far each moved since (CounterLogBytes always; CounterFullPageImages,
	// CounterCheckpoints, CounterPageSplits, CounterPageMerges and CounterPoolReads where the
	// engine counts them).
	Marks(ctx context.Context) (func(context.Context) (map[string]int64, error), error)
	// LeafStats describes the leaves of the B-tree index of table t, after Settle: its
	// primary key when index is "", else the secondary index of t.Indexes by that name.
	// rows is the number of rows in t, for an engine that derives the fill from it.
	LeafStats(ctx context.Context, t TableDef, index string, rows int64) (LeafStats, error)
	// SampleKeys returns about n keys of table t, which holds rows rows, drawn at random, in
	// the form the driver takes back as a query argument (Stmt.Rows).
	SampleKeys(ctx context.Context, t TableDef, n int, rows int64) ([]any, error)
	// Prepare prepares q, written for the dialect (AppDialect.SQL), on the measuring
	// connection.
	Prepare(ctx context.Context, q string) (Stmt, error)
	// QueryInt runs q, which returns one integer, and returns it.
	QueryInt(ctx context.Context, q string, args ...any) (int64, error)
}

// SQLStmt is Stmt for the database/sql engines: a prepared statement.
type SQLStmt struct{ *sql.Stmt }

// Rows runs the statement and counts the rows it returns.
func (s SQLStmt) Rows(ctx context.Context, args ...any) (int64, error) {
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	for rows.Next() {
		n++
	}
	rows.Close()
	return n, rows.Err()
}
