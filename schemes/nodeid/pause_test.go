package nodeid_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/internal/storetest"
)

// pause holds one goroutine at a chosen point, as SIGSTOP, a long GC or a VM migration would
// hold a whole process: arm it, and the next goroutine to reach the point blocks there until
// release.
type pause struct {
	armed   atomic.Bool
	reached chan struct{}
	release chan struct{}
}

func newPause() *pause {
	return &pause{reached: make(chan struct{}), release: make(chan struct{})}
}

func (p *pause) point() {
	if p.armed.CompareAndSwap(true, false) {
		close(p.reached)
		<-p.release
	}
}

// pauseClock is the system clock (monotonic readings included, so it agrees with a Lease's
// deadline) whose Now is a pause point.
type pauseClock struct{ *pause }

func (c pauseClock) Now() time.Time        { c.point(); return time.Now() }
func (c pauseClock) Sleep(d time.Duration) { time.Sleep(d) }

// pauseMarks is an in-memory MarkStore whose SaveMark is a pause point: the generator saves a
// mark after it checked the fence for an ID and before it reserves that ID.
type pauseMarks struct {
	*pause
	mu   sync.Mutex
	mark time.Time
}

func (m *pauseMarks) LoadMark(context.Context) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark, nil
}

func (m *pauseMarks) SaveMark(_ context.Context, mark time.Time) error {
	m.point()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark = mark
	return nil
}

func holdVia(t *testing.T, v view, set nodeid.LeaseSettings) *nodeid.Lease {
	t.Helper()
	set.TTL, set.Nodes = ttl, storetest.Tiny.Nodes()
	l, err := nodeid.Hold(context.Background(), v, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// claimWhenFree claims slot node for owner as soon as the store lets it go.
func claimWhenFree(t *testing.T, m *memStore, node uint64, owner string) (*nodeid.Lease, time.Time) {
	t.Helper()
	limit := time.Now().Add(10 * ttl)
	for {
		l, err := nodeid.Hold(context.Background(), view{m: m}, nodeid.LeaseSettings{Nodes: storetest.Tiny.Nodes(), TTL: ttl, Exact: true, Node: node, Owner: owner})
		if err == nil {
			t.Cleanup(func() { l.Close() })
			return l, time.Now()
		}
		if !errors.Is(err, nodeid.ErrHeld) || time.Now().After(limit) {
			t.Fatalf("%s claiming slot %d: %v", owner, node, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// issue draws n IDs from g.
func issue(t *testing.T, g *schemes.Snowflake, n int) []uint64 {
	t.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		id, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

type nextResult struct {
	id  uint64
	err error
}

func nextAsync(g *schemes.Snowflake) <-chan nextResult {
	res := make(chan nextResult, 1)
	go func() { id, err := g.Next(); res <- nextResult{id, err} }()
	return res
}

// TestPauseBetweenCheckAndIssue is the regression for a process paused past its lease: a Next
// call on A's generator is held (with A's link to the store) after it began and before it
// read the clock, for longer than the TTL; B claims the slot and issues IDs; then A's call
// goes on. It must fail with ErrFenced: the time it reads is past A's deadline. A generator
// that checks its fence once at the start of a call and issues on whatever the clock reads
// afterwards issues here an ID in B's time range on B's node.
func TestPauseBetweenCheckAndIssue(t *testing.T) {
	m := &memStore{slots: map[uint64]*memSlot{}}
	var cut atomic.Bool
	a := holdVia(t, view{m: m, cut: &cut}, nodeid.LeaseSettings{Owner: "A"})
	p := newPause()
	ga, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: storetest.Tiny, Node: a.Node(), Fence: a, Clock: pauseClock{p}})
	if err != nil {
		t.Fatal(err)
	}
	idsA := issue(t, ga, 100)
	p.armed.Store(true)
	res := nextAsync(ga)
	<-p.reached
	paused := time.Now()
	cut.Store(true) // the whole process is frozen: its renewals stop too

	b, claimed := claimWhenFree(t, m, a.Node(), "B")
	gb, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: storetest.Tiny, Node: b.Node(), Fence: b})
	if err != nil {
		t.Fatal(err)
	}
	idsB := issue(t, gb, 2000)
	close(p.release)
	r := <-res
	t.Logf("A paused %v (TTL %v); B claimed the slot %v into the pause; A's call then returned %d, %v", time.Since(paused), ttl, claimed.Sub(paused), r.id, r.err)
	if r.err == nil {
		_, dups := storetest.Unique(append(idsA, r.id), idsB)
		t.Fatalf("A issued %d (time %s) after the pause, on the node B claimed at %s; duplicates of B's IDs: %d",
			r.id, storetest.Tiny.Decompose(r.id).Time.Format(time.RFC3339Nano), claimed.UTC().Format(time.RFC3339Nano), dups)
	}
	if !errors.Is(r.err, schemes.ErrFenced) || !errors.Is(r.err, nodeid.ErrFenced) {
		t.Errorf("A after the pause: %v, want ErrFenced from the lease", r.err)
	}
	// A finds out in the end that its slot was taken; no later call issues anything.
	cut.Store(false)
	waitErr(t, a, 3*ttl, "A learns its slot was taken", func(err error) bool { return errors.Is(err, nodeid.ErrTaken) })
	if id, err := ga.Next(); !errors.Is(err, schemes.ErrFenced) {
		t.Errorf("A after learning its slot was taken: %d, %v; want ErrFenced", id, err)
	}
}

// TestCloseStopsIssuerInFlight is the regression for Close racing a call: a Next call on A's
// generator is held after its fence check and before it reserves its ID (in its mark save);
// A's lease is closed, which releases the slot, and B claims it; then A's call goes on. It
// must not issue on the released slot: Close stops the generator before it releases.
func TestCloseStopsIssuerInFlight(t *testing.T) {
	m := &memStore{slots: map[uint64]*memSlot{}}
	a := holdVia(t, view{m: m}, nodeid.LeaseSettings{Owner: "A"})
	p := newPause()
	ga, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: storetest.Tiny, Node: a.Node(), Fence: a, Marks: &pauseMarks{pause: p}})
	if err != nil {
		t.Fatal(err)
	}
	p.armed.Store(true) // the first ID saves a mark before it is reserved
	res := nextAsync(ga)
	<-p.reached
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := claimWhenFree(t, m, a.Node(), "B")
	gb, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: storetest.Tiny, Node: b.Node(), Fence: b})
	if err != nil {
		t.Fatal(err)
	}
	idsB := issue(t, gb, 1000)
	close(p.release)
	r := <-res
	if r.err == nil {
		_, dups := storetest.Unique([]uint64{r.id}, idsB)
		t.Fatalf("A issued %d after its lease was closed and B claimed the slot (duplicates of B's IDs: %d)", r.id, dups)
	}
	if !errors.Is(r.err, schemes.ErrFenced) {
		t.Errorf("A's call after Close: %v, want ErrFenced", r.err)
	}
	t.Logf("A's call held across Close returned: %v", r.err)
}
