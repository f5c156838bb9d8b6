package pglease

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/jackc/pgx/v5"
)

// crashCluster starts a private PostgreSQL cluster with settings, stopped when the test ends.
// Without server binaries the test is skipped (it fails under CI=true).
func crashCluster(t *testing.T, settings map[string]string) *pglocal.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := pglocal.Start(ctx, pglocal.Options{Settings: settings})
	if err != nil {
		msg := "no PostgreSQL server for the crash test (install the PostgreSQL server package): " + err.Error()
		if errors.Is(err, pglocal.ErrNoBinaries) && os.Getenv("CI") != "true" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	return cl
}

// TestCrashKeepsClaim claims a slot and saves its mark on a server running with
// synchronous_commit=off (a common tuning), crashes the server (pg_ctl stop -m immediate:
// whatever sits in its WAL buffers is gone) and starts it again; then another owner claims
// the lowest free slot. The claim, still within its minute-long TTL, must keep the slot from
// the second owner, and the mark must be there. The control does the same with the store's
// SET LOCAL synchronous_commit = on switched off: the crash loses the claim and the mark, and
// the second owner gets the first one's slot, so the test can see the fault.
func TestCrashKeepsClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("starts, crashes and restarts a PostgreSQL cluster")
	}
	cl := crashCluster(t, map[string]string{
		"fsync":              "on",
		"synchronous_commit": "off",
		// The WAL writer flushes asynchronous commits every wal_writer_delay; at its
		// longest the crash below comes well before it.
		"wal_writer_delay": "10s",
		"autovacuum":       "off",
		"shared_buffers":   "32MB",
		"max_connections":  "20",
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(ns string, async bool) *Store {
		t.Helper()
		st, err := Open(ctx, Settings{DSN: cl.DSN(), Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		st.asyncCommit = async
		t.Cleanup(func() { st.Close() })
		return st
	}
	mark := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	runs := []struct {
		ns    string
		async bool
	}{
		// The protected run goes first: a durable commit flushes all the WAL written
		// before it, so the control's commits must come after the protected ones to show
		// what an asynchronous commit loses.
		{"durable", false},
		{"control-async-commit", true},
	}
	for _, r := range runs {
		st := open(r.ns, r.async)
		c, err := st.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: "A", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if c.Node != 0 {
			t.Fatalf("%s: A got slot %d of an empty namespace", r.ns, c.Node)
		}
		if err := st.SaveMark(ctx, c, mark); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Stop(ctx, "immediate"); err != nil {
		t.Fatal(err)
	}
	if err := cl.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		st := open(r.ns, false)
		c, err := st.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: "B", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.LoadMark(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		lost := c.Node == 0 || !m.Equal(mark)
		t.Logf("%s: after the crash B got slot %d; slot 0's mark is %v (saved %v)", r.ns, c.Node, m, mark)
		switch {
		case r.async && !lost:
			t.Errorf("control: the crash lost neither A's claim nor its mark; the test cannot see the fault")
		case !r.async && c.Node == 0:
			t.Errorf("B got slot 0, which A claimed for a minute before the crash: the claim was lost")
		case !r.async && !m.Equal(mark):
			t.Errorf("slot 0's mark after the crash is %v, want %v", m, mark)
		}
	}
}

// TestRefusesNonDurable: on a server with fsync and full_page_writes on, Open refuses an
// UNLOGGED lease table (unless unsafe) and a temporary one (always); once fsync or
// full_page_writes is turned off under an open store, its next write fails with
// ErrNotDurable naming the setting, and Open refuses the server.
func TestRefusesNonDurable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	cl := crashCluster(t, map[string]string{"fsync": "on", "full_page_writes": "on", "shared_buffers": "32MB", "max_connections": "20"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, cl.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	refused := func(set Settings, want string) {
		t.Helper()
		st, err := Open(ctx, set)
		if err == nil {
			st.Close()
		}
		if !errors.Is(err, ErrNotDurable) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(table %q, unsafe %v): %v; want ErrNotDurable naming %q", set.Table, set.Unsafe, err, want)
		}
	}
	exec(`CREATE UNLOGGED TABLE unlogged_slots (namespace text NOT NULL, slot bigint NOT NULL CHECK (slot >= 0),
		owner text NOT NULL DEFAULT '', expires_at timestamptz NOT NULL DEFAULT '-infinity', epoch bigint NOT NULL DEFAULT 0,
		claimed_at timestamptz, mark_ns bigint NOT NULL DEFAULT 0, PRIMARY KEY (namespace, slot))`)
	refused(Settings{DSN: cl.DSN(), Table: "unlogged_slots"}, "UNLOGGED")
	if st, err := Open(ctx, Settings{DSN: cl.DSN(), Table: "unlogged_slots", Unsafe: true}); err != nil {
		t.Errorf("UNLOGGED table with unsafe=true: %v", err)
	} else {
		st.Close()
	}
	temp, err := pgx.ParseConfig(cl.DSN())
	if err != nil {
		t.Fatal(err)
	}
	temp.RuntimeParams["search_path"] = "pg_temp"
	refused(Settings{Config: temp, Unsafe: true}, "temporary table")

	st, err := Open(ctx, Settings{DSN: cl.DSN(), Namespace: "settings"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: "A", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, setting := range []string{"fsync", "full_page_writes"} {
		exec(`ALTER SYSTEM SET ` + setting + ` = off`)
		exec(`SELECT pg_reload_conf()`)
		// The reload reaches the store's backend when it next reads a command.
		var err error
		for range 50 {
			if err = st.Renew(ctx, c); err != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !errors.Is(err, ErrNotDurable) || !strings.Contains(err.Error(), setting+"=off") {
			t.Errorf("Renew after %s was turned off: %v; want ErrNotDurable naming it", setting, err)
		}
		refused(Settings{DSN: cl.DSN(), Namespace: "settings"}, setting+"=off")
		exec(`ALTER SYSTEM RESET ` + setting)
		exec(`SELECT pg_reload_conf()`)
		// Renew works again once the store's backend has read the reset (a reload reaches it
		// asynchronously): wait for that, so the next setting's check cannot see this one.
		for range 100 {
			if err = st.Renew(ctx, c); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("Renew after %s was reset: %v", setting, err)
		}
	}
}
