package engine

import "context"

// LSM is what one load cost an engine that keeps its rows in a log-structured merge tree
// (Pebble, CockroachDB's storage engine), from the engine's own counters, from the mark
// before the load to the end of its settling (the last memtable flushed, the compactions the
// load set off finished). Write and space amplification are ratios to the bytes of keys and
// values the load handed the engine.
type LSM struct {
	// UserBytes is the bytes of keys and values the load wrote (every key of the row and of
	// its secondary index entries, MVCC suffix included, and their values).
	UserBytes int64 `json:"user_bytes"`
	// WALBytes, FlushBytes and CompactionBytes are the bytes written to the write-ahead log,
	// by memtable flushes into sstables, and by compactions.
	WALBytes        int64 `json:"wal_bytes"`
	FlushBytes      int64 `json:"flush_bytes"`
	CompactionBytes int64 `json:"compaction_bytes"`
	// WriteAmp is (WALBytes + FlushBytes + CompactionBytes) / UserBytes.
	WriteAmp float64 `json:"write_amp"`
	// LiveBytes is the sstables' size after settling, and SpaceAmp LiveBytes over the
	// bytes of the live keys and values (UserBytes, as a load only inserts).
	LiveBytes int64   `json:"live_bytes"`
	SpaceAmp  float64 `json:"space_amp"`
	// Flushes is the number of memtable flushes; Compactions the compactions that finished,
	// by output level (L0 … L6), and CompactionsMoved those of them that moved a table down
	// without rewriting it.
	Flushes          int64   `json:"flushes"`
	Compactions      []int64 `json:"compactions_by_level"`
	CompactionsMoved int64   `json:"compactions_moved"`
	// L0SublevelsMax is the most L0 sublevels seen while loading (sampled every 100 ms);
	// ReadAmp the read amplification (L0 sublevels plus non-empty levels) after settling.
	L0SublevelsMax int `json:"l0_sublevels_max"`
	ReadAmp        int `json:"read_amp"`
	// WriteStalls is the number of write stalls the engine's event listener saw, and
	// StallSeconds how long they lasted in all.
	WriteStalls  int64   `json:"write_stalls"`
	StallSeconds float64 `json:"stall_seconds"`
	// PointBlocks and PointBlockBytes are the blocks a point read of a sampled key touched
	// (block-cache lookups: hits and misses) and their bytes, averaged over the reads;
	// PointCachedShare the share of those bytes found in the block cache.
	PointReads       int     `json:"point_reads"`
	PointBlocks      float64 `json:"point_blocks"`
	PointBlockBytes  float64 `json:"point_block_bytes"`
	PointCachedShare float64 `json:"point_cached_share"`
	// WindowRows is the rows of a time-window scan: the rows written in a window of
	// consecutive inserts, found through the secondary index on payload (which numbers rows
	// in the order written) and read from the primary index, as CockroachDB's index join
	// does. WindowBlocks and WindowBlockBytes are the blocks and bytes one such scan touched,
	// averaged; zero WindowScans where the load had no secondary index.
	WindowScans       int     `json:"window_scans"`
	WindowRows        int     `json:"window_rows"`
	WindowBlocks      float64 `json:"window_blocks"`
	WindowBlockBytes  float64 `json:"window_block_bytes"`
	WindowCachedShare float64 `json:"window_cached_share"`
}

// LSMEngine is implemented by an engine whose rows live in an LSM tree: after a measured
// load of the table workload (its queries timed), the workload asks it for the load's LSM
// figures. It is optional: the B-tree engines do not implement it.
type LSMEngine interface {
	// LSM returns the figures of the load of table t (rows rows) since the last Marks,
	// reading windows of rangeN rows for the time-window scan.
	LSM(ctx context.Context, t TableDef, rows int64, rangeN int) (*LSM, error)
}
