// Package sqlite is dbbench's SQLite engine: an embedded database (modernc.org/sqlite, pure
// Go) in a temporary directory that Close removes. It meets engine.Engine for the table and
// app workloads; it has no baseline and no server-made keys.
package sqlite
