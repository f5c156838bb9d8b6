//go:build rocksdb

package dbbench_test

import "testing"

// TestRocksDBLoadCounters runs a small load on the rocksdb engine (keys as TiDB lays them out
// and TiKV stores them, a secondary index on payload) and checks that its LSM counters are
// those of the load: bytes written, the WAL at least those bytes, flushes, a point read
// touching blocks, time-window scans of exactly the window's rows, and a random key's window
// reading many more blocks than a sequence's. Built with -tags rocksdb only (it needs
// librocksdb-dev).
func TestRocksDBLoadCounters(t *testing.T) {
	rep := loadLSM(t, "rocksdb", 20000, 60, "t{104}_r{id}", "L0 files max", "RocksDB 7.")
	for _, r := range rep.Results {
		if r.PointLookup.Count == 0 {
			t.Errorf("%s: no point lookups timed", r.Scheme)
		}
		if r.LSM.ReadAmp < 1 {
			t.Errorf("%s: read amp %d after a flush: want the L0 file or level counted", r.Scheme, r.LSM.ReadAmp)
		}
	}
	checkWindowsScattered(t, rep)
}
