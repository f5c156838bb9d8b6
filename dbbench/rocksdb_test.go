//go:build rocksdb

package dbbench_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
)

// TestRocksDBLoadCounters runs a small load on the rocksdb engine (keys as TiDB lays them out
// and TiKV stores them, a secondary index on payload) and checks that its LSM counters are
// those of the load: bytes written, the WAL at least those bytes, flushes, a point read
// touching blocks, time-window scans of exactly the window's rows, and a random key's window
// reading many more blocks than a sequence's. Built with -tags rocksdb only (it needs
// librocksdb-dev).
func TestRocksDBLoadCounters(t *testing.T) {
	cfg := small("rocksdb", "bigserial", "uuidv4")
	cfg.Rows, cfg.Batch, cfg.SecondaryIndex, cfg.RangeN = 20000, 500, true, 100
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkLSMLoad(t, rep, 20000, 60)
	for _, r := range rep.Results {
		if r.PointLookup.Count == 0 {
			t.Errorf("%s: no point lookups timed", r.Scheme)
		}
		if r.LSM.ReadAmp < 1 {
			t.Errorf("%s: read amp %d after a flush: want the L0 file or level counted", r.Scheme, r.LSM.ReadAmp)
		}
	}
	seq, rnd := rep.Results[0].LSM, rep.Results[1].LSM
	if rnd.WindowBlocks < 5*seq.WindowBlocks {
		t.Errorf("a uuidv4 window read %.1f blocks, a sequence's %.1f: want the random key's rows scattered over many more blocks", rnd.WindowBlocks, seq.WindowBlocks)
	}
	var md bytes.Buffer
	if err := dbbench.WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"write amp", "blocks per time-window scan", "t{104}_r{id}", "L0 files max", "RocksDB 7."} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
