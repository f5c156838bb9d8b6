//go:build race

package dbbench_test

// raceEnabled: modernc.org/sqlite is a C library translated to Go, and the race detector runs it
// about ten times slower (TestSQLiteApp took 48 s under it, 5 s without) while finding nothing
// of ours in it: dbbench's concurrent paths run under the detector in the PostgreSQL and
// MariaDB tests. `make test` runs the SQLite loads once more without it (-run SQLite).
const raceEnabled = true
