// Package innodb is dbbench's MariaDB/MySQL engine: InnoDB tables, clustered on their primary
// key, on a server the run connects to (a mysql:// URL) or on a private throwaway server
// (package mariadblocal), inside a database of its own, idbench_<random>, that it drops when
// done. It enables two INNODB_METRICS counters for a run and restores them. It meets
// engine.Engine for the table and app workloads.
package innodb
