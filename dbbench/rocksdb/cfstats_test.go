package rocksdb

import (
	"strings"
	"testing"
)

// cfstatsSample is the head of a rocksdb.cfstats text of librocksdb 7.8.3 (a load of 1 MiB
// memtables: 67 flushes, 9 compactions into L6, 4 stalls).
const cfstatsSample = `
** Compaction Stats [default] **
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)
------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------
  L0     16/10   8.09 MB  15.0      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0      2.2     15.34              0.48        67    0.229       0      0       0.0       0.0
  L6      1/1   24.04 MB   0.0      0.1     0.0      0.1       0.1      0.0       0.0   3.9      2.7      2.6     38.29              1.69         9    4.255   3225K      0       0.0       0.0
 Sum     17/11  32.14 MB   0.0      0.1     0.0      0.1       0.1      0.1       0.0   3.9      1.9      2.5     53.63              2.17        76    0.706   3225K      0       0.0       0.0
 Int      0/0    0.00 KB   0.0      0.1     0.0      0.1       0.1      0.1       0.0   3.9      1.9      2.5     53.63              2.17        76    0.706   3225K      0       0.0       0.0

** Compaction Stats [default] **
Priority    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)
---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------
 Low      0/0    0.00 KB   0.0      0.1     0.0      0.1       0.1      0.0       0.0   0.0      2.7      2.6     38.29              1.69         9    4.255   3225K      0       0.0       0.0
High      0/0    0.00 KB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   0.0      0.0      2.2     15.34              0.48        67    0.229       0      0       0.0       0.0

Uptime(secs): 53.6 total, 53.5 interval
Flush(GB): cumulative 0.034, interval 0.034
Stalls(count): 2 level0_slowdown, 2 level0_slowdown_with_compaction, 0 level0_numfiles, 0 level0_numfiles_with_compaction, 0 stop for pending_compaction_bytes, 0 slowdown for pending_compaction_bytes, 2 memtable_compaction, 0 memtable_slowdown, interval 4 total count
`

func TestParseCFStats(t *testing.T) {
	levels, stalls, err := parseCFStats(cfstatsSample)
	if err != nil {
		t.Fatal(err)
	}
	if levels != [7]int64{67, 0, 0, 0, 0, 0, 9} || stalls != 4 {
		t.Errorf("levels %v, stalls %d; want [67 0 0 0 0 0 9] and 4 (the interval total of a first dump)", levels, stalls)
	}
	for _, c := range []struct{ name, text, want string }{
		{"no table", "Stalls(count): 1 level0_slowdown\n", "no Compaction Stats table"},
		{"no stalls", strings.Split(cfstatsSample, "Uptime")[0], "no Stalls(count) line"},
		{"bad count", strings.Replace(cfstatsSample, "        67 ", "        6x7 ", 1), `Comp(cnt) "6x7"`},
		{"bad stall", strings.Replace(cfstatsSample, "2 memtable_compaction", "two memtable_compaction", 1), `stall count "two memtable_compaction"`},
		{"no column", strings.Replace(cfstatsSample, "Comp(cnt)", "Count", 2), "no Comp(cnt) column"},
	} {
		if _, _, err := parseCFStats(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// FuzzParseCFStats: parseCFStats never panics, and a count it returns is not negative.
func FuzzParseCFStats(f *testing.F) {
	f.Add(cfstatsSample)
	f.Add("Level Comp(cnt)\n  L0\n")
	f.Add("Level Files Size Comp(cnt)\n  L9 1 2 MB 3\nStalls(count): -1 x, interval 2 total count\n")
	f.Fuzz(func(t *testing.T, s string) {
		levels, stalls, err := parseCFStats(s)
		if err != nil {
			return
		}
		for i, n := range levels {
			if n < 0 {
				t.Fatalf("L%d: %d compactions", i, n)
			}
		}
		if stalls < 0 {
			t.Fatalf("%d stalls", stalls)
		}
	})
}
