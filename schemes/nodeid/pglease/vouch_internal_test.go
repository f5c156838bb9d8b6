package pglease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/internal/pgrepl"
	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/jackc/pgx/v5"
)

// cancelledRenew renews c on st while the server's commits wait for a standby that does not
// answer, and cancels the wait with pg_cancel_backend: the renewal commits on the primary only.
func cancelledRenew(t *testing.T, cl *pglocal.Cluster, st *Store, c nodeid.Claim) error {
	t.Helper()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- st.Renew(ctx, c) }()
	conn, err := pgx.Connect(ctx, cl.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		conn.QueryRow(ctx, `SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no commit waited for the standby within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Renew did not return after its wait was cancelled")
	}
	return nil
}

// TestCancelledSyncWaitHidden: with synchronous_standby_names naming a standby that never
// connects, a renewal's COMMIT waits until pg_cancel_backend ends the wait, and is on the
// primary only. The store must report it not durable whether PostgreSQL's warning reaches it
// or not: the server's client_min_messages = error keeps it from the client, lc_messages =
// German translates it. The legacy controls (the warning's English text alone, as before the
// fix) take the renewal as durable; confirm-only ignores the warning, to show that Confirm
// alone catches it. Then, on the same server, a real synchronous standby (pg_receivewal
// --synchronous) with the warning hidden: a claim is vouched for by the standby's flush
// position; with the standby stopped (SIGSTOP), a renewal whose wait is cancelled fails with
// pgrepl.ErrUnconfirmed, while the legacy control takes it as durable; once the standby runs
// again, renewals succeed.
func TestCancelledSyncWaitHidden(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and pg_receivewal")
	}
	lc := pgrepltest.Translated(t) // before the server starts: it inherits LOCPATH
	cl := replCluster(t)
	ctx := context.Background()
	type held struct {
		st *Store
		c  nodeid.Claim
	}
	open := func(ns, mode string, wait time.Duration) held {
		st, err := Open(ctx, Settings{DSN: cl.DSN(), Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		st.legacy, st.noNotice, st.confirmWait = mode == "legacy", mode == "confirm-only", wait
		c, err := st.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: ns + "/" + mode, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return held{st, c}
	}
	check := func(phase, mode string, err error) {
		t.Helper()
		t.Logf("%s, %s: %v", phase, mode, err)
		switch mode {
		case "legacy":
			if err != nil {
				t.Errorf("%s, legacy control: %v; want the renewal taken as durable (as before the fix)", phase, err)
			}
		case "confirm-only":
			if !errors.Is(err, pgrepl.ErrUnconfirmed) || !errors.Is(err, ErrNotDurable) {
				t.Errorf("%s, Confirm alone: %v; want ErrNotDurable wrapping pgrepl.ErrUnconfirmed", phase, err)
			}
		default:
			if !errors.Is(err, ErrNotDurable) {
				t.Errorf("%s: renewal after a cancelled wait: %v; want ErrNotDurable", phase, err)
			}
		}
	}
	stores := map[string]held{}
	for _, mode := range []string{"protected", "legacy", "confirm-only"} {
		stores[mode] = open("nobody", mode, DefaultConfirmWait)
	}
	pgrepltest.SetAndReload(t, cl.DSN(), "synchronous_standby_names", "nobody")
	for _, phase := range []struct {
		name, setting, value string
		modes                []string
	}{
		{"warning", "", "", []string{"protected"}},
		{"hidden", "client_min_messages", "error", []string{"protected", "legacy", "confirm-only"}},
		{"translated", "lc_messages", lc, []string{"protected", "legacy"}},
	} {
		pgrepltest.Exec(t, cl.DSN(), "ALTER SYSTEM RESET client_min_messages", "ALTER SYSTEM RESET lc_messages")
		if phase.setting != "" {
			pgrepltest.SetAndReload(t, cl.DSN(), phase.setting, phase.value)
		}
		for _, mode := range phase.modes {
			h := stores[mode]
			check(phase.name, mode, cancelledRenew(t, cl, h.st, h.c))
		}
	}

	pgrepltest.Exec(t, cl.DSN(), "ALTER SYSTEM RESET ALL")
	pgrepltest.SetAndReload(t, cl.DSN(), "synchronous_standby_names", "pg_receivewal")
	rcv := pgrepltest.ReceiveWAL(t, cl.DSN(), true)
	pgrepltest.SetAndReload(t, cl.DSN(), "client_min_messages", "error")
	sync, old := open("standby", "confirm-only", 300*time.Millisecond), open("standby", "legacy", 300*time.Millisecond)
	if rep := sync.st.Replication(); rep.Class != "sync" {
		t.Errorf("Replication() = %+v, want class sync", rep)
	}
	rcv.Pause(t)
	check("standby stopped", "confirm-only", cancelledRenew(t, cl, sync.st, sync.c))
	check("standby stopped", "legacy", cancelledRenew(t, cl, old.st, old.c))
	rcv.Resume(t)
	if err := sync.st.Renew(ctx, sync.c); err != nil {
		t.Errorf("renewal after the standby came back: %v", err)
	}
}

// TestRefusesHidingParams: a store URL, DSN or Config whose options or startup parameters set
// client_min_messages or lc_messages is refused, naming the setting and not the password.
func TestRefusesHidingParams(t *testing.T) {
	for _, in := range []string{
		"pg://u:hunter2@h/db?options=-cclient_min_messages%3Derror",
		"pg://u:hunter2@h/db?options=-c%20lc_messages%3Dde_DE",
		"pg://u:hunter2@h/db?options=--Client-Min-Messages%3Dwarning",
		"pg://u:hunter2@h/db?options=-c%20client%5C_min_messages%3Derror",
		"pg://u:hunter2@h/db?lc_messages=C",
	} {
		_, err := ParseURL(in)
		if !errors.Is(err, pgrepl.ErrOverride) || !strings.Contains(err.Error(), "_messages") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q) = %v; want pgrepl.ErrOverride naming the setting, no password", in, err)
		}
	}
	if _, err := ParseURL("pg://h/db?options=-c%20statement_timeout%3D5s"); err != nil {
		t.Errorf("options setting statement_timeout: %v; want it accepted", err)
	}
	cfg, err := pgx.ParseConfig("host=h user=u password=hunter2")
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["options"] = "-c client_min_messages=error"
	for _, set := range []Settings{
		{DSN: "host=h user=u password=hunter2 options='-c client_min_messages=error'"},
		{Config: cfg},
	} {
		_, err := Open(context.Background(), set)
		if !errors.Is(err, pgrepl.ErrOverride) || !errors.Is(err, ErrNotDurable) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open = %v; want ErrNotDurable wrapping pgrepl.ErrOverride, no password", err)
		}
	}
}
