//go:build fault

package mysqlstore_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
)

// partitionSemiTimeout is rpl_semi_sync_master_timeout in TestFaultPartitionMariaDB: short, so
// that a commit hangs for a second and not MariaDB's default ten before the fall-back.
const partitionSemiTimeout = time.Second

// TestFaultPartitionMariaDB is the semi-sync rows of TestFaultFailoverMariaDB with a partition
// in place of a stopped IO thread: the primary and its semi-sync replica sit in network
// namespaces of their own (netlab, hosts m0 and m1), the replica reading the binary log over
// the lab's net; the takers reach the servers over their unix sockets, a path the nemesis
// never cuts, as clients on another network would. Each round the replica's link is taken off
// the bridge for twice rpl_semi_sync_master_timeout (1 s here): the replication connection
// goes silent with no RST, the next commit hangs for the timeout, then MariaDB falls back to
// asynchronous replication and acknowledges commits the replica never gets; then the primary
// is killed, the cut-off replica promoted (STOP SLAVE; RESET SLAVE ALL), the link healed and a
// fresh node made to follow it by GTID. Rows:
//
//   - semisync-partition-unprotected (the control: the store takes blocks as before fencing,
//     with no replication check): must repeat;
//   - semisync-partition: the fall-back is seen (Rpl_semi_sync_master_status OFF,
//     Rpl_semi_sync_master_no_tx risen) and the blocks dropped: no repeat.
func TestFaultPartitionMariaDB(t *testing.T) {
	lab := labtest.Servers(t, "TestFaultPartitionMariaDB", 6*time.Minute, "m0", "m1")
	if lab == nil {
		return
	}
	const rounds = 3
	t.Logf("rpl_semi_sync_master_timeout = %v; each cut lasts %v", partitionSemiTimeout, 2*partitionSemiTimeout)
	for _, r := range []struct {
		name    string
		control bool
	}{
		{name: "semisync-partition-unprotected", control: true},
		{name: "semisync-partition"},
	} {
		t.Run(r.name, func(t *testing.T) {
			p, dsn := startMPairIn(t, true, lab, partitionSemiTimeout)
			// The takers' timeout outlasts the semi-sync wait, so that a take sees the fall-back
			// rather than its own deadline.
			open := opener(dsn, false, r.control, 3*partitionSemiTimeout)
			// The nemesis checks its premise: within the cut the primary falls back to async.
			var cutAt time.Time
			var fellBack bool
			cut := func() { p.cut(); cutAt, fellBack = time.Now(), false }
			during := func() {
				if !fellBack && p.prim.status(t, "Rpl_semi_sync_master_status") == "OFF" {
					fellBack = true
					t.Logf("semi-sync fell back to async %v into the cut (Rpl_semi_sync_master_no_tx %s)",
						time.Since(cutAt).Round(10*time.Millisecond), p.prim.status(t, "Rpl_semi_sync_master_no_tx"))
				}
			}
			fail := func() {
				if !fellBack {
					t.Errorf("the primary did not fall back to async within the %v cut", 2*partitionSemiTimeout)
				}
				t.Logf("at the failover: the primary's max_id %s, the cut-off replica's %s", p.prim.maxID(t), p.repl.maxID(t))
				p.fail()
			}
			res := segtest.RunFailover(t, segtest.Failover{Name: "partition-" + r.name, Rounds: rounds, Open: open,
				Cut: cut, CutFor: 2 * partitionSemiTimeout, During: during, Fail: fail})
			res.Check(t, "mariadb-partition", r.name, rounds, r.control)
		})
	}
}

// maxID reads key "k"'s max_id in the failover tests' database.
func (n *mnode) maxID(t *testing.T) string {
	t.Helper()
	db, err := sql.Open("mysql", n.dsn("idkit"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT max_id FROM " + mysqlstore.DefaultTable + " WHERE biz_tag = 'k'").Scan(&v); err != nil {
		return err.Error()
	}
	return v
}
