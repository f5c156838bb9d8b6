package etcdlease_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/docstest"
)

// TestClusterDocMatchesRun holds the times docs/nodes.md gives for TestFaultCluster to
// docs/bench/etcd-cluster-fault.txt, each a range over the runs in seconds rounded to tenths:
// the new leader after the leader's kill, the freezes, when the successor got the slot in each
// scenario, and its first ID with marks on.
func TestClusterDocMatchesRun(t *testing.T) {
	run := docstest.Read(t, "docs/bench/etcd-cluster-fault.txt")
	doc := docstest.Read(t, "docs/nodes.md")
	type span struct{ lo, hi time.Duration }
	spans := map[string]*span{}
	add := func(key, v string) {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		s, ok := spans[key]
		if !ok {
			spans[key] = &span{d, d}
			return
		}
		s.lo, s.hi = min(s.lo, d), max(s.hi, d)
	}
	leads := regexp.MustCompile(`^ *m\d leads (\S+) after the kill`)
	thaw := regexp.MustCompile(`^ *thawing \S+ after (\S+) `)
	took := regexp.MustCompile(`^ *\S+-successor took node \d+ of \S+ (\S+) after it stopped`)
	first := regexp.MustCompile(`first_id_after=(\S+)`)
	result := regexp.MustCompile(`RESULT etcd-cluster (\S+) marks=(true|false):`)
	var block []string
	for _, line := range strings.Split(run, "\n") {
		m := result.FindStringSubmatch(line)
		if m == nil {
			block = append(block, line)
			continue
		}
		for _, l := range block {
			if v := leads.FindStringSubmatch(l); v != nil {
				add("leader", v[1])
			}
			if v := thaw.FindStringSubmatch(l); v != nil {
				add("frozen", v[1])
			}
			if v := took.FindStringSubmatch(l); v != nil {
				add("took "+m[1], v[1])
			}
			if v := first.FindStringSubmatch(l); v != nil && m[2] == "true" {
				add("first", v[1])
			}
		}
		block = nil
	}
	tenths := func(d time.Duration) string { // halves rounded up
		c := (d.Milliseconds() + 50) / 100
		return strconv.FormatInt(c/10, 10) + "." + strconv.FormatInt(c%10, 10)
	}
	rng := func(key string) string {
		s, ok := spans[key]
		if !ok {
			t.Fatalf("docs/bench/etcd-cluster-fault.txt: no %s times", key)
		}
		return fmt.Sprintf("%s–%s s", tenths(s.lo), tenths(s.hi))
	}
	flat := strings.Join(strings.Fields(doc), " ")
	for _, want := range []string{
		"leader killed (new leader after " + rng("leader") + ")",
		"writer frozen (SIGSTOP) " + rng("frozen") + " at TTL",
		"slot " + rng("took follower-killed") + " after a writer was killed with a follower down, " + rng("took leader-killed") + " after one was killed with the leader",
		"and " + rng("took holder-frozen") + " after a freeze",
		"the successor's first ID came " + rng("first") + " after it started",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("docs/nodes.md should say %q, as docs/bench/etcd-cluster-fault.txt shows", want)
		}
	}
}
