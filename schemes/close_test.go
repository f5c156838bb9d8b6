package schemes_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes"
)

// watchMarks is a schemes.MarkStore that can hold a save until its context ends, and records
// whether a save ran (or started) after the test said the store was given up.
type watchMarks struct {
	block   atomic.Bool   // saves wait for their context to end
	running atomic.Int32  // saves in progress
	saves   atomic.Int32  // saves started
	late    atomic.Int32  // saves started after released was set
	started chan struct{} // receives once per blocked save
	gone    atomic.Bool   // set by the test once Close returned
}

func newWatchMarks() *watchMarks { return &watchMarks{started: make(chan struct{}, 16)} }

func (m *watchMarks) LoadMark(context.Context) (time.Time, error) { return time.Time{}, nil }

func (m *watchMarks) SaveMark(ctx context.Context, _ time.Time) error {
	m.running.Add(1)
	defer m.running.Add(-1)
	m.saves.Add(1)
	if m.gone.Load() {
		m.late.Add(1)
	}
	if m.block.Load() {
		m.started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// closeWithin runs g.Close and fails the test unless it returns within d.
func closeWithin(t *testing.T, g *schemes.Snowflake, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- g.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
}

// TestSnowflakeCloseStopsMarkSaves closes a generator while a mark save is in progress, in the
// background (half the window used) and synchronously (all of it used): Close cuts the save
// short and waits for it, so when it returns no save runs, none starts later, and every call
// fails with ErrClosed. A store that is closed right after Close (a lease, a file a successor
// opens) sees nothing more.
func TestSnowflakeCloseStopsMarkSaves(t *testing.T) {
	for _, tc := range []struct {
		name string
		step time.Duration // how far the clock moves after the first ID, with a 10 ms window
	}{
		{"background", 6 * time.Millisecond},
		{"synchronous", 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock(t0)
			marks := newWatchMarks()
			g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Marks: marks, MarkWindow: 10 * time.Millisecond})
			mustNext(t, g) // the first mark, saved at once
			marks.block.Store(true)
			clk.Step(tc.step)
			next := make(chan error, 1)
			go func() {
				_, err := g.Next()
				next <- err
			}()
			select {
			case <-marks.started:
			case <-time.After(5 * time.Second):
				t.Fatal("no mark save started")
			}
			closeWithin(t, g, 3*time.Second) // the store's own timeout is 5 s: Close must not wait for it
			if n := marks.running.Load(); n != 0 {
				t.Fatalf("%d mark saves still running after Close returned", n)
			}
			marks.gone.Store(true)
			err := <-next
			if tc.name == "synchronous" && !errors.Is(err, schemes.ErrClosed) {
				t.Errorf("Next waiting for its save: %v, want ErrClosed", err)
			}
			clk.Step(time.Second)
			if _, err := g.Next(); !errors.Is(err, schemes.ErrClosed) {
				t.Errorf("Next after Close: %v, want ErrClosed", err)
			}
			if err := g.NextN(make([]uint64, 10)); !errors.Is(err, schemes.ErrClosed) {
				t.Errorf("NextN after Close: %v, want ErrClosed", err)
			}
			time.Sleep(20 * time.Millisecond)
			if n := marks.late.Load(); n != 0 {
				t.Errorf("%d mark saves started after Close returned", n)
			}
			closeWithin(t, g, time.Second) // a second Close does nothing
		})
	}
}

// TestSnowflakeCloseWinsOverFence closes a generator whose lease-like fence is revoked
// afterwards (a scheme closes the generator, then releases the lease): calls still say
// ErrClosed, and a generator without marks closes too.
func TestSnowflakeCloseWinsOverFence(t *testing.T) {
	f := &deadlineFence{}
	f.d.Set(time.Now().Add(time.Hour))
	g := mustSnowflake(t, schemes.SnowflakeSettings{Fence: f})
	mustNext(t, g)
	closeWithin(t, g, time.Second)
	f.d.Revoke(errors.New("lease released"))
	_, err := g.Next()
	if !errors.Is(err, schemes.ErrClosed) || errors.Is(err, schemes.ErrFenced) {
		t.Errorf("Next after Close and Revoke: %v, want ErrClosed alone", err)
	}
}
