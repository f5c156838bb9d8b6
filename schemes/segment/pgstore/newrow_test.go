package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
)

// TestNewRowAfterPromotion: a key whose row and first takes never reached an asynchronous
// standby is new again on that standby once it is promoted. With durability=async, gap-1
// blocks taken on the primary after its standby stopped receiving WAL (its primary_conninfo
// emptied: no signal, no kill) must not come out again from the promoted standby's first
// take of the same key. The control (FlatStart: a new row starts at Step × (1 + Gap) on
// every timeline, as before the timeline counted) must repeat the first block, which shows
// the check sees the hole. Both servers stay up (split brain): each store talks to one of
// them by its own DSN. A take whose new-row start past the gap leaves bigint is
// ErrExhausted, no row made, for an existing key too.
func TestNewRowAfterPromotion(t *testing.T) {
	pgtest.DSN(t) // skips, or fails under CI=true, without PostgreSQL
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set := pgtest.Settings() // fsync off: the stores say unsafe=true; promotion is what is tested
	set["wal_level"] = "replica"
	set["max_wal_senders"] = "5"
	set["hot_standby"] = "on"
	prim, err := pglocal.Start(ctx, pglocal.Options{Settings: set, TempDir: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prim.Close() })
	stby, err := prim.NewStandby(ctx, "s1", pglocal.Options{TempDir: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stby.Close() })

	const step, gap = 10, 4
	open := func(c *pglocal.Cluster, control bool) *pgstore.Store {
		t.Helper()
		st, err := pgstore.Open(ctx, pgstore.Settings{DSN: c.DSN(), Unsafe: true, AcceptAsync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if control {
			if err := pgstore.FlatStart(st); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	exec := func(c *pglocal.Cluster, q string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	holds := func(c *pglocal.Cluster, q string) bool {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var b bool
		if err := conn.QueryRow(ctx, q).Scan(&b); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return b
	}

	// The table is made on the primary and replayed on the standby; then the standby stops
	// receiving.
	fixed, control := open(prim, false), open(prim, true)
	segtest.WaitFor(t, "the standby holding the table", 30*time.Second, func() bool {
		return holds(stby, `SELECT to_regclass('idkit_segments') IS NOT NULL`)
	})
	exec(stby, `ALTER SYSTEM SET primary_conninfo = ''`)
	exec(stby, `SELECT pg_reload_conf()`)
	segtest.WaitFor(t, "the standby to stop receiving", 30*time.Second, func() bool {
		return holds(prim, `SELECT NOT EXISTS (SELECT 1 FROM pg_stat_replication)`)
	})

	// Fewer than gap blocks of each key on the primary: lost in the promotion.
	lost := map[string][]segment.Block{}
	for _, k := range []struct {
		key string
		st  *pgstore.Store
	}{{"fixed", fixed}, {"control", control}} {
		for range gap - 1 {
			b, err := k.st.Take(ctx, segment.Request{Key: k.key, Step: step, Count: 1, Gap: gap})
			if err != nil {
				t.Fatalf("take of %s on the primary: %v", k.key, err)
			}
			lost[k.key] = append(lost[k.key], b)
		}
	}
	if holds(stby, `SELECT EXISTS (SELECT 1 FROM idkit_segments)`) {
		t.Fatal("the standby holds rows taken after it stopped receiving")
	}
	exec(stby, `SELECT pg_promote(true, 60)`)

	repeats := func(key string, control bool) int {
		t.Helper()
		b, err := open(stby, control).Take(ctx, segment.Request{Key: key, Step: step, Count: 1, Gap: gap})
		if err != nil {
			t.Fatalf("take of %s on the promoted standby: %v", key, err)
		}
		n := 0
		for _, a := range lost[key] {
			if a.First <= b.Last && b.First <= a.Last {
				n += int(min(a.Last, b.Last) - max(a.First, b.First) + 1)
			}
		}
		t.Logf("%s: on the old primary %v; first take on the promoted standby %v (epoch %s): %d numbers repeated", key, lost[key], b, b.Epoch, n)
		return n
	}
	if n := repeats("control", true); n == 0 {
		t.Error("control (a new row starts at Step × (1 + Gap) on every timeline): no repeat; the test cannot see the hole")
	}
	if n := repeats("fixed", false); n > 0 {
		t.Errorf("%d numbers repeated by a new row on the promoted standby", n)
	}

	// A new row's start past the gap on timeline 2 leaves bigint: refused, no row made.
	huge := segment.Request{Key: "huge", Step: 1 << 40, Count: 1, Gap: 1 << 22}
	st := open(stby, false)
	if b, err := st.Take(ctx, huge); !errors.Is(err, segment.ErrExhausted) {
		t.Errorf("take of a new row at %d × (1 + %d × 2): %v, %v; want ErrExhausted", huge.Step, huge.Gap, b, err)
	}
	if holds(stby, `SELECT EXISTS (SELECT 1 FROM idkit_segments WHERE biz_tag = 'huge')`) {
		t.Errorf("a row for key %q was made by a refused take", huge.Key)
	}
	// The start is computed before the row is found: an existing key is refused the same.
	huge.Key = "fixed"
	if b, err := st.Take(ctx, huge); !errors.Is(err, segment.ErrExhausted) {
		t.Errorf("take of existing key %q with step %d and gap %d on timeline 2: %v, %v; want ErrExhausted", huge.Key, huge.Step, huge.Gap, b, err)
	}
}
