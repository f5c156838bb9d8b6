package dist

import (
	"math"
	"strconv"
	"strings"
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

// Kinds of figure a test holds the model to, as its log names them: only a number a source
// published is called published.
const (
	published       = "published"                                       // a source's figure, not used to fit anything
	publishedFitted = "published, and fitted to: reproduced by the fit" // a source's figure the free parameters were fitted to
	chosenHere      = "a threshold chosen here, not published"          // a bound of this test's own
)

// within checks got against want ± tol, and logs what kind of figure want is.
func within(t *testing.T, kind, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.3f, want %.3f (%s), tolerance ±%.3f", what, got, want, kind, tol)
	} else {
		t.Logf("%s = %.3f (want %.3f, %s; tolerance ±%.3f)", what, got, want, kind, tol)
	}
}

// TestSanitySpannerSequential is a SANITY CHECK, not a calibration: any model in which
// sequential keys pile onto one range gives one node's throughput at every N, so it holds by
// construction. The figures it quotes are Google's field test of sequential keys
// on Cloud Spanner: "We see only 35% utilization on a three-node instance ... we scale the
// instance to five nodes and see that the utilization drops to around 20% while the number of
// transactions / sec and throughput stayed roughly the same" (Robert Kubis, "Cloud Spanner —
// Choosing the right primary keys", Google Cloud blog on Medium, 2018-03-26). The loader wrote
// nothing but the keyed rows: the ID index carries all of a write's work (IndexShare 1, no
// free parameter fitted).
func TestSanitySpannerSequential(t *testing.T) {
	r := calibrate(t, Config{}, "spanner", SchemeSequence, 3, 5)
	const kind = "published, but met by construction by any one-hot-range model"
	within(t, kind, "throughput 5 nodes / 3 nodes", r[1].Throughput/r[0].Throughput, 1, 0.05)
	within(t, kind, "utilisation at 3 nodes", r[0].Utilisation, 0.35, 0.05)
	within(t, kind, "utilisation at 5 nodes", r[1].Utilisation, 0.20, 0.05)
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
// are FITTED to these figures (four parameters, four figures: the fit reproduces them by
// construction, so this is no validation; TestCalibrationYugabyteTPCCScaling checks the model
// on a figure no parameter was fitted to): the share of a write's work on the id2 index range
// (IndexShare), the extra work of a write that cannot be batched with its generator's previous
// one into the same range (ScatterCost), the work on the three TiDB servers, which did not
// grow with the TiKV nodes (FixedTier), and the node capacity that puts the hot index at the
// measured 49.4 K QPS (Capacity). They were fitted by solving the bottleneck equations
// 1/T = (h + (1-h)/N + s)/C (hot) and ((1 + h·o)/N + s)/C (sharded) for the midpoints.
var tidbShardFit = Config{IndexShare: TiDBFit.IndexShare, SetIndexShare: true, ScatterCost: TiDBFit.ScatterCost, FixedTier: TiDBFit.FixedTier, Capacity: 37000}

// TestFitTiDBShardIndex checks that the fitted parameters still reproduce the table above
// (a regression check of the fit, not a validation): tolerance ±0.06 on each scalability (the
// two published rounds differ by 0.11 and 0.08) and ±0.03 on the slowdown.
func TestFitTiDBShardIndex(t *testing.T) {
	hot := calibrate(t, tidbShardFit, "tidb", SchemeSequence, 3, 4)
	sharded := tidbShardFit
	sharded.Buckets = 256 // tidb_shard(): a hash modulo 256
	sh := calibrate(t, sharded, "tidb", SchemeSequence, 3, 4)
	scal := func(r []Run) float64 { return (r[1].Throughput/r[0].Throughput - 1) / (4.0/3 - 1) }
	within(t, publishedFitted, "hot index throughput at 3 TiKV (K QPS)", hot[0].Throughput/1000, 49.4, 2)
	within(t, publishedFitted, "hot index scalability 3->4 TiKV", scal(hot), (0.193+0.306)/2, 0.06)
	within(t, publishedFitted, "shard index scalability 3->4 TiKV", scal(sh), (0.632+0.714)/2, 0.06)
	within(t, publishedFitted, "shard index slowdown at 3 TiKV", 1-sh[0].Throughput/hot[0].Throughput, 1-47.35/49.4, 0.03)
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
	within(t, "1/N of 3 nodes: the even spread the source describes, not a number it published", "hottest node's share after warm-up", r.HotShare, 1.0/3, 0.05)
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

// TestSanityCockroachHashSharded is a SANITY CHECK against CockroachDB's hash-sharded index RFC,
// which publishes no figure to hold the model to: its bounds are chosen here
// (cockroachdb/cockroach docs/RFCS/20191028_hash_sharded_indexes.md): sequential writes to an
// unsharded primary key hot-spot one range, since "load-based splitting ... cannot find a
// valid split point that divides the incoming workload evenly", while sharding the same keys
// into 10 buckets (its kv schema (1), shard = k % 10) "essentially unlock[s] linear scaling";
// and a point read by k alone, whose shard the optimizer could not derive, scans one span per
// bucket ("This means we have to search all the shards"). Tolerances: the unsharded
// throughput stays within 5% of one node's; the sharded one reaches at least 80% of N nodes'
// (10 buckets cannot spread evenly over 3 or 4 nodes: 4 and 3 of them on the busiest).
func TestSanityCockroachHashSharded(t *testing.T) {
	plain := calibrate(t, Config{}, "cockroachdb", SchemeSequence, 1, 3, 4, 5)
	sharded := calibrate(t, Config{Buckets: 10}, "cockroachdb", SchemeSequence, 1, 3, 4, 5)
	for i, r := range plain {
		within(t, chosenHere, "unsharded throughput / one node's, N="+strconv.Itoa(r.Nodes), r.Throughput/r.Capacity, 1, 0.05)
		if r.LoadSplits != 0 || r.FailedLoadSplits == 0 {
			t.Errorf("unsharded N=%d: %d load splits, %d failed; want every load split to fail", r.Nodes, r.LoadSplits, r.FailedLoadSplits)
		}
		if f := sharded[i].Throughput / sharded[i].Ideal; f < 0.8 {
			t.Errorf("sharded N=%d: %.2f of linear scaling; want at least 0.80", r.Nodes, f)
		} else {
			t.Logf("sharded N=%d: %.2f of linear scaling (bound 0.80 %s)", r.Nodes, f, chosenHere)
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

// TestCalibrationYugabyteTPCCScaling holds the model to a published figure that no parameter
// was fitted to: YugabyteDB's TPC-C horizontal-scaling table (YugabyteDB docs, Benchmark,
// TPC-C, Horizontal scaling, https://docs.yugabyte.com/stable/benchmark/tpcc/horizontal-scaling/):
// 25,646.4 tpmC on 3 nodes of 8 vCPUs, 51,296.9 on 6, "efficiency around 99.7%", so 6 nodes
// sustain 2.000× what 3 do. The model of the yugabyte target (HASH sharding of the first key
// column) with the default free parameters must give 2.0 ±0.15 for a key it hashes, here the
// sequence. It can fail: with TiDB's fitted parameters, whose fixed tier stands for TiDB's
// separate SQL servers, the same model gives far less (logged below), as does a range-sharded
// target.
func TestCalibrationYugabyteTPCCScaling(t *testing.T) {
	const want = 51296.9 / 25646.4
	r := calibrate(t, Config{}, "yugabyte", SchemeSequence, 3, 6)
	within(t, published, "YugabyteDB throughput 6 nodes / 3 nodes (defaults)", r[1].Throughput/r[0].Throughput, want, 0.15)
	f := calibrate(t, tidbShardFit, "yugabyte", SchemeSequence, 3, 6)
	t.Logf("with the TiDB fit the model gives %.3f for the published %.3f: the fit's fixed tier does not carry over to YugabyteDB, whose SQL layer runs on every node",
		f[1].Throughput/f[0].Throughput, want)
	rc := calibrate(t, Config{}, "cockroachdb", SchemeSequence, 3, 6)
	if g := rc[1].Throughput / rc[0].Throughput; math.Abs(g-want) <= 0.15 {
		t.Errorf("CONTROL: a range-sharded target gives %.3f for sequential keys, as close to the published %.3f as the hashed one: the check cannot tell them apart", g, want)
	}
}

// TestSanityScaledCapacities checks ScaleCapacities: the fastest scheme gets each target's
// published per-node writes, the others keep their ratio to it, so every per-node capacity
// the model uses is at most the published figure; a target without one is refused.
func TestSanityScaledCapacities(t *testing.T) {
	rates := map[string]float64{SchemeSequence: 100000, "uuidv4": 40000}
	for _, name := range TargetNames() {
		tg, _ := LookupTarget(name)
		got, how, err := ScaleCapacities(rates, "rates", tg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(got[SchemeSequence]-tg.NodeWrites) > 1e-6 || math.Abs(got["uuidv4"]-0.4*tg.NodeWrites) > 1e-6 {
			t.Errorf("%s: capacities %v, want %.0f and 0.4 of it", name, got, tg.NodeWrites)
		}
		if tg.NodeWritesSource == "" || !strings.Contains(tg.NodeWritesSource, "https://") {
			t.Errorf("%s: published figure without a source URL: %q", name, tg.NodeWritesSource)
		}
		t.Logf("%s: %s", name, how)
	}
	if _, _, err := ScaleCapacities(rates, "rates", Target{Name: "x"}); err == nil {
		t.Error("a target without a published figure was scaled")
	}
}
