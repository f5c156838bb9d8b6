//go:build race

package main

// raceEnabled: modernc.org/sqlite is a C library translated to Go, and the race detector runs it
// about ten times slower (TestRunAllSQLite took 92 s under it, 9 s without) while finding
// nothing of ours in it. `make test` runs the SQLite loads once more without it (-run SQLite).
const raceEnabled = true
