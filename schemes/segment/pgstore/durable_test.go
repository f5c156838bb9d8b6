package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
)

// TestRefusesNotDurable opens stores on a private server started as the tests' clusters are,
// with fsync and full_page_writes off: Open refuses it naming fsync, then, with fsync on,
// naming full_page_writes; an UNLOGGED table and a temporary one are refused too. unsafe=true
// accepts all but the temporary table. A store opened on a durable server refuses the block of
// a Take made after fsync was turned off under it.
func TestRefusesNotDurable(t *testing.T) {
	c := private(t) // pgtest.Settings: fsync, full_page_writes and synchronous_commit off
	dsn := c.DSN()
	refused := func(set pgstore.Settings, want string) {
		t.Helper()
		_, err := pgstore.Open(context.Background(), set)
		if !errors.Is(err, pgstore.ErrNotDurable) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Open(%s, unsafe=%v): %v; want ErrNotDurable naming %q", set.Table, set.Unsafe, err, want)
		}
		t.Log(err)
	}
	refused(pgstore.Settings{DSN: dsn}, "fsync off")
	openSettings(t, pgstore.Settings{DSN: dsn, Unsafe: true})

	pgrepltest.SetAndReload(t, dsn, "fsync", "on")
	refused(pgstore.Settings{DSN: dsn}, "full_page_writes off")
	openSettings(t, pgstore.Settings{DSN: dsn, Unsafe: true})

	pgrepltest.SetAndReload(t, dsn, "full_page_writes", "on")
	st := openDurable(t, dsn)
	req := segment.Request{Key: "k", Step: 10, Count: 1}
	if b, err := st.Take(context.Background(), req); err != nil || b.Last != 10 {
		t.Fatalf("Take on a durable server: %v, %v", b, err)
	}

	pgrepltest.Exec(t, dsn, "CREATE UNLOGGED TABLE unlogged_segments (LIKE idkit_segments INCLUDING ALL)")
	refused(pgstore.Settings{DSN: dsn, Table: "unlogged_segments"}, "UNLOGGED")
	openSettings(t, pgstore.Settings{DSN: dsn, Table: "unlogged_segments", Unsafe: true})
	temp := pgtest.WithParam(dsn, "search_path", "pg_temp")
	refused(pgstore.Settings{DSN: temp}, "temporary table")
	refused(pgstore.Settings{DSN: temp, Unsafe: true}, "temporary table")

	// fsync turned off under an open store: the increment commits, but its block is refused.
	pgrepltest.SetAndReload(t, dsn, "fsync", "off")
	_, err := st.Take(context.Background(), req)
	if !errors.Is(err, pgstore.ErrNotDurable) || !strings.Contains(err.Error(), "fsync off") {
		t.Fatalf("Take after fsync was turned off: %v; want ErrNotDurable", err)
	}
	t.Log(err)
	if got := maxID(t, dsn, "k"); got != 20 {
		t.Fatalf("max_id %d, want 20: the refused block is lost, not given back", got)
	}
}

// takeAndCrash takes n IDs from a new process (a Segment with its own store) on key, closes
// it and crashes the server with an immediate shutdown, as the issue did; then a new process
// takes n IDs after the restart. It returns how many of them repeat the first process's IDs.
func takeAndCrash(t *testing.T, c *pglocal.Cluster, key string, n int, control bool) int {
	t.Helper()
	ctx := context.Background()
	st := openDurable(t, c.DSN())
	if control {
		pgstore.WithoutSyncCommit(st)
	}
	seg := segtest.NewSegment(t, segment.Settings{Stores: []segment.Store{st}, Key: key, Step: 100})
	before := make([]uint64, n)
	if err := seg.NextBatch(before); err != nil {
		t.Fatal(err)
	}
	seg.Close()
	if err := c.Stop(ctx, "immediate"); err != nil {
		t.Fatal(err)
	}
	if err := c.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	seg = segtest.NewSegment(t, segment.Settings{Stores: []segment.Store{openDurable(t, c.DSN())}, Key: key, Step: 100})
	after := make([]uint64, n)
	if err := seg.NextBatch(after); err != nil {
		t.Fatal(err)
	}
	seg.Close()
	d := segtest.Dups(append(before, after...))
	t.Logf("%s: first process %d..%d, after the crash %d..%d: %d repeated", key, before[0], before[n-1], after[0], after[n-1], len(d))
	return len(d)
}

