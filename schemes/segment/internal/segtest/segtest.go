// Package segtest holds what the segment stores' fault tests share: taking IDs from several
// Segments at once while a test breaks their stores, and finding duplicates.
package segtest

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit"
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

// NewSegment returns a Segment closed when the test ends.
func NewSegment(t testing.TB, set segment.Settings) *segment.Segment {
	t.Helper()
	s, err := segment.New(set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TakeConcurrent takes blocks of varying steps for key "k" from six goroutines sharing the
// stores a and b (two connection pools to one database): the blocks must tile the counter from
// 1 without gap or overlap.
func TakeConcurrent(t *testing.T, a, b segment.Store) {
	t.Helper()
	var mu sync.Mutex
	var blocks []segment.Block
	var wg sync.WaitGroup
	for g := range 6 {
		st := a
		if g%2 == 1 {
			st = b
		}
		wg.Go(func() {
			for i := range 40 {
				blk, err := st.Take(context.Background(), segment.Request{Key: "k", Step: uint64(1 + (g+i)%7)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				blocks = append(blocks, blk)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(blocks, func(x, y segment.Block) int { return cmp.Compare(x.First, y.First) })
	next := uint64(1)
	for _, blk := range blocks {
		if blk.First != next {
			t.Fatalf("block %v, want one starting at %d", blk, next)
		}
		next = blk.Last + 1
	}
}

// Backwards runs one process on st (key "k", step 100), lets it take 150 IDs and preload its
// third block, then calls lower, which sets the key's max_id to 120 by hand: the process must
// refuse the block that repeats numbers it used, fail with ErrBackwards and repeat nothing.
// maxID reads the key's max_id.
func Backwards(t *testing.T, st segment.Store, maxID func() int64, lower func()) {
	t.Helper()
	s := NewSegment(t, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 100})
	seen := map[uint64]bool{}
	take := func(n int) error {
		for range n {
			v, err := s.Next()
			if err != nil {
				return err
			}
			if seen[v] {
				t.Fatalf("ID %d repeated", v)
			}
			seen[v] = true
		}
		return nil
	}
	if err := take(150); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, "the preloaded block", 10*time.Second, func() bool { return maxID() == 300 })
	lower()
	err := take(300)
	if !errors.Is(err, segment.ErrBackwards) {
		t.Fatalf("err = %v, want ErrBackwards", err)
	}
	t.Logf("after max_id was lowered: %v", err)
}

// RestartUnderLoad runs 3 processes (Segments, each on its own store from open) × 4 goroutines
// on key "k" with step 20000, calls stop, waits a second, calls start: no ID may repeat, no Next
// may fail, IDs must keep coming while the server is down, and every process must take a block
// from the restarted server. maxID reads the key's max_id.
func RestartUnderLoad(t *testing.T, open func() segment.Store, stop, start func(), maxID func() int64) {
	t.Helper()
	const step = 20000
	var procs []*segment.Segment
	for range 3 {
		procs = append(procs, NewSegment(t, segment.Settings{Stores: []segment.Store{open()}, Key: "k", Step: step, Timeout: time.Second, Wait: 2 * time.Second}))
	}
	load := Start(procs, 4, 200*time.Microsecond)
	time.Sleep(500 * time.Millisecond)
	stop()
	before := load.Count()
	time.Sleep(time.Second)
	during := load.Count() - before
	start()
	after := maxID()
	WaitFor(t, "blocks from the restarted server", 30*time.Second, func() bool { return maxID() >= after+3*step })
	ids, errs := load.Stop()
	for _, err := range errs {
		t.Errorf("Next failed: %v", err)
	}
	if during == 0 {
		t.Error("no ID was issued while the server was down")
	}
	t.Logf("%d IDs issued in the second the server was down", during)
	CheckUnique(t, "restart", ids)
}

// StoreDown runs two processes on the stores from open (store 1: odd IDs, store 2: even) × 3
// goroutines and calls stop, which takes store 1's server away: IDs must keep coming from store
// 2, and none may repeat. maxID2 reads the key's max_id in store 2.
func StoreDown(t *testing.T, open func() []segment.Store, stop func(), maxID2 func() int64) {
	t.Helper()
	set := func() segment.Settings {
		return segment.Settings{Stores: open(), Key: "k", Step: 500, Timeout: 500 * time.Millisecond}
	}
	procs := []*segment.Segment{NewSegment(t, set()), NewSegment(t, set())}
	load := Start(procs, 3, 50*time.Microsecond)
	time.Sleep(300 * time.Millisecond)
	stop()
	downAt := maxID2()
	before := load.Count()
	time.Sleep(1500 * time.Millisecond)
	during := load.Count() - before
	ids, errs := load.Stop()
	for _, err := range errs {
		t.Errorf("Next failed: %v", err)
	}
	var odd, even int
	for _, v := range ids {
		if v%2 == 1 {
			odd++
		} else {
			even++
		}
	}
	if during == 0 || maxID2() <= downAt {
		t.Errorf("%d IDs while store 1 was down; store 2 went from %d to %d", during, downAt, maxID2())
	}
	t.Logf("%d odd IDs (store 1), %d even (store 2), %d while store 1 was down", odd, even, during)
	CheckUnique(t, "one store down", ids)
}

// WaitFor polls cond every 10ms and fails t when it is still false after d.
func WaitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TakeErrors checks a store's refusals on key "k": a request for another place in the list of
// stores fails with ErrClass, and once setMax has put max_id near the top of the int64 range
// a take fails with ErrExhausted.
func TakeErrors(t *testing.T, st segment.Store, setMax func(int64)) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Index: 0, Count: 2}); err != nil {
		t.Fatal(err)
	}
	_, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Index: 1, Count: 2})
	if !errors.Is(err, segment.ErrClass) {
		t.Fatalf("err = %v, want ErrClass", err)
	}
	t.Log(err)
	setMax(9223372036854775800)
	if _, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Count: 2}); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
}

