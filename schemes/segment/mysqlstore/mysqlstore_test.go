package mysqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
	"github.com/idkit/idkit/schemes/segment/pgstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t testing.TB, dsn string) *mysqlstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := mysqlstore.Open(ctx, dsn, mysqlstore.DefaultTable)
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

func sqlExec(t testing.TB, dsn, q string, args ...any) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

func maxID(t testing.TB, dsn, key string) int64 {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow(`SELECT max_id FROM idkit_segments WHERE biz_tag = ?`, key).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTakeConcurrent takes blocks from two stores (connection pools) at once: the blocks must
// tile the counter without gap or overlap.
func TestTakeConcurrent(t *testing.T) {
	dsn, _ := database(t)
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
	dsn, _ := database(t)
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
	sqlExec(t, dsn, `UPDATE idkit_segments SET max_id = 9223372036854775800 WHERE biz_tag = 'k'`)
	if _, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Count: 2}); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ in, dsn, table, err string }{
		{"mysql://u:p@h/db", "u:p@tcp(h:3306)/db", "idkit_segments", ""},
		{"MariaDB://u@h:3307/db?table=seg&timeout=2s", "u@tcp(h:3307)/db?timeout=2s", "seg", ""},
		{"mysql://root@/db?socket=/tmp/x.sock", "root@unix(/tmp/x.sock)/db", "idkit_segments", ""},
		{"mysql://u@h/db?table=a;b", "", "", "query"},
		{"mysql://u@h/db?table=a-b", "", "", "table"},
		{"mysql://u@/db", "", "", "no host"},
		{"mysql://u@h/db?timeout=soon", "", "", "parameters"},
	} {
		dsn, table, err := mysqlstore.ParseURL(tc.in)
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

func TestSpec(t *testing.T) {
	dsn, _ := database(t)
	s, err := idkit.New("segment:store=" + storeURL(t, dsn) + ",key=orders,step=100")
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

// TestFaultRestart restarts MariaDB under load from 3 processes × 4 goroutines.
func TestFaultRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a MariaDB server")
	}
	dsn, srv := database(t)
	if srv == nil {
		t.Skip("restarts the server: needs a private one (unset " + envDSN + ")")
	}
	var procs []*segment.Segment
	for range 3 {
		procs = append(procs, newSegment(t, segment.Settings{Stores: []segment.Store{open(t, dsn)}, Key: "k", Step: 20000, Timeout: time.Second, Wait: 2 * time.Second}))
	}
	load := segtest.Start(procs, 4, 200*time.Microsecond)
	time.Sleep(500 * time.Millisecond)
	srv.stop(t)
	before := load.Count()
	time.Sleep(time.Second)
	during := load.Count() - before
	srv.start(t)
	after := maxID(t, dsn, "k")
	deadline := time.Now().Add(30 * time.Second)
	for maxID(t, dsn, "k") < after+3*20000 {
		if time.Now().After(deadline) {
			t.Fatal("no blocks from the restarted server within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
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

// TestFaultMixedStoreDown runs two processes on a PostgreSQL store (odd IDs) and a MariaDB
// store (even IDs) and stops MariaDB: IDs keep coming from PostgreSQL, none repeats.
func TestFaultMixedStoreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a MariaDB server")
	}
	mdsn, srv := database(t)
	if srv == nil {
		t.Skip("stops the server: needs a private one (unset " + envDSN + ")")
	}
	pdsn := pgtest.Schema(t)
	set := func() segment.Settings {
		ctx := context.Background()
		pst, err := pgstore.Open(ctx, pdsn, pgstore.DefaultTable)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pst.Close() })
		return segment.Settings{Stores: []segment.Store{pst, open(t, mdsn)}, Key: "k", Step: 500, Timeout: 500 * time.Millisecond}
	}
	procs := []*segment.Segment{newSegment(t, set()), newSegment(t, set())}
	load := segtest.Start(procs, 3, 50*time.Microsecond)
	time.Sleep(300 * time.Millisecond)
	srv.stop(t)
	before := load.Count()
	time.Sleep(1500 * time.Millisecond)
	during := load.Count() - before
	ids, errs := load.Stop()
	srv.start(t)
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
	if during == 0 || even == 0 {
		t.Errorf("%d IDs while MariaDB was down; %d odd, %d even", during, odd, even)
	}
	t.Logf("%d odd IDs (PostgreSQL), %d even (MariaDB), %d while MariaDB was down", odd, even, during)
	segtest.CheckUnique(t, "mixed stores, one down", ids)
}

// TestFaultBackwards lowers max_id by hand under a running process.
func TestFaultBackwards(t *testing.T) {
	dsn, _ := database(t)
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
	deadline := time.Now().Add(10 * time.Second)
	for maxID(t, dsn, "k") != 300 {
		if time.Now().After(deadline) {
			t.Fatal("the preloaded block did not come")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sqlExec(t, dsn, `UPDATE idkit_segments SET max_id = 120 WHERE biz_tag = 'k'`)
	if err := take(300); !errors.Is(err, segment.ErrBackwards) {
		t.Fatalf("err = %v, want ErrBackwards", err)
	} else {
		t.Logf("after max_id was lowered: %v", err)
	}
}