// TestFaultCrashAsyncCommit is the run on a server tuned with synchronous_commit =
// off (fsync and full_page_writes on, so the store accepts it; wal_writer_delay 10s, so that
// the WAL writer does not flush the last commits by chance before the crash): take 250 IDs at
// step 100, crash the server with pg_ctl stop -m immediate, start it, take 250 IDs in a new
// process. Three crashes: no ID may repeat. The control runs the same three crashes with the
// store's own synchronous commit taken away (an unexported hook) and must see repeats.
func TestFaultCrashAsyncCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("crashes a PostgreSQL server")
	}
	c := private(t, "fsync", "on", "full_page_writes", "on", "synchronous_commit", "off", "wal_writer_delay", "10s")
	const rounds = 3
	for round := range rounds {
		if d := takeAndCrash(t, c, fmt.Sprintf("durable-%d", round), 250, false); d > 0 {
			t.Fatalf("crash %d: %d IDs repeated on a server with synchronous_commit = off", round+1, d)
		}
	}
	hit := 0
	for round := range rounds {
		if takeAndCrash(t, c, fmt.Sprintf("control-%d", round), 250, true) > 0 {
			hit++
		}
	}
	if hit == 0 {
		t.Fatalf("control: without the store's synchronous commit, %d crashes repeated no ID: the test cannot see the fault", rounds)
	}
	t.Logf("control: without the store's synchronous commit, %d of %d crashes repeated IDs; with it, 0 of %d", hit, rounds, rounds)
}

// heldStore hands out the blocks of a real store, but holds the answer to its hold-th Take
// until Close has begun: it waits for the Take's context to end (Close cancels it), then takes
// the block from the real store all the same, as a store whose answer was on its way does.
type heldStore struct {
	segment.Store
	hold  int32
	calls atomic.Int32
	asked chan struct{}
}

func (h *heldStore) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	if h.calls.Add(1) != h.hold {
		return h.Store.Take(ctx, req)
	}
	close(h.asked)
	<-ctx.Done()
	return h.Store.Take(context.Background(), req)
}

// TestCloseHeldBlock: a block that a real store hands out while Close runs is not served
// after it, nor the rest of the current block; every call after Close fails with ErrClosed.
// The held answer is the first block's (Warm waits for it) or the preloaded one's (eight IDs
// are left in the current block).
func TestCloseHeldBlock(t *testing.T) {
	for _, hold := range []int32{1, 2} {
		t.Run(fmt.Sprintf("answer=%d", hold), func(t *testing.T) {
			dsn := pgtest.Schema(t)
			h := &heldStore{Store: open(t, dsn), hold: hold, asked: make(chan struct{})}
			seg, err := segment.New(segment.Settings{Stores: []segment.Store{h}, Key: "k", Step: 10, Timeout: time.Minute, Wait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			warm := make(chan error, 1)
			if hold == 1 {
				go func() { warm <- seg.Warm(context.Background()) }()
			} else {
				for range 2 { // the second ID of ten starts the preload
					if _, err := seg.Next(); err != nil {
						t.Fatal(err)
					}
				}
				warm <- nil
			}
			<-h.asked
			if err := seg.Close(); err != nil {
				t.Fatal(err)
			}
			if err := <-warm; hold == 1 && !errors.Is(err, segment.ErrClosed) {
				t.Fatalf("Warm: %v, want ErrClosed", err)
			}
			if got := maxID(t, dsn, "k"); got != int64(10*hold) {
				t.Fatalf("max_id %d, want %d: the held block was not taken", got, 10*hold)
			}
			if v, err := seg.Next(); !errors.Is(err, segment.ErrClosed) {
				t.Fatalf("Next after Close: %d, %v; want ErrClosed", v, err)
			}
			if err := seg.NextBatch(make([]uint64, 5)); !errors.Is(err, segment.ErrClosed) {
				t.Fatalf("NextBatch after Close: %v; want ErrClosed", err)
			}
		})
	}
}
