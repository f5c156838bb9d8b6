package main

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		rate        float64
		d           time.Duration
		n           int64
		spacing     time.Duration
		perTick     int64
		tick        time.Duration
		total       int64
		dueBy       map[int64]int64 // ticks → requests due
		lastDueFrom time.Duration   // when the last request is due
	}{
		{rate: 10000, d: time.Second, spacing: 100 * time.Microsecond, perTick: 1, tick: 100 * time.Microsecond, total: 10000,
			dueBy: map[int64]int64{0: 1, 1: 2, 9998: 9999, 9999: 10000, 10000: 10000, 1 << 40: 10000}, lastDueFrom: 999900 * time.Microsecond},
		{rate: 10000, d: time.Hour, n: 60, spacing: 100 * time.Microsecond, perTick: 1, tick: 100 * time.Microsecond, total: 60,
			dueBy: map[int64]int64{0: 1, 59: 60, 60: 60}, lastDueFrom: 5900 * time.Microsecond},
		{rate: 4, d: time.Second, spacing: 250 * time.Millisecond, perTick: 1, tick: 250 * time.Millisecond, total: 4,
			dueBy: map[int64]int64{0: 1, 3: 4, 4: 4}, lastDueFrom: 750 * time.Millisecond},
		// 1/3 s rounds to the nanosecond.
		{rate: 3, n: 7, spacing: 333333333, perTick: 1, tick: 333333333, total: 7,
			dueBy: map[int64]int64{2: 3}, lastDueFrom: 6 * 333333333},
		// 50,000/s is the last rate with a tick per request; above it each tick releases several.
		{rate: 50000, d: time.Second, spacing: 20 * time.Microsecond, perTick: 1, tick: 20 * time.Microsecond, total: 50000,
			dueBy: map[int64]int64{1: 2}, lastDueFrom: time.Second - 20*time.Microsecond},
		{rate: 70000, d: 10 * time.Millisecond, spacing: 14286, perTick: 2, tick: 28572, total: 700,
			dueBy: map[int64]int64{0: 1, 1: 3, 2: 5, 349: 699, 350: 700}, lastDueFrom: 699 * 14286},
		{rate: 100000, d: time.Second, spacing: 10 * time.Microsecond, perTick: 2, tick: 20 * time.Microsecond, total: 100000,
			dueBy: map[int64]int64{1: 3, 49999: 99999, 50000: 100000}, lastDueFrom: time.Second - 10*time.Microsecond},
		{rate: maxRate, d: time.Millisecond, spacing: 100, perTick: 200, tick: 20 * time.Microsecond, total: 10000,
			dueBy: map[int64]int64{0: 1, 1: 201, 49: 9801, 50: 10000}, lastDueFrom: 9999 * 100},
		{rate: 0.5, d: 5 * time.Second, spacing: 2 * time.Second, perTick: 1, tick: 2 * time.Second, total: 3,
			dueBy: map[int64]int64{0: 1, 2: 3}, lastDueFrom: 4 * time.Second},
	}
	start := time.Unix(1_700_000_000, 0)
	for _, tt := range tests {
		s := newSchedule(tt.rate, tt.d, tt.n)
		if s.spacing != tt.spacing || s.perTick != tt.perTick || s.tick() != tt.tick || s.total != tt.total {
			t.Errorf("rate %v, %v, %d requests: spacing %v, %d a tick, tick %v, total %d; want %v, %d, %v, %d",
				tt.rate, tt.d, tt.n, s.spacing, s.perTick, s.tick(), s.total, tt.spacing, tt.perTick, tt.tick, tt.total)
			continue
		}
		for ticks, want := range tt.dueBy {
			if got := s.dueBy(ticks); got != want {
				t.Errorf("rate %v: dueBy(%d) = %d, want %d", tt.rate, ticks, got, want)
			}
		}
		if got := s.due(start, s.total-1).Sub(start); got != tt.lastDueFrom {
			t.Errorf("rate %v: the last request is due %v after the start, want %v", tt.rate, got, tt.lastDueFrom)
		}
		if tt.n == 0 && s.due(start, s.total).Sub(start) < tt.d {
			t.Errorf("rate %v, %v: request %d is due within the run but not counted", tt.rate, tt.d, s.total)
		}
	}
}

