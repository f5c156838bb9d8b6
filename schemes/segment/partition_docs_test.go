package segment_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPartitionTableMatchesRun holds docs/segment.md's partition table to the run it quotes:
// each ROW line TestFaultPartitionPG logged into docs/bench/partitions/segment-pg.txt
// (`make fault-long`) is one row of the table, and the table has no other; the control row
// must repeat and the others must not.
func TestPartitionTableMatchesRun(t *testing.T) {
	run, err := os.ReadFile("../../docs/bench/partitions/segment-pg.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/segment.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range regexp.MustCompile(`ROW pg-partition (\S+): (\d+) failovers, (\d+) IDs, (\d+) repeated`).FindAllStringSubmatch(string(run), -1) {
		want = append(want, strings.Join(m[1:], " "))
		if control := strings.HasSuffix(m[1], "-unprotected"); control == (m[4] == "0") {
			t.Errorf("row %s: %s repeated IDs (control %v)", m[1], m[4], control)
		}
	}
	if len(want) == 0 {
		t.Fatal("no ROW lines in docs/bench/partitions/segment-pg.txt")
	}
	var got []string
	row := regexp.MustCompile("^\\| PostgreSQL, partitioned \\| `([a-z-]+)` \\|[^|]*\\| (\\d+) \\| ([\\d,]+) \\| \\**([\\d,]+)\\** \\|$")
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			got = append(got, strings.Join([]string{m[1], m[2], strings.ReplaceAll(m[3], ",", ""), strings.ReplaceAll(m[4], ",", "")}, " "))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("docs/segment.md's partition table (row failovers IDs repeated):\n%s\nthe run in docs/bench/partitions/segment-pg.txt:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
