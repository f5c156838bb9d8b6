package schemes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// deadlineFence is a schemes.DeadlineFence driven by the test. Its Err reports only what
// Suspend and Revoke said, never the deadline passing, so the tests see that the generator
// does not depend on Err for the deadline.
type deadlineFence struct{ d schemes.Deadline }

func (f *deadlineFence) Err() error                  { _, err := f.d.Load(); return err }
func (f *deadlineFence) Deadline() *schemes.Deadline { return &f.d }

var _ schemes.DeadlineFence = (*deadlineFence)(nil)

// seq2 has four IDs per 1 ms tick, so a few calls use up a tick and a lookahead runs ahead.
var seq2 = layouts.Layout{
	Name:   "seq2",
	Fields: []layouts.Field{layouts.Time(41), layouts.Node("node", 10), layouts.Seq(2)},
	Unit:   time.Millisecond,
	Epoch:  time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
}

// draw issues IDs through Next or NextN (four at a time) until the first error or n IDs.
func draw(g *schemes.Snowflake, batch bool, n int) ([]uint64, error) {
	var ids []uint64
	for len(ids) < n {
		if batch {
			buf := make([]uint64, 4)
			if err := g.NextN(buf); err != nil {
				return ids, err
			}
			ids = append(ids, buf...)
			continue
		}
		id, err := g.Next()
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// late puts a test's deadline late in a 1 ms tick.
const late = 900 * time.Microsecond

// TestSnowflakeDeadline checks that no ID's tick ends after the fence's deadline, whatever
// takes the tick there: the clock, a lookahead, or a predecessor's mark waited out ahead of
// the clock; and that a deadline the clock has reached fails with ErrFenced although the
// fence's Err still says nothing.
func TestSnowflakeDeadline(t *testing.T) {
	tests := []struct {
		name     string
		deadline time.Duration // from t0
		look     int
		mark     time.Duration // predecessor's mark ahead of t0; 0: none
		step     time.Duration // clock step after the generator starts
		want     int           // IDs issued before the fence stops the generator (-1: any)
	}{
		// Deadlines sit late in a tick (late) so that the real time the test takes between
		// setting one and the generator converting it does not move it to the tick before.
		{"clock before the deadline", time.Second, 0, 0, 0, -1},
		{"clock at the deadline", 10*time.Millisecond + late, 0, 0, 10*time.Millisecond + late, 0},
		{"clock in the deadline's tick", 10*time.Millisecond + late, 0, 0, 10*time.Millisecond + 200*time.Microsecond, 0},
		{"clock past the deadline", 10*time.Millisecond + late, 0, 0, time.Second, 0},
		// Start tick 0 is used up; ticks 1 to 4 end by the deadline: 16 IDs.
		{"no lookahead", 5*time.Millisecond + late, 0, 0, 0, 16},
		// A lookahead of 3 counts ticks 0 to 3 as used at start; it runs 3 ticks ahead of
		// the clock through ticks 4 to 9, and stops at tick 10 although the clock reads 6.
		{"lookahead up to the deadline", 10*time.Millisecond + late, 3, 0, 0, 24},
		// The mark reserves up to 30 ms; ticks 31 to 39 end by the deadline.
		{"predecessor's mark", 40*time.Millisecond + late, 0, 30 * time.Millisecond, 0, 36},
		{"predecessor's mark past the deadline", 20*time.Millisecond + late, 0, 30 * time.Millisecond, 0, 0},
	}
	for _, tt := range tests {
		for _, batch := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "/Next", true: "/NextN"}[batch], func(t *testing.T) {
				// A deadline is an instant of the system clock; the generator places it
				// on the fake clock's t0 when it is made, so the real time between Set and
				// NewSnowflake moves it earlier. Under -race on a loaded machine that took
				// over 3 ms once (3 ticks lost: 24 IDs, not 36); an attempt that took more
				// than half of late is made again, up to 20 times.
				deadline := t0.Add(tt.deadline)
				var (
					clk *fakeClock
					g   *schemes.Snowflake
				)
				for attempt := 1; ; attempt++ {
					clk = newFakeClock(t0)
					f := &deadlineFence{}
					start := time.Now()
					f.d.Set(start.Add(tt.deadline))
					set := schemes.SnowflakeSettings{Layout: seq2, Clock: clk, Fence: f, Lookahead: tt.look}
					if tt.mark > 0 {
						set.Marks = &memMarks{mark: t0.Add(tt.mark)}
						set.MarkWindow = time.Second
					}
					g = mustSnowflake(t, set)
					took := time.Since(start)
					if took < late/2 || attempt == 20 {
						break
					}
					t.Logf("attempt %d: %v between setting the deadline and making the generator; again", attempt, took)
					g.Close()
				}
				clk.Step(tt.step)
				n := 64
				if tt.want >= 0 {
					n = tt.want + 64
				}
				ids, err := draw(g, batch, n)
				for _, id := range ids {
					if end := seq2.Decompose(id).Time.Add(seq2.Unit); end.After(deadline) {
						t.Fatalf("ID %d's tick ends at %s, after the deadline %s", id, end.Format(time.RFC3339Nano), deadline.Format(time.RFC3339Nano))
					}
				}
				if tt.want < 0 {
					if err != nil {
						t.Fatalf("after %d IDs: %v", len(ids), err)
					}
					return
				}
				if len(ids) != tt.want {
					t.Errorf("%d IDs before the deadline, want %d", len(ids), tt.want)
				}
				if !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "deadline") {
					t.Errorf("after %d IDs: %v, want ErrFenced naming the deadline", len(ids), err)
				}
				if _, bad := clk.Stats(); bad > 0 {
					t.Errorf("%d sleeps of no time", bad)
				}
			})
		}
	}
}

