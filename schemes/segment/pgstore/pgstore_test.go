package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// storeURL turns a pgx connection string into the pg:// URL a spec takes, with unsafe=true:
// the shared test cluster runs with fsync off (pgtest.Settings), which the store refuses
// otherwise. The durability tests open their stores without it, on clusters of their own.
func storeURL(t testing.TB, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}, "unsafe": {"true"}}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	u := url.URL{Scheme: "pg", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	return u.String()
}

// open opens a store on dsn with Unsafe set, as storeURL does, for the tests that are not
// about durability; openDurable opens one without.
func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	return openSettings(t, pgstore.Settings{DSN: dsn, Unsafe: true})
}

func openDurable(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	return openSettings(t, pgstore.Settings{DSN: dsn})
}

func openSettings(t testing.TB, set pgstore.Settings) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestTakeConcurrent takes blocks from two connection pools at once.
func TestTakeConcurrent(t *testing.T) {
	dsn := pgtest.Schema(t)
	segtest.TakeConcurrent(t, open(t, dsn), open(t, dsn))
}

func TestTakeErrors(t *testing.T) {
	dsn := pgtest.Schema(t)
	segtest.TakeErrors(t, open(t, dsn), func(v int64) {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `UPDATE idkit_segments SET max_id = $1 WHERE biz_tag = 'k'`, v); err != nil {
			t.Fatal(err)
		}
	})
}

var urlCases = []segtest.URLCase{
	{In: "pg://u:p@h:5/db", Want: "postgres://u:p@h:5/db | idkit_segments | unsafe false"},
	{In: "PostgreSQL://h/db?table=s.t&sslmode=disable", Want: "postgresql://h/db?sslmode=disable | s.t | unsafe false"},
	{In: "pg://u:p@h/db?unsafe=true&sslmode=disable", Want: "postgres://u:p@h/db?sslmode=disable | idkit_segments | unsafe true"},
	{In: "pg:///db?host=/tmp&unsafe=0", Want: "postgres:///db?host=%2Ftmp | idkit_segments | unsafe false"},
	{In: "pg://h/db?unsafe=maybe", Err: `unsafe="maybe"`},
	{In: "pg://u:secret@h/db?unsafe=secret", Err: "want true or false"},
	{In: "pg://h/db?table=bad-drop", Err: "table"},
	{In: "pg://h/db?namespace=x", Err: "namespace"},
	{In: "pg:h", Err: "want postgres://"},
	{In: "pg://u:hunter2@h/db?tabel=a", Err: `unknown parameter "tabel"`},
	{In: "pg://u:hunter2@h/db?table=a&table=b", Err: `"table" given twice`},
	{In: "pg://u:hunter2@h/db?table=a;unsafe=true", Err: `"table=a;unsafe=true": ';' is not a separator`},
	{In: "pg://u:hunter2@h/db?unsafe=true&unsafe=false", Err: `"unsafe" given twice`},
	{In: "pg://u:hunter2@h/db?options=-cclient_min_messages%3Derror", Err: "options (or PGOPTIONS) sets client_min_messages"},
	{In: "pg://u:hunter2@h/db?options=-c%20LC_MESSAGES%3Dde_DE", Err: "options (or PGOPTIONS) sets lc_messages"},
	{In: "pg://u:hunter2@h/db?client_min_messages=error", Err: "parameter client_min_messages"},
	{In: "pg://h/db?options=-c%20statement_timeout%3D5s", Want: "postgres://h/db?options=-c+statement_timeout%3D5s | idkit_segments | unsafe false"},
	{In: "pg://h/db?application_name=x&connect_timeout=3", Want: "postgres://h/db?application_name=x&connect_timeout=3 | idkit_segments | unsafe false"},
	{In: "pg://h/db?durability=async&sslmode=disable", Want: "postgres://h/db?sslmode=disable | idkit_segments | unsafe false | durability=async"},
	{In: "pg://h/db?unsafe=true&durability=sync", Want: "postgres://h/db | idkit_segments | unsafe true"},
	{In: "pg://h/db?durability=quorum", Err: `durability="quorum": want sync`},
	{In: "pg://h/db?durability=async&durability=async", Err: `"durability" given twice`},
	{In: "pg://h/db?durability=async&", Err: "empty parameter"},
}

func parseURL(in string) (string, error) {
	s, err := pgstore.ParseURL(in)
	out := fmt.Sprintf("%s | %s | unsafe %v", s.DSN, s.Table, s.Unsafe)
	if s.AcceptAsync {
		out += " | durability=async"
	}
	return out, err
}

func TestParseURL(t *testing.T) {
	segtest.ParseURLs(t, parseURL, urlCases)
	segtest.ParseURLs(t, parseURL, segtest.StrictCases("pg://u:hunter2@h/db"))
}

