package segment_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
)

// memStore is an in-memory Store: one counter per key, taken under a lock, with switches to
// make it fail, hang or answer slowly.
type memStore struct {
	mu    sync.Mutex
	rows  map[string]*memRow
	takes atomic.Int64
	// takeNanos sums the time Take spent, for benchmarks.
	takeNanos atomic.Int64
	down      atomic.Bool   // fail every Take
	hang      atomic.Bool   // block every Take until its context ends
	delay     time.Duration // sleep before answering
}

type memRow struct {
	max          uint64
	index, count int
}

func newMem() *memStore { return &memStore{rows: map[string]*memRow{}} }

func (m *memStore) Take(ctx context.Context, r segment.Request) (segment.Block, error) {
	m.takes.Add(1)
	if m.hang.Load() {
		<-ctx.Done()
		return segment.Block{}, ctx.Err()
	}
	if m.down.Load() {
		return segment.Block{}, errors.New("memstore: down")
	}
	if m.delay > 0 {
		t0 := time.Now()
		time.Sleep(m.delay)
		defer func() { m.takeNanos.Add(int64(time.Since(t0))) }()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	row := m.rows[r.Key]
	if row == nil {
		row = &memRow{index: r.Index, count: r.Count}
		m.rows[r.Key] = row
	}
	if row.index != r.Index || row.count != r.Count {
		return segment.Block{}, fmt.Errorf("memstore: row is store %d of %d: %w", row.index+1, row.count, segment.ErrClass)
	}
	row.max += r.Step
	return segment.Block{First: row.max - r.Step + 1, Last: row.max}, nil
}

func (m *memStore) Close() error { return nil }

// setMax edits a row by hand, as an operator would.
func (m *memStore) setMax(key string, v uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[key].max = v
}

func mustNew(t testing.TB, set segment.Settings) *segment.Segment {
	t.Helper()
	return segtest.NewSegment(t, set)
}

// collect takes n IDs from s in each of g goroutines, half by Next and half by NextBatch, and
// checks that each goroutine saw increasing IDs when increasing is set.
func collect(t *testing.T, s *segment.Segment, g, n int, increasing bool) []uint64 {
	t.Helper()
	out := make([][]uint64, g)
	var wg sync.WaitGroup
	for k := range g {
		wg.Go(func() {
			ids := make([]uint64, 0, n)
			batch := make([]uint64, 37)
			for len(ids) < n {
				if k%2 == 0 {
					v, err := s.Next()
					if err != nil {
						t.Error(err)
						return
					}
					ids = append(ids, v)
					continue
				}
				if err := s.NextBatch(batch); err != nil {
					t.Error(err)
					return
				}
				ids = append(ids, batch...)
			}
			if increasing {
				for i := 1; i < len(ids); i++ {
					if ids[i] <= ids[i-1] {
						t.Errorf("goroutine %d: ID %d after %d", k, ids[i], ids[i-1])
						return
					}
				}
			}
			out[k] = ids
		})
	}
	wg.Wait()
	var all []uint64
	for _, ids := range out {
		all = append(all, ids...)
	}
	return all
}

func TestUniqueAcrossProcessesAndGoroutines(t *testing.T) {
	st := newMem()
	for _, tc := range []struct {
		name string
		set  segment.Settings
	}{
		{"buffered", segment.Settings{Stores: []segment.Store{st}, Key: "a", Step: 50}},
		{"unbuffered", segment.Settings{Stores: []segment.Store{st}, Key: "b", Step: 50, NoBuffer: true}},
		{"dynamic", segment.Settings{Stores: []segment.Store{st}, Key: "c", Step: 10, Dynamic: true, MaxStep: 640}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mustNew(t, tc.set), mustNew(t, tc.set) // two processes sharing a store
			var all []uint64
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, s := range []*segment.Segment{a, b} {
				wg.Go(func() {
					ids := collect(t, s, 4, 3000, true)
					mu.Lock()
					all = append(all, ids...)
					mu.Unlock()
				})
			}
			wg.Wait()
			if d := segtest.Dups(all); len(d) > 0 {
				t.Fatalf("%d duplicates, first %d", len(d), d[0])
			}
			for _, v := range all {
				if v == 0 || v > segment.MaxID {
					t.Fatalf("ID %d out of range", v)
				}
			}
		})
	}
}

// TestDuplicateCheckCatches is the control for the uniqueness tests: two Segments on two
// stores that each believe they are the only one, in one residue class, must collide, and
// dups must say so.
func TestDuplicateCheckCatches(t *testing.T) {
	a := mustNew(t, segment.Settings{Stores: []segment.Store{newMem()}, Key: "k", Step: 100})
	b := mustNew(t, segment.Settings{Stores: []segment.Store{newMem()}, Key: "k", Step: 100})
	ids := append(collect(t, a, 2, 500, true), collect(t, b, 2, 500, true)...)
	if len(segtest.Dups(ids)) == 0 {
		t.Fatal("two independent counters produced no duplicate: the check cannot catch one")
	}
}

