package schemes_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// concurrencyCounts returns how many IDs the concurrency tests make in all: millions normally,
// fewer under the race detector and in -short mode, to keep `go test -race ./...` quick.
func concurrencyCounts() int {
	switch {
	case raceEnabled && testing.Short():
		return 100_000
	case raceEnabled:
		return 1_000_000
	case testing.Short():
		return 400_000
	}
	return 4_000_000
}

// TestSnowflakeConcurrent shares one generator (system clock) among many goroutines: every ID
// is unique, and each goroutine sees its IDs strictly increase.
func TestSnowflakeConcurrent(t *testing.T) {
	for _, l := range []layouts.Layout{layouts.Twitter, seq22} {
		t.Run("layout="+l.Name, func(t *testing.T) {
			total := concurrencyCounts()
			if l.Name == "twitter" {
				total /= 2 // capped at 4,096 IDs per ms
			}
			const workers = 16
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Node: l.Nodes() - 1})
			checkUnique(t, drawEach(t, workers, total/workers, g.Next))
		})
	}
}

// drawEach calls next per times in each of workers goroutines and returns each one's IDs. It
// fails the test on an error, or on an ID not above the same goroutine's previous one.
func drawEach(t *testing.T, workers, per int, next func() (uint64, error)) [][]uint64 {
	t.Helper()
	out := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]uint64, 0, per)
			for range per {
				id, err := next()
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				if n := len(ids); n > 0 && id <= ids[n-1] {
					t.Errorf("worker %d: ID %d (%d) not above %d", w, n, id, ids[n-1])
					return
				}
				ids = append(ids, id)
			}
			out[w] = ids
		})
	}
	wg.Wait()
	return out
}

// checkUnique fails the test when an ID appears twice among the goroutines' IDs.
func checkUnique(t *testing.T, out [][]uint64) {
	t.Helper()
	var all []uint64
	for _, ids := range out {
		all = append(all, ids...)
	}
	if id, dup := firstDuplicate(all); dup {
		t.Fatalf("ID %d issued twice among %d", id, len(all))
	}
}

// TestSnowflakeNextNConcurrent mixes batches and single IDs from several goroutines: all
// unique, each batch increasing and consecutive within a tick.
func TestSnowflakeNextNConcurrent(t *testing.T) {
	for _, l := range []layouts.Layout{layouts.Twitter, seq22} {
		t.Run("layout="+l.Name, func(t *testing.T) {
			total := concurrencyCounts() / 4
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l})
			const workers = 8
			out := make([][]uint64, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 1))
					var ids []uint64
					for len(ids) < total/workers {
						if w%2 == 0 {
							id, err := g.Next()
							if err != nil {
								t.Error(err)
								return
							}
							ids = append(ids, id)
							continue
						}
						batch := make([]uint64, 1+r.IntN(5000))
						if err := g.NextN(batch); err != nil {
							t.Error(err)
							return
						}
						for i := 1; i < len(batch); i++ {
							p, q := l.Decompose(batch[i-1]), l.Decompose(batch[i])
							if q.Tick == p.Tick && q.Seq != p.Seq+1 || q.Tick < p.Tick {
								t.Errorf("batch of %d: [%d]=%d after %d is not the next ID", len(batch), i, batch[i], batch[i-1])
								return
							}
						}
						ids = append(ids, batch...)
					}
					out[w] = ids
				})
			}
			wg.Wait()
			checkUnique(t, out)
		})
	}
}

