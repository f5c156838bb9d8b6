package main

import (
	"context"
	"fmt"
	"math"
	"time"
)

// minTick is the shortest period the pacer's ticker runs at. Below it a tick per request
// costs more CPU than it buys in precision, so the ticker runs at a multiple of the request
// spacing instead and each tick releases every request that has come due.
const minTick = 20 * time.Microsecond

// maxRate is the highest --rate accepted: at 10,000,000 requests/s the spacing is 100 ns, and
// rounding it to the nanosecond keeps the rate within 0.5%.
const maxRate = 1e7

// schedule is an open-loop request schedule: request i is due at start + i·spacing, whether
// or not earlier requests have been answered, so that a slow answer delays the requests
// behind it only as far as the workers run out, and that delay is measured.
type schedule struct {
	spacing time.Duration // 1/rate, rounded to the nanosecond, at least 1 ns
	perTick int64         // requests that come due per tick of the ticker, at least 1
	total   int64         // requests in the run
}

// newSchedule returns the schedule of rate requests/s for n requests, or, when n is 0, for
// the requests due within d (those with i·spacing < d).
func newSchedule(rate float64, d time.Duration, n int64) schedule {
	s := schedule{spacing: max(1, time.Duration(math.Round(float64(time.Second)/rate)))}
	s.perTick = int64((minTick + s.spacing - 1) / s.spacing)
	s.total = n
	if n <= 0 {
		s.total = int64(d / s.spacing) // rounded up, without overflowing for the longest d
		if d%s.spacing != 0 {
			s.total++
		}
	}
	return s
}

// tick returns the ticker's period: the spacing, or the smallest multiple of it not shorter
// than minTick.
func (s schedule) tick() time.Duration { return s.spacing * time.Duration(s.perTick) }

// due returns when request i is due.
func (s schedule) due(start time.Time, i int64) time.Time {
	return start.Add(time.Duration(i) * s.spacing)
}

// dueBy returns how many requests are due once ticks ticks have passed since start: request 0
// at once, then perTick more at every tick, never more than total.
func (s schedule) dueBy(ticks int64) int64 {
	if ticks >= s.total {
		return s.total
	}
	return min(ticks*s.perTick+1, s.total)
}

// ticker wakes the pacer once per period.
type ticker interface {
	// started returns the time from which the ticks count: tick k falls at
	// started() + k·period or later, never earlier.
	started() time.Time
	// wait blocks until at least one tick has passed since the previous wait (or since the
	// ticker started) and returns how many have: more than one when the pacer fell behind.
	// It returns the context's error once the ticker's context ends.
	wait() (int64, error)
	// close releases the ticker; it is safe to call more than once.
	close() error
}

// pace hands the due time of every request in s to jobs, releasing them as tk ticks: request
// 0 is due when tk started, and tk's period must be s.tick(). When the pacer wakes late it
// releases every overdue request at once; their lag is the workers' to record. pace closes
// jobs when it returns.
//
// When end is not nil and fires while jobs is full, pace stops early and returns how many
// requests it did not release. It returns the context's error when ctx ends, and the
// ticker's error when the ticker fails.
func (s schedule) pace(ctx context.Context, tk ticker, jobs chan<- time.Time, end <-chan time.Time) (unsent int64, err error) {
	defer close(jobs)
	start := tk.started()
	var next, ticks int64
	for {
		for n := s.dueBy(ticks); next < n; next++ {
			d := s.due(start, next)
			select {
			case jobs <- d:
				continue
			default:
			}
			// The workers are behind and the queue is full: wait for room, as a real
			// population of clients would keep its requests waiting.
			select {
			case jobs <- d:
			case <-end:
				return s.total - next, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if next >= s.total {
			return 0, nil
		}
		n, err := tk.wait()
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, fmt.Errorf("load: pacer: %w", err)
		}
		ticks += n
	}
}

// timerTicker is the portable ticker: a time.Timer set for the next tick, with the ticks
// counted from the clock. The Go runtime may wake it up to a millisecond late when it is
// otherwise idle; pacer_linux.go has the precise one.
type timerTicker struct {
	ctx    context.Context
	start  time.Time
	period time.Duration
	ticks  int64 // ticks reported so far
	timer  *time.Timer
}

// newTimerTicker returns a ticker whose ticks fall at now + k·period, k ≥ 1, ending with ctx.
func newTimerTicker(ctx context.Context, period time.Duration) *timerTicker {
	t := &timerTicker{ctx: ctx, start: time.Now(), period: period, timer: time.NewTimer(period)}
	t.timer.Stop()
	return t
}

func (t *timerTicker) wait() (int64, error) {
	for {
		if err := t.ctx.Err(); err != nil {
			return 0, err
		}
		if passed := int64(time.Since(t.start) / t.period); passed > t.ticks {
			n := passed - t.ticks
			t.ticks = passed
			return n, nil
		}
		t.timer.Reset(time.Until(t.start.Add(time.Duration(t.ticks+1) * t.period)))
		select {
		case <-t.ctx.Done():
			t.timer.Stop()
			return 0, t.ctx.Err()
		case <-t.timer.C:
		}
	}
}

func (t *timerTicker) started() time.Time { return t.start }

func (t *timerTicker) close() error {
	t.timer.Stop()
	return nil
}