// fakeTicker returns scripted tick counts and notes how many requests the pacer had released
// each time it waited.
type fakeTicker struct {
	start  time.Time
	script []int64
	err    error // returned once the script is spent
	jobs   chan time.Time
	seen   []int
	closed bool
}

func (f *fakeTicker) started() time.Time { return f.start }

func (f *fakeTicker) wait() (int64, error) {
	f.seen = append(f.seen, len(f.jobs))
	if len(f.script) == 0 {
		return 0, f.err
	}
	n := f.script[0]
	f.script = f.script[1:]
	return n, nil
}

func (f *fakeTicker) close() error { f.closed = true; return nil }

// TestPace drives the pacer with a fake ticker: it releases request 0 at once and perTick
// more at each tick, releases every overdue request at once when ticks come in a bunch (the
// pacer fell behind), hands out due times start + i·spacing in order, and stops at the total.
func TestPace(t *testing.T) {
	tests := []struct {
		name   string
		s      schedule
		script []int64
		seen   []int // requests released when the pacer waited
	}{
		{"one a tick", schedule{spacing: 100 * time.Microsecond, perTick: 1, total: 5}, []int64{1, 1, 1, 1}, []int{1, 2, 3, 4}},
		{"behind", schedule{spacing: 100 * time.Microsecond, perTick: 1, total: 20}, []int64{1, 1, 3, 1, 10, 7}, []int{1, 2, 3, 6, 7, 17}},
		{"behind past the end", schedule{spacing: time.Millisecond, perTick: 1, total: 4}, []int64{1000}, []int{1}},
		{"several a tick", schedule{spacing: 10 * time.Microsecond, perTick: 3, total: 10}, []int64{1, 2}, []int{1, 4}},
		{"one request", schedule{spacing: time.Second, perTick: 1, total: 1}, nil, nil},
	}
	start := time.Unix(1_700_000_000, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := make(chan time.Time, tt.s.total)
			tk := &fakeTicker{start: start, script: tt.script, err: errors.New("script spent"), jobs: jobs}
			unsent, err := tt.s.pace(context.Background(), tk, jobs, nil)
			if err != nil || unsent != 0 {
				t.Fatalf("pace: %d unsent, %v", unsent, err)
			}
			if !slices.Equal(tk.seen, tt.seen) {
				t.Errorf("released %v by each wait, want %v", tk.seen, tt.seen)
			}
			var i int64
			for due := range jobs { // pace closed it
				if want := start.Add(time.Duration(i) * tt.s.spacing); !due.Equal(want) {
					t.Errorf("request %d due %v, want %v", i, due.Sub(start), want.Sub(start))
				}
				i++
			}
			if i != tt.s.total {
				t.Errorf("released %d requests, want %d", i, tt.s.total)
			}
		})
	}
}

