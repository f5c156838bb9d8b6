package segtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/history"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment"
)

// Takers are goroutines that each take IDs from a Segment of their own, as separate processes
// would, one ID per pause. A taker whose Segment fails for good (its store went backwards,
// which an unprotected failover causes) closes it and opens another, as a restarted process
// does.
type Takers struct {
	wg    sync.WaitGroup
	stop  chan struct{}
	mu    sync.Mutex
	ids   []uint64
	ops   []history.Op
	errs  map[string]int
	count atomic.Int64
	fails atomic.Int64 // epoch changes the Segments saw
}

// StartTakers starts n takers on Segments from open.
func StartTakers(t testing.TB, open func() (*segment.Segment, error), n int, pause time.Duration) *Takers {
	tk := &Takers{stop: make(chan struct{}), errs: map[string]int{}}
	for i := range n {
		tk.wg.Go(func() {
			var ids []uint64
			var ops []history.Op
			opened := 0 // Segments this taker opened: each is a generator of its own
			errs := map[string]int{}
			var s *segment.Segment
			defer func() {
				if s != nil {
					tk.fails.Add(int64(s.Failovers()))
					s.Close()
				}
				tk.mu.Lock()
				tk.ids = append(tk.ids, ids...)
				tk.ops = append(tk.ops, ops...)
				for k, v := range errs {
					tk.errs[k] += v
				}
				tk.mu.Unlock()
			}()
			for {
				select {
				case <-tk.stop:
					return
				default:
				}
				if s == nil {
					var err error
					if s, err = open(); err != nil {
						errs["open: "+firstLine(err)]++
						time.Sleep(50 * time.Millisecond)
						continue
					}
					opened++
				}
				send := time.Now()
				v, err := s.Next()
				switch {
				case err == nil:
					ids = append(ids, v)
					ops = append(ops, history.Op{Client: fmt.Sprintf("taker%d", i), Generator: fmt.Sprintf("taker%d-segment%d", i, opened),
						Node: -1, ID: v, Send: send, Recv: time.Now()})
					tk.count.Add(1)
				case errors.Is(err, segment.ErrBackwards):
					errs["backwards (process restarted)"]++
					tk.fails.Add(int64(s.Failovers()))
					s.Close()
					s = nil
				default:
					errs[kind(err)]++
					time.Sleep(10 * time.Millisecond)
				}
				if pause > 0 {
					time.Sleep(pause)
				}
			}
		})
	}
	return tk
}

// Count returns how many IDs were taken so far.
func (tk *Takers) Count() int64 { return tk.count.Load() }

// Stop ends the takers and returns every ID taken, the errors seen by kind, and how many
// epoch changes the Segments saw.
func (tk *Takers) Stop() ([]uint64, map[string]int, int) {
	close(tk.stop)
	tk.wg.Wait()
	return tk.ids, tk.errs, int(tk.fails.Load())
}

// History returns every answer as a history operation (client: the taker; generator: one
// Segment a taker opened), once Stop has returned.
func (tk *Takers) History() []history.Op { return tk.ops }

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// kind shortens a Next error to a countable kind.
func kind(err error) string {
	switch {
	case errors.Is(err, segment.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, segment.ErrClosed):
		return "closed"
	}
	return firstLine(err)
}

// Failover is one row of a failover matrix: takers run while the store's primary is killed
// and a standby promoted, Rounds times.
type Failover struct {
	Name   string
	Rounds int
	// Open opens a Segment on the store, as a new process would.
	Open func() (*segment.Segment, error)
	// Takers is how many takers run (3 when 0).
	Takers int
	// Cut stops replication to the standby with the primary still up (a lagging or
	// partitioned standby); then CutFor passes, with During called every 20 ms if set.
	Cut    func()
	CutFor time.Duration
	During func()
	// Fail kills the primary, promotes the standby and attaches a new standby to it.
	Fail func()
	// Refusing marks a row whose store is expected to refuse while the pair is whole (a
	// store that takes no block while a replica is attached): a round then starts after a
	// second instead of after 1,000 IDs, and none are required after the last failover.
	Refusing bool
}