func TestResidueClasses(t *testing.T) {
	s1, s2 := newMem(), newMem()
	set := segment.Settings{Stores: []segment.Store{s1, s2}, Key: "k", Step: 20, Timeout: 300 * time.Millisecond, Wait: 2 * time.Second}
	a, b := mustNew(t, set), mustNew(t, set)
	var all []uint64
	for round := range 3 {
		switch round {
		case 1:
			s1.down.Store(true) // odd IDs stop
		case 2:
			s1.down.Store(false)
			s2.hang.Store(true) // even IDs stop, with a store that never answers
		}
		before := len(all)
		all = append(all, collect(t, a, 3, 400, false)...)
		all = append(all, collect(t, b, 3, 400, false)...)
		var odd, even int
		for _, v := range all[before:] {
			if v%2 == 1 {
				odd++
			} else {
				even++
			}
		}
		t.Logf("round %d: %d odd, %d even", round, odd, even)
		if round == 0 && (odd == 0 || even == 0) {
			t.Errorf("round 0: both stores up but %d odd and %d even IDs", odd, even)
		}
	}
	if d := segtest.Dups(all); len(d) > 0 {
		t.Fatalf("%d duplicates, first %d", len(d), d[0])
	}
	// Store 1's counter hands out odd IDs, store 2's even ones.
	if s1.rows["k"].max == 0 || s2.rows["k"].max == 0 {
		t.Fatal("a store was never used")
	}
}

func TestClassMismatch(t *testing.T) {
	st := newMem()
	a := mustNew(t, segment.Settings{Stores: []segment.Store{st}, Key: "k"})
	if _, err := a.Next(); err != nil {
		t.Fatal(err)
	}
	// The same store named as the second of two: its row says "store 1 of 1".
	b := mustNew(t, segment.Settings{Stores: []segment.Store{newMem(), st}, Key: "k"})
	b2 := mustNew(t, segment.Settings{Stores: []segment.Store{st, st}, Key: "k"})
	for _, s := range []*segment.Segment{b, b2} {
		ids := make([]uint64, 5000)
		err := s.NextBatch(ids)
		if s == b && err != nil {
			t.Fatalf("the first store still works, but: %v", err)
		}
		if s == b2 && !errors.Is(err, segment.ErrClass) {
			t.Fatalf("err = %v, want ErrClass", err)
		}
	}
}

func TestBackwards(t *testing.T) {
	st := newMem()
	s := mustNew(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 100, NoBuffer: true})
	seen := map[uint64]bool{}
	for range 250 {
		v, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		seen[v] = true
	}
	st.setMax("k", 150) // an operator lowers max_id below the block in use (201..300)
	var err error
	for range 100 {
		var v uint64
		if v, err = s.Next(); err != nil {
			break
		}
		if seen[v] {
			t.Fatalf("ID %d repeated", v)
		}
		seen[v] = true
	}
	if !errors.Is(err, segment.ErrBackwards) {
		t.Fatalf("err = %v, want ErrBackwards", err)
	}
	t.Log(err)
	// The store stays refused: the next call fails too, without a new block.
	if _, err := s.Next(); !errors.Is(err, segment.ErrBackwards) {
		t.Fatalf("second call: err = %v, want ErrBackwards", err)
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration)     { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func (c *fakeClock) Set(t time.Time)         { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *fakeClock) String() string          { return c.Now().String() }
func drain(t *testing.T, s *segment.Segment) { t.Helper(); mustBatch(t, s, int(s.Step())) }

func mustBatch(t *testing.T, s *segment.Segment, n int) {
	t.Helper()
	if err := s.NextBatch(make([]uint64, n)); err != nil {
		t.Fatal(err)
	}
}

func TestDynamicStep(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st := newMem()
	s := mustNew(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 100, Dynamic: true, MaxStep: 400, NoBuffer: true, Clock: clk})
	steps := []uint64{}
	for _, lasted := range []time.Duration{time.Minute, time.Minute, time.Minute, 20 * time.Minute, time.Hour, time.Hour, time.Hour} {
		drain(t, s)
		clk.Add(lasted)
		steps = append(steps, s.Step())
	}
	mustBatch(t, s, 1)
	steps = append(steps, s.Step())
	// The first block is 100; each quick block doubles the next up to 400; a 20-minute one
	// keeps it; an hour halves it down to 100.
	want := []uint64{100, 200, 400, 400, 400, 200, 100, 100}
	if fmt.Sprint(steps) != fmt.Sprint(want) {
		t.Fatalf("steps %v, want %v", steps, want)
	}
	if got := st.rows["k"].max; got != 100+200+400+400+400+200+100+100 {
		t.Fatalf("store counter %d", got)
	}
}