// TestSnowflakeConcurrentFakeClock runs many goroutines against a fake clock that only moves
// when the generator sleeps, so every tick's sequence is used up and the slow path runs
// constantly.
func TestSnowflakeConcurrentFakeClock(t *testing.T) {
	for _, look := range []int{0, 3} {
		t.Run(fmt.Sprintf("lookahead=%d", look), func(t *testing.T) {
			clk := newFakeClock(t0)
			l := custom(t0.Add(-1000000000), 1000000, layouts.Time(41), layouts.Node("n", 10), layouts.Seq(6))
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Clock: clk, Lookahead: look})
			const workers = 8
			per := concurrencyCounts() / 40
			out := make([][]uint64, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					ids := make([]uint64, per)
					for i := range ids {
						id, err := g.Next()
						if err != nil {
							t.Error(err)
							return
						}
						if i > 0 && id <= ids[i-1] {
							t.Errorf("worker %d: %d after %d", w, id, ids[i-1])
							return
						}
						if ahead := l.Decompose(id).Tick - l.Tick(clk.Now()); ahead > int64(look) {
							t.Errorf("ID %d ticks ahead of the clock, lookahead %d", ahead, look)
							return
						}
						ids[i] = id
					}
					out[w] = ids
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
			if _, bad := clk.Stats(); bad != 0 {
				t.Errorf("%d non-positive sleeps", bad)
			}
		})
	}
}

// TestSnowflakeConcurrentNoSpuriousDrift: the system clock never goes back, so even the
// strictest drift policy (fail at once) must never report a backward clock, however the
// goroutines sharing the generator interleave.
func TestSnowflakeConcurrentNoSpuriousDrift(t *testing.T) {
	g := mustSnowflake(t, schemes.SnowflakeSettings{Drift: schemes.DriftPolicy{MaxWait: -1, MaxContinue: -1}})
	const workers = 8
	per := concurrencyCounts() / 20
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range per {
				if _, err := g.Next(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSnowflakeContendedTinySeq: goroutines far outnumbering a tick's sequence (8 IDs per ms,
// 16 goroutines) overshoot the counter of the atomic-add reservation on every tick; no ID
// repeats, each goroutine's IDs increase, and even the strictest drift policy sees no backward
// clock (the overshoot never carries into the next tick). The 61-bit time field leaves the
// counter no headroom, so that layout takes the compare-and-swap path, checked the same way.
func TestSnowflakeContendedTinySeq(t *testing.T) {
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range []layouts.Layout{
		custom(epoch, time.Millisecond, layouts.Time(41), layouts.Seq(3)),
		custom(epoch, time.Millisecond, layouts.Time(61), layouts.Seq(3)),
	} {
		t.Run(fmt.Sprintf("time_bits=%d", l.Fields[0].Bits), func(t *testing.T) {
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Drift: schemes.DriftPolicy{MaxWait: -1, MaxContinue: -1}})
			checkUnique(t, drawEach(t, 16, 250, g.Next)) // 4,000 IDs: about half a second at 8 per ms
		})
	}
}

// TestSnowflakeCloseContended closes a generator while goroutines draw from it: every call
// that starts after Close returned fails with ErrClosed (no reservation in flight wraps the
// closed state around to a tick that issues), and no ID repeats.
func TestSnowflakeCloseContended(t *testing.T) {
	for _, l := range []layouts.Layout{layouts.Twitter, seq22} {
		t.Run("layout="+l.Name, func(t *testing.T) {
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l})
			var closed atomic.Bool
			out := make([][]uint64, 8)
			var wg sync.WaitGroup
			for w := range out {
				wg.Go(func() {
					for i := 0; ; i++ {
						after := closed.Load()
						id, err := g.Next()
						if err != nil {
							if !errors.Is(err, schemes.ErrClosed) {
								t.Errorf("worker %d: %v, want ErrClosed", w, err)
							}
							if i == 0 || after {
								return
							}
							continue // in flight across Close: the next call must fail too
						}
						if after {
							t.Errorf("worker %d: ID %d issued by a call that started after Close returned", w, id)
							return
						}
						out[w] = append(out[w], id)
					}
				})
			}
			time.Sleep(20 * time.Millisecond)
			g.Close()
			closed.Store(true)
			wg.Wait()
			checkUnique(t, out)
		})
	}
}
