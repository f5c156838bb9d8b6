package dbbench

import (
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// TestArrivals: a key below the largest one before it is late, and its distance behind the
// edge is how many of the window's keys are larger; keys of every column kind compare as
// their databases order them.
func TestArrivals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keys      []engine.Value
		window    int
		late      int64
		p50, p99  float64
		latePcent float64
	}{
		{"in order", []engine.Value{{I64: 1}, {I64: 2}, {I64: 3}}, 8, 0, 0, 0, 0},
		{"two late", []engine.Value{{I64: 1}, {I64: 2}, {I64: 5}, {I64: 3}, {I64: 4}, {I64: 6}}, 8, 2, 1, 1, 100.0 * 2 / 6},
		{"window caps behind", []engine.Value{{I64: 5}, {I64: 6}, {I64: 7}, {I64: 1}}, 2, 1, 2, 2, 25},
		{"bytes", []engine.Value{{B16: [16]byte{0, 2}}, {B16: [16]byte{0, 1}}, {B16: [16]byte{1}}}, 8, 1, 1, 1, 100.0 / 3},
		{"text", []engine.Value{{Str: "b"}, {Str: "a"}, {Str: "ab"}}, 8, 2, 1, 1, 100.0 * 2 / 3},
		{"descending", []engine.Value{{I64: 9}, {I64: 8}, {I64: 7}, {I64: 6}}, 8, 3, 2, 2, 75},
	} {
		a := newArrivals(tc.window)
		for _, k := range tc.keys {
			a.add(k)
		}
		var c Contention
		a.fill(&c)
		if c.Parents != int64(len(tc.keys)) || c.Late != tc.late || c.BehindP50 != tc.p50 || c.BehindP99 != tc.p99 || c.LatePercent != tc.latePcent || c.BehindWindow != tc.window {
			t.Errorf("%s: %+v; want late %d (%.1f%%), behind p50 %v p99 %v", tc.name, c, tc.late, tc.latePcent, tc.p50, tc.p99)
		}
	}
}
