// Package pg is dbbench's PostgreSQL engine: a server the run connects to (a connection
// string or the libpq variables) or a private throwaway cluster (package pglocal), on which it
// works inside a schema of its own, idbench_<random>, that it drops when done. It meets
// engine.Engine for the table and app workloads, and adds the rows whose keys the server
// makes (serverside.go: instagram-plpgsql, uuidv7-plpgsql, the segment store in the benchmark
// database).
package pg
