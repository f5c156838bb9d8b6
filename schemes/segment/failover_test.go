package segment_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
)

// epochStore hands out blocks of one counter stamped with an epoch the test changes, and
// records the gap each take asked for.
type epochStore struct {
	mu    sync.Mutex
	max   uint64
	epoch string
	sync  bool
	gaps  []uint64
}

func (e *epochStore) Take(_ context.Context, r segment.Request) (segment.Block, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gaps = append(e.gaps, r.Gap)
	e.max += r.Step
	return segment.Block{First: e.max - r.Step + 1, Last: e.max, Epoch: e.epoch, Synchronous: e.sync}, nil
}

func (e *epochStore) Close() error { return nil }

func (e *epochStore) Durability() segment.Durability {
	return segment.Durability{Class: segment.ClassAsync, Reason: "test", Epoch: e.epoch, AsyncAccepted: true}
}

// TestFailoverDropsOldBlocks: when a block comes back in a new epoch, the rest of the block in
// use and the buffered block, both taken in the old epoch and not synchronously acknowledged,
// are dropped; synchronously acknowledged ones are kept. Every take passes the failover gap.
func TestFailoverDropsOldBlocks(t *testing.T) {
	for _, sync := range []bool{false, true} {
		st := &epochStore{epoch: "a", sync: sync}
		s := segtest.NewSegment(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 10, NoBuffer: true, FailoverGap: 7})
		for want := uint64(1); want <= 3; want++ {
			if v, err := s.Next(); err != nil || v != want {
				t.Fatalf("Next = %d, %v; want %d", v, err, want)
			}
		}
		// The store fails over; this process learns of it with its next block, which a
		// Warm-like refill forces here by taking the rest of the block in one batch.
		st.mu.Lock()
		st.epoch = "b"
		st.mu.Unlock()
		batch := make([]uint64, 8)
		if err := s.NextBatch(batch); err != nil {
			t.Fatal(err)
		}
		// Block 1 is used up to 10 in the batch (7 IDs), then block 2 (11..20) in epoch b.
		if batch[6] != 10 || batch[7] != 11 {
			t.Fatalf("batch %v", batch)
		}
		if got := s.Failovers(); got != 1 {
			t.Errorf("sync=%v: Failovers = %d, want 1", sync, got)
		}
		if d := s.Durability(); len(d) != 1 || d[0].Epoch != "b" || d[0].Class != segment.ClassAsync {
			t.Errorf("Durability = %+v", d)
		}
		for _, g := range st.gaps {
			if g != 7 {
				t.Errorf("a take asked for gap %d, want 7", g)
			}
		}
	}

	// With a buffered block of the old epoch: it is dropped unless synchronous.
	for _, sync := range []bool{false, true} {
		st := &epochStore{epoch: "a", sync: sync}
		s := segtest.NewSegment(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 10, Preload: 0.5})
		for range 10 { // 1..10, the preload at 6 takes 11..20 in epoch a
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		segtest.WaitFor(t, "the buffered block", 5e9, func() bool { st.mu.Lock(); defer st.mu.Unlock(); return st.max == 20 })
		st.mu.Lock()
		st.epoch = "b"
		st.mu.Unlock()
		// 11 comes from the buffered block; issuing 16 (half of it) takes block 21..30 in
		// epoch b, which drops the rest of 11..20 unless it was synchronous.
		var got []uint64
		for range 10 {
			v, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
			if v == 16 {
				segtest.WaitFor(t, "the epoch-b block", 5e9, func() bool { return s.Failovers() == 1 })
			}
		}
		want := []uint64{11, 12, 13, 14, 15, 16, 21, 22, 23, 24}
		if sync {
			want = []uint64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("sync=%v: IDs after the failover %v, want %v", sync, got, want)
			}
		}
	}
}

func TestDurabilityString(t *testing.T) {
	d := segment.Durability{Class: segment.ClassAsync, Reason: "standby s1 streams asynchronously", Epoch: "1/2", AsyncAccepted: true}
	want := "async (accepted by durability=async: failover fencing is the only protection): standby s1 streams asynchronously; epoch 1/2"
	if d.String() != want {
		t.Errorf("%q, want %q", d.String(), want)
	}
}

// TestSchemeDurability: the scheme idkit.New returns for a segment spec shows its stores'
// durability through idkit.DurabilityOf (the optional idkit.Durabler), one entry per store.
func TestSchemeDurability(t *testing.T) {
	s, err := idkit.New("segment:store=memstore://durability-1,store2=memstore://durability-2,key=k,gap=5")
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	got, ok := idkit.DurabilityOf(s)
	if !ok || len(got) != 2 || got[0].Class != "unknown" || !strings.HasPrefix(got[0].Store, "store 1 ") || !strings.HasPrefix(got[1].Store, "store 2 ") {
		t.Errorf("DurabilityOf = %v, %v; want two stores of unknown class (the memory store says nothing)", got, ok)
	}
	if !strings.Contains(s.Name(), ",gap=5") {
		t.Errorf("Name() = %q, want the gap", s.Name())
	}
}
