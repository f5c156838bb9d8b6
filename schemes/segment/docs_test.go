package segment_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFailoverTableMatchesRun holds docs/segment.md's failover table to the run it quotes:
// each ROW line TestFaultFailover* logged into docs/bench/segment-failover.txt (store,
// failovers, IDs issued, repeated) is one row of the table, and the table has no other.
// Regenerate both with the command on the file's first line.
func TestFailoverTableMatchesRun(t *testing.T) {
	run, err := os.ReadFile("../../docs/bench/segment-failover.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/segment.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"pg": "PostgreSQL", "redis": "Redis", "mariadb": "MariaDB"}
	var want []string
	for _, m := range regexp.MustCompile(`ROW (\w+) \S+: (\d+) failovers, (\d+) IDs, (\d+) repeated`).FindAllStringSubmatch(string(run), -1) {
		want = append(want, names[m[1]]+" "+m[2]+" "+m[3]+" "+m[4])
	}
	if len(want) == 0 {
		t.Fatal("no ROW lines in docs/bench/segment-failover.txt")
	}
	var got []string
	row := regexp.MustCompile(`^\| (PostgreSQL|Redis|MariaDB) \|[^|]*\|[^|]*\| (\d+) \| ([\d,]+) \| \**([\d,]+)\** \|$`)
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			got = append(got, m[1]+" "+m[2]+" "+strings.ReplaceAll(m[3], ",", "")+" "+strings.ReplaceAll(m[4], ",", ""))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("docs/segment.md's failover table (store failovers IDs repeated):\n%s\nthe run in docs/bench/segment-failover.txt:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFailoverLossMatchesRun holds the range docs/segment.md gives for what a Redis failover
// lost (the killed primary's max_id less the promoted replica's, as TestFaultFailoverRedis
// logs it) to the lines of docs/bench/segment-failover.txt.
func TestFailoverLossMatchesRun(t *testing.T) {
	run, err := os.ReadFile("../../docs/bench/segment-failover.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/segment.md")
	if err != nil {
		t.Fatal(err)
	}
	var lost []int
	for _, m := range regexp.MustCompile(`the promoted replica has max_id (\d+), the killed primary had (\d+)`).FindAllStringSubmatch(string(run), -1) {
		promoted, _ := strconv.Atoi(m[1])
		killed, _ := strconv.Atoi(m[2])
		lost = append(lost, killed-promoted)
	}
	if len(lost) == 0 {
		t.Fatal("no max_id lines in docs/bench/segment-failover.txt")
	}
	want := fmt.Sprintf("%s to %s numbers per failover", commas(slices.Min(lost)), commas(slices.Max(lost)))
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/segment.md should say %q, as docs/bench/segment-failover.txt shows", want)
	}
}

// commas writes n with thousands separators, as the docs do.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
