package pglease_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/idkit/idkit/internal/docstest"
)

// TestFailoverDocMatchesRun holds the times docs/nodes.md gives for TestFaultFailoverLease to
// the RESULT lines of docs/bench/pglease-failover-fault.txt: the range of B's holding times in
// the fenced rounds and in the control's, and the range of the standby's promotion times, each
// in seconds rounded to hundredths.
func TestFailoverDocMatchesRun(t *testing.T) {
	run := docstest.Read(t, "docs/bench/pglease-failover-fault.txt")
	doc := docstest.Read(t, "docs/nodes.md")
	ms := func(v, unit string) int {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		if unit == "s" {
			f *= 1000
		}
		return int(f + 0.5)
	}
	type span struct{ lo, hi int }
	add := func(s *span, v int) {
		if s.hi == 0 || v < s.lo {
			s.lo = v
		}
		s.hi = max(s.hi, v)
	}
	var fenced, control, promoted span
	re := regexp.MustCompile(`RESULT pglease-failover fenced=(true|false): .* standby promoted ([0-9.]+)(ms|s) after the kill, B held node 0 ([0-9.]+)(ms|s) after it`)
	for _, m := range re.FindAllStringSubmatch(run, -1) {
		add(&promoted, ms(m[2], m[3]))
		if m[1] == "true" {
			add(&fenced, ms(m[4], m[5]))
		} else {
			add(&control, ms(m[4], m[5]))
		}
	}
	if fenced.hi == 0 || control.hi == 0 {
		t.Fatal("docs/bench/pglease-failover-fault.txt lacks fenced or control RESULT lines")
	}
	sec := func(ms int) string { // seconds to hundredths, halves rounded up
		c := (ms + 5) / 10
		return fmt.Sprintf("%d.%02d", c/100, c%100)
	}
	flat := strings.Join(strings.Fields(doc), " ")
	for _, want := range []string{
		sec(fenced.lo) + " – " + sec(fenced.hi) + " s (quarantined for the TTL)",
		sec(control.lo) + " – " + sec(control.hi) + " s (A's holding looked lapsed on the standby)",
		"The standby was promoted " + sec(promoted.lo) + "–" + sec(promoted.hi) + " s after the kill",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("docs/nodes.md should say %q, as docs/bench/pglease-failover-fault.txt shows", want)
		}
	}
}
