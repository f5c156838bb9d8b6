//go:build fault

package pglease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/schemes/nodeid/internal/partition"
)

// TestFaultPartition is the etcd partition test (etcdlease's TestFaultPartition) on a
// PostgreSQL lease store: a private PostgreSQL server in a network namespace of its own,
// listening on the lab's net, and three lease-holding idwriter processes in theirs:
//
//   - holder-cut: w0's link is taken off the bridge; its connection to the server stays open
//     and silent (no RST: the server's backend sits in its read while w0 goes on running), so
//     only w0's renewal deadline can stop it; a successor takes w0's slot once the lease has
//     expired by the server's clock, and the link is healed while both run;
//   - flapping: w0's link goes off for 1.2 s and back for 0.5 s, twice, then off for 4 s.
//
// Each scenario's control runs the writers with the fence and high-water marks off, and the
// checker must find repeats there (partition.Run).
func TestFaultPartition(t *testing.T) {
	lab := partition.Inside(t)
	if lab == nil {
		partition.Outside(t, "TestFaultPartition", []string{"pg"}, []string{"w0", "w1", "w2"}, 5*time.Minute)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := lab.Host("pg")
	addr := h.Addrs[partition.LAN]
	cl, err := pglocal.Start(ctx, pglocal.Options{TempDir: "/tmp", Netns: h.NS, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	run := time.Now().UnixNano()
	url := func(name string) string {
		return fmt.Sprintf("postgres://postgres@%s:5432/postgres?sslmode=disable&connect_timeout=5&namespace=p%d-%s", addr, run, name)
	}
	partition.Run(t, lab, "pglease", url, 2*time.Second,
		partition.CutHolder(lab),
		partition.Flap(lab, 1200*time.Millisecond, 1200*time.Millisecond, 4*time.Second))
}
