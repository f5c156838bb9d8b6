// Package segtest holds what the segment stores' fault tests share: taking IDs from several
// Segments at once while a test breaks their stores, and finding duplicates.
package segtest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/segment"
)

// Load takes IDs from every Segment in procs with goroutines goroutines each, one ID per pause
// per goroutine, until Stop is called.
type Load struct {
	wg     sync.WaitGroup
	cancel context.CancelFunc
	mu     sync.Mutex
	ids    []uint64
	errs   []error
	count  atomic.Int64
}

// Start starts the load.
func Start(procs []*segment.Segment, goroutines int, pause time.Duration) *Load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Load{cancel: cancel}
	for _, s := range procs {
		for range goroutines {
			l.wg.Go(func() {
				var ids []uint64
				var errs []error
				for ctx.Err() == nil {
					v, err := s.NextContext(ctx)
					if err != nil {
						if ctx.Err() == nil {
							errs = append(errs, err)
						}
					} else {
						ids = append(ids, v)
						l.count.Add(1)
					}
					if pause > 0 {
						time.Sleep(pause)
					}
				}
				l.mu.Lock()
				l.ids = append(l.ids, ids...)
				l.errs = append(l.errs, errs...)
				l.mu.Unlock()
			})
		}
	}
	return l
}

// Count returns how many IDs were taken so far.
func (l *Load) Count() int64 { return l.count.Load() }

// Stop ends the load and returns every ID taken and every error seen.
func (l *Load) Stop() ([]uint64, []error) {
	l.cancel()
	l.wg.Wait()
	return l.ids, l.errs
}

// Dups returns the IDs that occur more than once in ids.
func Dups(ids []uint64) []uint64 {
	seen := make(map[uint64]bool, len(ids))
	var d []uint64
	for _, v := range ids {
		if seen[v] {
			d = append(d, v)
		}
		seen[v] = true
	}
	return d
}

// CheckUnique fails t when ids hold a duplicate or a zero, and logs how many there were.
func CheckUnique(t testing.TB, what string, ids []uint64) {
	t.Helper()
	if d := Dups(ids); len(d) > 0 {
		t.Fatalf("%s: %d duplicates among %d IDs, first %d", what, len(d), len(ids), d[0])
	}
	for _, v := range ids {
		if v == 0 {
			t.Fatalf("%s: ID 0 issued", what)
		}
	}
	t.Logf("%s: %d IDs, no duplicate", what, len(ids))
}
