package idkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	_ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // etcd:// for node= and lease=
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	_ "github.com/idkit/idkit/schemes/nodeid/pglease" // postgres:// for node= and lease=
	"github.com/jackc/pgx/v5"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// newScheme builds spec and closes the scheme when the test ends.
func newScheme(t *testing.T, spec string) (idkit.Scheme, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := idkit.NewContext(ctx, spec)
	if err == nil {
		t.Cleanup(func() { closeScheme(t, s) })
	}
	return s, err
}

func closeScheme(t *testing.T, s idkit.Scheme) {
	if c, ok := s.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func nodeOf(t *testing.T, s idkit.Scheme) uint64 {
	t.Helper()
	id, err := s.Next()
	if err != nil {
		t.Fatalf("%s: Next: %v", s.Name(), err)
	}
	p, err := s.Decode(id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Node
}

func TestNodeStaticSources(t *testing.T) {
	t.Setenv("IDKIT_TEST_NODE", "42")
	s, err := newScheme(t, "snowflake:layout=twitter,node=env:IDKIT_TEST_NODE")
	if err != nil {
		t.Fatal(err)
	}
	if n := nodeOf(t, s); n != 42 {
		t.Errorf("node=env: got node %d, want 42", n)
	}
	if n, err := nodeid.FromPrivateIPv4(nil, 1024); err == nil {
		s, err := newScheme(t, "snowflake:node=ip")
		if err != nil {
			t.Fatal(err)
		}
		if got := nodeOf(t, s); got != n {
			t.Errorf("node=ip: got node %d, want %d", got, n)
		}
	} else {
		t.Logf("node=ip not checked: %v", err)
	}
	// A mark file, one per node through {node}.
	dir := t.TempDir()
	s, err = newScheme(t, "snowflake:node=9,marks=file:"+filepath.Join(dir, "m-{node}")+",mark_window=20ms")
	if err != nil {
		t.Fatal(err)
	}
	nodeOf(t, s)
	b, err := os.ReadFile(filepath.Join(dir, "m-9"))
	if err != nil || !strings.Contains(string(b), "node=9") {
		t.Errorf("mark file: %q, %v", b, err)
	}
}

func TestNodeSpecErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"snowflake:node=env:IDKIT_TEST_UNSET_VAR", "not set"},
		{"snowflake:node=1024", "0 to 1023"},
		{"snowflake:node=seven", "env:VAR, ip, or a lease store URL"},
		{"snowflake:node=1,marks=lease", "marks=lease without a lease store"},
		{"snowflake:node=1,marks=disk", "want lease, file:PATH or off"},
		{"snowflake:node=1,mark_window=1s", "mark_window=1s without marks"},
		{"snowflake:node=1,lease_ttl=5s", "lease_ttl=5s without a lease store"},
		{"snowflake:node=etcd://127.0.0.1:1/x,lease=etcd://127.0.0.1:1/y", "both name a lease store"},
		{"snowflake:node=etcd://127.0.0.1:1/x,lease_ttl=off", "lease_ttl cannot be off"},
		{"snowflake:node=etcd://127.0.0.1:1,2/x", `"2/x" has no '='`},
	} {
		_, err := newScheme(t, tc.spec)
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q) = %v, want ErrSpec mentioning %q", tc.spec, err, tc.want)
		}
	}
}

