package schemes

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
)

var fastEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func fastLayout(unit time.Duration, fs ...layouts.Field) layouts.Layout {
	return layouts.Layout{Name: "test", Fields: fs, Unit: unit, Epoch: fastEpoch}
}

// okFence lets every ID through.
type okFence struct{}

func (okFence) Err() error { return nil }

// dlFence is a DeadlineFence, as a node lease is.
type dlFence struct{ d Deadline }

func (f *dlFence) Err() error          { _, err := f.d.Load(); return err }
func (f *dlFence) Deadline() *Deadline { return &f.d }

func newDLFence(at time.Time) *dlFence {
	f := &dlFence{}
	f.d.Set(at)
	return f
}

// systemClock is the system clock injected as a Clock.
type systemClock struct{}

func (systemClock) Now() time.Time        { return time.Now() }
func (systemClock) Sleep(d time.Duration) { time.Sleep(d) }

// TestFastPath: which generators NextContext serves through its fast path (system clock, no
// fence, atomic-add packing, the layout's value stored as it is, a unit the multiply divides
// by), and that each of them still issues increasing IDs.
func TestFastPath(t *testing.T) {
	reversed := fastLayout(time.Millisecond, layouts.Time(41), layouts.Seq(22))
	reversed.Reverse = true
	sharded, err := layouts.Twitter.Sharded(4, "worker")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		s    SnowflakeSettings
		fast bool
	}{
		{"default", SnowflakeSettings{}, true},
		{"discord", SnowflakeSettings{Layout: layouts.Discord, Node: 5}, true},
		{"seq22", SnowflakeSettings{Layout: fastLayout(time.Millisecond, layouts.Time(41), layouts.Seq(22))}, true},
		{"lookahead", SnowflakeSettings{Lookahead: 3}, true},
		{"unit=100us", SnowflakeSettings{Layout: fastLayout(100*time.Microsecond, layouts.Time(43), layouts.Seq(12))}, true},
		{"unit=1ns", SnowflakeSettings{Layout: fastLayout(time.Nanosecond, layouts.Time(62), layouts.Seq(1))}, false},
		{"clock", SnowflakeSettings{Clock: systemClock{}}, false},
		{"fence", SnowflakeSettings{Fence: okFence{}}, false},
		{"deadline", SnowflakeSettings{Fence: newDLFence(time.Now().Add(time.Hour))}, true},
		{"mastodon", SnowflakeSettings{Layout: layouts.Mastodon}, false}, // compare-and-swap packing
		{"reversed", SnowflakeSettings{Layout: reversed}, false},
		{"sharded", SnowflakeSettings{Layout: sharded}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewSnowflake(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if g.fast != tt.fast {
				t.Fatalf("fast = %v, want %v", g.fast, tt.fast)
			}
			var prev uint64
			for i := range 1000 {
				id, err := g.Next()
				if err != nil {
					t.Fatal(err)
				}
				v := id
				if g.xform {
					// The layout's value increases: the stored form reversed
					// back, the hash field cleared.
					v = g.layout.Value(id)
					if g.hBits > 0 {
						v &^= (1<<g.hBits - 1) << g.hShift
					}
				}
				if i > 0 && v <= prev {
					t.Fatalf("ID %d: value %#x not above %#x", i, v, prev)
				}
				prev = v
			}
		})
	}
}

// TestFastPathUsedUp: calls that find their tick's sequence used up, or the generator
// closed, keep failing without carrying the counter into the tick, however many there are:
// the fast path adds only when the state it loaded has room, so the counter passes the
// sequence's end by at most the goroutines between their load and their add (minSpare
// bounds them). The state is put just below a carry, which only more than minSpare adds in
// flight could reach, so that a few calls show what millions would: an add on it would show
// as a spurious backward clock, or as an ID issued after Close.
func TestFastPathUsedUp(t *testing.T) {
	// 20 bits of sequence, 21 of counter: exactly minSpare values of headroom. An hour's
	// tick stays used up for the whole test.
	l := fastLayout(time.Hour, layouts.Time(43), layouts.Seq(20))
	t.Run("used-up", func(t *testing.T) {
		g, err := NewSnowflake(SnowflakeSettings{Layout: l})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if !g.fast || !g.addPath || g.pMask-g.seqMask != minSpare {
			t.Fatalf("fast %v, addPath %v, headroom %d: want the fast path with %d", g.fast, g.addPath, g.pMask-g.seqMask, minSpare)
		}
		// The start tick counts as used up: the first ID waits for the next hour.
		tick := g.state.Load() >> g.pBits
		st := tick<<g.pBits | g.pMask - 5
		g.state.Store(st)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for range 20 {
			if _, err := g.NextContext(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("NextContext = %v, want context.Canceled", err)
			}
		}
		if got := g.state.Load(); got != st {
			t.Fatalf("state: tick %d counter %#x, want tick %d counter %#x (unchanged)", got>>g.pBits, got&g.pMask, tick, st&g.pMask)
		}
	})
	t.Run("closed", func(t *testing.T) {
		g, err := NewSnowflake(SnowflakeSettings{Layout: l})
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		const st = math.MaxUint64 - 5 // the poisoned tick, its counter 6 adds from wrapping
		g.state.Store(st)
		for range 20 {
			if _, err := g.Next(); !errors.Is(err, ErrClosed) {
				t.Fatalf("Next after Close = %v, want ErrClosed", err)
			}
		}
		if got := g.state.Load(); got != st {
			t.Fatalf("state %#x, want %#x (unchanged)", got, uint64(st))
		}
	})
}

