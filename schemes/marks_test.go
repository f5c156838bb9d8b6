package schemes_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// TestSnowflakeMarkRestart restarts a generator whose store holds a mark ahead of the clock, as
// after a crash followed by a backward wall-clock step: 1 ms ahead waits, 50 ms continues above
// the mark, 2 s fails naming the drift.
func TestSnowflakeMarkRestart(t *testing.T) {
	tests := []struct {
		ahead time.Duration
		want  string // "wait", "continue" or "fail"
	}{
		{time.Millisecond, "wait"},
		{50 * time.Millisecond, "continue"},
		{2 * time.Second, "fail"},
	}
	l := layouts.Twitter
	for _, tt := range tests {
		t.Run("ahead="+tt.ahead.String(), func(t *testing.T) {
			clk := newFakeClock(t0)
			marks := &memMarks{mark: t0.Add(tt.ahead)}
			g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Marks: marks})
			id, err := g.Next()
			slept, bad := clk.Stats()
			if bad != 0 {
				t.Errorf("%d non-positive sleeps", bad)
			}
			if tt.want == "fail" {
				if !errors.Is(err, schemes.ErrClockBackward) || !strings.Contains(err.Error(), tt.ahead.String()) {
					t.Fatalf("Next = %v; want ErrClockBackward naming %v", err, tt.ahead)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tm := l.Decompose(id).Time; !tm.After(t0.Add(tt.ahead)) {
				t.Errorf("first ID at %v, not above the mark %v", tm, t0.Add(tt.ahead))
			}
			switch {
			case tt.want == "wait" && slept < tt.ahead:
				t.Errorf("slept %v, want it to wait out the %v", slept, tt.ahead)
			case tt.want == "continue" && slept >= tt.ahead:
				t.Errorf("slept %v, want it to continue above the mark instead", slept)
			}
			if tm := l.Decompose(id).Time; tm.After(marks.Max()) {
				t.Errorf("ID at %v issued above the saved mark %v", tm, marks.Max())
			}
		})
	}
}

// TestSnowflakeMarksSavedAhead issues IDs while the clock moves and checks after each one that
// its time is at or below the highest durable mark, and that saves are per window, not per ID.
func TestSnowflakeMarksSavedAhead(t *testing.T) {
	for _, window := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 0} {
		t.Run("window="+window.String(), func(t *testing.T) {
			clk := newFakeClock(t0)
			marks := &memMarks{}
			g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Marks: marks, MarkWindow: window})
			l := g.Layout()
			const n = 200_000
			var prev uint64
			for i := range n {
				if i%500 == 0 {
					clk.Step(time.Millisecond)
				}
				id := mustNext(t, g)
				if id <= prev {
					t.Fatalf("%d after %d", id, prev)
				}
				prev = id
				if tm := l.Decompose(id).Time; tm.After(marks.Max()) {
					t.Fatalf("ID %d at %v issued above the durable mark %v", i, tm, marks.Max())
				}
			}
			// The clock moved 400 ms: about two saves per window.
			if s := marks.Saves(); s > 2000 {
				t.Errorf("%d saves for %d IDs: the mark is saved far too often", s, n)
			}
		})
	}
}

// TestSnowflakeMarkDurableFirst: while the store cannot save, no ID above the old mark comes
// out; Next blocks until the save is durable.
func TestSnowflakeMarkDurableFirst(t *testing.T) {
	clk := newFakeClock(t0)
	gate := make(chan struct{})
	marks := &memMarks{gate: gate}
	g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Marks: marks})
	type result struct {
		id  uint64
		err error
	}
	done := make(chan result, 1)
	go func() {
		id, err := g.Next()
		done <- result{id, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("Next returned %d, %v before any mark was durable", r.id, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if tm := g.Layout().Decompose(r.id).Time; tm.After(marks.Max()) {
		t.Errorf("ID at %v above the durable mark %v", tm, marks.Max())
	}
}

func TestSnowflakeMarkSaveError(t *testing.T) {
	clk := newFakeClock(t0)
	marks := &memMarks{saveErr: errors.New("read-only file system")}
	g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Marks: marks})
	if _, err := g.Next(); !errors.Is(err, schemes.ErrMark) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Next = %v, want ErrMark with the store's error", err)
	}
	if err := g.NextN(make([]uint64, 10)); !errors.Is(err, schemes.ErrMark) {
		t.Errorf("NextN = %v, want ErrMark", err)
	}
}

// TestSnowflakeMarksConcurrent shares a marked generator among goroutines with the system
// clock: no duplicates, nothing above the durable mark.
func TestSnowflakeMarksConcurrent(t *testing.T) {
	marks := &memMarks{}
	g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22, Marks: marks, MarkWindow: 2 * time.Millisecond})
	per := concurrencyCounts() / 40
	out := make([][]uint64, 4)
	var wg sync.WaitGroup
	for w := range out {
		wg.Go(func() {
			for range per {
				id, err := g.Next()
				if err != nil {
					t.Error(err)
					return
				}
				if tm := seq22.Decompose(id).Time; tm.After(marks.Max()) {
					t.Errorf("ID at %v above the durable mark %v", tm, marks.Max())
					return
				}
				out[w] = append(out[w], id)
			}
		})
	}
	wg.Wait()
	var all []uint64
	for _, ids := range out {
		all = append(all, ids...)
	}
	if id, dup := firstDuplicate(all); dup {
		t.Fatalf("ID %d issued twice", id)
	}
}

// fence is a schemes.Fence switched by the test.
type fence struct {
	mu  sync.Mutex
	err error
}

func (f *fence) Err() error { f.mu.Lock(); defer f.mu.Unlock(); return f.err }

