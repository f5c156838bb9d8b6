// Package dbbench measures what each ID scheme costs a database primary-key
// B-tree: insert throughput as the table grows, index and table size, leaf
// density and fragmentation, WAL volume and full-page images, and lookup
// latency afterwards.
//
// Run loads a table (id PRIMARY KEY, payload bigint) per scheme on one of
// these engines: an existing PostgreSQL server, a private throwaway cluster
// started from the installed server binaries (package pglocal), an
// existing MariaDB/MySQL server or a private one (package mariadblocal),
// whose InnoDB tables are clustered on the primary key, or an embedded
// SQLite database. On PostgreSQL it works only inside a schema of its own,
// idbench_<random>, and on MariaDB/MySQL inside a database of its own of
// the same name, which it drops when done, on error and when its context is
// cancelled; it drops nothing it did not create. On MariaDB/MySQL it
// enables two INNODB_METRICS counters for the run and restores them. The one
// object it may leave: when a PostgreSQL database lacks the pgstattuple
// extension, a run creates it in schema ExtSchema (idbench_ext; concurrent
// runs serialise on an advisory lock) and no run drops it, since an
// extension is database-wide and another run or session may be using it.
// Settings.LeftBehind and the report's notes say so.
//
// Keys go over the wire in binary: int64 for bigint columns, 16 raw bytes
// for uuid columns, and the canonical text for the ulid-text row. They are
// generated while loading and streamed, so memory stays flat in the row
// count.
//
// # Where things live
//
// Config (config.go) is validated once by withDefaults, which also parses Config.DB into a
// target (target.go: the engine's name, its parsed PostgreSQL or MySQL settings, redaction).
// Run (run.go) resolves the rows (engine.ResolveRow), applies the engine's column rules,
// opens the engine from the table engines() builds (engines.go) and carries out the workload
// workloads() names (workloads.go) through the one runner (runner.go): the table workload
// (table.go, its table described as data by engine.LoadTable) or the app workload (app.go,
// its tables described as data by engine.AppSchema.Tables). Both workloads' tables are
// engine.TableDef values, which every engine turns into DDL with one function
// (AppDialect.CreateTables); a table's needs beyond its columns and indexes are flags of
// TableDef that the DDL honours (IdentityAlways, SeparateKey, NoToastVacuum), and each
// engine's testdata/table_ddl.golden holds the table workload's statements (TestTableDDL).
// The report writers (format.go, markdown.go, app_format.go, …)
// ask a report's engine for its texts through dialectOf (report_dialect.go). Package engine
// holds what every engine needs; packages pg, innodb and sqlite are the engines; pglocal and
// mariadblocal start private servers; pgtest and mysqltest give tests a server.
//
// # Adding an engine
//
// A new engine is a package beside pg, innodb and sqlite, dbbench/<name>, which writes:
//
//   - doc.go: the package comment;
//   - <name>.go: its names in Config.DB and Settings.Engine (as pg.Local and pg.Server), the
//     engine type meeting engine.Engine (Settings, Kept, Close, Finding, ConnLost, and the
//     table workload's engine.TableLoader: TableRows, TableNotes, ColumnTypeOf, Load and
//     Baseline, which create the engine.TableDef they are given with CreateTables and load,
//     measure and drop it, HasBaseline, BatchSize), an Open function returning
//     (engine.Engine, cleanup, error), Columns (its column rules, asked before it is
//     opened) and Report (its engine.ReportText);
//   - app_<name>.go: engine.AppDialect (CreateTables and DropTables of engine.TableDef,
//     honouring or ignoring each of its flags, RowWriters, LogMark, Settle, BeforeLoad,
//     Structures, KeyArg, TimeArg, SQL, Count, KeyRows, EpochMicros, Plan, Qualify);
//   - rows_<name>.go: its engine.RowWriter, one per connection (engine/rows.go): Insert of n
//     rows of any TableDef by its bulk path, multi-row INSERTs and one-row INSERTs, values
//     converted as its KeyArg and TimeArg do, the id left out when the database makes the keys
//     (TableDef.KeysByDatabase); InsertKey (RETURNING id, LastInsertId); InTx; and, when its
//     database hands out keys ahead of the rows, engine.KeyReserver. A database/sql engine
//     configures engine.SQLRows (its BEGIN, conversions, parameter limit, and its bulk path
//     when it has one of its own) rather than writing one;
//   - its tests: a TestTableDDL with testdata/table_ddl.golden and a TestRowWriter running the
//     shared check of its row writers (internal/rowtest) as pg, innodb and sqlite have, and
//     a test server package beside pgtest and mysqltest if it has a server.
//
// and touches, outside its package:
//
//   - api.go: the Engine<Name> alias of its name, for Config.DB's users;
//   - engines.go: one entry of engines() (name, byName, columns, open, report, shared, and
//     table/markdown/summary only for a table-workload layout of its own, as innodb_format.go
//     is InnoDB's);
//   - target.go, only when Config.DB names it by a connection string rather than its name;
//     all.go (LocalEngines), only when RunAll should run it; config.go's Config.DB comment and
//     cmd/idbench/db.go's --db help.
//
// No workload and no report writer changes: they ask the engine (engine.Engine) and its
// report texts (engine.ReportText).
//
// # Adding a workload
//
// A new workload writes:
//
//   - <workload>.go in dbbench: its run function, which plans its loads (loadPlan), describes
//     one load (a workload value: unit, load, rate, findings) for runLoads, and summarizes the
//     runs into the report; its tables as data (engine.TableDef with engine.ColumnDef and
//     engine.IndexDef, and the flags every engine honours), created, settled, sized and
//     dropped by every engine's AppDialect, and its writes composed from engine.RowWriter
//     calls, as app_write.go composes the app workload's;
//   - <workload>_format.go: its report writers, and its tests;
//
// and touches:
//
//   - workloads.go: one entry of workloads();
//   - engine/names.go (its Workload<Name> constant, and api.go's alias) and config.go (its
//     settings and their validation in withDefaults);
//   - engine/report.go: its result type in Report, and format.go and markdown.go, which pick
//     the writers by Report.Workload.
//
// It touches no engine: its tables are TableDefs with the existing flags (a storage need no
// flag covers is a new flag, which every engine's CreateTables honours or ignores), and it
// writes rows of its own tables through the engines' row writers (AppDialect.RowWriters,
// engine.RowWriter): any columns of kinds key, time and integer, by the bulk, batch or
// single path, inside or outside a transaction, with the keys made by the application or by
// the database as each table's KeyBy says, the keys the database made returned by InsertKey
// or reserved ahead by a KeyReserver. The app workload's operations are composed that way
// once, for every engine (app_write.go: a parent and its children, one transaction per
// operation or the bulk path per batch, and the bare baseline over the same calls). What is
// left to an engine per workload is the table workload's Load, which still fills the one
// shape of LoadTable itself, with its figures.
package dbbench
