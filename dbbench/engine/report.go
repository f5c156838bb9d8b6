package engine

import "time"

// Report is the outcome of Run: the settings that shape the figures and one
// Result per scheme, in the order asked for.
type Report struct {
	Settings Settings  `json:"settings"`
	Results  []Result  `json:"results"`
	Baseline *Baseline `json:"baseline,omitempty"`
	// Workload is WorkloadApp for a run of the app workload, whose figures are in App and
	// AppBaseline instead of Results and Baseline; empty for the one-table workload.
	Workload    string       `json:"workload,omitempty"`
	App         []AppResult  `json:"app,omitempty"`
	AppBaseline *AppBaseline `json:"app_baseline,omitempty"`
	// Notes explain figures a reader could misread (unavailable statistics,
	// checkpoints inside a steady run, generator caps, …).
	Notes []string `json:"notes,omitempty"`
}

// Settings records what shapes the result.
type Settings struct {
	Engine        string `json:"engine"`         // "pg-local", "pg", "mariadb-local", "mysql" or "sqlite"
	ServerVersion string `json:"server_version"` // e.g. "PostgreSQL 15.20 …" or "SQLite 3.50.4"
	Command       string `json:"command,omitempty"`

	SharedBuffers     string `json:"shared_buffers,omitempty"`
	MaxWALSize        string `json:"max_wal_size,omitempty"`
	CheckpointTimeout string `json:"checkpoint_timeout,omitempty"`
	Fsync             string `json:"fsync,omitempty"`
	SynchronousCommit string `json:"synchronous_commit,omitempty"`
	FullPageWrites    string `json:"full_page_writes,omitempty"`
	WALCompression    string `json:"wal_compression,omitempty"`
	// Statistics says where leaf density and fragmentation come from:
	// "pgstattuple", "dbstat" or "unavailable: <reason>".
	Statistics string `json:"statistics"`
	// LeftBehind names what the run created in the database and did not
	// drop, because other sessions may come to rely on it: the pgstattuple
	// extension in schema ExtSchema, when the run had to create it. Empty
	// when the run dropped everything it created.
	LeftBehind string `json:"left_behind,omitempty"`
	// OtherRuns is the largest number of other idbench sessions
	// (application_name idbench) seen on the server at the start or end of a
	// measured load: their WAL, full-page images and checkpoints are counted
	// in this run's server-wide figures.
	OtherRuns int `json:"other_idbench_sessions,omitempty"`
	// CheckpointBeforeRun is true when a CHECKPOINT ran before each measured
	// load (steady profile, sufficient privileges).
	CheckpointBeforeRun bool `json:"checkpoint_before_run"`

	// InnoDB settings, on MariaDB/MySQL engines.
	InnoDBBufferPoolSize      string `json:"innodb_buffer_pool_size,omitempty"`
	InnoDBLogFileSize         string `json:"innodb_log_file_size,omitempty"`
	InnoDBFlushLogAtTrxCommit string `json:"innodb_flush_log_at_trx_commit,omitempty"`
	InnoDBDoublewrite         string `json:"innodb_doublewrite,omitempty"`
	InnoDBPageSize            int    `json:"innodb_page_size,omitempty"`
	// Collation is the database's default collation, which the
	// "-text-default" rows use.
	Collation string `json:"collation,omitempty"`
	// LoadPath says how rows reach InnoDB in copy mode: LOAD DATA LOCAL
	// INFILE from an io.Reader.
	LoadPath string `json:"load_path,omitempty"`
	// SecondaryIndex is true when every table had a secondary index on
	// payload.
	SecondaryIndex bool `json:"secondary_index,omitempty"`

	// LSM engine settings (pebble, rocksdb): the memtable and block cache sizes, and the
	// other options that shape its figures, as one line. The JSON names are those of the
	// first LSM engine, Pebble, kept so that committed reports read as they were written.
	LSMMemTable     string `json:"pebble_memtable,omitempty"`
	LSMBlockCache   string `json:"pebble_block_cache,omitempty"`
	LSMOptions      string `json:"pebble_options,omitempty"`
	SQLitePageSize  int    `json:"sqlite_page_size,omitempty"`
	SQLiteCacheSize string `json:"sqlite_cache_size,omitempty"`

	Fillfactor int    `json:"fillfactor"`
	Rows       int    `json:"rows"`
	Batch      int    `json:"batch"`
	Mode       string `json:"mode"`
	Clients    int    `json:"clients"`
	Nodes      int    `json:"nodes"`
	// FleetRate (IDs/s across the fleet) and ClockSkew (standard deviation of
	// the node clock offsets) describe the simulated fleet; zero when one
	// generator ran on the real clock.
	FleetRate  float64  `json:"fleet_rate,omitempty"`
	ClockSkew  Duration `json:"clock_skew,omitempty"`
	Profile    string   `json:"profile"`
	Repeat     int      `json:"repeat"`
	WarmupRows int      `json:"warmup_rows"`
	Lookups    int      `json:"lookups"`
	RangeN     int      `json:"range_n"`

	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`

	// App workload settings: children per operation, the created_at index policy, the time
	// window of the time query, the largest resident set of the process at the end of the
	// run, and what --keep left (Kept) with the command that opens it again (Reopen).
	Children       int      `json:"children,omitempty"`
	CreatedAtIndex string   `json:"created_at_index,omitempty"`
	Window         Duration `json:"window,omitempty"`
	MaxRSSBytes    int64    `json:"max_rss_bytes,omitempty"`
	Kept           string   `json:"kept,omitempty"`
	// IDsInTx is true when each operation made its IDs inside its transaction, just before
	// the parent's INSERT (Config.IDsInTx), rather than before the transaction began.
	IDsInTx bool `json:"ids_in_tx,omitempty"`
	// ClientBatch is the number of operations each client wrote per transaction, sorted by
	// key (Config.ClientBatch); 0 for one.
	ClientBatch int `json:"client_batch,omitempty"`
	// ClientBlock is the number of operations whose keys each client took at once, as one run
	// of consecutive IDs (Config.ClientBlock); 0 for one.
	ClientBlock int `json:"client_block,omitempty"`
	// IDsPerClient is true when each client made its keys with a generator of its own
	// (Config.IDsPerClient).
	IDsPerClient bool   `json:"ids_per_client,omitempty"`
	Reopen       string `json:"reopen,omitempty"`

	Started  time.Time `json:"started"`
	Duration Duration  `json:"duration"`
	// LoadAverage is the load average of the machine that ran idbench (Linux's
	// /proc/loadavg: over 1, 5 and 15 minutes) when the run started and when it ended,
	// as "start 2.47 0.91 0.35, end 3.10 1.20 0.52": on a shared machine it says how
	// much other work the rates shared the CPUs with. Empty where the system does not
	// show it, and in reports written before it was recorded.
	LoadAverage string `json:"load_average,omitempty"`
}

// Duration is a time.Duration that marshals to JSON as a string such as
// "1m2.5s".
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).Round(time.Millisecond).String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Result holds one scheme's figures: the median over its measured runs for
// every number, and the throughput curve of the run with the median
// throughput.
type Result struct {
	// Scheme is the row as asked for ("snowflake", "ulid-text", …).
	Scheme string `json:"scheme"`
	// Spec is the canonical idkit spec of the first generator, empty for
	// bigserial.
	Spec string `json:"spec,omitempty"`
	// ColumnType is the SQL type of the id column: "bigint", "uuid",
	// `text COLLATE "C"`, "bigint identity"; on SQLite "INTEGER", "BLOB",
	// "TEXT".
	ColumnType string `json:"column_type"`
	Rows       int64  `json:"rows"`
	// Durability is the class of each store the row's generators rest on (a segment row's
	// store, a leased node's), as read after its last load; absent for other rows.
	Durability []string `json:"durability,omitempty"`

	RowsPerSec float64 `json:"rows_per_sec"`

	IndexBytes       int64   `json:"index_bytes"`
	IndexBytesPerRow float64 `json:"index_bytes_per_row"`
	TableBytes       int64   `json:"table_bytes"`
	WALBytes         int64   `json:"wal_bytes"`
	WALBytesPerRow   float64 `json:"wal_bytes_per_row"`
	// WALFPI is the number of full-page images written during the load
	// (pg_stat_wal.wal_fpi); null when the server does not report it.
	WALFPI *int64 `json:"wal_fpi"`
	// Checkpoints is the number of checkpoints that completed or were
	// requested during the load; null when unknown.
	Checkpoints *int64 `json:"checkpoints"`
	// AvgLeafDensity and LeafFragmentation are percentages from pgstatindex
	// (or dbstat on SQLite); null when unavailable.
	AvgLeafDensity    *float64 `json:"avg_leaf_density"`
	LeafFragmentation *float64 `json:"leaf_fragmentation"`
	LeafPages         *int64   `json:"leaf_pages,omitempty"`

	// InnoDB figures (MariaDB/MySQL engines). IndexBytes is then the
	// clustered index, which holds the rows, and TableBytes the clustered
	// and secondary indexes together; WALBytes is the redo log written.
	//
	// Structures are the database objects of the load by name (as in the first measured run:
	// each load numbers its own table) and role ("table", "primary key", "clustered index
	// (the table)", "secondary index"), the median size over the runs, and BytesPerOp its
	// bytes per row. Reports written before idbench listed them have none.
	Structures []Structure `json:"structures,omitempty"`

	// SecondaryIndexBytes is the size of the secondary index on payload
	// (Settings.SecondaryIndex) and SecondaryLeafPages its leaf pages.
	SecondaryIndexBytes       int64   `json:"secondary_index_bytes,omitempty"`
	SecondaryIndexBytesPerRow float64 `json:"secondary_index_bytes_per_row,omitempty"`
	SecondaryLeafPages        *int64  `json:"secondary_leaf_pages,omitempty"`
	// PageSplits and PageMerges are the deltas of INNODB_METRICS
	// index_page_splits and index_page_merge_successful over the load; null
	// when the counters could not be enabled.
	PageSplits *int64 `json:"page_splits,omitempty"`
	PageMerges *int64 `json:"page_merges,omitempty"`
	// BufferPoolReadsPer1k is Innodb_buffer_pool_reads (pages read from
	// disk into the buffer pool) during the load per 1,000 rows.
	BufferPoolReadsPer1k *float64 `json:"buffer_pool_reads_per_1k,omitempty"`

	PointLookup Latency `json:"point_lookup"`
	RangeScan   Latency `json:"range_scan"`

	// LSM is the LSM-tree figures of an engine that keeps rows in one (Pebble), from the
	// measured run with the median rows/s; absent on the B-tree engines.
	LSM *LSM `json:"lsm,omitempty"`

	// Contention holds, of the last measured load, the order in which the keys reached the
	// table as their inserts committed (Parents counts rows here; only the arrival fields are
	// set); absent for keys the database makes and in reports written before idbench
	// measured it.
	Contention *Contention `json:"contention,omitempty"`

	// Curve is the insert throughput per chunk as the table grows.
	Curve []Chunk `json:"curve"`
	// Runs holds the main figures of every measured run.
	Runs []Sample `json:"runs"`
	// Failure, when set, is why the row's loads stopped (a duplicate key from a
	// server-side generator); its figures are then empty. The same text is in the notes.
	Failure string `json:"failure,omitempty"`
}

// Chunk is one point of a throughput curve.
type Chunk struct {
	// Rows is the number of rows inserted at the end of the chunk.
	Rows int64 `json:"rows"`
	// RowsPerSec is the throughput within the chunk.
	RowsPerSec float64 `json:"rows_per_sec"`
}

// Latency summarizes query latencies measured after loading, in
// microseconds.
type Latency struct {
	Count     int     `json:"count"`
	P50Micros float64 `json:"p50_us"`
	P99Micros float64 `json:"p99_us"`
}

// Sample is the main figures of one measured load.
type Sample struct {
	RowsPerSec       float64  `json:"rows_per_sec"`
	Seconds          float64  `json:"seconds"`
	IndexBytesPerRow float64  `json:"index_bytes_per_row"`
	WALBytesPerRow   float64  `json:"wal_bytes_per_row"`
	AvgLeafDensity   *float64 `json:"avg_leaf_density"`
}

// Baseline is a bare load of ascending int64 keys into the same table shape
// by the same path (pgx CopyFrom on PostgreSQL; LOAD DATA or prepared
// INSERTs on MariaDB/MySQL), run next to the schemes to measure the
// harness's overhead.
type Baseline struct {
	Rows       int64    `json:"rows"`
	RowsPerSec float64  `json:"rows_per_sec"`
	Runs       []Sample `json:"runs"`
	// Scheme is the scheme the overhead ratio is taken against, and Ratio
	// its median rows/s divided by the baseline's.
	Scheme string  `json:"scheme,omitempty"`
	Ratio  float64 `json:"ratio,omitempty"`
}

// String formats d like time.Duration, rounded to milliseconds.
func (d Duration) String() string {
	return time.Duration(d).Round(time.Millisecond).String()
}
