package dist

import (
	"math"
	"strconv"
	"testing"
)

// calibrate runs scheme on target for each cluster size with the free parameters in c.
func calibrate(t *testing.T, c Config, target, scheme string, nodes ...int) []Run {
	t.Helper()
	tg, err := LookupTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	c.Target = tg
	if c.Seconds == 0 {
		c.Seconds = 300
	}
	if c.Samples == 0 {
		c.Samples = 300
	}
	c.Seed = 1
	c, err = c.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	st, err := drawKeys(c, scheme)
	if err != nil {
		t.Fatal(err)
	}
	var out []Run
	for _, n := range nodes {
		out = append(out, run(c, st, n, c.Capacity))
	}
	return out
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.3f, published %.3f, tolerance ±%.3f", what, got, want, tol)
	} else {
		t.Logf("%s = %.3f (published %.3f, tolerance ±%.3f)", what, got, want, tol)
	}
}

// TestCalibrationSpannerSequential holds the model to Google's field test of sequential keys
// on Cloud Spanner: "We see only 35% utilization on a three-node instance ... we scale the
// instance to five nodes and see that the utilization drops to around 20% while the number of
// transactions / sec and throughput stayed roughly the same" (Robert Kubis, "Cloud Spanner —
// Choosing the right primary keys", Google Cloud blog on Medium, 2018-03-26). The loader wrote
// nothing but the keyed rows: the ID index carries all of a write's work (IndexShare 1, no
// free parameter fitted).
func TestCalibrationSpannerSequential(t *testing.T) {
	r := calibrate(t, Config{}, "spanner", SchemeSequence, 3, 5)
	within(t, "throughput 5 nodes / 3 nodes", r[1].Throughput/r[0].Throughput, 1, 0.05)
	within(t, "utilisation at 3 nodes", r[0].Utilisation, 0.35, 0.05)
	within(t, "utilisation at 5 nodes", r[1].Utilisation, 0.20, 0.05)
}

// TiDB's integer shard index design doc (pingcap/tidb docs/design/2022-01-04-integer-shard-index.md)
// measured CREATE TABLE test(id1 INT PRIMARY, id2 INT, id3 INT, UNIQUE KEY hotIndex(id2))
// under 800 threads of INSERT, UPDATE and SELECT by the monotonic id2, with 3 TiDB servers
// and 3, then 4 TiKV nodes. Scalability = (qps2/qps1 - 1) / (tikv2/tikv1 - 1):
//
//	hot index    49.8, 49.0 K QPS at 3 TiKV; 53, 54 at 4: 19.30% and 30.60%
//	shard index  47.5, 47.2 K QPS at 3 TiKV; 57.5, 58.5 at 4: 63.20% and 71.40%
//
// so the sharded index is 47.35/49.4 = 4.1% slower at 3 nodes. The model's free parameters
// are fitted to these three figures: the share of a write's work on the id2 index range
// (IndexShare), the extra work of a write that cannot be batched with its generator's previous
// one into the same range (ScatterCost), the work on the three TiDB servers, which did not
// grow with the TiKV nodes (FixedTier), and the node capacity that puts the hot index at the
// measured 49.4 K QPS (Capacity). They were fitted by solving the bottleneck equations
// 1/T = (h + (1-h)/N + s)/C (hot) and ((1 + h·o)/N + s)/C (sharded) for the midpoints.
var tidbShardFit = Config{IndexShare: 0.31, SetIndexShare: true, ScatterCost: 2.3, FixedTier: 0.21, Capacity: 37000}

// TestCalibrationTiDBShardIndex holds the model to the table above: tolerance ±0.06 on each
// scalability (the two published rounds differ by 0.11 and 0.08) and ±0.03 on the slowdown.
func TestCalibrationTiDBShardIndex(t *testing.T) {
	hot := calibrate(t, tidbShardFit, "tidb", SchemeSequence, 3, 4)
	sharded := tidbShardFit
	sharded.Buckets = 256 // tidb_shard(): a hash modulo 256
	sh := calibrate(t, sharded, "tidb", SchemeSequence, 3, 4)
	scal := func(r []Run) float64 { return (r[1].Throughput/r[0].Throughput - 1) / (4.0/3 - 1) }
	within(t, "hot index throughput at 3 TiKV (K QPS)", hot[0].Throughput/1000, 49.4, 2)
	within(t, "hot index scalability 3->4 TiKV", scal(hot), (0.193+0.306)/2, 0.06)
	within(t, "shard index scalability 3->4 TiKV", scal(sh), (0.632+0.714)/2, 0.06)
	within(t, "shard index slowdown at 3 TiKV", 1-sh[0].Throughput/hot[0].Throughput, 1-47.35/49.4, 0.03)
}