func TestDoubleBuffer(t *testing.T) {
	for _, noBuffer := range []bool{false, true} {
		t.Run(fmt.Sprintf("nobuffer=%v", noBuffer), func(t *testing.T) {
			st := newMem()
			s := mustNew(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 100, NoBuffer: noBuffer})
			mustBatch(t, s, 11) // past 10% of the first block
			deadline := time.Now().Add(5 * time.Second)
			for !noBuffer && st.takes.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			want := int64(2)
			if noBuffer {
				time.Sleep(20 * time.Millisecond)
				want = 1
			}
			if got := st.takes.Load(); got != want {
				t.Fatalf("%d takes after 11 IDs, want %d", got, want)
			}
			// With the buffer the store can go away for a whole block.
			st.hang.Store(true)
			for i := 0; i < 189; i++ {
				if _, err := s.NextContext(context.Background()); err != nil {
					if noBuffer && i == 89 {
						return
					}
					t.Fatalf("ID %d: %v", i, err)
				}
			}
			if noBuffer {
				t.Fatal("without the buffer, IDs kept coming with the store hung")
			}
		})
	}
}

func TestUnavailableWithinWait(t *testing.T) {
	st := newMem()
	st.hang.Store(true)
	s := mustNew(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Wait: 100 * time.Millisecond, Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := s.Next()
	if !errors.Is(err, segment.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Next took %v with a 100ms wait", el)
	}
	t.Log(err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.NextContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	// The store comes back: IDs flow again (a Next fails at once while the store counts as
	// down, until the loader's next take).
	st.hang.Store(false)
	var v uint64
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if v, err = s.Next(); err == nil {
			break
		}
	}
	if err != nil || v == 0 {
		t.Fatalf("after the store came back: %d, %v", v, err)
	}
	s.Close()
	if _, err := s.Next(); !errors.Is(err, segment.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestExhausted(t *testing.T) {
	st := newMem()
	st.rows["k"] = &memRow{max: segment.MaxID/2 - 5, count: 2}
	s := mustNew(t, segment.Settings{Stores: []segment.Store{st, newMem()}, Key: "k", Step: 10, Timeout: time.Second})
	s2 := mustNew(t, segment.Settings{Stores: []segment.Store{st, newMem()}, Key: "k", Step: 10})
	_ = s2
	// Store 1 is exhausted; store 2 keeps serving.
	for range 50 {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	only := mustNew(t, segment.Settings{Stores: []segment.Store{st}, Key: "x", Step: 10})
	st.rows["x"] = &memRow{max: segment.MaxID - 5, count: 1}
	if _, err := only.Next(); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
}

func TestSettingsErrors(t *testing.T) {
	st := newMem()
	for _, tc := range []struct {
		name string
		set  segment.Settings
	}{
		{"no store", segment.Settings{Key: "k"}},
		{"nil store", segment.Settings{Stores: []segment.Store{nil}, Key: "k"}},
		{"no key", segment.Settings{Stores: []segment.Store{st}}},
		{"max below step", segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 100, MaxStep: 50}},
		{"huge step", segment.Settings{Stores: []segment.Store{st, st}, Key: "k", Step: segment.MaxID}},
		{"preload 1", segment.Settings{Stores: []segment.Store{st}, Key: "k", Preload: 1}},
		{"short above long", segment.Settings{Stores: []segment.Store{st}, Key: "k", ShortBlock: time.Hour, LongBlock: time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := segment.New(tc.set); !errors.Is(err, segment.ErrSettings) {
				t.Fatalf("err = %v, want ErrSettings", err)
			}
		})
	}
}

func TestBatchSortedAcrossStores(t *testing.T) {
	s1, s2 := newMem(), newMem()
	s1.rows["k"] = &memRow{max: 1000, index: 0, count: 2} // store 1 is far ahead
	s := mustNew(t, segment.Settings{Stores: []segment.Store{s1, s2}, Key: "k", Step: 10, NoBuffer: true})
	ids := make([]uint64, 35)
	for range 5 {
		if err := s.NextBatch(ids); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("batch not increasing at %d: %v", i, ids)
			}
		}
	}
}

func ExampleSegment() {
	st := newMem() // in a program: segment.OpenStore(ctx, "pg://…") with pgstore imported
	s, err := segment.New(segment.Settings{Stores: []segment.Store{st}, Key: "orders", Step: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	a, _ := s.Next()
	b, _ := s.Next()
	batch := make([]uint64, 3)
	_ = s.NextBatch(batch)
	fmt.Println(a, b, batch)
	// Output: 1 2 [3 4 5]
}

// TestHedgeHungStore: with the first store hanging, the second is asked after the hedge delay
// (a quarter of the timeout), so Next gets a block well within a wait shorter than the timeout.
func TestHedgeHungStore(t *testing.T) {
	hung, up := newMem(), newMem()
	hung.hang.Store(true)
	s := mustNew(t, segment.Settings{Stores: []segment.Store{hung, up}, Key: "k", Step: 10, Timeout: 2 * time.Second, Wait: time.Second})
	start := time.Now()
	for range 30 { // three blocks, each a new load that may try the hung store first
		v, err := s.Next()
		if err != nil {
			t.Fatalf("after %v: %v", time.Since(start), err)
		}
		if v%2 != 0 {
			t.Fatalf("ID %d from the hung store", v)
		}
	}
	t.Logf("30 IDs from the second store in %v with the first hanging (timeout 2s)", time.Since(start))
}
