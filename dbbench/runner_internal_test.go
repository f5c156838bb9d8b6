package dbbench

import (
	"slices"
	"testing"
)

// TestLoadPlan checks the order of a run's loads: rounds of all schemes, the baseline first
// in each round, the warm-ups in the first round only, just before each first measured load,
// and the last round's loads marked last.
func TestLoadPlan(t *testing.T) {
	for _, tt := range []struct {
		name                       string
		schemes, repeat, n, warmup int
		baseline                   bool
		want                       []job
	}{
		{"one round, no warm-up, no baseline", 2, 1, 10, 0, false, []job{
			{ri: 0, n: 10, measured: true, last: true}, {ri: 1, n: 10, measured: true, last: true}}},
		{"two rounds with warm-ups and baseline", 1, 2, 10, 3, true, []job{
			{ri: -1, n: 3}, {ri: -1, n: 10, measured: true}, {ri: 0, n: 3}, {ri: 0, n: 10, measured: true},
			{ri: -1, n: 10, measured: true, last: true}, {ri: 0, n: 10, measured: true, last: true}}},
		{"app: baseline, no warm-up", 2, 1, 5, 0, true, []job{
			{ri: -1, n: 5, measured: true, last: true}, {ri: 0, n: 5, measured: true, last: true}, {ri: 1, n: 5, measured: true, last: true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := loadPlan(tt.schemes, tt.repeat, tt.n, tt.warmup, tt.baseline); !slices.Equal(got, tt.want) {
				t.Errorf("loadPlan = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