func FuzzParseURL(f *testing.F) {
	segtest.FuzzURLs(f, parseURL, append(urlCases, segtest.StrictCases("pg://u:hunter2@h/db")...))
}

// TestSpec builds the scheme from a spec, as a program that imports pgstore does.
func TestSpec(t *testing.T) { segtest.Spec(t, storeURL(t, pgtest.Schema(t))) }

// private starts a PostgreSQL cluster of the test's own, which the test may stop and start,
// with pgtest.Settings changed by the pairs in settings (name, value, name, value, …).
func private(t *testing.T, settings ...string) *pglocal.Cluster {
	t.Helper()
	pgtest.DSN(t) // skips, or fails under CI=true, without PostgreSQL
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set := pgtest.Settings()
	for i := 0; i+1 < len(settings); i += 2 {
		set[settings[i]] = settings[i+1]
	}
	c, err := pglocal.Start(ctx, pglocal.Options{Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func maxID(t *testing.T, dsn, key string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int64
	if err := conn.QueryRow(ctx, `SELECT max_id FROM idkit_segments WHERE biz_tag = $1`, key).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFaultRestart restarts the store under load from 3 processes (Segments with their own
// connection pools) × 4 goroutines: no ID repeats, and Next keeps answering from the buffered
// blocks while the server is down.
func TestFaultRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a PostgreSQL server")
	}
	c := private(t)
	ctx := context.Background()
	segtest.RestartUnderLoad(t, func() segment.Store { return open(t, c.DSN()) },
		func() {
			if err := c.Stop(ctx, "fast"); err != nil {
				t.Fatal(err)
			}
		},
		func() {
			if err := c.StartAgain(ctx); err != nil {
				t.Fatal(err)
			}
		},
		func() int64 { return maxID(t, c.DSN(), "k") })
}

// TestFaultOneStoreDown runs two processes on two PostgreSQL clusters (odd and even IDs) and
// stops the first with an immediate shutdown: IDs keep coming from the second, none repeats.
func TestFaultOneStoreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two PostgreSQL servers")
	}
	c1, c2 := private(t), private(t)
	segtest.StoreDown(t, func() []segment.Store { return []segment.Store{open(t, c1.DSN()), open(t, c2.DSN())} },
		func() {
			if err := c1.Stop(context.Background(), "immediate"); err != nil {
				t.Fatal(err)
			}
		},
		func() int64 { return maxID(t, c2.DSN(), "k") })
}

// TestFaultBackwards lowers max_id by hand under a running process.
func TestFaultBackwards(t *testing.T) {
	dsn := pgtest.Schema(t)
	segtest.Backwards(t, open(t, dsn), func() int64 { return maxID(t, dsn, "k") }, func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `UPDATE idkit_segments SET max_id = 120 WHERE biz_tag = 'k'`); err != nil {
			t.Fatal(err)
		}
	})
}

// racyStore takes blocks the wrong way, reading max_id and writing it back in two statements,
// for the control run: the checks above must catch the duplicates it causes.
type racyStore struct{ conn *pgx.Conn }

func (r *racyStore) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	var m int64
	if err := r.conn.QueryRow(ctx, `SELECT max_id FROM idkit_segments WHERE biz_tag = $1`, req.Key).Scan(&m); err != nil {
		return segment.Block{}, err
	}
	time.Sleep(time.Millisecond)
	if _, err := r.conn.Exec(ctx, `UPDATE idkit_segments SET max_id = $2 WHERE biz_tag = $1`, req.Key, m+int64(req.Step)); err != nil {
		return segment.Block{}, err
	}
	return segment.Block{First: uint64(m) + 1, Last: uint64(m) + req.Step}, nil
}

func (r *racyStore) Close() error { return r.conn.Close(context.Background()) }

func TestFaultControlCatchesDuplicates(t *testing.T) {
	dsn := pgtest.Schema(t)
	if _, err := open(t, dsn).Take(context.Background(), segment.Request{Key: "k", Step: 1}); err != nil {
		t.Fatal(err)
	}
	var procs []*segment.Segment
	for range 4 {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, segtest.NewSegment(t, segment.Settings{Stores: []segment.Store{&racyStore{conn}}, Key: "k", Step: 10}))
	}
	load := segtest.Start(procs, 2, 0)
	time.Sleep(500 * time.Millisecond)
	ids, errs := load.Stop()
	for _, err := range errs {
		// A process that sees another's racy write lower max_id refuses the block: that
		// check is right, and other processes still repeat IDs.
		if !errors.Is(err, segment.ErrBackwards) {
			t.Fatal(err)
		}
	}
	d := segtest.Dups(ids)
	if len(d) == 0 {
		t.Fatalf("a non-atomic store gave %d IDs without a duplicate: the check cannot catch one", len(ids))
	}
	t.Logf("control: the non-atomic store caused %d duplicates among %d IDs (%d refusals of a backward block)", len(d), len(ids), len(errs))
}