// TestPaceStops checks how the pacer stops short: when the measurement's time runs out while
// the queue is full (the rest is counted as unsent), when the context ends while it waits for
// room, and when the ticker fails.
func TestPaceStops(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	s := schedule{spacing: 100 * time.Microsecond, perTick: 1, total: 10}

	ended := make(chan time.Time)
	close(ended)
	jobs := make(chan time.Time, 2)
	unsent, err := s.pace(context.Background(), &fakeTicker{start: start, script: []int64{5}, jobs: jobs}, jobs, ended)
	if err != nil || unsent != 8 {
		t.Errorf("time up with a full queue of 2: %d unsent, %v; want 8, nil", unsent, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	jobs = make(chan time.Time, 2)
	if _, err := s.pace(ctx, &fakeTicker{start: start, script: []int64{5}, jobs: jobs}, jobs, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled with a full queue: %v, want context.Canceled", err)
	}

	jobs = make(chan time.Time, 10)
	boom := errors.New("boom")
	if _, err := s.pace(context.Background(), &fakeTicker{start: start, script: []int64{1}, err: boom, jobs: jobs}, jobs, nil); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "load: pacer: ") {
		t.Errorf("failing ticker: %v, want boom wrapped", err)
	}
	if _, ok := <-jobs; !ok {
		t.Error("the requests released before the ticker failed are gone")
	}
}

// checkTicker reads tk for at least 30 ticks, then pauses for 20 periods and reads again. The
// ticks it counts must agree with the clock: none before its time, none missed, and the ones
// that passed during the pause reported by one read.
func checkTicker(t *testing.T, tk ticker, period time.Duration) {
	t.Helper()
	start := tk.started()
	var total int64
	for total < 30 {
		before := time.Now()
		n, err := tk.wait()
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if n < 1 {
			t.Fatalf("wait returned %d ticks", n)
		}
		total += n
		// Ticks fall at start + k·period or later: no more can have passed than the clock
		// allows when wait returned, nor fewer than had passed when it was called (one less
		// for the nanoseconds between reading the clock and arming the timer).
		if most := int64(after.Sub(start) / period); total > most {
			t.Fatalf("%d ticks counted by %v, at most %d can have passed", total, after.Sub(start), most)
		}
		if least := int64(before.Sub(start)/period) - 1; total < least {
			t.Fatalf("%d ticks counted by %v, at least %d had passed", total, before.Sub(start), least)
		}
	}
	time.Sleep(20 * period)
	n, err := tk.wait()
	if err != nil {
		t.Fatal(err)
	}
	if n < 19 {
		t.Errorf("after a pause of 20 periods one wait returned %d ticks, want at least 19", n)
	}
}

// checkTickerCancel checks that a wait blocked on tk returns the context's error once its
// context ends, and that close can be called twice.
func checkTickerCancel(t *testing.T, newTk func(context.Context) (ticker, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tk, err := newTk(ctx)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		for {
			if _, err := tk.wait(); err != nil {
				errc <- err
				return
			}
		}
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("wait after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // a hang check, not a speed goal
		t.Fatal("wait did not return after its context was cancelled")
	}
	if err := tk.close(); err != nil {
		t.Error(err)
	}
	if err := tk.close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestTimerTicker(t *testing.T) {
	tk := newTimerTicker(context.Background(), 2*time.Millisecond)
	defer tk.close()
	checkTicker(t, tk, 2*time.Millisecond)
	checkTickerCancel(t, func(ctx context.Context) (ticker, error) { return newTimerTicker(ctx, time.Hour), nil })
}

// TestMeasurePaced runs the open-loop measurement against a fake call: with --requests N it
// sends exactly N requests, records the send lag of each (failed ones too) and the latency
// from the due time of each that succeeded, which is never less than the latency from the
// send: every percentile of the one is at least the same percentile of the other.
func TestMeasurePaced(t *testing.T) {
	for _, tt := range []struct {
		name      string
		clients   int
		rate      float64
		n         int64
		failEvery int64
	}{
		{"one worker", 1, 20000, 300, 0},
		{"a pool", 8, 20000, 500, 0},
		{"several a tick", 4, 200000, 2000, 0},
		{"with errors", 4, 20000, 500, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			call := func(context.Context) (int, error) {
				if i := calls.Add(1); tt.failEvery > 0 && i%tt.failEvery == 0 {
					return 0, errors.New("no")
				}
				return 1, nil
			}
			line := newTimeline()
			tl, err := measurePaced(context.Background(), loadConfig{rate: tt.rate, clients: tt.clients}, call, time.Hour, tt.n, line)
			if err != nil {
				t.Fatal(err)
			}
			checkTimeline(t, line, tt.n, tt.n-tl.requests, newSchedule(tt.rate, 0, tt.n).spacing)
			wantErrs := int64(0)
			if tt.failEvery > 0 {
				wantErrs = tt.n / tt.failEvery
			}
			if calls.Load() != tt.n || tl.requests != tt.n-wantErrs || tl.errs != wantErrs || tl.ids != tt.n-wantErrs || tl.unsent != 0 {
				t.Fatalf("%d calls, %d requests, %d errors, %d IDs, %d unsent; want %d calls, %d errors", calls.Load(), tl.requests, tl.errs, tl.ids, tl.unsent, tt.n, wantErrs)
			}
			if tl.lag.TotalCount() != tt.n || tl.sched.TotalCount() != tl.requests {
				t.Errorf("%d send lags and %d latencies from schedule for %d requests, %d answered", tl.lag.TotalCount(), tl.sched.TotalCount(), tt.n, tl.requests)
			}
			for _, q := range []float64{0, 50, 90, 99, 99.9, 100} {
				if s, h := tl.sched.ValueAtQuantile(q), tl.hist.ValueAtQuantile(q); s < h {
					t.Errorf("p%v: %d ns from schedule < %d ns from send", q, s, h)
				}
			}
			if tl.lag.Min() < 0 {
				t.Errorf("negative send lag %d", tl.lag.Min())
			}
		})
	}
}

// TestMeasurePacedBacklog stalls the only worker on its first request: the requests that
// came due meanwhile wait, and their send lag shows it, at least the stall less the time
// between the first request and the last.
func TestMeasurePacedBacklog(t *testing.T) {
	const n, stall = 20, 10 * time.Millisecond
	var calls atomic.Int64
	call := func(context.Context) (int, error) {
		if calls.Add(1) == 1 {
			time.Sleep(stall)
		}
		return 1, nil
	}
	c := loadConfig{rate: 10000, clients: 1}
	tl, err := measurePaced(context.Background(), c, call, time.Hour, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	spread := time.Duration(n-1) * newSchedule(c.rate, 0, n).spacing
	if tl.requests != n || time.Duration(tl.lag.Max()) < stall-spread {
		t.Errorf("%d requests, largest send lag %v; want %d and at least %v", tl.requests, time.Duration(tl.lag.Max()), n, stall-spread)
	}
}

// TestMeasurePacedTimeUp runs out the time of a measurement while its only worker is stuck:
// the requests released to the queue are still sent, and the rest are counted as unsent.
func TestMeasurePacedTimeUp(t *testing.T) {
	var calls atomic.Int64
	call := func(context.Context) (int, error) {
		if calls.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		return 1, nil
	}
	c := loadConfig{rate: maxRate, clients: 1}
	const d = 30 * time.Millisecond
	tl, err := measurePaced(context.Background(), c, call, d, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := newSchedule(c.rate, d, 0).total
	if sent := tl.lag.TotalCount(); sent+tl.unsent != total || sent != tl.requests || sent != calls.Load() {
		t.Errorf("%d sent + %d unsent, want %d in all; %d answered, %d calls", sent, tl.unsent, total, tl.requests, calls.Load())
	}
	t.Logf("%d sent, %d unsent", tl.lag.TotalCount(), tl.unsent)
}

// TestMeasurePacedCancel cancels the context in the middle of paced runs, with the workers
// answering at once or stuck in their calls (so that the queue fills and the pacer waits for
// room): measurePaced returns the context's error, and its goroutines end.
func TestMeasurePacedCancel(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rate  float64
		n     int64
		stuck bool
	}{
		{"answering, duration", 20000, 0, false},
		{"answering, requests", 20000, 1_000_000, false},
		{"stuck", maxRate, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls atomic.Int64
			call := func(ctx context.Context) (int, error) {
				if calls.Add(1) == 100 {
					cancel()
				}
				if tt.stuck {
					if calls.Load() == 4 {
						// Every worker is stuck: give the queue time to fill, so that the
						// pacer waits for room when the context ends.
						time.Sleep(20 * time.Millisecond)
						cancel()
					}
					<-ctx.Done()
					return 0, ctx.Err()
				}
				return 1, nil
			}
			errc := make(chan error, 1)
			go func() {
				_, err := measurePaced(ctx, loadConfig{rate: tt.rate, clients: 4}, call, time.Hour, tt.n, nil)
				errc <- err
			}()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("measurePaced: %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second): // a hang check, not a speed goal
				t.Fatal("measurePaced did not return after the context was cancelled")
			}
			waitGoroutines(t, base)
		})
	}
}

// waitGoroutines fails t unless the number of goroutines comes back to base (goroutines that
// have been told to stop may take a moment to go).
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a hang check, not a speed goal
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
