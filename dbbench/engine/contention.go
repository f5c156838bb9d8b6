package engine

import (
	"context"
	"sort"
	"time"
)

// Contention is what concurrent writers did to one scheme in its last measured load of the
// app workload: the order in which parent keys reached the table, what the B-tree did about
// it, how long each operation took and what the writers waited on. Reports written before
// idbench measured it have none.
type Contention struct {
	// Parents is the number of parent inserts observed; Late those whose key was below the
	// largest key inserted before it (the insert returned later than that one's), LatePercent
	// their share. A key made by the database is observed as the INSERT returns it.
	Parents     int64   `json:"parents"`
	Late        int64   `json:"late"`
	LatePercent float64 `json:"late_percent"`
	// BehindP50 and BehindP99 are, over the late inserts, how many of the last BehindWindow
	// parent keys inserted before it were larger: how far behind the right edge of the
	// B-tree it landed, in rows (at most BehindWindow).
	BehindP50    float64 `json:"behind_p50"`
	BehindP99    float64 `json:"behind_p99"`
	BehindWindow int     `json:"behind_window"`
	// PageSplitsPerOp and PageMergesPerOp are the server's index page splits and successful
	// merges during the load (InnoDB's INNODB_METRICS, server-wide) per operation; absent
	// where the engine does not count them.
	PageSplitsPerOp *float64 `json:"page_splits_per_op,omitempty"`
	PageMergesPerOp *float64 `json:"page_merges_per_op,omitempty"`
	// ParentLeafDensity and ParentLeafPages describe the leaves of the parent table's primary
	// key after the load (pgstatindex on PostgreSQL; on InnoDB the fill implied by
	// mysql.innodb_index_stats' leaf pages); ChildLeafDensity the child table's.
	ParentLeafDensity *float64 `json:"parent_leaf_density,omitempty"`
	ParentLeafPages   *int64   `json:"parent_leaf_pages,omitempty"`
	ChildLeafDensity  *float64 `json:"child_leaf_density,omitempty"`
	// OpLatency is the time of each operation's transaction (tx mode) or batch (copy mode) as
	// the client saw it.
	OpLatency Percentiles `json:"op_latency"`
	// Waits is what the loading sessions were doing at samples taken every WaitInterval
	// during the load, most frequent first (WaitSampler); absent where the engine cannot say.
	Waits        []WaitShare `json:"waits,omitempty"`
	WaitSamples  int         `json:"wait_samples,omitempty"`
	WaitInterval Duration    `json:"wait_interval,omitempty"`
}

// Percentiles is a latency distribution by its 50th, 99th and 99.9th percentiles.
type Percentiles struct {
	Count      int     `json:"count"`
	P50Micros  float64 `json:"p50_us"`
	P99Micros  float64 `json:"p99_us"`
	P999Micros float64 `json:"p999_us"`
}

// PercentilesOf sorts ds and returns its percentiles.
func PercentilesOf(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(p float64) float64 {
		return float64(ds[int(p*float64(len(ds)-1))]) / float64(time.Microsecond)
	}
	return Percentiles{Count: len(ds), P50Micros: q(0.50), P99Micros: q(0.99), P999Micros: q(0.999)}
}

// WaitShare is one thing the loading sessions were seen doing, and in what share of the
// session samples.
type WaitShare struct {
	// Event is the engine's name for it: PostgreSQL's wait_event_type:wait_event ("CPU" for an
	// active session that waits on nothing); on MariaDB/MySQL the PROCESSLIST state, and
	// "lock wait" for a transaction in INNODB_TRX's LOCK WAIT.
	Event   string  `json:"event"`
	Percent float64 `json:"percent"`
}

// WaitSampler is implemented by engines that can say what their loading sessions are doing
// right now. It is optional: an engine without it reports no waits.
type WaitSampler interface {
	// SampleWaits returns, by event, how many loading sessions are in it now. It runs on the
	// measuring connection while the loaders work.
	SampleWaits(ctx context.Context) (map[string]int, error)
}

// ScannedRows is the part of a query's result that ScanCounts reads; database/sql's *sql.Rows
// and pgx's pgx.Rows both have it.
type ScannedRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanCounts reads rows of (event, count), as a WaitSampler's GROUP BY query returns them,
// into a map. It does not close rows; the caller does, and wraps the error with what it read.
func ScanCounts(rows ScannedRows) (map[string]int, error) {
	out := map[string]int{}
	for rows.Next() {
		var ev string
		var n int
		if err := rows.Scan(&ev, &n); err != nil {
			return nil, err
		}
		out[ev] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
