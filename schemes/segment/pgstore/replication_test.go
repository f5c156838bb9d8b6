package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
)

// TestCancelledSyncWait: with synchronous_standby_names naming a standby that never connects,
// a take's COMMIT waits for it; pg_cancel_backend ends the wait and PostgreSQL commits on the
// primary only, with a warning. The store must drop that block (a failover to a standby would
// lose it); the unprotected control hands it out. The class is sync (no standby streams, and
// commits wait for one).
func TestCancelledSyncWait(t *testing.T) {
	c := private(t)
	ctx := context.Background()
	for _, unprotected := range []bool{false, true} {
		execSQL(t, c.DSN(), "ALTER SYSTEM RESET synchronous_standby_names", "SELECT pg_reload_conf()")
		time.Sleep(200 * time.Millisecond) // the postmaster signals the backends; new sessions read the file
		st, err := pgstore.Open(ctx, pgstore.Settings{DSN: c.DSN(), Unsafe: true})
		if err != nil {
			t.Fatal(err)
		}
		if unprotected {
			pgstore.Unprotected(st)
		}
		if d := st.Durability(); d.Class != segment.ClassSingle || d.Epoch == "" {
			t.Errorf("durability %v, want single with an epoch", d)
		}
		setAndReload(t, c.DSN(), "synchronous_standby_names", "nobody")
		type result struct {
			b   segment.Block
			err error
		}
		done := make(chan result, 1)
		go func() {
			b, err := st.Take(ctx, segment.Request{Key: "k", Step: 10, Count: 1, Gap: 1000})
			done <- result{b, err}
		}()
		conn, err := pgx.Connect(ctx, c.DSN())
		if err != nil {
			t.Fatal(err)
		}
		segtest.WaitFor(t, "a commit waiting for the standby", 10*time.Second, func() bool {
			var n int
			conn.QueryRow(ctx, `SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n)
			return n > 0
		})
		conn.Close(ctx)
		var r result
		select {
		case r = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Take did not return after its wait was cancelled")
		}
		switch {
		case unprotected && r.err != nil:
			t.Errorf("control: %v; want the block (as before the fix)", r.err)
		case !unprotected && (!errors.Is(r.err, pgstore.ErrNotDurable) || !strings.Contains(r.err.Error(), "cancelled")):
			t.Errorf("Take after a cancelled wait: %v, %v; want ErrNotDurable naming the cancelled wait", r.b, r.err)
		}
		t.Logf("unprotected %v: %v, %v", unprotected, r.b, r.err)
		if !unprotected {
			if d := st.Durability(); d.Class != segment.ClassSync {
				t.Errorf("durability %v, want sync", d)
			}
		}
		st.Close()
	}
}
