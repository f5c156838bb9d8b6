package dist_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idkit/idkit/dbbench/dist"
)

// Model a Snowflake key and a UUIDv4 on CockroachDB clusters of 1, 2 and 4 nodes: the
// Snowflake ID's inserts all go to the last range, the UUIDv4's spread once the table splits.
func ExampleModel() {
	target, _ := dist.LookupTarget("cockroachdb")
	rep, err := dist.Model(context.Background(), dist.Config{
		Target: target, Schemes: []string{"snowflake", "uuidv4"}, Cluster: []int{1, 2, 4},
		Capacity: 10000, Seconds: 120, Samples: 100, Rebalance: 20 * time.Second, Seed: 3,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Results {
		last := r.Runs[len(r.Runs)-1]
		fmt.Printf("%s at N=%d: hottest node %.0f%% of the writes, %.0f%% of N·C\n", r.Scheme, last.Nodes, 100*last.HotShare, 100*last.Throughput/last.Ideal)
	}
	for _, x := range rep.Crossovers {
		fmt.Printf("%s passes %s at N=%d\n", x.Uniform, x.Hot, x.N)
	}
	// Output:
	// snowflake at N=4: hottest node 100% of the writes, 25% of N·C
	// uuidv4 at N=4: hottest node 26% of the writes, 96% of N·C
	// uuidv4 passes snowflake at N=2
}
