package schemes_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// ctxClock is a fakeClock that also implements schemes.ContextSleeper. While stuck, its sleeps
// do not advance time: SleepContext blocks until its context is done (a wait that would take
// for ever), and a plain Sleep fails the test, since a generator must not use it when it has
// SleepContext.
type ctxClock struct {
	*fakeClock
	t       *testing.T
	mu      sync.Mutex
	stuck   bool
	waiting chan struct{} // closed when a stuck SleepContext starts waiting
}

func newCtxClock(t *testing.T, at time.Time) *ctxClock {
	return &ctxClock{fakeClock: newFakeClock(at), t: t, waiting: make(chan struct{})}
}

func (c *ctxClock) Stick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stuck = true
}

func (c *ctxClock) Sleep(d time.Duration) {
	c.t.Errorf("Sleep(%v) called on a clock with SleepContext", d)
	c.fakeClock.Sleep(d)
}

func (c *ctxClock) SleepContext(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	stuck := c.stuck
	c.mu.Unlock()
	if !stuck {
		c.fakeClock.Sleep(d)
		return nil
	}
	select {
	case <-c.waiting:
	default:
		close(c.waiting)
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestSnowflakeNextContextCancel puts a generator into each of its waits with a clock whose
// sleeps never end, cancels the context, and checks that NextContext and NextNContext return
// at once with an error wrapping context.Canceled.
func TestSnowflakeNextContextCancel(t *testing.T) {
	l := custom(t0.Add(-time.Hour), time.Millisecond, layouts.Time(41), layouts.Seq(2))
	tests := []struct {
		name  string
		set   func(*schemes.SnowflakeSettings)
		setup func(g *schemes.Snowflake, c *ctxClock) // brings g to the wait; c is not stuck yet
	}{
		{"start tick", nil, nil},
		{"sequence used up", nil, func(g *schemes.Snowflake, c *ctxClock) {
			for range 4 { // the 2-bit sequence of one tick
				mustNext(t, g)
			}
		}},
		{"lookahead used up", func(s *schemes.SnowflakeSettings) { s.Lookahead = 2 }, func(g *schemes.Snowflake, c *ctxClock) {
			mustNext(t, g) // seq 0 of the clock's tick, after the start wait
			for range 11 { // the rest of it and two ticks ahead
				mustNext(t, g)
			}
		}},
		{"clock behind, drift wait", nil, func(g *schemes.Snowflake, c *ctxClock) {
			mustNext(t, g)
			c.Step(-3 * time.Millisecond)
		}},
		{"predecessor's mark", func(s *schemes.SnowflakeSettings) {
			s.Marks = &memMarks{mark: t0.Add(time.Second)}
			s.MarkWindow = time.Second
		}, nil},
	}
	for _, tt := range tests {
		for _, batch := range []bool{false, true} {
			name := tt.name + "/Next"
			if batch {
				name = tt.name + "/NextN"
			}
			t.Run(name, func(t *testing.T) {
				clk := newCtxClock(t, t0)
				s := schemes.SnowflakeSettings{Layout: l, Clock: clk}
				if tt.set != nil {
					tt.set(&s)
				}
				g := mustSnowflake(t, s)
				if tt.setup != nil {
					tt.setup(g, clk)
				}
				clk.Stick()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() {
					if batch {
						done <- g.NextNContext(ctx, make([]uint64, 3))
						return
					}
					_, err := g.NextContext(ctx)
					done <- err
				}()
				select {
				case <-clk.waiting:
				case err := <-done:
					t.Fatalf("returned %v without waiting", err)
				case <-time.After(10 * time.Second):
					t.Fatal("the generator never started waiting")
				}
				cancel()
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("err = %v, want it to wrap context.Canceled", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("cancelling did not end the wait")
				}
			})
		}
	}
}

// TestSnowflakeNextContextPlainClock: a Clock without SleepContext cannot be interrupted in a
// sleep, but a context that is already done stops the generator before it sleeps.
func TestSnowflakeNextContextPlainClock(t *testing.T) {
	clk := newFakeClock(t0.Add(300 * time.Microsecond))
	g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.NextContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("NextContext with a cancelled context in the start wait = %v, want context.Canceled", err)
	}
	if slept, _ := clk.Stats(); slept != 0 {
		t.Errorf("slept %v after the context was cancelled", slept)
	}
	// Without a wait, an ID is issued whatever the context: the fast path does not look.
	mustNext(t, g)
	if _, err := g.NextContext(ctx); err != nil {
		t.Errorf("NextContext with an ID available at once = %v, want an ID", err)
	}
}

// TestSnowflakeNextContextSystemClock: with the system clock and a one-minute tick the first ID
// waits up to a minute; a context deadline ends the wait at once, and a mark save that hangs
// is cut short by the context too.
func TestSnowflakeNextContextSystemClock(t *testing.T) {
	minute := custom(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Minute, layouts.Time(30), layouts.Seq(12))
	hung := &memMarks{gate: make(chan struct{})} // SaveMark waits for its context
	tests := []struct {
		name string
		s    schemes.SnowflakeSettings
		want error
	}{
		{"tick of a minute", schemes.SnowflakeSettings{Layout: minute}, context.DeadlineExceeded},
		{"mark save hangs", schemes.SnowflakeSettings{Layout: seq22, Marks: hung}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustSnowflake(t, tt.s)
			for _, batch := range []bool{false, true} {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				start := time.Now()
				var err error
				if batch {
					err = g.NextNContext(ctx, make([]uint64, 10))
				} else {
					_, err = g.NextContext(ctx)
				}
				cancel()
				if !errors.Is(err, tt.want) {
					t.Fatalf("batch=%v: err = %v, want %v", batch, err, tt.want)
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("batch=%v: returned after %v, want about 100ms", batch, d)
				}
			}
		})
	}
}
