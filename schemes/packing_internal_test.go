package schemes

import (
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
)

// TestPacking: which layouts reserve with an atomic add, and that their poisoned state reads
// as a used-up tick no clock reaches, which minSpare adds from goroutines in flight cannot
// wrap to a low tick.
func TestPacking(t *testing.T) {
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		l   layouts.Layout
		add bool
	}{
		{layouts.Twitter, true},
		{layouts.Discord, true},
		{layouts.Instagram, true},
		{layouts.Sonyflake, true},
		{layouts.Baidu, true},
		{layouts.Mastodon, false}, // 48-bit time: 16 counter bits, all the sequence's
		{layouts.Layout{Name: "seq22", Fields: []layouts.Field{layouts.Time(41), layouts.Seq(22)}, Unit: time.Millisecond, Epoch: epoch}, true},
		{layouts.Layout{Name: "full", Fields: []layouts.Field{layouts.Time(42), layouts.Seq(22)}, Unit: time.Millisecond, Epoch: epoch}, false},
		{layouts.Layout{Name: "tiny", Fields: []layouts.Field{layouts.Time(41), layouts.Seq(1)}, Unit: time.Millisecond, Epoch: epoch}, true},
	} {
		t.Run(tt.l.Name, func(t *testing.T) {
			g := &Snowflake{seqBits: tt.l.SeqBits()}
			g.seqMask = 1<<g.seqBits - 1
			g.newPacking(tt.l)
			if g.addPath != tt.add {
				t.Fatalf("addPath = %v, want %v", g.addPath, tt.add)
			}
			if g.pMask < g.seqMask {
				t.Fatalf("counter mask %#x below the sequence's %#x", g.pMask, g.seqMask)
			}
			if tick := int64(g.poisoned >> g.pBits); tick < tt.l.MaxTick() || g.poisoned&g.pMask < g.seqMask {
				t.Errorf("poisoned state %#x: tick %d (max %d), counter %#x: not a used-up tick past the time field", g.poisoned, tick, tt.l.MaxTick(), g.poisoned&g.pMask)
			}
			if g.addPath {
				if g.poisoned+minSpare < g.poisoned {
					t.Errorf("poisoned state %#x wraps within %d adds", g.poisoned, minSpare)
				}
				if spare := g.pMask - g.seqMask; spare < minSpare {
					t.Errorf("counter headroom %d below %d", spare, minSpare)
				}
			}
		})
	}
}
