package partition_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPartitionTableMatchesRun holds docs/nodes.md's partitions table to the run it quotes:
// each pair of RESULT lines TestFaultPartition logged into docs/bench/partitions/run.txt (the
// protected run and its control) is one row, and the table has no other. Regenerate both with
// the command on the file's first line.
func TestPartitionTableMatchesRun(t *testing.T) {
	run, err := os.ReadFile("../../../../docs/bench/partitions/run.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../../docs/nodes.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"etcd": "etcd", "pglease": "PostgreSQL"}
	type half struct{ ids, rep, gap string }
	safe, control := map[string]half{}, map[string]half{}
	res := regexp.MustCompile(`RESULT partition (\S+) (\S+) safe=(true|false): (\d+) IDs, (\d+) repeated, (\d+) stale-lease.* at most (\S+)`)
	for _, m := range res.FindAllStringSubmatch(string(run), -1) {
		key := names[m[1]] + " " + m[2]
		if m[3] == "true" {
			safe[key] = half{m[4], m[5], m[7]}
		} else {
			control[key] = half{m[4], m[5], m[7]}
		}
	}
	if len(safe) == 0 {
		t.Fatal("no RESULT lines in docs/bench/partitions/run.txt")
	}
	var want []string
	for k, s := range safe {
		c := control[k]
		want = append(want, strings.Join([]string{k, s.ids, s.rep, c.ids, c.rep, s.gap}, " "))
	}
	var got []string
	row := regexp.MustCompile(`^\| (etcd|PostgreSQL) \| (\S+) \| ([\d,]+) \| \**([\d,]+)\** \| ([\d,]+) \| ([\d,]+) \| (\S+) \|$`)
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			n := func(s string) string { return strings.ReplaceAll(s, ",", "") }
			got = append(got, strings.Join([]string{m[1], m[2], n(m[3]), n(m[4]), n(m[5]), n(m[6]), m[7]}, " "))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("docs/nodes.md's partitions table (store scenario IDs repeated controlIDs controlRepeated gap):\n%s\nthe run in docs/bench/partitions/run.txt:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for k, s := range safe {
		if s.rep != "0" {
			t.Errorf("%s: the committed run repeated %s IDs", k, s.rep)
		}
		if c := control[k]; c.rep == "0" || c.rep == "" {
			t.Errorf("%s: the committed control repeated nothing", k)
		}
	}
}
