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
// A load is a description in its workload's file, the same on every engine: the table
// workload's tableLoad creates its table, prepares (BeforeLoad) and marks the counters
// (Measurer.Marks), has the engine fill it (TableLoader.FillTable), checks the row count
// (Measurer.QueryInt), settles it and sizes its structures by name (Settle, Structures),
// reads the leaves of its primary key and secondary indexes (Measurer.LeafStats) and times
// point lookups and range scans on sampled keys (Measurer.SampleKeys, Measurer.Prepare)
// before it drops the table; every figure of its report is one of those named counters,
// structures or leaf figures (metrics.figures, counterFigures in run.go).
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
//     table workload's engine.TableLoader: TableRows, TableNotes, ColumnTypeOf, SourceRow,
//     FillTable, which writes the rows of a table of engine.LoadTable's shape by its insert
//     path, HasBaseline, BatchSize), an Open function returning (engine.Engine, cleanup,
//     error), Columns (its column rules, asked before it is opened) and Report (its
//     engine.ReportText);
//   - measure_<name>.go: engine.Measurer, its instruments for every workload (Marks: its
//     counters since a mark by name, the log bytes always; LeafStats of a named B-tree;
//     SampleKeys; Prepare, a statement on the measuring connection, whose Rows a workload
//     times; QueryInt);
//   - app_<name>.go: engine.AppDialect (CreateTables and DropTables of engine.TableDef,
//     honouring or ignoring each of its flags, RowWriters, Settle, BeforeLoad, Structures
//     named with TableDef.Role, KeyArg, TimeArg, SQL, Count, KeyRows, EpochMicros, Plan,
//     Qualify);
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
//     dropped by every engine's AppDialect; its writes composed from engine.RowWriter calls,
//     as app_write.go composes the app workload's; its load as a description over the
//     engine's methods, measured with engine.Measurer (counters since a mark, leaves of a
//     named index, sampled keys, prepared statements to time), as table.go's tableLoad is;
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
// flag covers is a new flag, which every engine's CreateTables honours or ignores), it
// measures with the Measurer's instruments, and it writes rows of its own tables through the
// engines' row writers (AppDialect.RowWriters, engine.RowWriter): any columns of kinds key,
// time and integer, by the bulk, batch or single path, inside or outside a transaction, with
// the keys made by the application or by the database as each table's KeyBy says, the keys
// the database made returned by InsertKey or reserved ahead by a KeyReserver. The app
// workload's operations are composed that way once, for every engine (app_write.go: a parent
// and its children, one transaction per operation or the bulk path per batch, and the bare
// baseline over the same calls). What is still an engine's own is the table workload's fill
// (TableLoader.FillTable: engine.LoadTable's one shape, with its Claimer, prefetching and
// connections), kept on each engine's tuned insert path.
package dbbench
