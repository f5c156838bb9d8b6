package pglease_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/internal/proctest"
	"github.com/idkit/idkit/schemes/nodeid/internal/storetest"
	"github.com/idkit/idkit/schemes/nodeid/pglease"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// target gives each check its own schema (so its own lease table) on the test server.
func target(t *testing.T) storetest.Target {
	dsn := pgtest.Schema(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	return storetest.Target{
		Network: network, Address: addr, TTL: time.Second,
		Open: func(t *testing.T, via string) nodeid.Store {
			c := cfg.Copy()
			if via != "" {
				host, port, _ := strings.Cut(via, ":")
				p, _ := strconv.Atoi(port)
				c.Host, c.Port, c.Fallbacks = host, uint16(p), nil
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := pglease.Open(ctx, pglease.Settings{Config: c, Namespace: "test"})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

func TestStore(t *testing.T) { storetest.Run(t, target) }

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in, dsn, ns, table string
		err                bool
	}{
		{in: "postgres://u@127.0.0.1:5432/app", dsn: "postgres://u@127.0.0.1:5432/app"},
		{in: "pg://u@h/app?sslmode=disable&namespace=orders", dsn: "postgres://u@h/app?sslmode=disable", ns: "orders"},
		{in: "postgresql://h/app?table=ids.slots&namespace=x", dsn: "postgresql://h/app", ns: "x", table: "ids.slots"},
		{in: "mysql://h/app", err: true},
		{in: "pg://h/app?namespace=", err: true},
		{in: "pg://h/app?table=a;drop", err: true},
		{in: "pg://h/app?table=a.b.c", err: true},
		{in: "pg://h/app#frag", err: true},
	} {
		s, err := pglease.ParseURL(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseURL(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && (s.DSN != tc.dsn || s.Namespace != tc.ns || s.Table != tc.table) {
			t.Errorf("ParseURL(%q) = %+v, want %q %q %q", tc.in, s, tc.dsn, tc.ns, tc.table)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"postgres://u@127.0.0.1:5432/app", "pg://u@h/app?sslmode=disable&namespace=orders", "postgresql://h/app?table=ids.slots", "pg://h/app?table=a;drop"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := pglease.ParseURL(in)
		if err != nil {
			return
		}
		if !strings.HasPrefix(s.DSN, "postgres://") && !strings.HasPrefix(s.DSN, "postgresql://") {
			t.Fatalf("ParseURL(%q).DSN = %q", in, s.DSN)
		}
		u, err := url.Parse(s.DSN)
		if err != nil {
			t.Fatalf("ParseURL(%q).DSN = %q does not parse: %v", in, s.DSN, err)
		}
		if q := u.Query(); q.Has("namespace") || q.Has("table") {
			t.Fatalf("ParseURL(%q) left idkit parameters in the DSN %q", in, s.DSN)
		}
	})
}

// storeURL turns the test server's connection settings into a pg:// store URL with a
// namespace, as a spec would carry it.
func storeURL(t *testing.T, dsn, namespace string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{}
	q.Set("host", cfg.Host)
	q.Set("port", strconv.Itoa(int(cfg.Port)))
	q.Set("sslmode", "disable")
	q.Set("namespace", namespace)
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	u := url.URL{Scheme: "pg", Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	return u.String()
}

func TestFleet(t *testing.T) {
	proctest.Fleet(t, storeURL(t, pgtest.Schema(t), "fleet"), time.Second)
}

// TestTerminateBackend kills the lease's server session with pg_terminate_backend under a
// running generator. A lease table does not depend on the session, so the store reconnects
// and the holding carries on; the generator keeps issuing unique IDs.
func TestTerminateBackend(t *testing.T) {
	dsn := pgtest.Schema(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = "idkit-terminate-test"
	ctx := context.Background()
	s, err := pglease.Open(ctx, pglease.Settings{Config: cfg, Namespace: "terminate"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := nodeid.Hold(ctx, s, nodeid.LeaseSettings{Nodes: storetest.Tiny.Nodes(), TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: storetest.Tiny, Node: l.Node(), Fence: l, Marks: l.Marks(), MarkWindow: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var ids []uint64
	var errs, killed int
	end := time.Now().Add(3 * time.Second)
	nextKill := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(end) {
		if time.Now().After(nextKill) {
			var n int
			if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'idkit-terminate-test'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			killed += n
			nextKill = time.Now().Add(700 * time.Millisecond)
		}
		id, err := g.Next()
		if err != nil {
			errs++
			time.Sleep(time.Millisecond)
			continue
		}
		ids = append(ids, id)
		if len(ids)%64 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	checked, dups := storetest.Unique(ids)
	t.Logf("terminated %d lease sessions; %d IDs checked, %d duplicates, %d errors; lease: %v", killed, checked, dups, errs, l.Err())
	if killed == 0 {
		t.Error("no session was terminated")
	}
	if dups != 0 {
		t.Errorf("%d duplicates", dups)
	}
	if err := l.Err(); err != nil {
		t.Errorf("lease after terminated sessions: %v", err)
	}
}
