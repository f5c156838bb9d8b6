package pgstore_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// storeURL turns a pgx connection string into the pg:// URL a spec takes.
func storeURL(t testing.TB, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	u := url.URL{Scheme: "pg", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	return u.String()
}

func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, dsn, pgstore.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newSegment(t testing.TB, set segment.Settings) *segment.Segment {
	t.Helper()
	s, err := segment.New(set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTakeConcurrent takes blocks from two connections pools at once: the blocks must tile
// the counter without gap or overlap.
func TestTakeConcurrent(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := open(t, dsn), open(t, dsn)
	var mu sync.Mutex
	var blocks []segment.Block
	var wg sync.WaitGroup
	for g := range 6 {
		st := a
		if g%2 == 1 {
			st = b
		}
		wg.Go(func() {
			for i := range 50 {
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
	slices.SortFunc(blocks, func(x, y segment.Block) int { return int(x.First) - int(y.First) })
	next := uint64(1)
	for _, blk := range blocks {
		if blk.First != next {
			t.Fatalf("block %v, want one starting at %d", blk, next)
		}
		next = blk.Last + 1
	}
}

func TestTakeErrors(t *testing.T) {
	dsn := pgtest.Schema(t)
	st := open(t, dsn)
	ctx := context.Background()
	if _, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Index: 0, Count: 2}); err != nil {
		t.Fatal(err)
	}
	_, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Index: 1, Count: 2})
	if !errors.Is(err, segment.ErrClass) {
		t.Fatalf("err = %v, want ErrClass", err)
	}
	t.Log(err)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE idkit_segments SET max_id = 9223372036854775800 WHERE biz_tag = 'k'`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Count: 2}); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ in, dsn, table, err string }{
		{"pg://u:p@h:5/db", "postgres://u:p@h:5/db", "idkit_segments", ""},
		{"PostgreSQL://h/db?table=s.t&sslmode=disable", "postgresql://h/db?sslmode=disable", "s.t", ""},
		{"pg://h/db?table=bad-drop", "", "", "table"},
		{"pg://h/db?namespace=x", "", "", "namespace"},
		{"pg:h", "", "", "want postgres://"},
	} {
		dsn, table, err := pgstore.ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || dsn != tc.dsn || table != tc.table {
			t.Errorf("ParseURL(%q) = %q, %q, %v", tc.in, dsn, table, err)
		}
	}
}

// TestSpec builds the scheme from a spec, as a program that imports pgstore does.
func TestSpec(t *testing.T) {
	u := storeURL(t, pgtest.Schema(t))
	s, err := idkit.New("segment:store=" + u + ",key=orders,step=100")
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

// private starts a PostgreSQL cluster of the test's own, which the test may stop and start.
func private(t *testing.T) *pglocal.Cluster {
	t.Helper()
	pgtest.DSN(t) // skips, or fails under CI=true, without PostgreSQL
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pglocal.Start(ctx, pglocal.Options{Settings: pgtest.Settings()})
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

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFaultRestart restarts the store under load from 3 processes (Segments with their own
// connection pools) × 4 goroutines: no ID repeats, and Next keeps answering from the buffered
// blocks while the server is down.
func TestFaultRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a PostgreSQL server")
	}
	c := private(t)
	var procs []*segment.Segment
	for range 3 {
		procs = append(procs, newSegment(t, segment.Settings{Stores: []segment.Store{open(t, c.DSN())}, Key: "k", Step: 20000, Timeout: time.Second, Wait: 2 * time.Second}))
	}
	load := segtest.Start(procs, 4, 200*time.Microsecond)
	time.Sleep(500 * time.Millisecond)
	ctx := context.Background()
	if err := c.Stop(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	before := load.Count()
	time.Sleep(time.Second)
	during := load.Count() - before
	if err := c.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	after := maxID(t, c.DSN(), "k")
	// Every process takes a new block from the restarted server.
	waitFor(t, "blocks from the restarted server", 30*time.Second, func() bool { return maxID(t, c.DSN(), "k") >= after+3*20000 })
	ids, errs := load.Stop()
	for _, err := range errs {
		t.Errorf("Next failed: %v", err)
	}
	if during == 0 {
		t.Error("no ID was issued while the server was down")
	}
	t.Logf("%d IDs issued in the second the server was down", during)
	segtest.CheckUnique(t, "restart", ids)
}

// TestFaultOneStoreDown runs two processes on two PostgreSQL clusters (odd and even IDs) and
// stops the first: IDs keep coming from the second, and none repeats.
func TestFaultOneStoreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two PostgreSQL servers")
	}
	c1, c2 := private(t), private(t)
	set := func() segment.Settings {
		return segment.Settings{Stores: []segment.Store{open(t, c1.DSN()), open(t, c2.DSN())}, Key: "k", Step: 500, Timeout: 500 * time.Millisecond}
	}
	procs := []*segment.Segment{newSegment(t, set()), newSegment(t, set())}
	load := segtest.Start(procs, 3, 50*time.Microsecond)
	time.Sleep(300 * time.Millisecond)
	if err := c1.Stop(context.Background(), "immediate"); err != nil {
		t.Fatal(err)
	}
	downAt := maxID(t, c2.DSN(), "k")
	before := load.Count()
	time.Sleep(1500 * time.Millisecond)
	during := load.Count() - before
	ids, errs := load.Stop()
	for _, err := range errs {
		t.Errorf("Next failed: %v", err)
	}
	if during == 0 || maxID(t, c2.DSN(), "k") <= downAt {
		t.Errorf("%d IDs while store 1 was down, store 2 went from %d to %d", during, downAt, maxID(t, c2.DSN(), "k"))
	}
	var odd, even int
	for _, v := range ids {
		if v%2 == 1 {
			odd++
		} else {
			even++
		}
	}
	t.Logf("%d odd IDs (store 1), %d even (store 2), %d while store 1 was down", odd, even, during)
	segtest.CheckUnique(t, "one store down", ids)
}

// TestFaultBackwards lowers max_id by hand under a running process: it must refuse the block
// that repeats numbers it used, and fail clearly.
func TestFaultBackwards(t *testing.T) {
	dsn := pgtest.Schema(t)
	s := newSegment(t, segment.Settings{Stores: []segment.Store{open(t, dsn)}, Key: "k", Step: 100})
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
	waitFor(t, "the preloaded block", 10*time.Second, func() bool { return maxID(t, dsn, "k") == 300 })
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE idkit_segments SET max_id = 120 WHERE biz_tag = 'k'`); err != nil {
		t.Fatal(err)
	}
	err = take(300)
	if !errors.Is(err, segment.ErrBackwards) {
		t.Fatalf("err = %v, want ErrBackwards", err)
	}
	t.Logf("after max_id was lowered: %v", err)
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
		procs = append(procs, newSegment(t, segment.Settings{Stores: []segment.Store{&racyStore{conn}}, Key: "k", Step: 10}))
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
