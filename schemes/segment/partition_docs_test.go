package segment_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// partitionRuns are the runs docs/segment.md's partition tables quote: the file under
// docs/bench/partitions/ a `make fault-long` test logged its ROW lines into, the tag of those
// lines, the store's label in the table's first column, the suffix of its control rows (which
// must repeat), and the rows that may repeat or not (a finding the test reports, not a
// protection it holds); every other row must not repeat.
var partitionRuns = []struct {
	file, tag, label, control string
	free                      []string
}{
	{"segment-pg.txt", "pg-partition", "PostgreSQL, partitioned", "-unprotected", nil}, // TestFaultPartitionPG
	// TestFaultPartitionGalera; node-cut is its multi-writer row, in which Galera let two
	// nodes commit the same increment.
	{"segment-galera.txt", "galera-partition", "MariaDB Galera, partitioned", "-ignore-quorum", []string{"node-cut"}},
}

// TestPartitionTableMatchesRun holds docs/segment.md's partition table to the runs it quotes:
// each ROW line of each run in partitionRuns is one row of the table under the run's label,
// and the table has no other; the control rows must repeat and the others must not.
func TestPartitionTableMatchesRun(t *testing.T) {
	doc, err := os.ReadFile("../../docs/segment.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range partitionRuns {
		run, err := os.ReadFile("../../docs/bench/partitions/" + r.file)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, m := range regexp.MustCompile(`ROW `+r.tag+` (\S+): (\d+) (?:failovers|cuts), (\d+) IDs, (\d+) repeated`).FindAllStringSubmatch(string(run), -1) {
			want = append(want, strings.Join(m[1:], " "))
			if control := strings.HasSuffix(m[1], r.control); !slices.Contains(r.free, m[1]) && control == (m[4] == "0") {
				t.Errorf("%s row %s: %s repeated IDs (control %v)", r.file, m[1], m[4], control)
			}
		}
		if len(want) == 0 {
			t.Fatalf("no ROW lines in docs/bench/partitions/%s", r.file)
		}
		var got []string
		row := regexp.MustCompile("^\\| " + regexp.QuoteMeta(r.label) + " \\| `([a-z-]+)` \\|[^|]*\\| (\\d+) \\| ([\\d,]+) \\| \\**([\\d,]+)\\** \\|$")
		for _, line := range strings.Split(string(doc), "\n") {
			if m := row.FindStringSubmatch(line); m != nil {
				got = append(got, strings.Join([]string{m[1], m[2], strings.ReplaceAll(m[3], ",", ""), strings.ReplaceAll(m[4], ",", "")}, " "))
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("docs/segment.md's partition table, %s rows (row failovers IDs repeated):\n%s\nthe run in docs/bench/partitions/%s:\n%s",
				r.label, strings.Join(got, "\n"), r.file, strings.Join(want, "\n"))
		}
	}
}
