package pglease_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/internal/pgrepl"
	"github.com/idkit/idkit/internal/redact"
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
			// pgtest's private cluster runs with fsync=off (its data is thrown away).
			s, err := pglease.Open(ctx, pglease.Settings{Config: c, Namespace: "test", Unsafe: true})
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
		unsafe, err, async bool
	}{
		{in: "postgres://u@127.0.0.1:5432/app", dsn: "postgres://u@127.0.0.1:5432/app"},
		{in: "pg://u@h/app?sslmode=disable&namespace=orders", dsn: "postgres://u@h/app?sslmode=disable", ns: "orders"},
		{in: "postgresql://h/app?table=ids.slots&namespace=x", dsn: "postgresql://h/app", ns: "x", table: "ids.slots"},
		{in: "pg://h/app?unsafe=true&sslmode=disable", dsn: "postgres://h/app?sslmode=disable", unsafe: true},
		{in: "pg://h/app?unsafe=false", dsn: "postgres://h/app"},
		{in: "pg://h/app?unsafe=maybe", err: true},
		{in: "pg://h/app?durability=async&sslmode=disable", dsn: "postgres://h/app?sslmode=disable", async: true},
		{in: "pg://h/app?durability=sync", dsn: "postgres://h/app"},
		{in: "pg://h/app?durability=none", err: true},
		{in: "pg://h/app?durability=async&durability=async", err: true},
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
		if err == nil && (s.DSN != tc.dsn || s.Namespace != tc.ns || s.Table != tc.table || s.Unsafe != tc.unsafe || s.AcceptAsync != tc.async) {
			t.Errorf("ParseURL(%q) = %+v, want %q %q %q", tc.in, s, tc.dsn, tc.ns, tc.table)
		}
	}
}

// strictURLs are lease store URLs whose query does not parse whole, gives a key twice or names
// an unknown key, each with the part the error must name. The password must not show.
var strictURLs = []struct{ in, names string }{
	{"pg://u:hunter2@h/app?namespace=a;table=b", `"namespace=a;table=b": ';' is not a separator`},
	{"pg://u:hunter2@h/app?namespace=a&sslmode=disable;", `"sslmode=disable;"`},
	{"pg://u:hunter2@h/app?namespace=%zz", `invalid URL escape "%zz"`},
	{"pg://u:hunter2@h/app?namespace=a&namespace=b", `"namespace" given twice`},
	{"pg://u:hunter2@h/app?table=a&table=b", `"table" given twice`},
	{"pg://u:hunter2@h/app?sslmode=disable&sslmode=require", `"sslmode" given twice`},
	{"pg://u:hunter2@h/app?namspace=a", `unknown parameter "namspace"`},
	{"pg://u:hunter2@h/app?pool_max_conns=4", `unknown parameter "pool_max_conns"`},
	{"pg://u@h/app?password=hunter2;x", `password=xxxxx`},
	{"pg://u@h/app?password=hunter2&password=hunter3", `"password" given twice`},
	{"pg://u@h/app?namespace=a&", "empty parameter"},
	{"pg://u:hunter2@h/app?options=-cclient_min_messages%3Derror", "options (or PGOPTIONS) sets client_min_messages"},
	{"pg://u:hunter2@h/app?options=--lc-messages%3Dfr_FR", "options (or PGOPTIONS) sets lc_messages"},
	{"pg://u:hunter2@h/app?lc_messages=C", "parameter lc_messages"},
}

