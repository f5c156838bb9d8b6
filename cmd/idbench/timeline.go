package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"
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
	chunks [][]timelineRow // the measurements' rows, as their recorders kept them
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

// timelineRowBytes is what one row holds in memory (three int64 and a bool, padded; a test
// checks it against unsafe.Sizeof); maxTimelineRows bounds the rows a run may
// plan to keep (4 GiB of them), so that a run too long for memory is refused before it starts
// rather than dying of it hours in.
const (
	timelineRowBytes = 32
	maxTimelineRows  = 1 << 32 / timelineRowBytes
)

// checkTimelineRows refuses a run whose planned requests would not fit maxTimelineRows: the
// timeline holds every row until the run ends.
func checkTimelineRows(planned int64) error {
	if planned <= maxTimelineRows {
		return nil
	}
	return fmt.Errorf("--timeline keeps every measured request in memory until the run ends (%d bytes each): the %s requests --rate and --duration (or --requests) plan would need %s; it holds at most %s (%s): shorten --duration, lower --rate or give --requests",
		timelineRowBytes, thousands(uint64(planned)), bytesText(float64(planned)*float64(timelineRowBytes)),
		thousands(uint64(maxTimelineRows)), bytesText(float64(maxTimelineRows*timelineRowBytes)))
}

// bytesText writes a size in GB or TB.
func bytesText(b float64) string {
	if b >= 1e12 {
		return fmt.Sprintf("%.1f TB", b/1e12)
	}
	return fmt.Sprintf("%.1f GB", b/1e9)
}

// timelineChunk is how many rows a worker's recorder allocates at a time: rows are kept as
// requests go, never reserved for the whole run.
const timelineChunk = 4096

// recorder returns where one measurement's workers write their rows, each its own without
// locking, in chunks allocated as requests go; add merges them into the timeline once the
// measurement is over.
func (tl *timeline) recorder(workers int) *timelineRecorder {
	return &timelineRecorder{tl: tl, workers: make([]workerRows, max(workers, 1))}
}

// timelineRecorder is one measurement's rows, one list of chunks per worker.
type timelineRecorder struct {
	tl      *timeline
	workers []workerRows
}

// workerRows are the rows of one worker, written by it alone.
type workerRows struct {
	chunks [][]timelineRow
	_      [64]byte // the workers' headers on separate cache lines
}

// record keeps one request of worker w (from 0 to the workers given to recorder).
func (r *timelineRecorder) record(w int, due, sent, done time.Time, failed bool) {
	if r == nil {
		return
	}
	wr := &r.workers[w]
	if n := len(wr.chunks); n == 0 || len(wr.chunks[n-1]) == cap(wr.chunks[n-1]) {
		wr.chunks = append(wr.chunks, make([]timelineRow, 0, timelineChunk))
	}
	c := &wr.chunks[len(wr.chunks)-1]
	*c = append(*c, timelineRow{due: r.tl.ns(due), sent: r.tl.ns(sent), done: r.tl.ns(done), failed: failed})
}

// add merges the measurement's rows into its timeline, once its workers are done.
func (r *timelineRecorder) add() {
	if r == nil {
		return
	}
	r.tl.mu.Lock()
	defer r.tl.mu.Unlock()
	for i := range r.workers {
		r.tl.chunks = append(r.tl.chunks, r.workers[i].chunks...)
		r.workers[i].chunks = nil
	}
}

// write prints the timeline, one request a line in order of due time: due, send and answer
// times in nanoseconds, then 1 for an answer and 0 for a failure.
func (tl *timeline) write(w io.Writer) error {
	tl.mu.Lock()
	n := 0
	for _, c := range tl.chunks {
		n += len(c)
	}
	rows := make([]timelineRow, 0, n)
	for _, c := range tl.chunks {
		rows = append(rows, c...)
	}
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
