package dbbench

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// Contention is engine.Contention.
type Contention = engine.Contention

// behindWindow is how many of the latest parent keys an arrivals looks back over to say how
// far behind the right edge a late key landed.
const behindWindow = 1024

// waitInterval is how often a load's waits are sampled.
const waitInterval = 50 * time.Millisecond

// arrivals watches the order in which keys reach a table, as the inserts return: how many
// came below the largest key before them, and how many of the latest keys were larger. Safe
// for concurrent use; the cost is a mutex and, for a late key, one pass over the window.
type arrivals struct {
	mu     sync.Mutex
	n      int64
	late   int64
	max    engine.Value
	ring   []engine.Value
	next   int
	behind []int
}

func newArrivals(window int) *arrivals {
	return &arrivals{ring: make([]engine.Value, 0, window)}
}

// compareKeys orders keys as the databases do for the key columns idbench makes: integers
// as signed (bigint) or unsigned values, 16-byte keys and text bytewise.
func compareKeys(a, b engine.Value) int {
	if c := cmp.Compare(a.I64, b.I64); c != 0 {
		return c
	}
	if c := cmp.Compare(a.U64, b.U64); c != 0 {
		return c
	}
	if c := bytes.Compare(a.B16[:], b.B16[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.Str, b.Str)
}

// add records that key v has reached the table.
func (a *arrivals) add(v engine.Value) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n > 0 && compareKeys(v, a.max) < 0 {
		a.late++
		above := 0
		for _, k := range a.ring {
			if compareKeys(k, v) > 0 {
				above++
			}
		}
		a.behind = append(a.behind, above)
	} else {
		a.max = v
	}
	a.n++
	if len(a.ring) < cap(a.ring) {
		a.ring = append(a.ring, v)
	} else if cap(a.ring) > 0 {
		a.ring[a.next] = v
		a.next = (a.next + 1) % cap(a.ring)
	}
}

// fill writes what a saw into c.
func (a *arrivals) fill(c *Contention) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c.Parents, c.Late, c.BehindWindow = a.n, a.late, cap(a.ring)
	if a.n > 0 {
		c.LatePercent = 100 * float64(a.late) / float64(a.n)
	}
	if len(a.behind) > 0 {
		sort.Ints(a.behind)
		q := func(p float64) float64 { return float64(a.behind[int(p*float64(len(a.behind)-1))]) }
		c.BehindP50, c.BehindP99 = q(0.50), q(0.99)
	}
}

// sampleWaits samples what the loading sessions of d wait on every interval until ctx ends,
// and returns the shares and the number of samples taken; nil when d cannot say or a sample
// fails (the load goes on: the waits are an extra).
func sampleWaits(ctx context.Context, d engine.Engine, interval time.Duration) func() ([]engine.WaitShare, int) {
	ws, ok := d.(engine.WaitSampler)
	if !ok {
		return func() ([]engine.WaitShare, int) { return nil, 0 }
	}
	// A stop channel, not a cancelled context, ends the sampling: cancelling a query in
	// flight can close the measuring connection, which the load's measurements need next.
	stop := make(chan struct{})
	counts := map[string]int{}
	samples, total := 0, 0
	var failed bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
			}
			m, err := ws.SampleWaits(ctx)
			if err != nil {
				failed = ctx.Err() == nil
				return
			}
			samples++
			for ev, n := range m {
				counts[ev] += n
				total += n
			}
		}
	}()
	return func() ([]engine.WaitShare, int) {
		close(stop)
		<-done
		if failed || total == 0 {
			return nil, samples
		}
		var out []engine.WaitShare
		for ev, n := range counts {
			out = append(out, engine.WaitShare{Event: ev, Percent: 100 * float64(n) / float64(total)})
		}
		slices.SortFunc(out, func(a, b engine.WaitShare) int {
			if c := cmp.Compare(b.Percent, a.Percent); c != 0 {
				return c
			}
			return cmp.Compare(a.Event, b.Event)
		})
		return out, samples
	}
}
