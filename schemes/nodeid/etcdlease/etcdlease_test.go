package etcdlease_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/internal/etcdtest"
)

var prefixSeq = 0

// open returns a store under a fresh prefix on the test's etcd.
func open(t *testing.T, endpoint string) *etcdlease.Store {
	t.Helper()
	prefixSeq++
	s, err := etcdlease.Open(etcdlease.Settings{
		Endpoints: []string{endpoint},
		Prefix:    fmt.Sprintf("/idkit-test/%s/%d-%d", t.Name(), time.Now().UnixNano(), prefixSeq),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sameStore(t *testing.T, endpoint, prefix string) *etcdlease.Store {
	t.Helper()
	s, err := etcdlease.Open(etcdlease.Settings{Endpoints: []string{endpoint}, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestClaimLowestFreeAndRelease(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	ctx := context.Background()
	first := open(t, ep)
	prefix := first.Prefix()
	var leases []*nodeid.Lease
	var worst time.Duration
	for i := range 4 {
		s := first
		if i > 0 {
			s = sameStore(t, ep, prefix)
		}
		start := time.Now()
		l, err := nodeid.Hold(ctx, s, nodeid.LeaseSettings{Nodes: 4, TTL: 2 * time.Second})
		took := time.Since(start)
		worst = max(worst, took)
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		defer l.Close()
		if l.Node() != uint64(i) {
			t.Errorf("claim %d got node %d", i, l.Node())
		}
		if err := l.Err(); err != nil {
			t.Errorf("claim %d: fence: %v", i, err)
		}
		leases = append(leases, l)
	}
	t.Logf("claim latency on loopback, worst of 4 (dial included): %v", worst)
	if worst > 100*time.Millisecond {
		t.Errorf("claim took %v, want < 100ms", worst)
	}
	_, err := nodeid.Hold(ctx, sameStore(t, ep, prefix), nodeid.LeaseSettings{Nodes: 4, TTL: 2 * time.Second})
	if !errors.Is(err, nodeid.ErrNoFreeSlot) || !strings.Contains(err.Error(), "all 4 of 4 slots") {
		t.Fatalf("fifth claim: got %v, want ErrNoFreeSlot naming 4 of 4", err)
	}
	// Free slot 1; the next claim gets it.
	if err := leases[1].Close(); err != nil {
		t.Fatal(err)
	}
	if err := leases[1].Err(); !errors.Is(err, nodeid.ErrFenced) {
		t.Errorf("closed lease: Err = %v, want ErrFenced", err)
	}
	l, err := nodeid.Hold(ctx, sameStore(t, ep, prefix), nodeid.LeaseSettings{Nodes: 4, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Node() != 1 {
		t.Errorf("after release got node %d, want 1", l.Node())
	}
	slots, err := sameStore(t, ep, prefix).Slots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 4 {
		t.Fatalf("Slots: %+v", slots)
	}
	for _, s := range slots {
		if !s.Held || s.Owner == "" || s.Expires.IsZero() {
			t.Errorf("slot %+v: want held with owner and expiry", s)
		}
	}
}

func TestExactSlot(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	ctx := context.Background()
	s := open(t, ep)
	a, err := nodeid.Hold(ctx, s, nodeid.LeaseSettings{Nodes: 1024, Exact: true, Node: 7, TTL: 2 * time.Second, Owner: "first"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Node() != 7 {
		t.Fatalf("node %d", a.Node())
	}
	_, err = nodeid.Hold(ctx, sameStore(t, ep, s.Prefix()), nodeid.LeaseSettings{Nodes: 1024, Exact: true, Node: 7, TTL: 2 * time.Second})
	if !errors.Is(err, nodeid.ErrHeld) || !strings.Contains(err.Error(), `"first"`) {
		t.Fatalf("second holder of node 7: got %v, want ErrHeld naming the owner", err)
	}
	_, err = nodeid.Hold(ctx, sameStore(t, ep, s.Prefix()), nodeid.LeaseSettings{Nodes: 1024, Exact: true, Node: 1024})
	if !errors.Is(err, nodeid.ErrRange) {
		t.Fatalf("node 1024 of 1024: got %v, want ErrRange", err)
	}
}

func TestMarks(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	ctx := context.Background()
	s := open(t, ep)
	prefix := s.Prefix()
	l, err := nodeid.Hold(ctx, s, nodeid.LeaseSettings{Nodes: 2, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := l.Marks()
	if got, err := m.LoadMark(ctx); err != nil || !got.IsZero() {
		t.Fatalf("fresh mark: %v %v", got, err)
	}
	want := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := m.SaveMark(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err := m.LoadMark(ctx); err != nil || !got.Equal(want) {
		t.Fatalf("mark: got %v %v, want %v", got, err, want)
	}
	node := l.Node()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The mark outlives the holding, and a closed lease cannot write.
	if err := m.SaveMark(ctx, want.Add(time.Hour)); err == nil {
		t.Error("SaveMark after Close succeeded")
	}
	l2, err := nodeid.Hold(ctx, sameStore(t, ep, prefix), nodeid.LeaseSettings{Nodes: 2, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.Node() != node {
		t.Fatalf("reclaim got node %d, want %d", l2.Node(), node)
	}
	if got, err := l2.Marks().LoadMark(ctx); err != nil || !got.Equal(want) {
		t.Fatalf("mark after reclaim: got %v %v, want %v", got, err, want)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in        string
		endpoints string
		prefix    string
		err       bool
	}{
		{in: "etcd://127.0.0.1:2379/idkit/orders", endpoints: "http://127.0.0.1:2379", prefix: "/idkit/orders"},
		{in: "etcd://a:1,b:2/x/", endpoints: "http://a:1 http://b:2", prefix: "/x"},
		{in: "etcd://a:1", endpoints: "http://a:1", prefix: ""},
		{in: "http://a:1/x", err: true},
		{in: "etcd:///x", err: true},
		{in: "etcd://a:1/x?y=1", err: true},
		{in: "etcd://u:p@a:1/x", err: true},
		{in: "etcd://a:1,,b:2/x", err: true},
	} {
		s, err := etcdlease.ParseURL(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseURL(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if got := strings.Join(s.Endpoints, " "); got != tc.endpoints || s.Prefix != tc.prefix {
			t.Errorf("ParseURL(%q) = %q %q, want %q %q", tc.in, got, s.Prefix, tc.endpoints, tc.prefix)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"etcd://127.0.0.1:2379/idkit/orders", "etcd://a:1,b:2/x/", "etcd://a:1", "http://a:1/x", "etcd:///x", "etcd://a:1/x?y=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := etcdlease.ParseURL(in)
		if err != nil {
			return
		}
		if len(s.Endpoints) == 0 {
			t.Fatalf("ParseURL(%q) succeeded without endpoints", in)
		}
		for _, e := range s.Endpoints {
			if !strings.HasPrefix(e, "http://") || len(e) == len("http://") {
				t.Fatalf("ParseURL(%q): bad endpoint %q", in, e)
			}
		}
	})
}
