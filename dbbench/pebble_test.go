package dbbench_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
)

// TestPebbleLoadCounters runs a small load on the pebble engine (keys as CockroachDB lays
// them out, a secondary index on payload) and checks that its LSM counters are those of the
// load: bytes written, the WAL at least those bytes, a flush, a point read touching blocks,
// time-window scans of exactly the window's rows, and a random key's window reading many
// more blocks than a sequence's (the rows of a window of time lie together only under a
// time-ordered key).
func TestPebbleLoadCounters(t *testing.T) {
	rep := loadLSM(t, "pebble", 10000, 40, "/Table/104/1/<id>/0")
	seq, rnd := rep.Results[0].LSM, rep.Results[1].LSM
	if raceEnabled {
		// Pebble built with -race turns on its invariants checks, which vary how iterators
		// reuse loaded blocks: block counts mean nothing there. `make test` runs this test
		// again without the race detector (-run 'SQLite|Pebble').
		t.Logf("race detector on: windows of %.1f and %.1f blocks not compared", seq.WindowBlocks, rnd.WindowBlocks)
	} else {
		checkWindowsScattered(t, rep)
	}
}

// loadLSM runs a load of rows rows of a sequence (bigserial) and of a random key (uuidv4) on
// the LSM engine db, in batches of 500 rows with a secondary index on payload and 100-row
// windows, checks the figures every such load must have (checkLSMLoad, each row and its index
// entry at least minBytes bytes) and that its Markdown report names the write amplification,
// the window scans' blocks and each of says, and returns the report.
func loadLSM(t *testing.T, db string, rows, minBytes int64, says ...string) *dbbench.Report {
	t.Helper()
	cfg := small(db, "bigserial", "uuidv4")
	cfg.Rows, cfg.Batch, cfg.SecondaryIndex, cfg.RangeN = int(rows), 500, true, 100
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkLSMLoad(t, rep, rows, minBytes)
	var md bytes.Buffer
	if err := dbbench.WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"write amp", "blocks per time-window scan"}, says...) {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	return rep
}

// checkWindowsScattered checks that loadLSM's random key's time window read many more blocks
// than its sequence's: the rows of a window of time lie together only under a time-ordered
// key.
func checkWindowsScattered(t *testing.T, rep *dbbench.Report) {
	t.Helper()
	seq, rnd := rep.Results[0].LSM, rep.Results[1].LSM
	if rnd.WindowBlocks < 5*seq.WindowBlocks {
		t.Errorf("a uuidv4 window read %.1f blocks, a sequence's %.1f: want the random key's rows scattered over many more blocks", rnd.WindowBlocks, seq.WindowBlocks)
	}
}

// checkLSMLoad checks the LSM figures every result of an LSM engine's load of rows rows
// (each row and its index entry at least minBytes bytes, secondary index on, 100-row
// windows) must have: bytes written, the WAL at least those bytes, a flush, live bytes, point
// reads touching blocks, 100 window scans of 100 rows, compactions for 7 levels.
func checkLSMLoad(t *testing.T, rep *dbbench.Report, rows int64, minBytes int64) {
	t.Helper()
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	for _, r := range rep.Results {
		l := r.LSM
		if l == nil {
			t.Fatalf("%s: no LSM figures", r.Scheme)
		}
		t.Logf("%s (%s): user %d B, WAL %d, flush %d, compaction %d, write amp %.2f, space amp %.2f, flushes %d, compactions %v, L0 max %d, stalls %d, point blocks %.1f, window %d rows %.1f blocks",
			r.Scheme, r.ColumnType, l.UserBytes, l.WALBytes, l.FlushBytes, l.CompactionBytes, l.WriteAmp, l.SpaceAmp, l.Flushes, l.Compactions, l.L0SublevelsMax, l.WriteStalls, l.PointBlocks, l.WindowRows, l.WindowBlocks)
		if r.Rows != rows || l.UserBytes < rows*minBytes {
			t.Errorf("%s: %d rows, %d bytes of keys and values: want %d rows of at least %d bytes (row and index entry)", r.Scheme, r.Rows, l.UserBytes, rows, minBytes)
		}
		if l.WALBytes < l.UserBytes || l.FlushBytes == 0 || l.Flushes < 1 || l.WriteAmp <= 1 {
			t.Errorf("%s: WAL %d B for %d B written, %d B flushed in %d flushes, write amp %.2f: want the WAL to hold every byte and at least one flush",
				r.Scheme, l.WALBytes, l.UserBytes, l.FlushBytes, l.Flushes, l.WriteAmp)
		}
		if l.LiveBytes == 0 || l.SpaceAmp <= 0.05 || l.SpaceAmp > 3 {
			t.Errorf("%s: %d live bytes, space amp %.2f", r.Scheme, l.LiveBytes, l.SpaceAmp)
		}
		if l.PointReads == 0 || l.PointBlocks < 1 {
			t.Errorf("%s: %d point reads touching %.1f blocks each", r.Scheme, l.PointReads, l.PointBlocks)
		}
		if l.WindowScans != 100 || l.WindowRows != 100 {
			t.Errorf("%s: %d window scans of %d rows, want 100 of 100", r.Scheme, l.WindowScans, l.WindowRows)
		}
		if len(l.Compactions) != 7 {
			t.Errorf("%s: compactions of %d levels, want 7", r.Scheme, len(l.Compactions))
		}
	}
}
