//go:build fault

package pgstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
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
