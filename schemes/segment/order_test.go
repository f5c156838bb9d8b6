package segment_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
)

// memDriver opens the in-memory stores of this package's tests from specs: memstore://NAME
// names one store, shared by every spec that names it.
type memDriver struct {
	mu     sync.Mutex
	stores map[string]*memStore
}

func (d *memDriver) OpenStore(_ context.Context, url string) (segment.Store, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := strings.TrimPrefix(url, "memstore://")
	if d.stores[name] == nil {
		d.stores[name] = newMem()
	}
	return d.stores[name], nil
}

func (d *memDriver) DescribeStore(url string) string { return "memory store " + url }

var mems = &memDriver{stores: map[string]*memStore{}}

func init() { segment.RegisterStore("memstore", mems) }

// memSchemes numbers the stores memScheme makes, so that each call gets fresh ones.
var memSchemes atomic.Int64

// memScheme builds the segment scheme on fresh memory stores, with store 1's counter at ahead
// (Flickr's two ticket servers drift apart), and returns it as a Batcher.
func memScheme(t testing.TB, stores int, step, ahead uint64) idkit.Batcher {
	t.Helper()
	name := fmt.Sprintf("s%d", memSchemes.Add(1))
	spec := "segment:store=memstore://" + name + "-1"
	if stores == 2 {
		spec += ",store2=memstore://" + name + "-2"
	}
	if ahead > 0 {
		st, _ := mems.OpenStore(context.Background(), "memstore://"+name+"-1")
		st.(*memStore).rows["k"] = &memRow{max: ahead, count: stores}
	}
	s, err := idkit.New(fmt.Sprintf("%s,key=k,step=%d", spec, step))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.(io.Closer).Close() })
	return s.(idkit.Batcher)
}

// checkIncreasing fails t unless batch is strictly increasing.
func checkIncreasing(t testing.TB, what string, batch []idkit.ID) {
	t.Helper()
	for i := 1; i < len(batch); i++ {
		if batch[i].Uint64() <= batch[i-1].Uint64() {
			t.Fatalf("%s: ID %d at index %d after %d: the batch goes backwards", what, batch[i].Uint64(), i, batch[i-1].Uint64())
		}
	}
}

// TestBatchIncreasing: every batch of the segment scheme is strictly increasing, over step
// sizes, batch sizes around the scheme's 512-ID chunks, one and two stores, and two stores whose
// counters drifted apart (the issue's batch of 2,000 at step 300 went from 10424 to 601).
func TestBatchIncreasing(t *testing.T) {
	for _, stores := range []int{1, 2} {
		for _, ahead := range []uint64{0, 5000} {
			for _, step := range []uint64{1, 7, 300, 1000} {
				for _, n := range []int{1, 2, 511, 512, 513, 2000, 4099} {
					t.Run(fmt.Sprintf("stores=%d,ahead=%d,step=%d,n=%d", stores, ahead, step, n), func(t *testing.T) {
						s := memScheme(t, stores, step, ahead)
						var all []uint64
						batch := make([]idkit.ID, n)
						for round := range 4 {
							if err := s.NextBatch(batch); err != nil {
								t.Fatal(err)
							}
							checkIncreasing(t, fmt.Sprintf("batch %d", round), batch)
							for _, id := range batch {
								all = append(all, id.Uint64())
							}
						}
						if d := segtest.Dups(all); len(d) > 0 {
							t.Fatalf("%d duplicates, first %d", len(d), d[0])
						}
					})
				}
			}
		}
	}
}

// TestBatchIncreasingConcurrent: goroutines sharing one scheme of two stores each get
// increasing batches, with Next calls in between, and no ID twice.
func TestBatchIncreasingConcurrent(t *testing.T) {
	s := memScheme(t, 2, 300, 5000)
	var mu sync.Mutex
	var all []uint64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			batch := make([]idkit.ID, 700+g*300)
			var ids []uint64
			for round := range 20 {
				if err := s.NextBatch(batch); err != nil {
					t.Error(err)
					return
				}
				for i := 1; i < len(batch); i++ {
					if batch[i].Uint64() <= batch[i-1].Uint64() {
						t.Errorf("goroutine %d batch %d: %d after %d", g, round, batch[i].Uint64(), batch[i-1].Uint64())
						return
					}
				}
				for _, id := range batch {
					ids = append(ids, id.Uint64())
				}
				id, err := s.(idkit.Scheme).Next()
				if err != nil {
					t.Error(err)
					return
				}
				ids = append(ids, id.Uint64())
			}
			mu.Lock()
			all = append(all, ids...)
			mu.Unlock()
		})
	}
	wg.Wait()
	segtest.CheckUnique(t, "concurrent batches", all)
}

// FuzzBatchIncreasing draws the settings, the drift between the stores and a run of batch sizes
// and Next calls: every batch must be strictly increasing and no ID may come twice.
func FuzzBatchIncreasing(f *testing.F) {
	f.Add(uint16(300), uint16(2000), true, uint16(5000), []byte{1, 7, 200, 0, 255})
	f.Add(uint16(1), uint16(513), false, uint16(0), []byte{3})
	f.Add(uint16(1000), uint16(1), true, uint16(0), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, step, n uint16, two bool, ahead uint16, ops []byte) {
		if step == 0 || n == 0 || len(ops) > 16 {
			return
		}
		stores := 1
		if two {
			stores = 2
		}
		s := memScheme(t, stores, uint64(step), uint64(ahead))
		seen := map[uint64]bool{}
		add := func(v uint64) {
			if seen[v] {
				t.Fatalf("ID %d twice", v)
			}
			seen[v] = true
		}
		for i, op := range ops {
			if op == 0 { // a single Next between the batches
				id, err := s.(idkit.Scheme).Next()
				if err != nil {
					t.Fatal(err)
				}
				add(id.Uint64())
				continue
			}
			batch := make([]idkit.ID, int(n)*int(op)/64+1)
			if err := s.NextBatch(batch); err != nil {
				t.Fatal(err)
			}
			checkIncreasing(t, fmt.Sprintf("op %d (batch of %d)", i, len(batch)), batch)
			for _, id := range batch {
				add(id.Uint64())
			}
		}
	})
}

// Example_publicText gives a segment scheme a prefix and a mask, as every scheme takes them:
// the IDs stay 1, 2, 3 in the database, the API shows them masked, and the masked values stay
// below 2^63 (segment IDs are 63-bit, idkit.Widther).
func Example_publicText() {
	os.Setenv("ORDERS_MASK_KEY", "0011223344556677:8899aabbccddeeff") // in a program: a secret store
	s, err := idkit.New("segment:store=memstore://example-text,key=orders,step=10,mask=env:ORDERS_MASK_KEY")
	if err != nil {
		panic(err)
	}
	defer s.(io.Closer).Close()
	for range 3 {
		id, _ := s.Next()
		text, _ := idkit.FormatID(s, id)
		shown, _ := strconv.ParseUint(text, 10, 64)
		back, _ := s.Parse(text)
		fmt.Println(id, shown < 1<<63, back == id)
	}
	// Output:
	// 1 true true
	// 2 true true
	// 3 true true
}