// TestCalibrationTiDBWarmup holds the model to TiDB's account of a new table: "For each new
// table created in TiDB, one Region is segmented by default to store the data of this table
// ... because there is only one Region at the beginning, all write requests occur on the TiKV
// where the Region is located", which pre-splitting solves (TiDB docs, Split Region,
// https://docs.pingcap.com/tidb/dev/sql-statement-split-region); "Highly Concurrent Write Best
// Practices" shows it for randomly generated ids. Random keys (UUIDv4) on 3 nodes: one range
// and one node at the start; a third per node (±0.05) once split and rebalanced; with 12
// Regions pre-split, spread from the first second.
func TestCalibrationTiDBWarmup(t *testing.T) {
	r := calibrate(t, Config{}, "tidb", "uuidv4", 3)[0]
	if s := r.Seconds[0]; s.Ranges != 1 || s.HotShare != 1 {
		t.Errorf("second 0 of a new table: %d ranges, hottest node %.2f of the writes; want 1 range, 1.00", s.Ranges, s.HotShare)
	}
	within(t, "hottest node's share after warm-up", r.HotShare, 1.0/3, 0.05)
	if r.WarmupSeconds < 10 {
		t.Errorf("a new table reached its steady throughput after %d s; want a warm-up of at least the 10 s a load split samples", r.WarmupSeconds)
	}
	p := calibrate(t, Config{PreSplit: 12}, "tidb", "uuidv4", 3)[0]
	if p.Seconds[0].HotShare > 0.45 {
		t.Errorf("pre-split into 12: the hottest node takes %.2f of the first second's writes; want about a third", p.Seconds[0].HotShare)
	}
	if p.WarmupSeconds > 1 {
		t.Errorf("pre-split table took %d s to reach its steady throughput; want none", p.WarmupSeconds)
	}
}

// TestCalibrationCockroachHashSharded holds the model to CockroachDB's hash-sharded index RFC
// (cockroachdb/cockroach docs/RFCS/20191028_hash_sharded_indexes.md): sequential writes to an
// unsharded primary key hot-spot one range, since "load-based splitting ... cannot find a
// valid split point that divides the incoming workload evenly", while sharding the same keys
// into 10 buckets (its kv schema (1), shard = k % 10) "essentially unlock[s] linear scaling";
// and a point read by k alone, whose shard the optimizer could not derive, scans one span per
// bucket ("This means we have to search all the shards"). Tolerances: the unsharded
// throughput stays within 5% of one node's; the sharded one reaches at least 80% of N nodes'
// (10 buckets cannot spread evenly over 3 or 4 nodes: 4 and 3 of them on the busiest).
func TestCalibrationCockroachHashSharded(t *testing.T) {
	plain := calibrate(t, Config{}, "cockroachdb", SchemeSequence, 1, 3, 4, 5)
	sharded := calibrate(t, Config{Buckets: 10}, "cockroachdb", SchemeSequence, 1, 3, 4, 5)
	for i, r := range plain {
		within(t, "unsharded throughput / one node's, N="+strconv.Itoa(r.Nodes), r.Throughput/r.Capacity, 1, 0.05)
		if r.LoadSplits != 0 || r.FailedLoadSplits == 0 {
			t.Errorf("unsharded N=%d: %d load splits, %d failed; want every load split to fail", r.Nodes, r.LoadSplits, r.FailedLoadSplits)
		}
		if f := sharded[i].Throughput / sharded[i].Ideal; f < 0.8 {
			t.Errorf("sharded N=%d: %.2f of linear scaling; want at least 0.80", r.Nodes, f)
		} else {
			t.Logf("sharded N=%d: %.2f of linear scaling", r.Nodes, f)
		}
	}
	last := sharded[len(sharded)-1]
	if last.PointReadSpans != 10 || last.PointReadRanges < 2 {
		t.Errorf("point read on the sharded index probes %d spans in %d ranges; want 10 spans (one per bucket) over several ranges", last.PointReadSpans, last.PointReadRanges)
	}
	if p := plain[len(plain)-1]; p.PointReadSpans != 1 || p.PointReadRanges != 1 {
		t.Errorf("point read on the plain index probes %d spans in %d ranges; want 1", p.PointReadSpans, p.PointReadRanges)
	}
}
