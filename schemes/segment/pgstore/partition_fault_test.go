//go:build fault

package pgstore_test

import (
	"testing"
	"time"

	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
)

// TestFaultPartitionPG is the synchronous rows of TestFaultFailoverPG with a partition in
// place of frozen WAL senders: the primary and its synchronous standby sit in network
// namespaces of their own (netlab), the standby streaming over the lab's net; the takers reach
// both over their unix sockets, a path the nemesis never cuts, as clients on another network
// would. Each round the standby's link is taken off the bridge for a second: the replication
// connection goes silent with no RST, commits hang in their synchronous wait (and in the
// cancelled rows each wait is cancelled with pg_cancel_backend, so the commit stands on the
// primary alone), then the primary is killed, the cut-off standby promoted, the link healed and
// the old primary attached to the new one. Rows:
//
//   - sync: no repeat;
//   - sync-cancelled-unprotected (the control: the store trusts the cancelled commit as
//     before it was fenced): must repeat;
//   - sync-cancelled: no repeat.
func TestFaultPartitionPG(t *testing.T) {
	lab := labtest.Servers(t, "TestFaultPartitionPG", 6*time.Minute, "pg0", "pg1")
	if lab == nil {
		return
	}
	const rounds = 3
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
			f := segtest.Failover{Name: "partition-" + r.name, Rounds: rounds, Open: open, Cut: p.cut, CutFor: time.Second, Fail: p.fail}
			if r.cancel {
				f.During = p.cancelWaits
			}
			res := segtest.RunFailover(t, f)
			res.Check(t, "pg-partition", r.name, rounds, r.control)
		})
	}
}
