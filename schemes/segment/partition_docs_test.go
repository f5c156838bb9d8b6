package segment_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// partitionRuns are the committed partition runs (`make fault-long`) docs/segment.md's
// partition tables quote: the store as the tables name it, the output file, the store name
// its ROW lines carry, the prefix of its checker reports (store-row.edn beside the file), its
// control rows (which must repeat), and the rows that may repeat or not (a finding the test
// reports, not a protection it holds); every other row must not repeat.
var partitionRuns = []struct {
	doc, file, row, edn string
	controls, free      []string
}{
	{"PostgreSQL", "segment-pg.txt", "pg-partition", "pg-partition", []string{"sync-cancelled-unprotected", "async-slot-ignoring-slot"}, nil},
	{"MariaDB", "segment-mariadb.txt", "mariadb-partition", "mariadb-partition", []string{"semisync-partition-unprotected"}, nil},
	{"Redis", "segment-redis.txt", "redis-partition", "redis-partition", []string{"default-ignoring-backlog", "async"}, nil},
	// TestFaultPartitionGalera; node-cut-no-writer-guard is its multi-writer row without the
	// writer guard, in which Galera let two nodes commit the same increment.
	{"MariaDB Galera", "segment-galera.txt", "galera-partition", "segment-galera", []string{"node-cut-ignore-quorum", "node-cut-no-writer-guard"}, nil},
}

// TestPartitionTableMatchesRun holds docs/segment.md's partition table to the runs it quotes:
// each ROW line TestFaultPartitionPG, TestFaultPartitionMariaDB, TestFaultPartitionRedis and
// TestFaultPartitionGalera logged into docs/bench/partitions/segment-{pg,mariadb,redis,galera}.txt
// is one row of the tables,
// and the table has no other; the control rows must repeat and the others must not, each
// row's checker report (store-row.edn beside the run) must say so, and the table's last column
// is the report's :longest-gap.
func TestPartitionTableMatchesRun(t *testing.T) {
	doc, err := os.ReadFile("../../docs/segment.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	gaps := map[string]string{} // store row → the unavailability column the docs must show
	for _, pr := range partitionRuns {
		run, err := os.ReadFile("../../docs/bench/partitions/" + pr.file)
		if err != nil {
			t.Fatal(err)
		}
		ms := regexp.MustCompile(`ROW `+pr.row+` (\S+): (\d+) (?:failovers|cuts|pauses), (\d+) IDs, (\d+) repeated`).FindAllStringSubmatch(string(run), -1)
		if len(ms) == 0 {
			t.Errorf("no ROW lines in docs/bench/partitions/%s", pr.file)
		}
		for _, m := range ms {
			want = append(want, pr.doc+" "+strings.Join(m[1:], " "))
			if control := slices.Contains(pr.controls, m[1]); !slices.Contains(pr.free, m[1]) && control == (m[4] == "0") {
				t.Errorf("%s row %s: %s repeated IDs (control %v)", pr.doc, m[1], m[4], control)
			}
			edn, err := os.ReadFile("../../docs/bench/partitions/" + pr.edn + "-" + m[1] + ".edn")
			if err != nil {
				t.Error(err)
				continue
			}
			if valid := strings.Contains(string(edn), ":valid? true") && strings.Contains(string(edn), ":repeated-count 0\n"); valid != (m[4] == "0") {
				t.Errorf("%s row %s: %s repeated, but its checker report says:\n%s", pr.doc, m[1], m[4], edn)
			}
			gaps[pr.doc+" "+m[1]] = longestGap(t, string(edn))
		}
	}
	// The Redis controls lost more than the gap (5,000 numbers) at every failover.
	run, err := os.ReadFile("../../docs/bench/partitions/segment-redis.txt")
	if err != nil {
		t.Fatal(err)
	}
	losses := regexp.MustCompile(`the promoted replica has max_id (\d*), the killed primary had (\d+)`).FindAllStringSubmatch(string(run), -1)
	n := 0
	for _, m := range losses {
		promoted, _ := strconv.Atoi(m[1]) // empty: the key did not reach the replica at all
		if killed, _ := strconv.Atoi(m[2]); killed == 0 {
			continue // the default row took nothing
		} else if killed-promoted <= 5000 {
			t.Errorf("segment-redis.txt: a failover lost %d numbers (%s less %s), not above the gap of 5,000 docs/segment.md says every one passed", killed-promoted, m[2], m[1])
		}
		n++
	}
	if n != 6 {
		t.Errorf("segment-redis.txt: %d failovers of the control rows logged their loss, want 6", n)
	}
	// The PostgreSQL control of the asynchronous rows lost more than the gap at every failover
	// too: a promoted standby without the key's row ("none") starts it after the gap.
	run, err = os.ReadFile("../../docs/bench/partitions/segment-pg.txt")
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for _, sub := range regexp.MustCompile(`(?s)=== RUN   TestFaultPartitionPG/async-slot-ignoring-slot\n(.*?)--- `).FindAllStringSubmatch(string(run), -1) {
		for _, m := range regexp.MustCompile(`the killed primary had max_id (\d+|none), the promoted standby has (\d+|none)`).FindAllStringSubmatch(sub[1], -1) {
			killed, _ := strconv.Atoi(m[1])
			promoted, _ := strconv.Atoi(m[2]) // none: 0
			if killed-promoted <= 5000 {
				t.Errorf("segment-pg.txt, async-slot-ignoring-slot: a failover lost %d numbers (%s less %s), not above the gap of 5,000 docs/segment.md says every one passed", killed-promoted, m[1], m[2])
			}
			n++
		}
	}
	if n != 3 {
		t.Errorf("segment-pg.txt: %d failovers of async-slot-ignoring-slot logged their loss, want 3", n)
	}
	var got []string
	row := regexp.MustCompile("^\\| (PostgreSQL|MariaDB|Redis|MariaDB Galera), partitioned \\| `([a-z-]+)` \\|[^|]*\\| (\\d+) \\| ([\\d,]+) \\| \\**([\\d,]+)\\** \\| ([^|]+) \\|$")
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			got = append(got, strings.Join([]string{m[1], m[2], m[3], strings.ReplaceAll(m[4], ",", ""), strings.ReplaceAll(m[5], ",", "")}, " "))
			want, ok := gaps[m[1]+" "+m[2]]
			if !ok {
				continue // a row of no run, or without a report: reported above or below
			}
			if m[6] != want {
				t.Errorf("docs/segment.md, %s row %s: longest time without an ID %q, its checker report says %q", m[1], m[2], m[6], want)
			}
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("docs/segment.md's partition table (store row failovers IDs repeated):\n%s\nthe runs in docs/bench/partitions/:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// longestGap is the unavailability column docs/segment.md shows for a checker report: its
// :longest-gap in seconds to a tenth, or "no ID issued" for a run that issued none.
func longestGap(t *testing.T, edn string) string {
	t.Helper()
	if strings.Contains(edn, ":ops 0\n") {
		return "no ID issued"
	}
	m := regexp.MustCompile(`:longest-gap "([^"]+)"`).FindStringSubmatch(edn)
	if m == nil {
		t.Errorf("a checker report without :longest-gap:\n%s", edn)
		return ""
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Error(err)
		return ""
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
