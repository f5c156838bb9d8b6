package engine

// AppResult is one scheme's figures under WorkloadApp: medians over the measured runs for
// throughput, sizes and log volume; query latencies from the last run.
type AppResult struct {
	// Scheme is the row as asked for; Label names its tables (<label>_parent, <label>_child).
	Scheme string `json:"scheme"`
	Label  string `json:"label"`
	Spec   string `json:"spec,omitempty"`
	// KeyType is the SQL type of the key columns (id, parent_id).
	KeyType string `json:"key_type"`
	// TimeOrdered is true when the key answers time ranges (idkit.Bounds).
	TimeOrdered bool `json:"time_ordered"`
	// CreatedAtIndex is true when parent(created_at) had an index.
	CreatedAtIndex bool `json:"created_at_index"`
	// Window is the time query's window for this scheme: Settings.Window rounded up to a
	// whole number of the scheme's ticks (a key range cannot split a tick).
	Window Duration `json:"window,omitempty"`

	Operations int64   `json:"operations"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	// RunsOpsPerSec is the throughput of every measured run.
	RunsOpsPerSec []float64 `json:"runs_ops_per_sec"`

	// Structures lists what the load built, by name, with its size after the last run.
	Structures    []Structure `json:"structures"`
	BytesPerOp    float64     `json:"bytes_per_op"`
	WALBytesPerOp float64     `json:"wal_bytes_per_op"`

	// TimeQuery is "the rows of a time window" as this scheme answers it: through the key
	// bounds when TimeOrdered, else through the created_at index. TimeQueryCreatedAt is the
	// same windows through the created_at index for a time-ordered scheme that has one.
	TimeQuery          *TimeQuery `json:"time_query,omitempty"`
	TimeQueryCreatedAt *TimeQuery `json:"time_query_created_at,omitempty"`
	// ParentWithChildren is "a parent with its children" through the foreign-key index.
	ParentWithChildren Latency `json:"parent_with_children"`
	// Check compares both ways of answering the time query, for time-ordered schemes.
	Check *TimeCheck `json:"check,omitempty"`
	// Contention is what the concurrent writers did in the last measured load.
	Contention *Contention `json:"contention,omitempty"`
}

// Structure is one table or index and what it takes.
type Structure struct {
	// Name is the database object's name; Role says what it is for ("parent table",
	// "parent primary key", "child foreign-key index", …; in the table workload "table",
	// "primary key", "clustered index (the table)", "secondary index"). BytesPerOp is per
	// operation of the app workload, per row of the table workload.
	Name       string  `json:"name"`
	Role       string  `json:"role"`
	Bytes      int64   `json:"bytes"`
	BytesPerOp float64 `json:"bytes_per_op"`
}

// TimeQuery is the timing of "the rows made in a window of Settings.Window" at windows spread
// over the load.
type TimeQuery struct {
	// Via is "key bounds" or "created_at index"; Plan is what EXPLAIN said the query used
	// (an index name, or "sequential scan").
	Via     string  `json:"via"`
	SQL     string  `json:"sql"`
	Plan    string  `json:"plan"`
	Latency Latency `json:"latency"`
	// RowsP50 is the median number of rows a window returned.
	RowsP50 float64 `json:"rows_p50"`
}

// TimeCheck is the comparison of the key-bounds answer with the created_at answer over
// tick-aligned windows: the same rows, except rows whose created_at and decoded ID time lie
// on either side of a window edge, at most Tolerance apart.
type TimeCheck struct {
	Windows int   `json:"windows"`
	Rows    int64 `json:"rows"`
	// EdgeRows are rows one way returned and the other did not, explained by the edge.
	EdgeRows int64 `json:"edge_rows"`
	// Mismatches are rows returned by one way only and not explained; a run with any fails.
	Mismatches int64 `json:"mismatches"`
	// Tolerance is one tick plus the largest gap the load saw between an ID's decoded time
	// and the created_at stored with it.
	Tolerance Duration `json:"tolerance"`
	Tick      Duration `json:"tick"`
}

// AppBaseline is the bare loop: the same schema, ascending bigint keys from a counter,
// written with the driver directly (pgx on PostgreSQL, database/sql on MariaDB/MySQL) in the
// same mode, in the same run.
type AppBaseline struct {
	Label         string    `json:"label"`
	OpsPerSec     float64   `json:"ops_per_sec"`
	RunsOpsPerSec []float64 `json:"runs_ops_per_sec"`
	WALBytesPerOp float64   `json:"wal_bytes_per_op"`
	// Scheme is the row compared with it (the first snowflake row, else the first bigint
	// row) and Ratio its median ops/s over the baseline's.
	Scheme string  `json:"scheme,omitempty"`
	Ratio  float64 `json:"ratio,omitempty"`
}
