package rocksdb

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// parseCFStats reads two figures from RocksDB's rocksdb.cfstats property text: the
// Comp(cnt) column of its "Compaction Stats" table for levels L0–L6 (a flush counts in L0's
// row) and the write stalls of its "Stalls(count):" line, summed as RocksDB sums its own
// total (the "_with_compaction" counts are parts of the others and are left out). A text
// without that table or line is an error naming what is missing.
func parseCFStats(text string) (levels [7]int64, stalls int64, err error) {
	lines := strings.Split(text, "\n")
	col := -1
	seenTable := false
	for _, ln := range lines {
		f := strings.Fields(ln)
		if len(f) == 0 {
			if seenTable {
				col = -1
			}
			continue
		}
		if f[0] == "Level" && col < 0 && !seenTable {
			for i, h := range f {
				if h == "Comp(cnt)" {
					col = i + 1 // Size is one heading over two fields ("8.09 MB")
				}
			}
			if col < 0 {
				return levels, 0, fmt.Errorf("dbbench: rocksdb: cfstats: no Comp(cnt) column in %q", ln)
			}
			seenTable = true
			continue
		}
		if col >= 0 && len(f[0]) == 2 && f[0][0] == 'L' && f[0][1] >= '0' && f[0][1] <= '6' {
			if len(f) <= col {
				return levels, 0, fmt.Errorf("dbbench: rocksdb: cfstats: row %q has no Comp(cnt)", ln)
			}
			n, perr := strconv.ParseInt(f[col], 10, 64)
			if perr == nil && n < 0 {
				perr = strconv.ErrRange
			}
			if perr != nil {
				return levels, 0, fmt.Errorf("dbbench: rocksdb: cfstats: row %s: Comp(cnt) %q: %w", f[0], f[col], perr)
			}
			levels[f[0][1]-'0'] = n
		}
		if strings.HasPrefix(ln, "Stalls(count):") {
			if !seenTable {
				break
			}
			s, serr := parseStalls(strings.TrimPrefix(ln, "Stalls(count):"))
			if serr != nil {
				return levels, 0, serr
			}
			return levels, s, nil
		}
	}
	if !seenTable {
		return levels, 0, fmt.Errorf("dbbench: rocksdb: cfstats: no Compaction Stats table")
	}
	return levels, 0, fmt.Errorf("dbbench: rocksdb: cfstats: no Stalls(count) line")
}

// parseStalls sums the "N name" parts of a Stalls(count) line but the interval total and the
// "_with_compaction" parts.
func parseStalls(s string) (int64, error) {
	var total int64
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) < 2 || f[0] == "interval" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err == nil && n < 0 {
			err = strconv.ErrRange
		}
		if err != nil {
			return 0, fmt.Errorf("dbbench: rocksdb: cfstats: stall count %q: %w", strings.TrimSpace(part), err)
		}
		if strings.HasSuffix(f[len(f)-1], "_with_compaction") {
			continue
		}
		total += n
	}
	return total, nil
}

// optionsVersion reads the RocksDB version from the OPTIONS file of the database in dir
// (its [Version] section's line "rocksdb_version=7.8.3").
func optionsVersion(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, ln := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(ln), "rocksdb_version="); ok {
				return v
			}
		}
	}
	return "(version unknown)"
}

// bindingVersion is the grocksdb module's version in the binary's build information.
func bindingVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/linxGnu/grocksdb" {
				return d.Version
			}
		}
	}
	return "(version unknown)"
}
