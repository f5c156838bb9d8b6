package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// timeline collects every measured request of a paced run, its due, send and answer times,
// so that the slow ones can be laid beside a trace of the machine or of the Go runtime taken
// in the same seconds (docs/bench/paced-tail.sh does so with perf record -k mono, whose
// clock is the one the times are given on). It is safe for concurrent use.
type timeline struct {
	base   time.Time // a reading of the clock …
	baseNS int64     // … and the system's monotonic clock at that moment (monotonicNS)
	slack  int64     // how far baseNS can be from base's moment: half the gap of its readings
	mu     sync.Mutex
	rows   []timelineRow
}

// timelineRow is one request: its times in nanoseconds on the system's monotonic clock.
type timelineRow struct {
	due, sent, done int64
	failed          bool
}

// newTimeline returns an empty timeline whose times are read on the system's monotonic
// clock: CLOCK_MONOTONIC on Linux, elsewhere nanoseconds since newTimeline was called.
func newTimeline() *timeline {
	// base is read between two readings of the monotonic clock; the pair read closest
	// together of a few tries is kept (a goroutine preempted between two readings would
	// put them microseconds apart), and baseNS is their midpoint.
	tl := &timeline{slack: -1}
	for range 8 {
		before := monotonicNS(time.Time{})
		base := time.Now()
		after := monotonicNS(base)
		if gap := (after - before + 1) / 2; tl.slack < 0 || gap < tl.slack {
			tl.base, tl.baseNS, tl.slack = base, before+(after-before)/2, gap
		}
		if tl.slack <= 100 {
			break
		}
	}
	return tl
}

// ns returns t on the timeline's clock.
func (tl *timeline) ns(t time.Time) int64 { return tl.baseNS + int64(t.Sub(tl.base)) }

// recorder returns where one measurement of at most n requests writes its rows without
// allocating or locking per request; add merges them into the timeline once the measurement
// is over.
func (tl *timeline) recorder(n int64) *timelineRecorder {
	return &timelineRecorder{tl: tl, rows: make([]timelineRow, max(n, 0))}
}

// timelineRecorder is one measurement's rows, filled concurrently by its workers.
type timelineRecorder struct {
	tl   *timeline
	rows []timelineRow
	next atomic.Int64
}

// record keeps one request; past the capacity it was made with, the request is dropped.
func (r *timelineRecorder) record(due, sent, done time.Time, failed bool) {
	if r == nil {
		return
	}
	i := r.next.Add(1) - 1
	if i >= int64(len(r.rows)) {
		return
	}
	r.rows[i] = timelineRow{due: r.tl.ns(due), sent: r.tl.ns(sent), done: r.tl.ns(done), failed: failed}
}

// add merges the measurement's rows into its timeline.
func (r *timelineRecorder) add() {
	if r == nil {
		return
	}
	n := min(r.next.Load(), int64(len(r.rows)))
	r.tl.mu.Lock()
	r.tl.rows = append(r.tl.rows, r.rows[:n]...)
	r.tl.mu.Unlock()
}

// write prints the timeline, one request a line in order of due time: due, send and answer
// times in nanoseconds, then 1 for an answer and 0 for a failure.
func (tl *timeline) write(w io.Writer) error {
	tl.mu.Lock()
	rows := slices.Clone(tl.rows)
	tl.mu.Unlock()
	slices.SortStableFunc(rows, func(a, b timelineRow) int { return cmp.Compare(a.due, b.due) })
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# idbench load --timeline: %d paced Next requests (warm-up excluded)\n", len(rows))
	fmt.Fprintf(bw, "# due_ns sent_ns done_ns ok, nanoseconds on %s\n", monotonicName)
	for _, r := range rows {
		ok := 1
		if r.failed {
			ok = 0
		}
		fmt.Fprintf(bw, "%d %d %d %d\n", r.due, r.sent, r.done, ok)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("load: --timeline: %w", err)
	}
	return nil
}