func TestSnowflakeFence(t *testing.T) {
	f := &fence{}
	g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22, Fence: f})
	mustNext(t, g)
	f.mu.Lock()
	f.err = errors.New("lease lost")
	f.mu.Unlock()
	if _, err := g.Next(); !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "lease lost") {
		t.Errorf("Next = %v, want ErrFenced with the fence's error", err)
	}
	if err := g.NextN(make([]uint64, 3)); !errors.Is(err, schemes.ErrFenced) {
		t.Errorf("NextN = %v, want ErrFenced", err)
	}
}

// TestSnowflakeMarkWindowRestart restarts a generator on a clock that did not move, against a
// mark its predecessor saved one window ahead (the mark_window=1s with the default
// drift policy failed with "clock moved backwards … 965ms behind"). A mark within the window
// (plus the lookahead) is waited out, with any drift policy, and the first ID is above it; a
// mark further ahead is a clock that stepped back and still goes through the policy.
func TestSnowflakeMarkWindowRestart(t *testing.T) {
	strict := schemes.DriftPolicy{MaxWait: -1, MaxContinue: -1}
	tests := []struct {
		name   string
		window time.Duration
		look   int
		drift  schemes.DriftPolicy
		ahead  time.Duration // mark minus clock at restart
		fail   bool
	}{
		{"window=1s/default policy", time.Second, 0, schemes.DriftPolicy{}, time.Second, false},
		{"window=1s/continue off", time.Second, 0, schemes.DriftPolicy{MaxContinue: -1}, time.Second, false},
		{"window=1s/wait and continue off", time.Second, 0, strict, time.Second, false},
		{"window=1s/half used", time.Second, 0, schemes.DriftPolicy{}, 400 * time.Millisecond, false},
		{"window=1h/default policy", time.Hour, 0, schemes.DriftPolicy{}, time.Hour, false},
		{"window=1s/lookahead=200", time.Second, 200, schemes.DriftPolicy{}, time.Second + 200*time.Millisecond, false},
		{"window=1s/default window mark", time.Second, 0, schemes.DriftPolicy{}, schemes.DefaultMarkWindow, false},
		{"window=1s/mark beyond the window", time.Second, 0, schemes.DriftPolicy{}, 3 * time.Second, true},
		{"window=1s/beyond, continue off", time.Second, 0, schemes.DriftPolicy{MaxContinue: -1}, 1500 * time.Millisecond, true},
		{"default window/mark 1s ahead", 0, 0, schemes.DriftPolicy{}, time.Second, true},
	}
	for _, tt := range tests {
		for _, batch := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "/Next", true: "/NextN"}[batch], func(t *testing.T) {
				clk := newFakeClock(t0)
				mark := t0.Add(tt.ahead)
				marks := &memMarks{mark: mark}
				g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Marks: marks, MarkWindow: tt.window, Lookahead: tt.look, Drift: tt.drift})
				var id uint64
				var err error
				if batch {
					buf := make([]uint64, 5000)
					err = g.NextN(buf)
					id = buf[0]
				} else {
					id, err = g.Next()
				}
				slept, bad := clk.Stats()
				if bad != 0 {
					t.Errorf("%d non-positive sleeps", bad)
				}
				if tt.fail {
					if !errors.Is(err, schemes.ErrClockBackward) {
						t.Fatalf("err = %v, want ErrClockBackward for a mark %v ahead", err, tt.ahead)
					}
					return
				}
				if err != nil {
					t.Fatalf("restart against a mark %v ahead (window %v): %v", tt.ahead, tt.window, err)
				}
				if tm := layouts.Twitter.Decompose(id).Time; !tm.After(mark) {
					t.Errorf("first ID at %v, not above the mark %v", tm, mark)
				}
				// The batch of 5000 spans two ticks of 4096 IDs: it may wait for the second.
				if slept > tt.ahead+2*time.Millisecond {
					t.Errorf("slept %v, more than the mark's %v lead", slept, tt.ahead)
				}
			})
		}
	}
}

// TestSnowflakeMarkFarAhead loads a mark at the last tick of a 50-bit millisecond field,
// 35,000 years ahead: tick times unit no longer fits an int64 of nanoseconds. The drift must
// not wrap negative (which made the generator sleep non-positive amounts for ever), and no
// policy, not even one that waits 292 years, can wait out a mark beyond the clock's range:
// ErrClockBackward at once.
func TestSnowflakeMarkFarAhead(t *testing.T) {
	l := custom(t0.Add(-time.Hour), time.Millisecond, layouts.Time(50), layouts.Seq(13))
	for _, drift := range []schemes.DriftPolicy{{}, {MaxWait: -1, MaxContinue: -1}, {MaxWait: time.Duration(1<<63 - 1), MaxContinue: -1}} {
		t.Run(fmt.Sprintf("wait=%v,continue=%v", drift.MaxWait, drift.MaxContinue), func(t *testing.T) {
			clk := newFakeClock(t0)
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Clock: clk, Drift: drift, Marks: &memMarks{mark: l.TickTime(l.MaxTick())}})
			done := make(chan error, 1)
			go func() { _, err := g.Next(); done <- err }()
			select {
			case err := <-done:
				// Even a policy that waits 292 years cannot reach a mark beyond the
				// clock's range.
				if !errors.Is(err, schemes.ErrClockBackward) {
					t.Errorf("err = %v, want ErrClockBackward", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Next did not return within 10 s")
			}
			if _, bad := clk.Stats(); bad != 0 {
				t.Errorf("%d non-positive sleeps", bad)
			}
		})
	}
}