// leaseChecks runs the lease forms of the spec against a store; base is its URL. expire makes
// the store let the holding of a slot lapse, as it does when its process stops renewing for
// longer than the TTL (a partition, a SIGSTOP).
func leaseChecks(t *testing.T, base func(ns string) string, expire func(t *testing.T, ns string, node uint64)) {
	t.Run("LowestFree", func(t *testing.T) {
		u := base("lowest")
		var nodes []uint64
		start := time.Now()
		for range 3 {
			s, err := newScheme(t, "snowflake:layout=twitter,lease_ttl=2s,node="+u)
			if err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, nodeOf(t, s))
			if !strings.Contains(s.Name(), fmt.Sprintf("worker=%d", nodes[len(nodes)-1])) {
				t.Errorf("Name %q does not show the claimed node", s.Name())
			}
		}
		t.Logf("3 schemes built with leases in %v", time.Since(start))
		if fmt.Sprint(nodes) != "[0 1 2]" {
			t.Errorf("nodes %v, want [0 1 2]", nodes)
		}
	})
	t.Run("NoFreeSlot", func(t *testing.T) {
		u := base("surplus")
		for i := range 5 {
			s, err := newScheme(t, "snowflake:node_bits=2,seq_bits=12,node="+u)
			if i < 4 {
				if err != nil {
					t.Fatal(err)
				}
				nodeOf(t, s)
				continue
			}
			if !errors.Is(err, idkit.ErrSpec) || !errors.Is(err, nodeid.ErrNoFreeSlot) || !strings.Contains(err.Error(), "all 4 of 4 slots") {
				t.Fatalf("fifth generator on 4 slots: %v, want ErrNoFreeSlot naming 4 of 4", err)
			}
		}
	})
	t.Run("SameStaticNode", func(t *testing.T) {
		u := base("static")
		a, err := newScheme(t, "snowflake:node=7,lease="+u)
		if err != nil {
			t.Fatal(err)
		}
		if n := nodeOf(t, a); n != 7 {
			t.Fatalf("node %d, want 7", n)
		}
		_, err = newScheme(t, "snowflake:node=7,lease="+u)
		if !errors.Is(err, nodeid.ErrHeld) {
			t.Fatalf("second process with node 7: %v, want ErrHeld", err)
		}
		closeScheme(t, a)
		if _, err := a.Next(); !errors.Is(err, schemes.ErrClosed) {
			t.Errorf("Next after Close: %v, want ErrClosed", err)
		}
		b, err := newScheme(t, "snowflake:node=7,lease="+u)
		if err != nil {
			t.Fatalf("node 7 after the first let go: %v", err)
		}
		nodeOf(t, b)
	})
	t.Run("ReclaimLowestFree", func(t *testing.T) {
		reclaimLowestFree(t, base("reclaim-any"), func(n uint64) { expire(t, "reclaim-any", n) })
	})
	t.Run("ReclaimFixedNode", func(t *testing.T) {
		reclaimFixedNode(t, base("reclaim-fixed"), func(n uint64) { expire(t, "reclaim-fixed", n) })
	})
	t.Run("MarkFileNeedsNode", func(t *testing.T) {
		_, err := newScheme(t, "snowflake:node="+base("file")+",marks=file:/tmp/one-file")
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), "{node}") {
			t.Errorf("lease with one mark file for any node: %v, want an error asking for {node}", err)
		}
	})
}

