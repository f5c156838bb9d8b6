package dist

import (
	"fmt"
	"math"
	"strings"
)

// Target is the range-partitioned database the model stands in for: how it orders keys and
// when it splits a range. Every field is printed in the report with its source.
type Target struct {
	// Name is the target as --target names it.
	Name string `json:"name"`
	// MaxRangeBytes is the size at which a range splits in two at its middle key.
	MaxRangeBytes int64 `json:"max_range_bytes"`
	// SplitQPS is the writes per second above which a range looks for a split point that
	// divides its load; 0 means the target does not split by load.
	SplitQPS float64 `json:"split_qps"`
	// HashKey says the target hashes the first key column and orders rows by the hash first
	// (YugabyteDB's default HASH sharding): the key becomes a 16-bit hash code and the key.
	HashKey bool `json:"hash_key,omitempty"`
	// TabletsPerNode is the number of ranges a HashKey table starts with per node.
	TabletsPerNode int `json:"tablets_per_node,omitempty"`
	// NodeWrites is the target's published write throughput per node, the scale an LSM
	// report's rates are set to (ScaleCapacities); NodeWritesLow the low end where the
	// source publishes a range. NodeWritesSource quotes it with its URL.
	NodeWrites       float64 `json:"node_writes,omitempty"`
	NodeWritesLow    float64 `json:"node_writes_low,omitempty"`
	NodeWritesSource string  `json:"node_writes_source,omitempty"`
	// Sources cite the figures above.
	Sources []string `json:"sources"`
}

// Targets are the databases the model knows, by --target name.
var targets = []Target{
	{
		Name: "cockroachdb", MaxRangeBytes: 512 << 20, SplitQPS: 2500,
		NodeWrites: 200000.0 / 30,
		NodeWritesSource: "about 200,000 writes/s of the kv workload (write-only, small rows) on 30 c5d.4xlarge nodes, CockroachDB 20.1.8: 6,667 per node " +
			"(\"Scaling CockroachDB to 200k Writes Per Second\", a Cockroach Labs engineer's article, https://dzone.com/articles/scaling-cockroachdb-to-200k-writes-per-second); " +
			"Cockroach Labs' own performance page publishes TPC-C tpmC only, no per-node write figure (https://www.cockroachlabs.com/docs/stable/performance)",
		Sources: []string{
			"range_max_bytes 512 MiB: CockroachDB docs, Configure Replication Zones (default since v20.1)",
			"kv.range_split.load_qps_threshold 2500: CockroachDB docs, Load-Based Splitting",
			"split finder (20 sampled keys, 10 s, 25% imbalance limit): cockroachdb/cockroach pkg/kv/kvserver/split/finder.go",
		},
	},
	{
		Name: "spanner", MaxRangeBytes: 4 << 30, SplitQPS: 2500,
		NodeWrites: 3500, NodeWritesLow: 2700,
		NodeWritesSource: "peak writes per node (1,000 processing units) under optimal conditions: 3,500 QPS regional, 2,700 dual- and multi-region (SSD) " +
			"(Spanner docs, Performance overview, https://cloud.google.com/spanner/docs/performance)",
		Sources: []string{
			"Spanner splits by size and load but publishes neither threshold: 4 GiB and 2,500 writes/s are ASSUMED",
			"load splitting assumed to work as CockroachDB's finder does (a point that divides sampled load)",
		},
	},
	{
		Name: "tidb", MaxRangeBytes: 96 << 20, SplitQPS: 3000,
		NodeWrites: 3210.99 * 4 / 3, NodeWritesLow: 1467.53 * 4 / 3,
		NodeWritesSource: "Sysbench Write Only on 3 TiKV nodes of 4 vCPU: 1,467.53 TPS with 1 TiDB server, 3,210.99 TPS with 2; a write-only transaction is 4 writes " +
			"(index update, non-index update, delete, insert), so 1,957 to 4,281 writes/s per TiKV node " +
			"(TiDB Cloud Performance Reference, https://docs.pingcap.com/tidbcloud/tidb-cloud-performance-reference)",
		Sources: []string{
			"region-split-size 96 MiB: TiDB docs, Tune Region Performance (the default before v8.4.0, 256 MiB since; the design doc's test predates it)",
			"split.qps-threshold 3000: TiKV docs, Load Base Split",
		},
	},
	{
		Name: "yugabyte", MaxRangeBytes: 512 << 20, HashKey: true, TabletsPerNode: 1,
		NodeWrites: 1260000.0 / 100,
		NodeWritesSource: "1.26 million YSQL writes/s on 100 c5.4xlarge nodes: 12,600 per node " +
			"(YugabyteDB docs, Scaling writes, https://docs.yugabyte.com/stable/explore/linear-scalability/scaling-writes/)",
		Sources: []string{
			"HASH sharding of the first key column by default: YugabyteDB docs, Hash and range sharding",
			"tablet_split_low_phase_size_threshold_bytes 512 MiB: YugabyteDB docs, Automatic tablet splitting",
			"one tablet per node at CREATE TABLE (ysql_num_shards_per_tserver with automatic splitting): ASSUMED",
			"no load-based tablet splitting",
		},
	},
}

// TargetNames lists the targets the model knows.
func TargetNames() []string {
	var out []string
	for _, t := range targets {
		out = append(out, t.Name)
	}
	return out
}

// LookupTarget returns the target called name.
func LookupTarget(name string) (Target, error) {
	for _, t := range targets {
		if t.Name == name {
			return t, nil
		}
	}
	return Target{}, fmt.Errorf("dist: unknown target %q (known: %s)", name, strings.Join(TargetNames(), ", "))
}

// ScaleCapacities turns an LSM report's relative rates per scheme (idbench db --db pebble;
// basis says what they are, e.g. rows per byte the engine wrote) into per-node capacities
// for target t: the best scheme gets the target's published per-node write figure (a peak
// "under optimal conditions", as the sources measure it), and every other scheme that figure
// times its rate over the best one's, so the report keeps the LSM engine's ratios between
// schemes at the target's scale. It returns the capacities and a sentence saying so; an
// error when t publishes no figure or rates is empty.
func ScaleCapacities(rates map[string]float64, basis string, t Target) (map[string]float64, string, error) {
	if t.NodeWrites <= 0 {
		return nil, "", fmt.Errorf("%w: target %s has no published per-node write figure to scale to", ErrConfig, t.Name)
	}
	best := 0.0
	for _, v := range rates {
		best = math.Max(best, v)
	}
	if best <= 0 {
		return nil, "", fmt.Errorf("%w: no positive rates to scale", ErrConfig)
	}
	out := make(map[string]float64, len(rates))
	for s, v := range rates {
		out[s] = t.NodeWrites * v / best
	}
	return out, fmt.Sprintf("%s's published %s writes/s per node for the best scheme, the others in proportion to their %s", t.Name, group(t.NodeWrites), basis), nil
}