func TestParseURLStrict(t *testing.T) {
	for _, tc := range strictURLs {
		_, err := pglease.ParseURL(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("ParseURL(%q) = %v, want an error naming %s", tc.in, err, tc.names)
		}
		if err != nil && strings.Contains(err.Error(), "hunter") {
			t.Errorf("ParseURL(%q): the error shows the password: %v", tc.in, err)
		}
	}
	// What the store takes besides its own keys reaches pgx.
	s, err := pglease.ParseURL("pg://h/app?namespace=x&application_name=idkit&search_path=s&connect_timeout=3&sslmode=disable")
	if err != nil || s.DSN != "postgres://h/app?application_name=idkit&connect_timeout=3&search_path=s&sslmode=disable" {
		t.Errorf("ParseURL with pgx parameters = %+v, %v", s, err)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"pg://h/app?options=-c%20statement_timeout%3D5s", "pg://h/app?options=-c%20client%5C_min%5C_messages%3Derror", "postgres://u@127.0.0.1:5432/app", "pg://u@h/app?sslmode=disable&namespace=orders", "postgresql://h/app?table=ids.slots", "pg://h/app?table=a;drop", "pg://h/app?unsafe=true"} {
		f.Add(s)
	}
	for _, tc := range strictURLs {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := pglease.ParseURL(in)
		if err != nil {
			if strings.Contains(err.Error(), "hunter2") && !strings.Contains(redact.String(in), "hunter2") {
				t.Fatalf("ParseURL(%q): the error shows the password: %v", in, err)
			}
			return
		}
		if _, rawQuery, ok := strings.Cut(in, "?"); ok {
			q, err := url.ParseQuery(rawQuery)
			if err != nil {
				t.Fatalf("ParseURL(%q) accepted a query net/url cannot read whole: %v", in, err)
			}
			for k, vs := range q {
				if len(vs) > 1 {
					t.Fatalf("ParseURL(%q) accepted %q given %d times", in, k, len(vs))
				}
			}
		}
		if !strings.HasPrefix(s.DSN, "postgres://") && !strings.HasPrefix(s.DSN, "postgresql://") {
			t.Fatalf("ParseURL(%q).DSN = %q", in, s.DSN)
		}
		u, err := url.Parse(s.DSN)
		if err != nil {
			t.Fatalf("ParseURL(%q).DSN = %q does not parse: %v", in, s.DSN, err)
		}
		if q := u.Query(); q.Has("namespace") || q.Has("table") || q.Has("unsafe") {
			t.Fatalf("ParseURL(%q) left idkit parameters in the DSN %q", in, s.DSN)
		}
		// What reaches the server sets nothing the durability check relies on.
		if cfg, err := pgx.ParseConfig(s.DSN); err == nil {
			if err := pgrepl.CheckParams(cfg.RuntimeParams); err != nil {
				t.Fatalf("ParseURL(%q) accepted a DSN whose parameters %v: %v", in, cfg.RuntimeParams, err)
			}
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
	q.Set("unsafe", "true") // pgtest's private cluster runs with fsync=off
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

// TestRefusesFsyncOff opens the store on pgtest's private cluster, which runs with fsync=off:
// Open refuses it with ErrNotDurable naming the setting and the way out, through a store URL
// too; unsafe=true opens it.
func TestRefusesFsyncOff(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var fsync string
	err = conn.QueryRow(ctx, `SHOW fsync`).Scan(&fsync)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fsync != "off" {
		t.Skipf("the test server (%s) runs with fsync=%s", pgtest.EnvDSN, fsync)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pglease.Open(ctx, pglease.Settings{Config: cfg, Namespace: "refuse"}); !errors.Is(err, pglease.ErrNotDurable) ||
		!strings.Contains(err.Error(), "fsync=off") || !strings.Contains(err.Error(), "unsafe=true") {
		t.Errorf("Open on a server with fsync=off: %v, want ErrNotDurable naming fsync=off and unsafe=true", err)
	}
	u := strings.Replace(storeURL(t, dsn, "refuse"), "unsafe=true", "unsafe=false", 1)
	if _, err := nodeid.OpenStore(ctx, u); !errors.Is(err, pglease.ErrNotDurable) {
		t.Errorf("OpenStore(unsafe=false) on a server with fsync=off: %v, want ErrNotDurable", err)
	}
	st, err := nodeid.OpenStore(ctx, storeURL(t, dsn, "refuse"))
	if err != nil {
		t.Fatalf("OpenStore(unsafe=true): %v", err)
	}
	st.Close()
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
	s, err := pglease.Open(ctx, pglease.Settings{Config: cfg, Namespace: "terminate", Unsafe: true})
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