// TestFastPathLookahead: goroutines far outnumbering a tick's sequence (8 IDs per ms, 8
// goroutines) with a lookahead of 2 ticks: no ID's tick is more than 2 ahead of the
// generator's clock read after the ID was returned, no ID repeats, each goroutine's IDs
// increase, and the strictest drift policy sees no backward clock.
func TestFastPathLookahead(t *testing.T) {
	const ahead = 2
	g, err := NewSnowflake(SnowflakeSettings{
		Layout:    fastLayout(time.Millisecond, layouts.Time(41), layouts.Seq(3)),
		Lookahead: ahead,
		Drift:     DriftPolicy{MaxWait: -1, MaxContinue: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !g.fast {
		t.Fatal("not on the fast path")
	}
	const workers, per = 8, 400 // 3,200 IDs: about 0.4 s at 8 per ms
	out := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range out {
		wg.Go(func() {
			for range per {
				id, err := g.Next()
				if err != nil {
					t.Error(err)
					return
				}
				now := g.tickOf(g.nanos())
				if tick := int64(id >> g.tShift); tick > now+ahead {
					t.Errorf("ID on tick %d, %d ticks ahead of the clock (lookahead %d)", tick, tick-now, ahead)
					return
				}
				if n := len(out[w]); n > 0 && id <= out[w][n-1] {
					t.Errorf("worker %d: ID %#x not above %#x", w, id, out[w][n-1])
					return
				}
				out[w] = append(out[w], id)
			}
		})
	}
	wg.Wait()
	seen := make(map[uint64]bool, workers*per)
	for _, ids := range out {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("ID %#x issued twice", id)
			}
			seen[id] = true
		}
	}
}

// TestFastPathDeadline: on the fast path a deadline fence still bounds every ID: none ends
// after the deadline, calls fail with ErrFenced once it has passed, and every call after
// Revoke fails at once.
func TestFastPathDeadline(t *testing.T) {
	l := fastLayout(time.Millisecond, layouts.Time(41), layouts.Seq(22))
	at := time.Now().Add(30 * time.Millisecond)
	f := newDLFence(at)
	g, err := NewSnowflake(SnowflakeSettings{Layout: l, Fence: f})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !g.fast {
		t.Fatal("not on the fast path")
	}
	n := 0
	for {
		id, err := g.Next()
		if err != nil {
			if !errors.Is(err, ErrFenced) {
				t.Fatalf("after %d IDs: %v, want ErrFenced", n, err)
			}
			break
		}
		// Tick t ends at (t+1) units after the epoch, which must not be after the deadline.
		if end := l.TickTime(int64(id>>g.tShift) + 1); end.After(at) {
			t.Fatalf("ID %#x: its tick ends at %v, after the deadline %v", id, end, at)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no ID before the deadline")
	}

	// A tick of 100 ms, so that the calls after Suspend and Revoke find the tick the
	// first ID started with its sequence open (the fast path's case), and must look at the
	// deadline all the same.
	l100 := fastLayout(100*time.Millisecond, layouts.Time(38), layouts.Seq(22))
	f2 := newDLFence(time.Now().Add(time.Hour))
	g2, err := NewSnowflake(SnowflakeSettings{Layout: l100, Fence: f2})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if !g2.fast {
		t.Fatal("not on the fast path")
	}
	if _, err := g2.Next(); err != nil {
		t.Fatal(err)
	}
	f2.d.Suspend(errors.New("renewal failed"))
	for range 10 {
		if _, err := g2.Next(); !errors.Is(err, ErrFenced) {
			t.Fatalf("Next after Suspend = %v, want ErrFenced", err)
		}
	}
	f2.d.Set(time.Now().Add(time.Hour))
	if _, err := g2.Next(); err != nil {
		t.Fatalf("Next after Set: %v", err)
	}
	f2.d.Revoke(errors.New("lease lost"))
	for range 10 {
		if _, err := g2.Next(); !errors.Is(err, ErrFenced) {
			t.Fatalf("Next after Revoke = %v, want ErrFenced", err)
		}
	}
}
