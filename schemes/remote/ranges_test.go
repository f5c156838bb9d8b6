package remote_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/remote/server"
)

// TestRemoteRangeLayouts draws IDs of a sharded and a reversed layout through the service:
// all unique, and parsed and decoded (the node the service holds) by the local codec, which
// the remote scheme builds from the service's canonical spec, shard_bits= and reverse=true
// included. (The remote scheme answers no time ranges, sharded or not: ask the service's
// Bounds.)
func TestRemoteRangeLayouts(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0",
		server.Generator{Name: "tidb", Spec: "snowflake:layout=twitter,worker=9,shard_bits=4"},
		server.Generator{Name: "spanner", Spec: "snowflake:layout=discord,worker=9,reverse=true"})
	for gen, node := range map[string]uint64{"tidb": 9, "spanner": 9 << 5} {
		t.Run(gen, func(t *testing.T) {
			s := open(t, fmt.Sprintf("remote:addr=%s,generator=%s,prefetch=100", addr, gen))
			seen := map[idkit.ID]bool{}
			batch := make([]idkit.ID, 300)
			if err := s.(idkit.Batcher).NextBatch(batch); err != nil {
				t.Fatal(err)
			}
			for _, id := range batch {
				if seen[id] {
					t.Fatalf("duplicate %v", id)
				}
				seen[id] = true
				back, err := s.Parse(id.String())
				if err != nil || back != id {
					t.Fatalf("Parse(%v) = %v, %v", id, back, err)
				}
				p, err := s.Decode(id)
				if err != nil || p.Node != node {
					t.Fatalf("Decode(%v) = node %d, %v; want node %d", id, p.Node, err, node)
				}
			}
			// A number the layout cannot make is refused: a flipped hash bit, a reversed
			// value's bit 63.
			bad := batch[0].Uint64() ^ 1<<59
			if gen == "spanner" {
				bad = 1 << 63
			}
			if _, err := s.Parse(fmt.Sprint(bad)); !errors.Is(err, idkit.ErrScheme) {
				t.Errorf("Parse(%d) = %v, want ErrScheme", bad, err)
			}
		})
	}
}
