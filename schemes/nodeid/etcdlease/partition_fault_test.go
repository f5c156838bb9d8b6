//go:build fault

package etcdlease_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	"github.com/idkit/idkit/schemes/nodeid/internal/partition"
)

// TestFaultPartition cuts links instead of killing processes: a 3-member etcd cluster and three
// lease-holding idwriter processes, each in a network namespace of its own on one bridge, with
// a layout of 2 node slots (one free for a successor only once a holder's lease lapses):
//
//   - holder-cut: w0's link is taken off the bridge: its packets vanish, its connections to etcd
//     stay open and silent, the process keeps running; a successor in w2 waits for a free slot
//     and takes w0's once the lease lapses in etcd; the link is healed while both run;
//   - leader-minority: the etcd leader and w0 are split from the two other members, w1 and the
//     successor; the majority elects a leader, w0's lease lapses there, the successor takes it;
//     then the split heals and the old leader rejoins as a follower;
//   - flapping: w0's link goes off for 1.2 s (past its renewal deadline, TTL/2, but not past
//     its lease) and back for 0.5 s, twice, then off for 4 s, while the successor waits.
//
// Every run's history goes through the checker (internal/history): no ID twice across all
// writers, each writer's IDs increasing, no ID sent after its writer's lease ended by etcd's
// account (the next grant of the node), and time order within 10 ms across writers. The
// control of each scenario is the same run with the writers' fence and high-water marks off:
// the cut-off holder then goes on issuing after its lease ended, and the checker must find
// repeats (partition.Run).
func TestFaultPartition(t *testing.T) {
	lab := partition.Inside(t)
	if lab == nil {
		partition.Outside(t, "TestFaultPartition", []string{"m0", "m1", "m2"}, []string{"w0", "w1", "w2"}, 6*time.Minute)
		return
	}
	var members []etcdtest.Member
	var hosts []string
	for _, m := range []string{"m0", "m1", "m2"} {
		h := lab.Host(m)
		members = append(members, etcdtest.Member{Addr: h.Addrs[partition.LAN], Probe: h.Addrs[partition.MGMT], Wrap: h.Wrap()})
		hosts = append(hosts, h.Addrs[partition.LAN]+":2379")
	}
	cl := etcdtest.StartClusterOn(t, members)
	run := time.Now().UnixNano()
	ctx := context.Background()
	leaderMinority := labtest.Scenario{Name: "leader-minority", Act: func(t *testing.T) func() {
		l, err := cl.Leader(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("splitting m%d (leader) and w0 from the rest", l)
		if err := lab.Split(ctx, partition.LAN, fmt.Sprintf("m%d", l), "w0"); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := lab.HealNet(ctx, partition.LAN); err != nil {
				t.Fatal(err)
			}
			if err := cl.WaitHealthy(20 * time.Second); err != nil {
				t.Fatal(err)
			}
			if l2, err := cl.Leader(10 * time.Second); err == nil {
				t.Logf("after the heal m%d leads", l2)
			}
		}
	}}
	url := func(name string) string {
		return fmt.Sprintf("etcd://%s/idkit-partition/%d/%s", strings.Join(hosts, "+"), run, name)
	}
	partition.Run(t, lab, "etcd", url, 2*time.Second,
		partition.CutHolder(lab), leaderMinority,
		partition.Flap(lab, 1200*time.Millisecond, 1200*time.Millisecond, 4*time.Second))
}