// Result is what RunFailover counted, and the history checker's verdict on its answers.
type Result struct {
	IDs, Repeated, Failovers, SeenBySegments int
	Errors                                   map[string]int
	History                                  history.Result
}

// RunFailover runs f and returns its counts; the caller checks them against the row's
// expectation (a control must see repeats, a protected run none).
func RunFailover(t *testing.T, f Failover) Result {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("%s: seed %d", f.Name, seed)
	n := f.Takers
	if n == 0 {
		n = 3
	}
	tk := StartTakers(t, f.Open, n, 20*time.Microsecond)
	var r Result
	for round := range f.Rounds {
		// Wait until IDs flow from the current primary, then a random while.
		before := tk.Count()
		if f.Refusing {
			time.Sleep(time.Second)
		} else {
			WaitFor(t, "IDs before failover", 60*time.Second, func() bool { return tk.Count() > before+1000 })
		}
		time.Sleep(time.Duration(50+rng.IntN(300)) * time.Millisecond)
		f.Cut()
		end := time.Now().Add(f.CutFor)
		for time.Now().Before(end) {
			if f.During != nil {
				f.During()
			}
			time.Sleep(20 * time.Millisecond)
		}
		f.Fail()
		r.Failovers++
		t.Logf("%s: failover %d done, %d IDs so far", f.Name, round+1, tk.Count())
	}
	before := tk.Count()
	if f.Refusing {
		time.Sleep(time.Second)
	} else {
		WaitFor(t, "IDs after the last failover", 60*time.Second, func() bool { return tk.Count() > before+1000 })
	}
	ids, errs, seen := tk.Stop()
	r.IDs, r.Repeated, r.Errors, r.SeenBySegments = len(ids), len(Dups(ids)), errs, seen
	r.History = history.Check(tk.History(), history.Config{})
	kinds := make([]string, 0, len(errs))
	for k := range errs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%s: %d× %s", f.Name, errs[k], k)
	}
	t.Logf("%s: %d failovers, %d IDs, %d repeated, %d epoch changes seen by Segments", f.Name, r.Failovers, r.IDs, r.Repeated, r.SeenBySegments)
	return r
}

// Check logs res as one row of the matrix (store and row name, the counts docs/segment.md
// quotes) and the history checker's report, which it also writes to store-row.edn in
// labtest.EnvOut's directory when that is set (the partition tests), and fails t unless it
// holds at least rounds failovers and, for a control, repeated IDs, or else a valid history
// (no repeat, each Segment's answers increasing).
func (r Result) Check(t *testing.T, store, row string, rounds int, control bool) {
	t.Helper()
	t.Logf("ROW %s %s: %d failovers, %d IDs, %d repeated", store, row, r.Failovers, r.IDs, r.Repeated)
	var rep strings.Builder
	fmt.Fprintf(&rep, ";; %s %s: %d failovers, %d IDs, %d repeated\n", store, row, r.Failovers, r.IDs, r.Repeated)
	r.History.Write(&rep)
	t.Logf("checker:\n%s", rep.String())
	if dir := os.Getenv(labtest.EnvOut); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Error(err)
		} else if err := os.WriteFile(filepath.Join(dir, store+"-"+row+".edn"), []byte(rep.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	switch {
	case r.Failovers < rounds:
		t.Errorf("%d failovers, want %d", r.Failovers, rounds)
	case control && r.Repeated == 0:
		t.Errorf("control: no repeated ID in %d failovers: the test cannot see what it looks for", r.Failovers)
	case !control && r.Repeated > 0:
		t.Errorf("%d repeated IDs", r.Repeated)
	case !control && !r.History.Valid():
		t.Errorf("the history checker found %d repeated and %d not-increasing answers", r.History.RepeatedN, r.History.NotIncreasingN)
	}
}
