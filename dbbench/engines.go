package dbbench

import (
	"context"
	"io"
	"slices"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/innodb"
	"github.com/idkit/idkit/dbbench/pebble"
	"github.com/idkit/idkit/dbbench/pg"
	"github.com/idkit/idkit/dbbench/rocksdb"
	"github.com/idkit/idkit/dbbench/sqlite"
)

// engineEntry is one engine Config.DB can name: how Run opens it, the rules it applies to a
// row's column before it is opened, and the texts a report of it uses. The engines are a
// table built by engines(), not a registry filled at init: adding one is one more entry.
type engineEntry struct {
	// name is the engine's name in a report's Settings.Engine, and in Config.DB when byName
	// is set (the others are chosen by a connection string, parsed in target.go).
	name   string
	byName bool
	// columns adapts a row to the engine's column types, or rejects it with an error that
	// names the scheme; Run asks before it opens the engine, so a bad list fails before a
	// server starts.
	columns func(r engine.Row) (engine.Row, error)
	// secondaryIndex: the engine measures Config.SecondaryIndex.
	secondaryIndex bool
	// schemes is the engine's default list of rows for a workload (Config.Schemes left
	// empty, or set to another engine's default list).
	schemes func(workload string) []string
	// open opens the engine for cfg (validated, cfg.to parsed) and returns it with the
	// function that drops everything it created.
	open func(ctx context.Context, cfg Config) (engine.Engine, func() error, error)
	// report is the engine's report texts; shared marks a server idbench did not start, whose
	// counters are server-wide.
	report func() engine.ReportText
	shared bool
	// table, markdown and summary write a table-workload report in the engine's own layout;
	// nil for the common one.
	table    func(w io.Writer, rep *Report) error
	markdown func(w io.Writer, rep *Report, cs []chart) error
	summary  func(w io.Writer, rep *Report) error
}

// engines returns the engines Run can open, by name.
func engines() []engineEntry {
	return []engineEntry{
		{name: EnginePGLocal, byName: true, columns: pg.Columns, schemes: sharedSchemes, report: pg.Report,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				return pg.OpenLocal(ctx, cfg.options(), cfg.PGSettings)
			}},
		{name: EnginePGEnv, columns: pg.Columns, schemes: sharedSchemes, report: pg.Report, shared: true,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				if len(cfg.PGSettings) > 0 {
					logf(cfg, "dbbench: --pg-setting applies to pg-local only; ignored for an existing server")
				}
				return pg.OpenServer(ctx, cfg.options(), cfg.to.pg.Config, cfg.to.pg.DSN)
			}},
		{name: EngineMariaDBLocal, byName: true, columns: innodb.Columns, schemes: innodbSchemes, secondaryIndex: true, report: innodb.Report,
			table: writeInnoDBTable, markdown: writeInnoDBMarkdown, summary: writeInnoDBSummary,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				return innodb.OpenLocal(ctx, cfg.options(), cfg.MariaDBSettings)
			}},
		{name: EngineMySQL, columns: innodb.Columns, schemes: innodbSchemes, secondaryIndex: true, report: innodb.Report, shared: true,
			table: writeInnoDBTable, markdown: writeInnoDBMarkdown, summary: writeInnoDBSummary,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				if len(cfg.MariaDBSettings) > 0 {
					logf(cfg, "dbbench: --mariadb-setting applies to mariadb-local only; ignored for an existing server")
				}
				return innodb.OpenServer(ctx, cfg.options(), cfg.to.mysql.Config)
			}},
		{name: EngineSQLite, byName: true, columns: sqlite.Columns, schemes: sharedSchemes, report: sqlite.Report,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				return sqlite.Open(ctx, cfg.options())
			}},
		{name: pebble.Name, byName: true, columns: pebble.Columns, schemes: sharedSchemes, secondaryIndex: true, report: pebble.Report,
			table: writeLSMTable, markdown: writeLSMMarkdown, summary: writeLSMSummary,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				return pebble.Open(ctx, cfg.options())
			}},
		{name: rocksdb.Name, byName: true, columns: rocksdb.Columns, schemes: sharedSchemes, secondaryIndex: true, report: rocksdb.Report,
			table: writeLSMTable, markdown: writeLSMMarkdown, summary: writeLSMSummary,
			open: func(ctx context.Context, cfg Config) (engine.Engine, func() error, error) {
				return rocksdb.Open(ctx, cfg.options())
			}},
	}
}

// sharedSchemes is the default list of rows of PostgreSQL and SQLite for a workload: the
// database's own sequence (bigserial) first.
func sharedSchemes(workload string) []string {
	if workload == WorkloadApp {
		return engine.AppSchemes(false)
	}
	return engine.DefaultSchemes()
}

// innodbSchemes is MariaDB/MySQL's default list of rows for a workload: auto-increment
// first, and for the table workload the server's own UUID type and text keys under both
// collations (engine.InnoDBSchemes).
func innodbSchemes(workload string) []string {
	if workload == WorkloadApp {
		return engine.AppSchemes(true)
	}
	return engine.InnoDBSchemes()
}

// isDefaultSchemes reports whether s is empty or some engine's default list of the table
// workload (what idbench's --schemes holds when not given): a list the user did not choose,
// which the run replaces with its engine's own for its workload.
func isDefaultSchemes(s []string) bool {
	if len(s) == 0 {
		return true
	}
	for _, e := range engines() {
		if slices.Equal(s, e.schemes(WorkloadTable)) {
			return true
		}
	}
	return false
}

// engineByName returns the engine called name, if there is one.
func engineByName(name string) (engineEntry, bool) {
	for _, e := range engines() {
		if e.name == name {
			return e, true
		}
	}
	return engineEntry{}, false
}

// engineNamed returns the engine called name; an unknown name (a report from a later
// idbench) reads as pg-local's PostgreSQL, as reports did before they named engines.
func engineNamed(name string) engineEntry {
	if e, ok := engineByName(name); ok {
		return e
	}
	return engines()[0]
}
