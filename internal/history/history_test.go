package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/history"
)

var t0 = time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func op(gen string, node int64, id uint64, send, recv int) history.Op {
	return history.Op{Client: "c-" + gen, Generator: gen, Node: node, ID: id, Send: at(send), Recv: at(recv)}
}

// idTime reads the test IDs' time: the ID divided by 1000 is milliseconds after t0.
func idTime(id uint64) time.Time { return at(int(id / 1000)) }

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ops    []history.Op
		cfg    history.Config
		counts [4]int // repeated, not increasing, stale lease, time order
	}{
		{"valid", []history.Op{op("a", 0, 1000, 1, 2), op("a", 0, 2000, 2, 3), op("b", 1, 2001, 2, 3)},
			history.Config{Time: idTime}, [4]int{}},
		{"repeat across generators", []history.Op{op("a", 0, 5000, 1, 2), op("b", 0, 5000, 10, 11)},
			history.Config{}, [4]int{1, 0, 0, 0}},
		{"repeat, later one sent first in the input", []history.Op{op("b", 0, 5000, 10, 11), op("a", 0, 5000, 1, 2), op("a", 0, 5000, 20, 21)},
			history.Config{}, [4]int{2, 1, 0, 0}},
		{"decrease within a generator", []history.Op{op("a", 0, 3000, 1, 2), op("a", 0, 2000, 3, 4)},
			history.Config{}, [4]int{0, 1, 0, 0}},
		{"concurrent requests of one generator may answer in any order", []history.Op{op("a", 0, 3000, 1, 5), op("a", 0, 2000, 2, 4)},
			history.Config{}, [4]int{}},
		{"stale lease", []history.Op{op("a", 0, 1000, 1, 2), op("a", 0, 9000, 9, 10)},
			history.Config{Leases: []history.Lease{{Generator: "a", Node: 0, Start: at(0), End: at(5)}}}, [4]int{0, 0, 1, 0}},
		{"no lease on that node", []history.Op{op("a", 3, 1000, 1, 2)},
			history.Config{Leases: []history.Lease{{Generator: "a", Node: 0, Start: at(0)}}}, [4]int{0, 0, 1, 0}},
		{"time order beyond skew", []history.Op{op("a", 0, 50000, 1, 2), op("b", 1, 10000, 3, 4)},
			history.Config{Time: idTime, Skew: 20 * time.Millisecond}, [4]int{0, 0, 0, 1}},
		{"time order within skew", []history.Op{op("a", 0, 50000, 1, 2), op("b", 1, 40000, 3, 4)},
			history.Config{Time: idTime, Skew: 20 * time.Millisecond}, [4]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := history.Check(tc.ops, tc.cfg)
			got := [4]int{r.RepeatedN, r.NotIncreasingN, r.StaleLeaseN, r.TimeOrderN}
			if got != tc.counts {
				var b strings.Builder
				r.Write(&b)
				t.Errorf("counts %v, want %v\n%s", got, tc.counts, b.String())
			}
			if r.Valid() != (tc.counts == [4]int{}) {
				t.Errorf("Valid() = %v", r.Valid())
			}
		})
	}
}

func TestWriteNamesTheOperations(t *testing.T) {
	r := history.Check([]history.Op{op("p0", 1, 4242, 1, 2), op("p0-successor", 1, 4242, 7, 8)}, history.Config{})
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{":valid? false", ":repeated-count 1", `:generator "p0-successor"`, `:generator "p0"`, ":id 4242", ":stale-lease :not-checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestLongestGap(t *testing.T) {
	r := history.Check([]history.Op{op("a", 0, 1, 0, 1), op("a", 0, 2, 1, 2), op("b", 0, 3, 400, 402)}, history.Config{})
	if r.LongestGap != 400*time.Millisecond {
		t.Errorf("LongestGap %v, want 400ms", r.LongestGap)
	}
}
