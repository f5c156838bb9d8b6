//go:build fault

package redisstore_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/netlab"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
)

// The partition test's timings: a replica is dropped by its primary after partitionReplTimeout
// (repl-timeout, with a ping every second), and each cut lasts three times that.
const (
	partitionReplTimeout = 2 * time.Second
	partitionCut         = 3 * partitionReplTimeout
	partitionGap         = 100 // blocks of 50: 5,000 numbers
)

// startLabNode starts a redis-server in lab host h on port 6379 of its lan address (and its
// unix socket), a replica of primary unless that is nil. Protected mode is off: the replica
// connects from another host, on a net only the lab has.
func startLabNode(t *testing.T, h *netlab.Host, primary *redisNode) *redisNode {
	t.Helper()
	n := &redisNode{port: "6379", ip: h.Addrs[labtest.LAN], host: h.Name}
	args := []string{"--port", n.port, "--bind", n.ip, "--protected-mode", "no", "--appendonly", "no", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		"--repl-timeout", strconv.Itoa(int(partitionReplTimeout / time.Second)), "--repl-ping-replica-period", "1"}
	if primary != nil {
		args = append(args, "--replicaof", primary.ip, primary.port)
	}
	n.srv = startRedisIn(t, h.Wrap(), args...)
	return n
}

// TestFaultPartitionRedis is TestFaultFailoverRedis with a partition in place of a frozen
// replica: the primary and its replica sit in network namespaces of their own (netlab, hosts
// r0 and r1), the replica streaming over the lab's net; the takers reach the servers over
// their unix sockets, a path the nemesis never cuts. Each round the replica's link is taken off
// the bridge for three times repl-timeout (2 s here): the replication link goes silent, and
// after repl-timeout the primary drops the replica (connected_slaves 0) that can still be
// promoted; then the primary is killed, the cut-off replica promoted with REPLICAOF NO ONE,
// the link healed and the old primary restarted as its replica. Every row runs with a failover
// gap of 100 blocks (5,000 numbers), a tenth of the default: no gap outlasts a long enough
// partition. Rows:
//
//   - default (no durability=async): the store refuses a primary with a replica connected or
//     a replication backlog, so it issues nothing here, and nothing repeats;
//   - default-ignoring-backlog (a control: the store as before it read repl_backlog_active,
//     taking the primary for a single server once the replica is dropped): must repeat;
//   - async (durability=async, fencing on master_replid and the gap; a control: a partition
//     lets the primary take past any gap): must repeat.
func TestFaultPartitionRedis(t *testing.T) {
	lab := labtest.Servers(t, "TestFaultPartitionRedis", 6*time.Minute, "r0", "r1")
	if lab == nil {
		return
	}
	const rounds = 3
	t.Logf("repl-timeout %v; each cut lasts %v; failover gap %d blocks of 50", partitionReplTimeout, partitionCut, partitionGap)
	for _, r := range []struct {
		name    string
		o       openOpts
		control bool
	}{
		{name: "default", o: openOpts{}},
		{name: "default-ignoring-backlog", o: openOpts{ignoreBacklog: true}, control: true},
		{name: "async", o: openOpts{async: true}, control: true},
	} {
		t.Run(r.name, func(t *testing.T) {
			p := &redisPair{t: t, network: "unix", lab: lab}
			p.prim = startLabNode(t, lab.Host("r0"), nil)
			p.repl = startLabNode(t, lab.Host("r1"), p.prim)
			p.current.Store(&p.prim.srv.sock)
			p.waitReplica()
			// The nemesis checks its premise: within the cut the primary drops the replica.
			var cutAt time.Time
			var dropped bool
			cut := func() { p.cut(); cutAt, dropped = time.Now(), false }
			during := func() {
				if !dropped && strings.Contains(p.prim.do(t, "INFO", "replication"), "connected_slaves:0") {
					dropped = true
					t.Logf("the primary dropped the cut-off replica %v into the cut", time.Since(cutAt).Round(10*time.Millisecond))
				}
			}
			fail := func() {
				if !dropped {
					t.Errorf("the primary still counted the replica at the end of the %v cut", partitionCut)
				}
				p.fail()
			}
			r.o.gap = partitionGap
			res := segtest.RunFailover(t, segtest.Failover{Name: "partition-" + r.name, Rounds: rounds, Open: p.openerWith(r.o),
				Cut: cut, CutFor: partitionCut, During: during, Fail: fail, Refusing: !r.o.async})
			res.Check(t, "redis-partition", r.name, rounds, r.control)
		})
	}
}
