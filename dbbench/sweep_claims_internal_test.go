package dbbench

import (
	"strings"
	"testing"
)

// appSweep builds a sweep of app reports on InnoDB (64M buffer pool, commits not flushed):
// per client count, per scheme, bytes per operation, ops/s and the bytes its tables took.
func appSweep(runs map[int]map[string][3]float64, counts ...int) *Sweep {
	s := &Sweep{Command: "idbench db --clients test"}
	for _, c := range counts {
		rep := &Report{Workload: WorkloadApp, Settings: Settings{Engine: EngineMariaDBLocal, ServerVersion: "MariaDB test",
			InnoDBBufferPoolSize: "64M", InnoDBFlushLogAtTrxCommit: "2", Rows: 1000, Repeat: 1, NumCPU: 2}}
		for _, n := range []string{RowAutoIncrement, "snowflake", "uuidv7", "uuidv4"} {
			v, ok := runs[c][n]
			if !ok {
				continue
			}
			rep.App = append(rep.App, AppResult{Scheme: n, BytesPerOp: v[0], OpsPerSec: v[1], Structures: []Structure{{Name: n, Bytes: int64(v[2])}}})
		}
		load := float64(c)
		s.Runs = append(s.Runs, SweepRun{Clients: c, LoadStart: &load, LoadEnd: &load, Report: rep})
	}
	return s
}

// TestWriterRateClaims: a speed claim holds up to the last client count at which it held
// from the first, within 10%, and names the figures where it stopped.
func TestWriterRateClaims(t *testing.T) {
	const mb = 1 << 20
	s := appSweep(map[int]map[string][3]float64{
		1:  {RowAutoIncrement: {400, 1000, 100 * mb}, "snowflake": {380, 1000, 100 * mb}, "uuidv7": {500, 950, 120 * mb}, "uuidv4": {850, 1000, 200 * mb}},
		4:  {RowAutoIncrement: {420, 2000, 100 * mb}, "snowflake": {450, 1850, 110 * mb}, "uuidv7": {600, 1700, 130 * mb}, "uuidv4": {850, 2000, 200 * mb}},
		16: {RowAutoIncrement: {500, 3000, 110 * mb}, "snowflake": {660, 2500, 150 * mb}, "uuidv7": {950, 2900, 210 * mb}, "uuidv4": {860, 3000, 200 * mb}},
	}, 1, 4, 16)
	got := map[string]WriterClaim{}
	for _, c := range WriterRateClaims(s) {
		got[c.ID] = c
	}
	for _, tc := range []struct {
		id                 string
		holds, fails       int
		evidenceSubstrings []string
	}{
		// uuidv7 against uuidv4: 95%, then 85% at 4.
		{"rate-ordered16", 1, 4, []string{"uuidv7 1,700 ops/s", "uuidv4 2,000"}},
		// snowflake against the fastest: 100%, 92.5%, then 83% at 16.
		{"rate-ordered8", 4, 16, []string{"snowflake 2,500 ops/s", "fastest " + RowAutoIncrement + " 3,000"}},
	} {
		c, ok := got[tc.id]
		if !ok {
			t.Errorf("%s: missing", tc.id)
			continue
		}
		if c.HoldsUpTo != tc.holds || c.FailsAt != tc.fails {
			t.Errorf("%s: holds up to %d, fails at %d; want %d and %d", tc.id, c.HoldsUpTo, c.FailsAt, tc.holds, tc.fails)
		}
		for _, want := range tc.evidenceSubstrings {
			if !strings.Contains(c.Evidence, want) {
				t.Errorf("%s: evidence %q lacks %q", tc.id, c.Evidence, want)
			}
		}
	}
	cond := SweepConditions(s)
	for _, want := range []string{"1,000 operations per scheme", "1/4/16 writer(s)", "data 1.56–3.28× the page cache (innodb_buffer_pool_size 64M)", "commits not flushed", "machine load 1.0–16.0 on 2 CPUs"} {
		if !strings.Contains(cond, want) {
			t.Errorf("conditions %q lack %q", cond, want)
		}
	}
	var b strings.Builder
	if err := WriteSweepHeadline(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uuidv7 smaller than uuidv4 up to 4 writers, not 16", "snowflake at 90% of the fastest speed or more up to 4 writers, not 16"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("headline %q lacks %q", b.String(), want)
		}
	}
}

// TestSweepCacheLine: the sweep report says whether the loads ran within the page cache,
// past it, or partly, from the smallest and largest data a scheme left.
func TestSweepCacheLine(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   string
	}{
		{"within", 10 * mb, 64 * mb, "the loads ran within it"},
		{"past", 65 * mb, 300 * mb, "the loads ran past it"},
		{"partly", 30 * mb, 100 * mb, "some schemes' data fitted in the cache and some did not"},
	} {
		s := appSweep(map[int]map[string][3]float64{1: {"snowflake": {1, 1, tc.lo}, "uuidv4": {1, 1, tc.hi}}}, 1)
		line := sweepCacheLine(s)
		if !strings.Contains(line, tc.want) || !strings.Contains(line, "innodb_buffer_pool_size 64M") || !strings.Contains(line, "a commit does not wait") {
			t.Errorf("%s: %q, want %q, the cache setting and the commit setting", tc.name, line, tc.want)
		}
	}
}
