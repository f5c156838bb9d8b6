package contended_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/sony/sonyflake"
)

// epoch is the layouts' epoch: recent, so that 41 bits of milliseconds are far from running out.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// seq22 is the shared layout: 41 bits of milliseconds, no node bits, 22 bits of sequence
// (4,194,304 IDs per ms, a cap no generator here reaches).
var seq22 = layouts.Layout{Name: "seq22", Fields: []layouts.Field{layouts.Time(41), layouts.Seq(22)}, Unit: time.Millisecond, Epoch: epoch}

const seqBits = 22

// mutexGen is the plain mutex generator: one lock around a clock read and the counter.
type mutexGen struct {
	mu    sync.Mutex
	start time.Time
	last  int64
	seq   uint64
}

func (g *mutexGen) Next() (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		now := int64(time.Since(g.start) / time.Millisecond)
		switch {
		case now > g.last:
			g.last, g.seq = now, 0
		case g.seq < 1<<seqBits-1:
			g.seq++
		default:
			continue // the sequence is used up: wait for the next millisecond
		}
		return uint64(g.last)<<seqBits | g.seq, nil
	}
}

// casGen is the plain lock-free generator: a compare-and-swap retry loop on a packed
// (millisecond, sequence) word.
type casGen struct {
	start time.Time
	state atomic.Uint64
}

func (g *casGen) Next() (uint64, error) {
	for {
		now := uint64(time.Since(g.start) / time.Millisecond)
		old := g.state.Load()
		next := old + 1
		if now > old>>seqBits {
			next = now << seqBits
		} else if old&(1<<seqBits-1) == 1<<seqBits-1 {
			continue
		}
		if g.state.CompareAndSwap(old, next) {
			return next, nil
		}
	}
}

// crowdGen is casGen that, once a compare-and-swap fails, sends every call through a mutex for
// the rest of that millisecond (the lock only orders callers; the compare-and-swap alone keeps
// IDs unique): a lock-free generator that turns into a mutex generator while goroutines
// collide. It is not a peer users weigh idkit with but a design idkit tried for its core and
// left out (see README.md): it shows what queueing after a collision buys and costs.
type crowdGen struct {
	_     [56]byte
	state atomic.Uint64
	_     [56]byte
	crowd atomic.Uint64 // the millisecond plus one in which a compare-and-swap failed
	mu    sync.Mutex
	_     [56]byte
	start time.Time
}

func (g *crowdGen) try(now uint64) (uint64, bool) {
	old := g.state.Load()
	next := old + 1
	if now > old>>seqBits {
		next = now << seqBits
	} else if old&(1<<seqBits-1) == 1<<seqBits-1 {
		return 0, false
	}
	return next, g.state.CompareAndSwap(old, next)
}

func (g *crowdGen) Next() (uint64, error) {
	now := uint64(time.Since(g.start) / time.Millisecond)
	if g.crowd.Load() != now+1 {
		if id, ok := g.try(now); ok {
			return id, nil
		}
		g.crowd.Store(now + 1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if id, ok := g.try(uint64(time.Since(g.start) / time.Millisecond)); ok {
			return id, nil
		}
	}
}

// impl is one generator under test; new makes a fresh one.
type impl struct {
	name string
	new  func(tb testing.TB) func() (uint64, error)
}

func impls() []impl {
	return []impl{
		{"idkit", func(tb testing.TB) func() (uint64, error) {
			g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: seq22})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { g.Close() })
			if _, err := g.Next(); err != nil { // the first ID waits out the start tick
				tb.Fatal(err)
			}
			return g.Next
		}},
		{"idkit-scheme", func(tb testing.TB) func() (uint64, error) {
			s, err := idkit.New("snowflake:epoch=2024-01-01,time_bits=41,node_bits=0,seq_bits=22")
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := s.Next(); err != nil {
				tb.Fatal(err)
			}
			return func() (uint64, error) { id, err := s.Next(); return id.Uint64(), err }
		}},
		{"bwmarrin", func(tb testing.TB) func() (uint64, error) {
			n, err := snowflake.NewNode(0)
			if err != nil {
				tb.Fatal(err)
			}
			return func() (uint64, error) { return uint64(n.Generate().Int64()), nil }
		}},
		{"sonyflake", func(tb testing.TB) func() (uint64, error) {
			sf, err := sonyflake.New(sonyflake.Settings{StartTime: epoch, MachineID: func() (uint16, error) { return 1, nil }})
			if err != nil {
				tb.Fatal(err)
			}
			return sf.NextID
		}},
		{"mutex", func(tb testing.TB) func() (uint64, error) {
			g := &mutexGen{start: time.Now()}
			return g.Next
		}},
		{"cas", func(tb testing.TB) func() (uint64, error) {
			g := &casGen{start: time.Now()}
			return g.Next
		}},
		{"crowd", func(tb testing.TB) func() (uint64, error) {
			g := &crowdGen{start: time.Now()}
			return g.Next
		}},
	}
}

