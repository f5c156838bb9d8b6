package pglease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/jackc/pgx/v5"
)

// replCluster starts a private server that takes replication connections, with fsync on.
func replCluster(t *testing.T) *pglocal.Cluster {
	return crashCluster(t, map[string]string{
		"fsync": "on", "wal_level": "replica", "max_wal_senders": "4",
		"autovacuum": "off", "shared_buffers": "32MB", "max_connections": "20",
	})
}

// receiveWAL runs pg_receivewal against cl as a standby (pgrepltest.ReceiveWAL); the
// returned function kills it, and so does the end of the test.
func receiveWAL(t *testing.T, cl *pglocal.Cluster, synchronous bool) (stop func()) {
	return pgrepltest.ReceiveWAL(t, cl.DSN(), synchronous).Stop
}

// TestReplicationClass runs the lease store against a server without a standby (class single),
// with an asynchronous standby (refused, naming synchronous_standby_names, unless
// durability=async), with a synchronous one (class sync), and with a physical replication
// slot beside it that no standby uses (refused, naming the slot). The standby is pg_receivewal,
// which the server lists in pg_stat_replication as streaming replicas are listed.
func TestReplicationClass(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and pg_receivewal")
	}
	cl := replCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(async bool) (*Store, error) {
		st, err := Open(ctx, Settings{DSN: cl.DSN(), Namespace: "repl", AcceptAsync: async})
		if err == nil {
			t.Cleanup(func() { st.Close() })
		}
		return st, err
	}
	a, err := open(false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: "A", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r := a.Replication(); r.Class != "single" || !strings.Contains(r.Epoch, "/1") {
		t.Errorf("no standby: Replication() = %+v, want class single on timeline 1", r)
	}

	stopAsync := receiveWAL(t, cl, false)
	err = a.Renew(ctx, c)
	if !errors.Is(err, ErrNotDurable) || !strings.Contains(err.Error(), "synchronous_standby_names") || !strings.Contains(err.Error(), "durability=async") {
		t.Errorf("renewal with an async standby: %v; want ErrNotDurable naming synchronous_standby_names and durability=async", err)
	}
	if _, err := open(false); !errors.Is(err, ErrNotDurable) || !strings.Contains(err.Error(), "synchronous_standby_names") {
		t.Errorf("Open with an async standby: %v; want ErrNotDurable naming synchronous_standby_names", err)
	} else {
		t.Logf("refused: %v", err)
	}
	b, err := open(true)
	if err != nil {
		t.Fatalf("Open with durability=async: %v", err)
	}
	if _, err := b.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: "B", TTL: time.Minute}); err != nil {
		t.Fatalf("claim with durability=async: %v", err)
	}
	if r := b.Replication(); r.Class != "async" || !r.AsyncAccepted {
		t.Errorf("durability=async: Replication() = %+v, want class async, accepted", r)
	}

	conn, err := pgx.Connect(ctx, cl.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = 'pg_receivewal'`, `SELECT pg_reload_conf()`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	stopAsync()
	receiveWAL(t, cl, true)
	if err := a.Renew(ctx, c); err != nil {
		t.Errorf("renewal with a synchronous standby: %v", err)
	}
	if r := a.Replication(); r.Class != "sync" {
		t.Errorf("synchronous standby: Replication() = %+v, want class sync", r)
	}
	if _, err := open(false); err != nil {
		t.Errorf("Open with a synchronous standby: %v", err)
	}

	// A physical replication slot that no standby streams through is a standby that is away
	// (cut off: its walsender ended after wal_sender_timeout) and could be promoted without
	// the renewals since: refused, naming the slot, also beside a synchronous standby; once
	// the slot is dropped, class sync again.
	slot, drop := pgrepltest.Slot(t, conn, "away")
	err = a.Renew(ctx, c)
	if !errors.Is(err, ErrNotDurable) || !strings.Contains(err.Error(), fmt.Sprintf("slot %q (inactive)", slot)) || !strings.Contains(err.Error(), "pg_drop_replication_slot") {
		t.Errorf("renewal with an inactive physical slot: %v; want ErrNotDurable naming the slot and pg_drop_replication_slot", err)
	} else {
		t.Logf("refused: %v", err)
	}
	if r := a.Replication(); r.Class != "async" {
		t.Errorf("inactive physical slot: Replication() = %+v, want class async", r)
	}
	drop()
	if err := a.Renew(ctx, c); err != nil {
		t.Errorf("renewal with the slot dropped: %v", err)
	}
	if r := a.Replication(); r.Class != "sync" {
		t.Errorf("slot dropped: Replication() = %+v, want class sync", r)
	}
}

// testStore opens a store on the shared test server (pgtest, fsync off: unsafe) in its own
// schema, with cfg changed by tweak when not nil.
func testStore(t *testing.T, dsn, ns string, tweak func(*pgx.ConnConfig)) *Store {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := Open(ctx, Settings{Config: cfg, Namespace: ns, Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestFailoverQuarantine plays a failover on one server: the row of A's claim is made to read
// as last written in another epoch (another system identifier or timeline), which is what a
// promoted standby shows of every row the old primary wrote. A's renewal must fail with
// ErrLost and its claim again with ErrTaken (nothing written before the failover is trusted),
// and B's claim of the slot must find it quarantined for a TTL instead of taking it: under
// asynchronous replication the new primary may lack A's last renewals, and A may issue until
// TTL/2 after the last one it saw succeed.
func TestFailoverQuarantine(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := testStore(t, dsn, "failover", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ttl = 2 * time.Second
	c, err := a.Claim(ctx, nodeid.ClaimRequest{Nodes: 2, Owner: "A", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var epoch string
	if err := conn.QueryRow(ctx, `UPDATE `+a.table+` SET pg_epoch = '1/1' WHERE namespace = 'failover' AND slot = $1 RETURNING pg_epoch`, int64(c.Node)).Scan(&epoch); err != nil {
		t.Fatal(err)
	}
	if err := a.Renew(ctx, c); !errors.Is(err, nodeid.ErrLost) {
		t.Errorf("renewal of a claim from before the failover: %v, want ErrLost", err)
	}
	if err := a.SaveMark(ctx, c, time.Now()); !errors.Is(err, nodeid.ErrLost) {
		t.Errorf("mark of a claim from before the failover: %v, want ErrLost", err)
	}
	b := testStore(t, dsn, "failover", nil)
	_, err = b.Claim(ctx, nodeid.ClaimRequest{Nodes: 2, Owner: "B", TTL: ttl / 2, Exact: true, Node: c.Node})
	if !errors.Is(err, nodeid.ErrHeld) || !strings.Contains(err.Error(), failoverOwner) {
		t.Fatalf("B claiming the slot after the failover: %v; want ErrHeld naming the quarantine", err)
	}
	quarantined := time.Now()
	if _, err := a.Claim(ctx, nodeid.ClaimRequest{Nodes: 2, Owner: "A", TTL: ttl, Again: &c}); !errors.Is(err, nodeid.ErrTaken) {
		t.Errorf("A claiming its slot again after the failover: %v, want ErrTaken", err)
	}
	// The quarantine lasts the longer TTL, A's; then B gets the slot.
	for {
		got, err := b.Claim(ctx, nodeid.ClaimRequest{Nodes: 2, Owner: "B", TTL: ttl / 2, Exact: true, Node: c.Node})
		if err == nil {
			waited := time.Since(quarantined)
			t.Logf("B got slot %d %v after the quarantine began (A's TTL %v)", got.Node, waited, ttl)
			if waited < ttl-100*time.Millisecond {
				t.Errorf("B got the slot %v after the quarantine began, before A's TTL %v", waited, ttl)
			}
			return
		}
		if !errors.Is(err, nodeid.ErrHeld) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lossyConn breaks the connection after it sent a batch holding COMMIT, once the server had
// time to run it: the commit happens, its answer never arrives.
type lossyConn struct {
	net.Conn
	arm  *atomic.Bool
	sent bool
}

func (c *lossyConn) Write(b []byte) (int, error) {
	if c.arm.Load() && bytes.Contains(b, []byte("COMMIT")) {
		c.sent = true
	}
	return c.Conn.Write(b)
}

func (c *lossyConn) Read(b []byte) (int, error) {
	if c.sent && c.arm.CompareAndSwap(true, false) {
		time.Sleep(300 * time.Millisecond)
		c.Conn.Close()
		return 0, io.ErrUnexpectedEOF
	}
	return c.Conn.Read(b)
}

// TestClaimCommitAnswerLost loses the answer to a claim's COMMIT, which the server ran: the
// claim is "possibly claimed", and the store re-reads the slot and confirms the claim with a
// durable renewal. Before, the store sent the whole batch again on a new connection (pgx
// called the broken connection's error safe to retry), which found the slot held by the lost
// commit and took the next slot, and a claim again failed with ErrTaken: its own lost commit
// counted as another owner's claim.
func TestClaimCommitAnswerLost(t *testing.T) {
	var arm atomic.Bool
	st := testStore(t, pgtest.Schema(t), "lost", func(c *pgx.ConnConfig) {
		// One write per batch, statements and execution together: the write holding COMMIT
		// runs it (the default mode prepares first, in a round trip of its own).
		c.DefaultQueryExecMode = pgx.QueryExecModeExec
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &lossyConn{Conn: conn, arm: &arm}, nil
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := nodeid.ClaimRequest{Nodes: 2, Owner: "A", TTL: 2 * time.Second}
	arm.Store(true)
	c, err := st.Claim(ctx, req)
	if err != nil {
		t.Fatalf("claim whose COMMIT answer was lost: %v; want it confirmed by a re-read", err)
	}
	if arm.Load() {
		t.Fatal("the connection was never broken")
	}
	if c.Node != 0 {
		t.Errorf("the claim got slot %d: its batch was sent again after the lost answer, found slot 0 held (by its own lost commit) and moved on, leaving slot 0 held by nobody for a TTL", c.Node)
	}
	if err := st.Renew(ctx, c); err != nil {
		t.Fatal(err)
	}
	// Release the slot, then claim it again with the answer lost again.
	if err := st.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	again := req
	again.Again = &c
	arm.Store(true)
	c2, err := st.Claim(ctx, again)
	if err != nil {
		t.Fatalf("claim again whose COMMIT answer was lost: %v; want it confirmed", err)
	}
	if c2.Node != c.Node || c2.Epoch != c.Epoch+1 {
		t.Errorf("claim again: %+v after %+v", c2, c)
	}
}

// TestClaimUnknownNotUsed breaks the connection after a claim's batch was sent and before it
// ran (pgx's default mode prepares the statements in a round trip of their own, whose answer
// is lost here): the re-read finds no row of the claim's owner, and the claim fails with
// ErrUnknown, not sent again, and holds nothing.
func TestClaimUnknownNotUsed(t *testing.T) {
	var arm atomic.Bool
	st := testStore(t, pgtest.Schema(t), "unknown", func(c *pgx.ConnConfig) {
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &lossyConn{Conn: conn, arm: &arm}, nil
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	arm.Store(true)
	_, err := st.Claim(ctx, nodeid.ClaimRequest{Nodes: 2, Owner: "A", TTL: 2 * time.Second})
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("claim whose batch broke before it ran: %v, want ErrUnknown", err)
	}
	slots, err := st.Slots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range slots {
		if sl.Held {
			t.Errorf("slot %d is held by %q after a claim that failed", sl.Node, sl.Owner)
		}
	}
}
