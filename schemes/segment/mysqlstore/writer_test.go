package mysqlstore

import (
	"strings"
	"testing"
	"time"
)

// TestDecide walks the writer guard of a Galera take (writer.go) through the takes a store
// makes on one node, with the rows those takes read.
func TestDecide(t *testing.T) {
	const me, other = "node-b", "node-a"
	t0 := time.Unix(1_800_000_000, 0)
	type step struct {
		at   time.Duration // since t0
		row  writerRow
		want action
		why  string // a part of the reason, when the take does not go through
	}
	for _, tc := range []struct {
		name  string
		me    string
		steps []step
	}{
		{name: "writer takes", me: me, steps: []step{
			{row: writerRow{maxID: 100, writer: me, sinceClaim: time.Hour, claimed: true}, want: actTake},
			{row: writerRow{maxID: 120, writer: me}, want: actTake},
		}},
		{name: "row without writer is claimed at once", me: me, steps: []step{
			{row: writerRow{maxID: 0, writer: ""}, want: actClaim},
		}},
		{name: "own claim settles for the delay", me: me, steps: []step{
			{row: writerRow{maxID: 20000, writer: me, sinceClaim: 0, claimed: true}, want: actWait, why: "claimed the key 0s ago"},
			{row: writerRow{maxID: 20000, writer: me, sinceClaim: 4999 * time.Millisecond, claimed: true}, want: actWait, why: "takes it 5s after its claim"},
			{row: writerRow{maxID: 20000, writer: me, sinceClaim: 5 * time.Second, claimed: true}, want: actTake},
		}},
		{name: "a writer first seen is waited for twice the delay", me: me, steps: []step{
			{at: 0, row: writerRow{maxID: 500, writer: other}, want: actWait, why: "node node-a writes the key (max_id 500); this node takes it over once it has seen no take for 10s"},
			{at: 5 * time.Second, row: writerRow{maxID: 500, writer: other}, want: actWait, why: "unchanged for 5s"},
			{at: 9999 * time.Millisecond, row: writerRow{maxID: 500, writer: other}, want: actWait},
			{at: 10 * time.Second, row: writerRow{maxID: 500, writer: other}, want: actClaim},
		}},
		{name: "idle writer handed over after the delay", me: me, steps: []step{
			{at: 0, row: writerRow{maxID: 500, writer: other}, want: actWait},
			{at: 1 * time.Second, row: writerRow{maxID: 520, writer: other}, want: actWait, why: "no take for 5s"},
			{at: 3 * time.Second, row: writerRow{maxID: 520, writer: other}, want: actWait, why: "unchanged for 2s"},
			{at: 6 * time.Second, row: writerRow{maxID: 520, writer: other}, want: actClaim},
		}},
		{name: "active writer is never taken over", me: me, steps: []step{
			{at: 0, row: writerRow{maxID: 500, writer: other}, want: actWait},
			{at: 4 * time.Second, row: writerRow{maxID: 520, writer: other}, want: actWait},
			{at: 8 * time.Second, row: writerRow{maxID: 540, writer: other}, want: actWait},
			{at: 12 * time.Second, row: writerRow{maxID: 540, writer: other}, want: actWait, why: "unchanged for 4s"},
			{at: 13 * time.Second, row: writerRow{maxID: 540, writer: other}, want: actClaim},
		}},
		{name: "a claim by another node restarts the wait at twice the delay", me: me, steps: []step{
			{at: 0, row: writerRow{maxID: 500, writer: other}, want: actWait},
			{at: 1 * time.Second, row: writerRow{maxID: 520, writer: other}, want: actWait},
			{at: 6 * time.Second, row: writerRow{maxID: 20520, writer: "node-c"}, want: actWait, why: "no take for 10s"},
			{at: 11 * time.Second, row: writerRow{maxID: 20520, writer: "node-c"}, want: actWait},
			{at: 16 * time.Second, row: writerRow{maxID: 20520, writer: "node-c"}, want: actClaim},
		}},
		{name: "a sighting is forgotten once this node writes", me: me, steps: []step{
			{at: 0, row: writerRow{maxID: 500, writer: other}, want: actWait},
			{at: 1 * time.Second, row: writerRow{maxID: 20500, writer: me, sinceClaim: time.Minute, claimed: true}, want: actTake},
			{at: 7 * time.Second, row: writerRow{maxID: 500, writer: other}, want: actWait},
		}},
		{name: "a clock stepped back keeps the claim settling", me: me, steps: []step{
			{row: writerRow{maxID: 20000, writer: me, sinceClaim: -3 * time.Second, claimed: true}, want: actWait, why: "claimed the key -3s ago"},
		}},
		{name: "unknown node never takes", me: "", steps: []step{
			{row: writerRow{maxID: 0, writer: ""}, want: actWait, why: "wsrep_gcomm_uuid is unreadable"},
			{row: writerRow{maxID: 0, writer: "", sinceClaim: time.Hour}, want: actWait},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{handover: DefaultHandover, seen: map[string]sighting{}}
			for i, st := range tc.steps {
				got, why := s.decide("k", tc.me, st.row, t0.Add(st.at))
				if got != st.want {
					t.Fatalf("step %d (%+v at %v): action %d (%s), want %d", i, st.row, st.at, got, why, st.want)
				}
				if !strings.Contains(why, st.why) || (got == actWait) != (why != "") {
					t.Errorf("step %d: reason %q, want one containing %q", i, why, st.why)
				}
			}
		})
	}
}

// TestDecideKeys keeps the keys' sightings apart.
func TestDecideKeys(t *testing.T) {
	s := &Store{handover: time.Second, seen: map[string]sighting{}}
	t0 := time.Unix(1_800_000_000, 0)
	row := writerRow{maxID: 7, writer: "a"}
	s.decide("k1", "b", row, t0)
	if got, _ := s.decide("k2", "b", row, t0.Add(2*time.Second)); got != actWait {
		t.Errorf("k2 seen first at +2s: action %d, want wait", got)
	}
	if got, _ := s.decide("k1", "b", row, t0.Add(2*time.Second)); got != actClaim {
		t.Errorf("k1 unchanged for 2s, twice the delay: action %d, want claim", got)
	}
	if got, _ := s.decide("k2", "b", row, t0.Add(3*time.Second)); got != actWait {
		t.Errorf("k2 unchanged for 1s: action %d, want wait", got)
	}
}
