package partition_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit/internal/docstest"
)

// TestPartitionTableMatchesRun holds docs/nodes.md's partitions table to the runs it quotes:
// the RESULT lines TestFaultPartition and TestFaultPartitionService logged into
// docs/bench/partitions/leases.txt and service.txt. Each protected run is one row, beside its
// control's figures where the scenario has a control ("—" where it has none), and the table
// has no other row. Every protected run must show 0 repeats and every control some, and each
// store must have a control. Regenerate with the commands on the files' first lines.
func TestPartitionTableMatchesRun(t *testing.T) {
	run := docstest.Read(t, "docs/bench/partitions/leases.txt") + docstest.Read(t, "docs/bench/partitions/service.txt")
	doc := docstest.Read(t, "docs/nodes.md")
	names := map[string]string{"etcd": "etcd", "pglease": "PostgreSQL", "idkitd": "idkitd (etcd)"}
	type half struct{ ids, rep, gap string }
	safe, control := map[string]half{}, map[string]half{}
	res := regexp.MustCompile(`RESULT partition (\S+) (\S+) safe=(true|false): (\d+) IDs, (\d+) repeated, .* unavailable at most (\S+)`)
	for _, m := range res.FindAllStringSubmatch(run, -1) {
		key := names[m[1]] + "|" + m[2]
		if m[3] == "true" {
			safe[key] = half{m[4], m[5], m[6]}
		} else {
			control[key] = half{m[4], m[5], m[6]}
		}
	}
	if len(safe) == 0 {
		t.Fatal("no RESULT lines in docs/bench/partitions/")
	}
	var want []string
	controlled := map[string]bool{}
	for k, s := range safe {
		c, ok := control[k]
		if !ok {
			c = half{"—", "—", ""}
		} else {
			controlled[strings.Split(k, "|")[0]] = true
			if c.rep == "0" {
				t.Errorf("%s: the committed control repeated nothing", k)
			}
		}
		if s.rep != "0" {
			t.Errorf("%s: the committed run repeated %s IDs", k, s.rep)
		}
		want = append(want, strings.Join([]string{k, s.ids, s.rep, c.ids, c.rep, s.gap}, "|"))
	}
	for _, n := range names {
		if !controlled[n] {
			t.Errorf("%s: no control run in docs/bench/partitions/", n)
		}
	}
	var got []string
	row := regexp.MustCompile(`^\| (etcd|PostgreSQL|idkitd \(etcd\)) \| (\S+) \| ([\d,]+) \| \**([\d,]+)\** \| ([\d,]+|—) \| ([\d,]+|—) \| (\S+) \|$`)
	n := func(s string) string { return strings.ReplaceAll(s, ",", "") }
	for _, line := range strings.Split(doc, "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			got = append(got, strings.Join([]string{m[1], m[2], n(m[3]), n(m[4]), n(m[5]), n(m[6]), m[7]}, "|"))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("docs/nodes.md's partitions table (store|scenario|IDs|repeated|control IDs|control repeated|gap):\n%s\nthe runs in docs/bench/partitions/:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
