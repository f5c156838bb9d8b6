package dist

import (
	"fmt"
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
	// Sources cite the figures above.
	Sources []string `json:"sources"`
}

// Targets are the databases the model knows, by --target name.
var targets = []Target{
	{
		Name: "cockroachdb", MaxRangeBytes: 512 << 20, SplitQPS: 2500,
		Sources: []string{
			"range_max_bytes 512 MiB: CockroachDB docs, Configure Replication Zones (default since v20.1)",
			"kv.range_split.load_qps_threshold 2500: CockroachDB docs, Load-Based Splitting",
			"split finder (20 sampled keys, 10 s, 25% imbalance limit): cockroachdb/cockroach pkg/kv/kvserver/split/finder.go",
		},
	},
	{
		Name: "spanner", MaxRangeBytes: 4 << 30, SplitQPS: 2500,
		Sources: []string{
			"Spanner splits by size and load but publishes neither threshold: 4 GiB and 2,500 writes/s are ASSUMED",
			"load splitting assumed to work as CockroachDB's finder does (a point that divides sampled load)",
		},
	},
	{
		Name: "tidb", MaxRangeBytes: 96 << 20, SplitQPS: 3000,
		Sources: []string{
			"region-split-size 96 MiB: TiDB docs, Tune Region Performance (the default before v8.4.0, 256 MiB since; the design doc's test predates it)",
			"split.qps-threshold 3000: TiKV docs, Load Base Split",
		},
	},
	{
		Name: "yugabyte", MaxRangeBytes: 512 << 20, HashKey: true, TabletsPerNode: 1,
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