func init() {
	// bwmarrin/snowflake takes its layout from package variables: 41 bits of milliseconds
	// since its epoch, no node bits, 22 bits of sequence, as seq22.
	snowflake.Epoch = epoch.UnixMilli()
	snowflake.NodeBits = 0
	snowflake.StepBits = seqBits
}

// BenchmarkNext calls Next from GOMAXPROCS goroutines (b.RunParallel; -cpu 1,2,8 sets them)
// sharing one generator of each implementation. Besides wall time per ID (ns/op) it reports
// the process's CPU time per ID (cpu-ns/op, user and system, from getrusage), which a machine
// shared with other work disturbs less: time spent waiting for a core is not in it, time
// spent bouncing a cache line or spinning is.
func BenchmarkNext(b *testing.B) {
	for _, im := range impls() {
		b.Run("impl="+im.name, func(b *testing.B) {
			next := im.new(b)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime returns the CPU time the process has used, user and system, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkFloor is what the uncapped core is held to on one goroutine: one monotonic clock
// read (time.Since) plus one atomic operation (an add, and a compare-and-swap) on a shared word,
// beside the core itself in the same run. Run it with -cpu 1: it uses one goroutine whatever
// GOMAXPROCS is.
func BenchmarkFloor(b *testing.B) {
	b.Run("op=clock+add", func(b *testing.B) {
		start := time.Now()
		var w atomic.Uint64
		b.ReportAllocs()
		cpu0 := cpuTime()
		for range b.N {
			w.Add(uint64(time.Since(start)) & 1)
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("op=clock+cas", func(b *testing.B) {
		start := time.Now()
		var w atomic.Uint64
		var prev uint64
		b.ReportAllocs()
		cpu0 := cpuTime()
		for range b.N {
			v := uint64(time.Since(start))
			if w.CompareAndSwap(prev, v) {
				prev = v
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("op=core", func(b *testing.B) {
		g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: seq22})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		if _, err := g.NextContext(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cpuTime()
		for range b.N {
			if _, err := g.Next(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// TestNoDuplicates draws IDs from 8 goroutines sharing one generator of each implementation
// and checks that no ID repeats and that each goroutine's IDs increase.
func TestNoDuplicates(t *testing.T) {
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			per := 50_000
			if im.name == "sonyflake" {
				per = 500 // 25,600 IDs/s: 4,000 IDs take about 0.16 s
			}
			next := im.new(t)
			var wg sync.WaitGroup
			out := make([][]uint64, 8)
			for w := range out {
				wg.Go(func() {
					ids := make([]uint64, 0, per)
					for range per {
						id, err := next()
						if err != nil {
							t.Error(err)
							return
						}
						ids = append(ids, id)
					}
					out[w] = ids
				})
			}
			wg.Wait()
			var all []uint64
			for w, ids := range out {
				if !slices.IsSorted(ids) {
					t.Errorf("goroutine %d: IDs do not increase", w)
				}
				all = append(all, ids...)
			}
			slices.Sort(all)
			if d := len(all) - len(slices.Compact(all)); d != 0 {
				t.Errorf("%d duplicates among %d IDs", d, len(all))
			}
			fmt.Printf("%s: %d IDs from 8 goroutines, 0 duplicates\n", im.name, len(all))
		})
	}
}
