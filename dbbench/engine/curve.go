package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// Recorder counts inserted rows and samples the time at every chunk
// boundary, for the throughput curve and the progress bar. It is safe for
// concurrent use; its memory is fixed by the number of chunks.
type Recorder struct {
	chunk    int64
	Total    int64
	Start    time.Time
	done     atomic.Int64
	progress func(n int64)

	mu    sync.Mutex
	marks []time.Duration // marks[i]: when (i+1)*chunk rows were done

	// arrived, when set (WatchArrivals), is told every key the engine made client-side as
	// its insert commits, in the order the commits returned.
	arrived func(Value)
}

// WatchArrivals asks the engine filling the recorder's table to report every key it made
// client-side to f, as the insert holding it commits (Arrived). f must be safe for concurrent
// use. Keys the database makes are not reported.
func (r *Recorder) WatchArrivals(f func(Value)) { r.arrived = f }

// Watching reports whether the recorder wants the keys that reached the table (Arrived).
func (r *Recorder) Watching() bool { return r != nil && r.arrived != nil }

// Arrived reports keys that have just committed, in their order within the insert; it does
// nothing unless WatchArrivals was called.
func (r *Recorder) Arrived(vs ...Value) {
	if !r.Watching() {
		return
	}
	for _, v := range vs {
		r.arrived(v)
	}
}

// NewRecorder returns a recorder for a load of total rows inserted batch
// rows at a time. Its chunks are whole batches, about total/points rows each,
// so that every chunk ends when a batch has been committed.
func NewRecorder(total, points, batch int, progress func(int64)) *Recorder {
	chunk := (int64(total) + int64(points) - 1) / int64(points)
	b := int64(max(batch, 1))
	chunk = max(1, (chunk+b-1)/b) * b
	return &Recorder{
		chunk:    chunk,
		Total:    int64(total),
		Start:    time.Now(),
		progress: progress,
		marks:    make([]time.Duration, 0, total/int(chunk)+2),
	}
}

// Add records n more rows inserted.
func (r *Recorder) Add(n int64) {
	after := r.done.Add(n)
	before := after - n
	if after/r.chunk != before/r.chunk || after == r.Total {
		el := time.Since(r.Start)
		r.mu.Lock()
		for int64(len(r.marks)+1)*r.chunk <= after {
			r.marks = append(r.marks, el)
		}
		if after == r.Total && int64(len(r.marks))*r.chunk < after {
			r.marks = append(r.marks, el)
		}
		r.mu.Unlock()
	}
	if r.progress != nil && (after/4096 != before/4096 || after == r.Total) {
		r.progress(after)
	}
}

// Curve returns the throughput of each chunk.
func (r *Recorder) Curve() []Chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Chunk, 0, len(r.marks))
	var prevRows int64
	var prevT time.Duration
	for i, t := range r.marks {
		rows := min(int64(i+1)*r.chunk, r.Total)
		dt := (t - prevT).Seconds()
		c := Chunk{Rows: rows}
		if dt > 0 {
			c.RowsPerSec = float64(rows-prevRows) / dt
		}
		out = append(out, c)
		prevRows, prevT = rows, t
	}
	return out
}
