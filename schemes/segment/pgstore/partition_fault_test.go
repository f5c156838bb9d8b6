//go:build fault

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
)

// TestFaultPartitionPG is the synchronous rows of TestFaultFailoverPG with a partition in
// place of frozen WAL senders: the primary and its synchronous standby sit in network
// namespaces of their own (netlab), the standby streaming over the lab's net; the takers reach
// both over their unix sockets, a path the nemesis never cuts, as clients on another network
// would. Each round the standby's link is taken off the bridge for a second: the replication
// connection goes silent with no RST and commits hang in their synchronous wait (the test
// checks that one does in each cut: wait_event SyncRep); in the cancelled rows the test
// cancels the waits with pg_cancel_backend as long as the cut lasts (and checks that it
// cancelled some), so each such commit stands on the primary alone. Then the primary is
// killed, the cut-off standby promoted, the link healed and the old primary attached to the
// new one. At each failover the test logs the primary's and the cut-off standby's max_id and
// how many cancelled waits the primary's log reports: in the sync row the takers' own timeout
// (1 s, as long as the cut) can cancel a wait too, since pgx sends a cancel request when it
// gives up on a connection; the store drops that take's block, as after any error at COMMIT.
// Rows:
//
//   - sync: no repeat;
//   - sync-cancelled-unprotected (the control: the store trusts the cancelled commit as
//     before it was fenced): must repeat;
//   - sync-cancelled: no repeat.
//
// Then the asynchronous rows (issue 37): the standby streams asynchronously through a physical
// replication slot (s1, made on each new primary), the primary runs with wal_sender_timeout
// 2 s, and each cut lasts three times that: the primary's walsender gives up on the silent
// standby and pg_stat_replication empties (the test checks it in each cut and logs when), so
// without the slot the primary looks like a single server while the cut-off standby can still
// be promoted. Every such row runs with a failover gap of 100 blocks (5,000 numbers), as the
// Redis partition rows do, and logs the killed primary's and the promoted standby's max_id at
// each failover:
//
//   - async-slot (the default store): refuses while the slot is there (the test checks that
//     a store opened in the cut is refused naming the slot), so it issues nothing that can
//     repeat;
//   - async-slot-ignoring-slot (the control: the store as before it read the slots,
//     OpenIgnoringSlots): takes once the walsender is gone, and must repeat.
//
// docs/bench/partitions/segment-pg.txt is a run with IDKIT_PARTITION_OUT set to its
// directory, where the rows' checker reports are (pg-partition-*.edn).
func TestFaultPartitionPG(t *testing.T) {
	lab := labtest.Servers(t, "TestFaultPartitionPG", 6*time.Minute, "pg0", "pg1")
	if lab == nil {
		return
	}
	const rounds, cutFor = 3, time.Second
	for _, r := range []struct {
		name                string
		unprotected, cancel bool
		control             bool
	}{
		{name: "sync"},
		{name: "sync-cancelled-unprotected", unprotected: true, cancel: true, control: true},
		{name: "sync-cancelled", cancel: true},
	} {
		t.Run(r.name, func(t *testing.T) {
			p := startPairIn(t, lab, true)
			timeout := time.Second
			if r.cancel {
				timeout = 10 * time.Second // the takers' own timeout must not end the wait first
			}
			open := p.opener(pgstore.Settings{}, r.unprotected, timeout)
			// The nemesis checks its premise: within each cut a commit waits for the cut-off
			// standby (wait_event SyncRep), and in the cancelled rows such waits are cancelled.
			var cutAt time.Time
			var hung bool
			var cancelled, logAt int
			cut := func() {
				_, logAt = syncRepCancels(t, p.prim, 0)
				p.cut()
				cutAt, hung, cancelled = time.Now(), false, 0
			}
			during := func() {
				var waits []string
				if r.cancel {
					waits = p.query(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`)
					cancelled += len(waits)
				} else {
					waits = p.query(`SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'`)
				}
				if !hung && len(waits) > 0 {
					hung = true
					t.Logf("a commit waited for the standby %v into the cut", time.Since(cutAt).Round(10*time.Millisecond))
				}
			}
			fail := func() {
				if !hung {
					t.Errorf("no commit waited for the cut-off standby within the %v cut", cutFor)
				}
				if r.cancel {
					if cancelled == 0 {
						t.Errorf("no wait for the standby was cancelled within the %v cut", cutFor)
					}
					t.Logf("%d commits waiting for the standby cancelled in the cut (pg_cancel_backend)", cancelled)
				}
				n, _ := syncRepCancels(t, p.prim, logAt)
				t.Logf("at the failover: the primary's max_id %d, the cut-off standby's %d; %d cancelled waits in the primary's log",
					maxID(t, p.prim.DSN(), "k"), maxID(t, p.stby.DSN(), "k"), n)
				p.fail()
			}
			f := segtest.Failover{Name: "partition-" + r.name, Rounds: rounds, Open: open, Cut: cut, CutFor: cutFor, During: during, Fail: fail}
			res := segtest.RunFailover(t, f)
			res.Check(t, "pg-partition", r.name, rounds, r.control)
		})
	}
	t.Logf("asynchronous rows: wal_sender_timeout %v; each cut lasts %v; failover gap %d blocks of 50", partitionSenderTimeout, partitionAsyncCut, partitionGap)
	for _, r := range []struct {
		name        string
		ignoreSlots bool
	}{
		{name: "async-slot"},
		{name: "async-slot-ignoring-slot", ignoreSlots: true},
	} {
		t.Run(r.name, func(t *testing.T) {
			p := startPairWith(t, lab, false, map[string]string{"wal_sender_timeout": fmt.Sprint(partitionSenderTimeout.Milliseconds()) + "ms"})
			p.useSlot("s1")
			// The counter table exists before the takers start, as in a deployment (made here
			// by a store that accepts the standby): a table that Open first made in a cut, on
			// the primary alone, would be missing after the failover and fail every take.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			st, err := pgstore.Open(ctx, pgstore.Settings{DSN: p.dsn, Unsafe: true, AcceptAsync: true})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			// The nemesis checks its premise: within each cut the primary's walsender ends
			// (pg_stat_replication empty) while the slot stays.
			var cutAt time.Time
			var dropped, refused bool
			cut := func() { p.cut(); cutAt, dropped, refused = time.Now(), false, false }
			during := func() {
				if dropped {
					if !r.ignoreSlots && !refused {
						// What the default store says of the primary now.
						refused = true
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						st, err := pgstore.Open(ctx, pgstore.Settings{DSN: p.dsn, Unsafe: true})
						if err == nil {
							st.Close()
						}
						if !errors.Is(err, pgstore.ErrNotDurable) || !strings.Contains(err.Error(), `slot "s1"`) {
							t.Errorf("Open with the walsender gone and slot s1 kept: %v; want ErrNotDurable naming the slot", err)
						} else {
							t.Logf("refused with the walsender gone: %v", err)
						}
					}
					return
				}
				if len(p.query(`SELECT pid FROM pg_stat_replication`)) == 0 {
					dropped = true
					slot := p.query(`SELECT active::text FROM pg_replication_slots WHERE slot_name = 's1'`)
					t.Logf("the primary's walsender for the cut-off standby ended %v into the cut (pg_stat_replication empty; slot s1 active %v)", time.Since(cutAt).Round(10*time.Millisecond), slot)
				}
			}
			fail := func() {
				if !dropped {
					t.Errorf("the primary's walsender still streamed at the end of the %v cut", partitionAsyncCut)
				}
				killed, promoted := maxIDOf(t, p.prim), maxIDOf(t, p.stby)
				t.Logf("at the failover: the killed primary had max_id %s, the promoted standby has %s", killed, promoted)
				p.fail()
			}
			res := segtest.RunFailover(t, segtest.Failover{Name: "partition-" + r.name, Rounds: rounds, Open: p.slotOpener(r.ignoreSlots),
				Cut: cut, CutFor: partitionAsyncCut, During: during, Fail: fail, Refusing: true})
			res.Check(t, "pg-partition", r.name, rounds, r.ignoreSlots)
		})
	}
}

// The asynchronous rows' timings: the primary ends a silent standby's walsender after
// partitionSenderTimeout (wal_sender_timeout), and each cut lasts three times that.
const (
	partitionSenderTimeout = 2 * time.Second
	partitionAsyncCut      = 3 * partitionSenderTimeout
	partitionGap           = 100 // blocks of 50: 5,000 numbers
)

// slotOpener returns how the takers of an asynchronous row open a Segment on the pair: the
// default store (no durability=async), or, with ignoreSlots, the store as before it read
// the slots; a failover gap of partitionGap blocks.
func (p *pgPair) slotOpener(ignoreSlots bool) func() (*segment.Segment, error) {
	return func() (*segment.Segment, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		set := pgstore.Settings{DSN: p.dsn, Unsafe: true}
		open := pgstore.Open
		if ignoreSlots {
			open = pgstore.OpenIgnoringSlots
		}
		st, err := open(ctx, set)
		if err != nil {
			return nil, err
		}
		s, err := segment.New(segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 50, Timeout: time.Second, FailoverGap: partitionGap})
		if err != nil {
			st.Close()
		}
		return s, err
	}
}

// maxIDOf reads key k's max_id on c (a primary, or a standby in hot standby), "none" when the
// row or the table is not there.
func maxIDOf(t *testing.T, c *pglocal.Cluster) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var table bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('idkit_segments') IS NOT NULL`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	if !table {
		return "none"
	}
	var v int64
	err = conn.QueryRow(ctx, `SELECT max_id FROM idkit_segments WHERE biz_tag = 'k'`).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "none"
	case err != nil:
		t.Fatal(err)
	}
	return fmt.Sprint(v)
}

// syncRepCancels counts the lines of c's server log past byte off that say a commit's wait
// for the synchronous standby was cancelled, and returns the log's length. A cancel request
// does it, from pg_cancel_backend or from pgx, which sends one when it abandons a connection
// whose context ended (a take past the Segment's timeout): either way the commit stands on
// the primary alone.
func syncRepCancels(t *testing.T, c *pglocal.Cluster, off int) (n, size int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	off = min(off, len(b))
	return strings.Count(string(b[off:]), "canceling wait for synchronous replication"), len(b)
}
