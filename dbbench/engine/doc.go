// Package engine holds what every dbbench engine needs and nothing of any one engine: the
// Engine contract (the table workload's TableLoader, the AppDialect of workloads that describe
// their tables as data, the RowWriter they write rows through: rows.go, and the Measurer every
// workload measures with), the rows a run compares and the keys they generate (Row, Value,
// Source, the simulated fleets), the figures of a load (Recorder, the named counters and
// structures, LeafStats), the tables of a workload as data (TableDef, with who makes its
// keys), the report's types (Report,
// Settings, Result, …), the engine's part of the run's configuration (Options), and the
// helpers engines share (FailLost, Workers, Claimer, TimeQueries, the database/sql row
// writer SQLRows, and KV, the base of the key-value engines).
//
// The engines are packages of their own: pg (PostgreSQL), innodb (MariaDB/MySQL InnoDB),
// sqlite, and the key-value engines pebble and rocksdb. Package dbbench runs the workloads on
// them and writes the reports; it picks an engine from its table of engines (dbbench's
// engines.go), and this package imports none of them, nor dbbench.
package engine