// URLCase is one row of a store's URL parser table: the URL, what the parser should return
// (joined with " | "), or a part of its error.
type URLCase struct{ In, Want, Err string }

// Password is the password the URL cases write (in the user info or as ?password=): no
// error may show it.
const Password = "hunter2"

// BadQueries are store URL queries every store's parser refuses, each with the part its
// message must name: they do not parse whole, or give a key twice. StrictCases turns them
// into cases for a store's base URL.
var BadQueries = []struct{ Query, Names string }{
	{"table=a;unsafe=true", `"table=a;unsafe=true": ';' is not a separator`},
	{"unsafe=true&table=x;", `"table=x;"`},
	{"table=%zz", `invalid URL escape "%zz"`},
	{"unsafe=true&unsafe=false", `"unsafe" given twice`},
	{"unsafe=true&", "empty parameter"},
	{"unsafe", `"unsafe" has no '='`},
	{"password=" + Password + ";x", `password=xxxxx`},
	{"password=" + Password + "%zz", `password=xxxxx`},
}

// StrictCases returns a case per BadQueries entry for base, a store URL without a query.
func StrictCases(base string) []URLCase {
	var cs []URLCase
	for _, q := range BadQueries {
		cs = append(cs, URLCase{In: base + "?" + q.Query, Err: q.Names})
	}
	return cs
}

// ParseURLs runs parse over cases, and checks that no error shows Password.
func ParseURLs(t *testing.T, parse func(string) (string, error), cases []URLCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := parse(tc.In)
		if err != nil && strings.Contains(err.Error(), Password) {
			t.Errorf("parse(%q): the error shows the password: %v", tc.In, err)
		}
		switch {
		case tc.Err != "" && (err == nil || !strings.Contains(err.Error(), tc.Err)):
			t.Errorf("parse(%q) err = %v, want %q", tc.In, err, tc.Err)
		case tc.Err == "" && (err != nil || got != tc.Want):
			t.Errorf("parse(%q) = %q, %v; want %q", tc.In, got, err, tc.Want)
		}
	}
}

// FuzzURLs fuzzes a store's URL parser seeded with cases: it may refuse any input but must
// not panic, its errors never show Password, what it accepts it must accept again alike, and
// it accepts no query that net/url cannot read whole or that gives a key twice.
func FuzzURLs(f *testing.F, parse func(string) (string, error), cases []URLCase) {
	for _, tc := range cases {
		f.Add(tc.In)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := parse(in)
		if err != nil {
			// A password given once, in the user info or as ?password=, never shows.
			if strings.Count(in, Password) == 1 && (strings.Contains(in, "://u:"+Password+"@") || strings.Contains(in, "password="+Password)) &&
				strings.Contains(err.Error(), Password) {
				t.Fatalf("parse(%q): the error shows the password: %v", in, err)
			}
			return
		}
		if _, rawQuery, ok := strings.Cut(in, "?"); ok {
			rawQuery, _, _ = strings.Cut(rawQuery, "#")
			q, err := url.ParseQuery(rawQuery)
			if err != nil {
				t.Fatalf("parse(%q) accepted a query net/url cannot read whole: %v", in, err)
			}
			for k, vs := range q {
				if len(vs) > 1 {
					t.Fatalf("parse(%q) accepted key %q given %d times", in, k, len(vs))
				}
			}
		}
		if b, err := parse(in); err != nil || a != b {
			t.Fatalf("parse(%q) gave %q, then %q, %v", in, a, b, err)
		}
	})
}

// Spec builds the segment scheme from a spec naming storeURL, as a program that imports the
// store's package does, and takes 250 IDs in one batch: they must be 1 to 250.
func Spec(t *testing.T, storeURL string) {
	t.Helper()
	s, err := idkit.New("segment:store=" + storeURL + ",key=orders,step=100")
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	ids := make([]idkit.ID, 250)
	if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
		t.Fatal(err)
	}
	if ids[0].Uint64() != 1 || ids[249].Uint64() != 250 {
		t.Fatalf("IDs from %v to %v", ids[0], ids[249])
	}
	t.Log(s.Name())
}