// thief claims slot node of the store at u for another owner, as a second process would.
func thief(t *testing.T, u string, node uint64) *nodeid.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := nodeid.OpenStore(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	l, err := nodeid.Hold(ctx, st, nodeid.LeaseSettings{Nodes: layouts.Twitter.Nodes(), TTL: 2 * time.Second, Exact: true, Node: node, Owner: "thief"})
	if err != nil {
		t.Fatalf("claiming slot %d for another owner: %v", node, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// drawFrom draws n IDs from s, failing the test on an error.
func drawFrom(t *testing.T, s idkit.Scheme, n int) []idkit.ID {
	t.Helper()
	ids := make([]idkit.ID, n)
	if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reclaimLowestFree takes the slot of a scheme that asked for the lowest free one: the scheme
// claims another free slot by itself, becomes ready again and reports the new node.
func reclaimLowestFree(t *testing.T, u string, expire func(node uint64)) {
	s, err := newScheme(t, "snowflake:layout=twitter,lease_ttl=2s,node="+u)
	if err != nil {
		t.Fatal(err)
	}
	f := s.(idkit.Fenced)
	old := s.(idkit.Noder).Node()
	before := drawFrom(t, s, 1000)
	expire(old)
	th := thief(t, u, old)
	waitUntil(t, 15*time.Second, "a new node", func() bool { return s.(idkit.Noder).Node() != old && f.Err() == nil })
	node := s.(idkit.Noder).Node()
	if !strings.Contains(s.Name(), fmt.Sprintf("worker=%d", node)) {
		t.Errorf("Name %q does not show the new node %d", s.Name(), node)
	}
	after := drawFrom(t, s, 1000)
	if p, _ := s.Decode(after[0]); p.Node != node {
		t.Errorf("IDs after the reclaim carry node %d, want %d", p.Node, node)
	}
	if n := dupIDs(before, after); n != 0 {
		t.Errorf("%d duplicates", n)
	}
	t.Logf("slot %d taken by %s; the scheme now holds node %d: %s", old, th.Owner(), node, s.Name())
}

// reclaimFixedNode takes the slot of a scheme with a fixed node: it keeps its number, stays
// fenced saying why and that it retries, and claims the slot again once the other owner lets
// it go, continuing above the other owner's IDs (its mark).
func reclaimFixedNode(t *testing.T, u string, expire func(node uint64)) {
	s, err := newScheme(t, "snowflake:layout=twitter,node=7,lease_ttl=2s,lease="+u)
	if err != nil {
		t.Fatal(err)
	}
	f := s.(idkit.Fenced)
	before := drawFrom(t, s, 1000)
	expire(7)
	th := thief(t, u, 7)
	waitUntil(t, 15*time.Second, "the fence naming the retries", func() bool {
		err := f.Err()
		return errors.Is(err, nodeid.ErrTaken) && errors.Is(err, nodeid.ErrHeld) && strings.Contains(err.Error(), "retries slot 7")
	})
	t.Logf("while the slot is taken: %v", f.Err())
	if _, err := s.Next(); !errors.Is(err, schemes.ErrFenced) || !strings.Contains(err.Error(), "retries slot 7") {
		t.Errorf("Next while the slot is taken: %v, want ErrFenced saying it retries", err)
	}
	if n := s.(idkit.Noder).Node(); n != 7 {
		t.Errorf("node %d while fenced, want 7", n)
	}
	// The other owner issues on node 7 and lets it go.
	tg, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: layouts.Twitter, Node: 7, Fence: th, Marks: th.Marks()})
	if err != nil {
		t.Fatal(err)
	}
	var theirs []idkit.ID
	for range 1000 {
		v, err := tg.Next()
		if err != nil {
			t.Fatal(err)
		}
		theirs = append(theirs, idkit.FromUint64(v))
	}
	if err := th.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 15*time.Second, "node 7 held again", func() bool { return f.Err() == nil })
	after := drawFrom(t, s, 1000)
	if n := s.(idkit.Noder).Node(); n != 7 {
		t.Errorf("node %d after the reclaim, want 7", n)
	}
	if after[0].Uint64() <= theirs[len(theirs)-1].Uint64() {
		t.Errorf("first ID after the reclaim %d is not above the other owner's last %d", after[0].Uint64(), theirs[len(theirs)-1].Uint64())
	}
	if n := dupIDs(before, theirs, after); n != 0 {
		t.Errorf("%d duplicates", n)
	}
}

func dupIDs(lists ...[]idkit.ID) int {
	seen := map[idkit.ID]bool{}
	n := 0
	for _, l := range lists {
		for _, id := range l {
			if seen[id] {
				n++
			}
			seen[id] = true
		}
	}
	return n
}

func TestNodeEtcd(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	host := strings.TrimPrefix(ep, "http://")
	run := time.Now().UnixNano()
	prefix := func(ns string) string { return fmt.Sprintf("/idkit-test/node/%d/%s", run, ns) }
	leaseChecks(t, func(ns string) string { return "etcd://" + host + prefix(ns) }, func(t *testing.T, ns string, node uint64) {
		// Revoking the etcd lease behind the slot's key is what its expiry does.
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := cli.Get(ctx, fmt.Sprintf("%s/slots/%d", prefix(ns), node))
		if err != nil || len(res.Kvs) != 1 {
			t.Fatalf("slot %d under %s: %v %v", node, prefix(ns), res, err)
		}
		if _, err := cli.Revoke(ctx, clientv3.LeaseID(res.Kvs[0].Lease)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNodePostgres(t *testing.T) {
	dsn := pgtest.Schema(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	leaseChecks(t, func(ns string) string {
		// pgtest's private cluster runs with fsync=off, which the lease store refuses
		// unless told the data is throwaway.
		q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}, "namespace": {ns}, "unsafe": {"true"}}
		for k, v := range cfg.RuntimeParams {
			q.Set(k, v)
		}
		u := url.URL{Scheme: "pg", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		}
		return u.String()
	}, func(t *testing.T, ns string, node uint64) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tag, err := conn.Exec(ctx, `UPDATE idkit_node_slots SET expires_at = now() WHERE namespace = $1 AND slot = $2`, ns, int64(node))
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("expiring slot %d of %s: %v %v", node, ns, tag, err)
		}
	})
}

// TestStoreURLAnyCase hands the registered drivers URLs whose scheme is in another case: the
// registry folds it before the driver parses the URL.
func TestStoreURLAnyCase(t *testing.T) {
	for url, want := range map[string]string{
		"ETCD://127.0.0.1:2379/idkit/orders":    "etcd prefix /idkit/orders at 127.0.0.1:2379",
		"Pg://u:hunter2@h/db?namespace=orders":  "PostgreSQL table idkit_node_slots, namespace orders",
		"POSTGRESQL://h/db?table=t&namespace=x": "PostgreSQL table t, namespace x",
	} {
		if got := nodeid.DescribeStore(url); got != want {
			t.Errorf("DescribeStore(%q) = %q, want %q", url, got, want)
		}
	}
}

// TestStoreURLNoPassword opens bad or unreachable store URLs that carry a password through the
// registered stores and checks that neither the error nor DescribeStore repeats it.
func TestStoreURLNoPassword(t *testing.T) {
	const pw = "hunter2"
	urls := []string{
		"postgres://u:hunter2@h:x/db",                           // net/url quotes the URL in its error
		"pg://u:hunter2@h/db?namespace=x&table=bad-name",        // bad table
		"postgresql://u:hunter2@h/db?namespace=",                // empty namespace
		"pg://u:hunter2@h/db#frag",                              // fragment
		"postgres://u:hunter2@h/db?sslmode=bogus",               // pgx refuses the DSN
		"postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2", // nothing listens on port 1
		"etcd://u:hunter2@127.0.0.1:2379/p",                     // etcd URLs take no user
		"etcd://127.0.0.1:x/p?password=hunter2",                 // query
		"mysql://u:hunter2@h/db",                                // no store registered
	}
	for _, u := range urls {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := nodeid.OpenStore(ctx, u)
		cancel()
		if err == nil {
			s.Close()
			t.Errorf("OpenStore(%q) succeeded, want an error", u)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("OpenStore(%q) error shows the password: %v", u, err)
		}
		if d := nodeid.DescribeStore(u); strings.Contains(d, pw) {
			t.Errorf("DescribeStore(%q) = %q shows the password", u, d)
		}
	}
}

// TestNodeMarksClose closes a snowflake scheme that keeps its marks in a file while IDs flow
// (with a 2 ms window, a background save every millisecond or so): once Close returns, Next
// fails with schemes.ErrClosed and nothing writes to the mark file any more, so a successor
// that opens the file cannot have its mark overwritten by a late save.
func TestNodeMarksClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m")
	s, err := idkit.New("snowflake:node=9,marks=file:" + path + ",mark_window=2ms")
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	// A save that was under way must be over: nothing changes in the directory from now on
	// (the test's TempDir cleanup, like a successor, must not race a late write).
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	time.Sleep(50 * time.Millisecond)
	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Errorf("mark file changed after Close: %q, then %q (%v)", before, after, err)
	}
	if now, _ := os.ReadDir(dir); len(ents) != 1 || len(now) != 1 {
		t.Errorf("%d, then %d files in the mark directory after Close; want the mark file alone", len(ents), len(now))
	}
	if id, err := s.Next(); !errors.Is(err, schemes.ErrClosed) {
		t.Errorf("Next after Close = %v, %v; want an error wrapping schemes.ErrClosed", id, err)
	}
	if err := s.(idkit.Batcher).NextBatch(make([]idkit.ID, 3)); !errors.Is(err, schemes.ErrClosed) {
		t.Errorf("NextBatch after Close = %v; want an error wrapping schemes.ErrClosed", err)
	}
	if after, err := os.ReadFile(path); err != nil || string(after) != string(before) {
		t.Errorf("mark file changed by calls after Close: %q, then %q (%v)", before, after, err)
	}
}