// TestSnowflakeDeadlineStates walks a DeadlineFence through Suspend, Set and Revoke.
func TestSnowflakeDeadlineStates(t *testing.T) {
	clk := newFakeClock(t0)
	f := &deadlineFence{}
	g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22, Clock: clk, Fence: f})
	if _, err := g.Next(); !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "never set") {
		t.Errorf("before any Set: %v, want ErrFenced saying no deadline is set", err)
	}
	f.d.Set(time.Now().Add(time.Hour))
	mustNext(t, g)
	f.d.Suspend(errors.New("store says the holding is gone"))
	if _, err := g.Next(); !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "holding is gone") {
		t.Errorf("suspended: %v, want ErrFenced with the reason", err)
	}
	if err := g.NextN(make([]uint64, 3)); !errors.Is(err, schemes.ErrFenced) {
		t.Errorf("suspended NextN: %v, want ErrFenced", err)
	}
	f.d.Set(time.Now().Add(time.Hour))
	mustNext(t, g)
	f.d.Revoke(errors.New("lease closed"))
	f.d.Set(time.Now().Add(2 * time.Hour)) // too late: revoked for good
	for _, batch := range []bool{false, true} {
		if _, err := draw(g, batch, 1); !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "lease closed") {
			t.Errorf("revoked (batch %v): %v, want ErrFenced with the reason", batch, err)
		}
	}
	if at, err := f.d.Load(); !at.IsZero() || err == nil {
		t.Errorf("Load after Revoke = %v, %v", at, err)
	}
	// A generator made with a revoked fence is stopped from the start.
	g2 := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22, Clock: clk, Fence: f})
	if _, err := g2.Next(); !errors.Is(err, schemes.ErrFenced) {
		t.Errorf("generator made after Revoke: %v, want ErrFenced", err)
	}
}

// TestSnowflakeRevokeInFlight holds a call after its deadline check, in the synchronous mark
// save that comes before its reservation, revokes the fence, and lets the call go on: it must
// fail, because Revoke stopped the generator.
func TestSnowflakeRevokeInFlight(t *testing.T) {
	for _, batch := range []bool{false, true} {
		gate := make(chan struct{})
		f := &deadlineFence{}
		f.d.Set(time.Now().Add(time.Hour))
		g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22, Fence: f, Marks: &memMarks{gate: gate}})
		res := make(chan error, 1)
		go func() { _, err := draw(g, batch, 1); res <- err }()
		time.Sleep(20 * time.Millisecond) // let the call reach the mark save
		f.d.Revoke(errors.New("released"))
		close(gate)
		if err := <-res; !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "released") {
			t.Errorf("batch %v: call in flight across Revoke: %v, want ErrFenced", batch, err)
		}
	}
}

// TestSnowflakeDeadlineContext: a call waiting at the deadline (its lookahead ran into it) ends
// when its context does.
func TestSnowflakeDeadlineContext(t *testing.T) {
	f := &deadlineFence{}
	f.d.Set(time.Now().Add(200 * time.Millisecond))
	g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq2, Fence: f, Lookahead: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var err error
	for err == nil {
		_, err = g.NextContext(ctx)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("NextContext at the deadline: %v, want the context's error", err)
	}
}

// offsetClock is the system clock shifted by a fixed amount, as a host whose wall clock reads
// behind (or ahead of) the others.
type offsetClock time.Duration

func (o offsetClock) Now() time.Time        { return time.Now().Add(time.Duration(o)) }
func (o offsetClock) Sleep(d time.Duration) { time.Sleep(d) }

// TestSnowflakeDeadlineOffsetClock: a generator whose clock reads 2 s behind the system clock
// (the deadline's clock) stops when the deadline passes, not 2 s later: no ID's time, on its
// own clock, ends after the deadline shifted onto that clock.
func TestSnowflakeDeadlineOffsetClock(t *testing.T) {
	for _, off := range []time.Duration{-2 * time.Second, 2 * time.Second} {
		f := &deadlineFence{}
		deadline := time.Now().Add(50 * time.Millisecond)
		f.d.Set(deadline)
		g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq2, Clock: offsetClock(off), Fence: f})
		start := time.Now()
		var last uint64
		var err error
		for err == nil && time.Since(start) < 5*time.Second {
			var id uint64
			if id, err = g.Next(); err == nil {
				last = id
			}
		}
		if !errors.Is(err, schemes.ErrFenced) {
			t.Fatalf("offset %v: %v after %v, want ErrFenced", off, err, time.Since(start))
		}
		if end, limit := seq2.Decompose(last).Time.Add(seq2.Unit), deadline.Add(off); end.After(limit) {
			t.Errorf("offset %v: last ID's tick ends at %s, after the deadline on its clock %s", off, end.Format(time.RFC3339Nano), limit.Format(time.RFC3339Nano))
		}
	}
}
