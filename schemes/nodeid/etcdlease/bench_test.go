package etcdlease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
)

// wide has 21 sequence bits: its cap (2 billion IDs/s) is out of reach, so Next runs at CPU
// speed and the cost of the fence and the mark checks is not hidden behind tick waits.
var wide = layouts.Layout{
	Name:   "wide",
	Fields: []layouts.Field{layouts.Time(39), layouts.Node("node", 3), layouts.Seq(21)},
	Unit:   time.Millisecond,
	Epoch:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
}

// BenchmarkNext compares generation with a static node against a node held by an etcd lease:
// the fence checked per ID, and high-water marks saved to etcd ahead of use (lease) or not
// (lease-fence-only).
func BenchmarkNext(b *testing.B) {
	ep := etcdtest.Endpoint(b)
	for _, mode := range []string{"static", "lease", "lease-fence-only"} {
		b.Run("node="+mode, func(b *testing.B) {
			set := schemes.SnowflakeSettings{Layout: wide, Node: 1}
			if mode != "static" {
				s, err := etcdlease.Open(etcdlease.Settings{Endpoints: []string{ep}, Prefix: fmt.Sprintf("/idkit-bench/%d", time.Now().UnixNano())})
				if err != nil {
					b.Fatal(err)
				}
				l, err := nodeid.Hold(context.Background(), s, nodeid.LeaseSettings{Nodes: wide.Nodes()})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				set.Node, set.Fence = l.Node(), l
				if mode == "lease" {
					set.Marks = l.Marks()
				}
			}
			g, err := schemes.NewSnowflake(set)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := g.Next(); err != nil { // the first ID waits for a fresh tick
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
