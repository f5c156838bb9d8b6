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
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	_ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // etcd:// for node= and lease=
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	_ "github.com/idkit/idkit/schemes/nodeid/pglease" // postgres:// for node= and lease=
	"github.com/jackc/pgx/v5"
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

// leaseChecks runs the lease forms of the spec against a store; base is its URL.
func leaseChecks(t *testing.T, base func(ns string) string) {
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
		if _, err := a.Next(); !errors.Is(err, schemes.ErrFenced) {
			t.Errorf("Next after Close: %v, want ErrFenced", err)
		}
		b, err := newScheme(t, "snowflake:node=7,lease="+u)
		if err != nil {
			t.Fatalf("node 7 after the first let go: %v", err)
		}
		nodeOf(t, b)
	})
	t.Run("MarkFileNeedsNode", func(t *testing.T) {
		_, err := newScheme(t, "snowflake:node="+base("file")+",marks=file:/tmp/one-file")
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), "{node}") {
			t.Errorf("lease with one mark file for any node: %v, want an error asking for {node}", err)
		}
	})
}

func TestNodeEtcd(t *testing.T) {
	host := strings.TrimPrefix(etcdtest.Endpoint(t), "http://")
	run := time.Now().UnixNano()
	leaseChecks(t, func(ns string) string { return fmt.Sprintf("etcd://%s/idkit-test/node/%d/%s", host, run, ns) })
}

func TestNodePostgres(t *testing.T) {
	cfg, err := pgx.ParseConfig(pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	leaseChecks(t, func(ns string) string {
		q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}, "namespace": {ns}}
		for k, v := range cfg.RuntimeParams {
			q.Set(k, v)
		}
		u := url.URL{Scheme: "pg", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		}
		return u.String()
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
