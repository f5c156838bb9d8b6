package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/internal/pgrepl"
	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// takeResult is what a Take returned.
type takeResult struct {
	b   segment.Block
	err error
}

// cancelledTake takes a block of key on st while the server's commits wait for a standby
// that does not answer, and cancels the wait with pg_cancel_backend, as a statement_timeout
// or an operator does: PostgreSQL then commits on the primary only, with a warning.
func cancelledTake(t *testing.T, dsn string, st *pgstore.Store, key string) takeResult {
	t.Helper()
	ctx := context.Background()
	done := make(chan takeResult, 1)
	go func() {
		b, err := st.Take(ctx, segment.Request{Key: key, Step: 10, Count: 1, Gap: 1000})
		done <- takeResult{b, err}
	}()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	segtest.WaitFor(t, "a commit waiting for the standby", 10*time.Second, func() bool {
		var n int
		conn.QueryRow(ctx, `SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n)
		return n > 0
	})
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Take did not return after its wait was cancelled")
	}
	return takeResult{}
}

// TestCancelledSyncWait: with synchronous_standby_names naming a standby that never connects,
// a take's COMMIT waits for it until pg_cancel_backend ends the wait, and the commit is on the
// primary only. The store must drop that block whether PostgreSQL's warning reaches it or not:
// the server's client_min_messages = error keeps it from the client (as the store URL's
// options=-cclient_min_messages=error did, which Open now refuses), and lc_messages = German
// translates it. The controls take as before the fix: unprotected (no look at the
// replication), and legacy (the warning's English text alone), which hands the block out as
// synchronous under a hidden or translated warning: the repeat of issue 36 after a failover.
// confirm-only ignores the warning, to show that Confirm (the standbys' flush positions)
// alone catches it.
func TestCancelledSyncWait(t *testing.T) {
	lc := pgrepltest.Translated(t) // before the server starts: it inherits LOCPATH
	c := private(t)
	ctx := context.Background()
	stores := map[string]*pgstore.Store{}
	for _, mode := range []string{"protected", "unprotected", "legacy", "confirm-only"} {
		st, err := pgstore.Open(ctx, pgstore.Settings{DSN: c.DSN(), Unsafe: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		switch mode {
		case "unprotected":
			pgstore.Unprotected(st)
		case "legacy":
			pgstore.Legacy(st)
		case "confirm-only":
			pgstore.NoNotice(st)
		}
		if d := st.Durability(); d.Class != segment.ClassSingle || d.Epoch == "" {
			t.Errorf("durability %v, want single with an epoch", d)
		}
		stores[mode] = st
	}
	pgrepltest.SetAndReload(t, c.DSN(), "synchronous_standby_names", "nobody")
	for _, phase := range []struct {
		name, setting, value string
		modes                []string
	}{
		{"warning", "", "", []string{"protected", "unprotected"}},
		{"hidden", "client_min_messages", "error", []string{"protected", "legacy", "confirm-only"}},
		{"translated", "lc_messages", lc, []string{"protected", "legacy"}},
	} {
		pgrepltest.Exec(t, c.DSN(), "ALTER SYSTEM RESET client_min_messages", "ALTER SYSTEM RESET lc_messages")
		if phase.setting != "" {
			pgrepltest.SetAndReload(t, c.DSN(), phase.setting, phase.value)
		}
		if phase.setting == "lc_messages" {
			var e *pgconn.PgError
			if err := pgxExec(c.DSN(), "SELECT 1/0"); !errors.As(err, &e) || e.Message == "division by zero" {
				t.Fatalf("lc_messages = %s: 1/0 says %v; want a translated message", lc, err)
			} else {
				t.Logf("lc_messages = %s: 1/0 says %q", lc, e.Message)
			}
		}
		for _, mode := range phase.modes {
			st := stores[mode]
			res := cancelledTake(t, c.DSN(), st, "k")
			t.Logf("%s, %s: %v, %v", phase.name, mode, res.b, res.err)
			switch mode {
			case "unprotected", "legacy":
				if res.err != nil || res.b.Synchronous != (mode == "legacy") {
					t.Errorf("%s, control %s: %v, %v; want the block, synchronous %v (as before the fix)", phase.name, mode, res.b, res.err, mode == "legacy")
				}
			case "confirm-only":
				if !errors.Is(res.err, pgrepl.ErrUnconfirmed) || !errors.Is(res.err, pgstore.ErrNotDurable) {
					t.Errorf("%s, Confirm alone: %v, %v; want ErrNotDurable wrapping pgrepl.ErrUnconfirmed", phase.name, res.b, res.err)
				}
			default:
				if !errors.Is(res.err, pgstore.ErrNotDurable) {
					t.Errorf("%s: take after a cancelled wait: %v, %v; want ErrNotDurable", phase.name, res.b, res.err)
				}
			}
			if d := st.Durability(); mode != "unprotected" && d.Class != segment.ClassSync {
				t.Errorf("%s, %s: durability %v, want sync", phase.name, mode, d)
			}
		}
	}
	t.Run("standby", func(t *testing.T) { confirmStandbyFlush(t, c.DSN()) })
}

// confirmStandbyFlush runs the store against a real synchronous standby (pg_receivewal
// --synchronous) with the cancel warning hidden by the server's client_min_messages = error:
// a take is vouched for by the standby's flush position (synchronous); a new key starts after
// the gap, since a standby exists; with the standby stopped (SIGSTOP), a take whose wait is
// cancelled is dropped by Confirm, while the legacy control hands it out as synchronous; once
// the standby runs again, takes are synchronous again.
func confirmStandbyFlush(t *testing.T, dsn string) {
	ctx := context.Background()
	pgrepltest.Exec(t, dsn, "ALTER SYSTEM RESET ALL")
	pgrepltest.SetAndReload(t, dsn, "synchronous_standby_names", "pg_receivewal")
	rcv := pgrepltest.ReceiveWAL(t, dsn, true)
	pgrepltest.SetAndReload(t, dsn, "client_min_messages", "error")
	open := func() *pgstore.Store {
		st, err := pgstore.Open(ctx, pgstore.Settings{DSN: dsn, Unsafe: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		pgstore.SetConfirmWait(st, 300*time.Millisecond)
		return st
	}
	st, old := open(), open()
	pgstore.NoNotice(st) // Confirm alone
	pgstore.Legacy(old)
	take := func(st *pgstore.Store, key string) (segment.Block, error) {
		return st.Take(ctx, segment.Request{Key: key, Step: 10, Count: 1, Gap: 1000})
	}
	b, err := take(st, "fresh")
	if err != nil || !b.Synchronous || b.First != 10*1000+1 {
		t.Fatalf("take with a synchronous standby: %v, %v; want a synchronous block from 10001 (a new row skips the gap when a standby exists)", b, err)
	}
	if d := st.Durability(); d.Class != segment.ClassSync {
		t.Errorf("durability %v, want sync", d)
	}
	rcv.Pause(t)
	res := cancelledTake(t, dsn, st, "fresh")
	if !errors.Is(res.err, pgstore.ErrNotDurable) || !errors.Is(res.err, pgrepl.ErrUnconfirmed) {
		t.Errorf("take with the standby stopped, wait cancelled: %v, %v; want ErrNotDurable wrapping pgrepl.ErrUnconfirmed", res.b, res.err)
	}
	t.Logf("Confirm: %v", res.err)
	res = cancelledTake(t, dsn, old, "fresh")
	if res.err != nil || !res.b.Synchronous {
		t.Errorf("legacy control, standby stopped, wait cancelled, warning hidden: %v, %v; want a block called synchronous (the defect)", res.b, res.err)
	}
	t.Logf("legacy control: %v, %v", res.b, res.err)
	rcv.Resume(t)
	if b, err := take(st, "fresh"); err != nil || !b.Synchronous {
		t.Errorf("take after the standby came back: %v, %v; want a synchronous block", b, err)
	}
}

// pgxExec runs one statement on a connection of its own.
func pgxExec(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// TestRefusesHidingParams: a store URL or DSN whose options or startup parameters set
// client_min_messages or lc_messages is refused, naming the setting and not the password.
func TestRefusesHidingParams(t *testing.T) {
	for _, in := range []string{
		"pg://u:hunter2@h/db?options=-cclient_min_messages%3Derror",
		"pg://u:hunter2@h/db?options=-c%20lc_messages%3Dde_DE",
		"pg://u:hunter2@h/db?options=--client-min-messages%3Dwarning",
		"pg://u:hunter2@h/db?client_min_messages=error",
	} {
		_, err := pgstore.ParseURL(in)
		if !errors.Is(err, pgrepl.ErrOverride) || !strings.Contains(err.Error(), "_messages") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q) = %v; want pgrepl.ErrOverride naming the setting, no password", in, err)
		}
	}
	for _, dsn := range []string{
		"host=h user=u password=hunter2 options='-c client_min_messages=error'",
		"postgres://u:hunter2@h/db?client_min_messages=error",
	} {
		_, err := pgstore.Open(context.Background(), pgstore.Settings{DSN: dsn})
		if !errors.Is(err, pgrepl.ErrOverride) || !errors.Is(err, pgstore.ErrNotDurable) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) = %v; want ErrNotDurable wrapping pgrepl.ErrOverride, no password", dsn, err)
		}
	}
	t.Setenv("PGOPTIONS", "-c lc_messages=C")
	if _, err := pgstore.Open(context.Background(), pgstore.Settings{DSN: "host=h"}); !errors.Is(err, pgrepl.ErrOverride) {
		t.Errorf("Open with PGOPTIONS setting lc_messages: %v; want pgrepl.ErrOverride", err)
	}
}

// TestRefusesSlot: a physical replication slot that no standby streams through (a standby cut
// off or down, which the primary no longer lists in pg_stat_replication) makes the store
// refuse, naming the slot: Open, and the take of a store opened before the slot was made,
// whose block is dropped. The slot also counts as a standby for a new row's gap
// (StandbySQL). OpenIgnoringSlots (the partition test's control) takes the server for a
// single one, durability=async accepts it; once the slot is dropped the store is single
// again (issue 37).
func TestRefusesSlot(t *testing.T) {
	dsn := pgtest.Schema(t)
	if os.Getenv(pgtest.EnvDSN) != "" {
		// A slot is seen cluster-wide: on a server other packages' tests share, it would
		// turn their class async.
		dsn = private(t).DSN()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	standby := func() bool {
		t.Helper()
		var b bool
		if err := conn.QueryRow(ctx, `SELECT `+pgstore.StandbySQL).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	open := func(set pgstore.Settings) (*pgstore.Store, error) {
		set.DSN, set.Unsafe = dsn, true
		st, err := pgstore.Open(ctx, set)
		if err == nil {
			t.Cleanup(func() { st.Close() })
		}
		return st, err
	}
	req := segment.Request{Key: "slot", Step: 10, Count: 1, Gap: 1000}
	st, err := open(pgstore.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Take(ctx, req); err != nil {
		t.Fatal(err)
	}
	if d := st.Durability(); d.Class != segment.ClassSingle || standby() {
		t.Fatalf("no slot: durability %v, standbySQL %v; want single, false", d, standby())
	}
	slot, drop := pgrepltest.Slot(t, conn, "pgstore_slot")
	if !standby() {
		t.Errorf("with slot %s: standbySQL false, want true", slot)
	}
	names := fmt.Sprintf("slot %q (inactive)", slot)
	if _, err := open(pgstore.Settings{}); !errors.Is(err, pgstore.ErrNotDurable) || !strings.Contains(err.Error(), names) {
		t.Errorf("Open with slot %s: %v; want ErrNotDurable naming it", slot, err)
	} else {
		t.Logf("refused: %v", err)
	}
	if b, err := st.Take(ctx, req); !errors.Is(err, pgstore.ErrNotDurable) || !strings.Contains(err.Error(), names) || !strings.Contains(err.Error(), "dropped") {
		t.Errorf("Take with slot %s: %v, %v; want the block dropped with ErrNotDurable naming the slot", slot, b, err)
	}
	if d := st.Durability(); d.Class != segment.ClassAsync {
		t.Errorf("with slot %s: durability %v, want async", slot, d)
	}
	if c, err := pgstore.OpenIgnoringSlots(ctx, pgstore.Settings{DSN: dsn, Unsafe: true}); err != nil {
		t.Errorf("OpenIgnoringSlots with slot %s: %v", slot, err)
	} else {
		if d := c.Durability(); d.Class != segment.ClassSingle {
			t.Errorf("OpenIgnoringSlots with slot %s: durability %v, want single (the store before slots were read)", slot, d)
		}
		c.Close()
	}
	if a, err := open(pgstore.Settings{AcceptAsync: true}); err != nil {
		t.Errorf("durability=async with slot %s: %v", slot, err)
	} else if d := a.Durability(); d.Class != segment.ClassAsync || !d.AsyncAccepted {
		t.Errorf("durability=async with slot %s: durability %v, want async, accepted", slot, d)
	}
	drop()
	if _, err := st.Take(ctx, req); err != nil {
		t.Errorf("Take with the slot dropped: %v", err)
	}
	if d := st.Durability(); d.Class != segment.ClassSingle || standby() {
		t.Errorf("slot dropped: durability %v, standbySQL %v; want single, false", d, standby())
	}
}
