// Package dist is a MODEL of a range-partitioned database (CockroachDB, Spanner, TiDB,
// YugabyteDB), for choosing keys for a cluster none of which can run on idkit's machines.
//
// Real keys from each scheme, issued by K generator nodes with their own clock offsets, are
// written in the byte order the target sorts them into ordered ranges. A range splits at its
// middle key when it outgrows the target's size limit, and by load when its writes per second
// pass the target's threshold: then it samples keys for a while, as CockroachDB's split finder
// does, and splits at a sampled key that divides the later writes evenly, or not at all when
// none does (append-only keys, whose writes all fall right of every sample). A table starts
// as one range (or pre-split into P). Each range's writes go through one leaseholder; the
// leaseholders live on N nodes of equal write capacity C, and a rebalancer moves them after
// a delay to even out the load it measured. The cluster then sustains the throughput at which
// its busiest node is saturated.
//
// Everything the model assumes is in Config and printed by the report; the calibration tests
// hold it to the figures its sources published.
package dist

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// Config is one model run. Zero fields take the defaults noted (Defaults fills them).
type Config struct {
	// Target is the database modelled (LookupTarget).
	Target Target `json:"target"`
	// Schemes are the rows: SchemeSequence or idkit specs. Default DefaultSchemes().
	Schemes []string `json:"schemes"`
	// Cluster lists the node counts N to model. Default DefaultCluster().
	Cluster []int `json:"cluster"`
	// Capacity is the writes per second one node sustains, used for a scheme missing from
	// Capacities. Default 10,000.
	Capacity float64 `json:"capacity"`
	// Capacities are measured writes per second per scheme (rows/s of idbench db).
	Capacities map[string]float64 `json:"capacities,omitempty"`
	// CapacitySource says where Capacities came from.
	CapacitySource string `json:"capacity_source,omitempty"`
	// Generators is the number K of application nodes generating keys. Default 8.
	Generators int `json:"generators"`
	// ClockSkew is the standard deviation of the generator nodes' clock offsets. Default 1 ms.
	ClockSkew time.Duration `json:"clock_skew"`
	// Seconds is the length of the run in model seconds. Default 600.
	Seconds int `json:"seconds"`
	// Samples is the number of real keys drawn per model second; each stands for
	// throughput/Samples writes. Default 500.
	Samples int `json:"samples_per_second"`
	// RowBytes is the bytes a written row adds to its range. Default 200.
	RowBytes float64 `json:"row_bytes"`
	// PreSplit starts the table as P ranges split evenly over the key space, spread over the
	// nodes. Default 1 (no pre-split; a HashKey target starts with TabletsPerNode per node).
	PreSplit int `json:"pre_split"`
	// Buckets gives the ID index a hash-sharded prefix of this many buckets (CockroachDB's
	// USING HASH WITH (bucket_count = B), TiDB's tidb_shard() index with 256); 0 means none.
	Buckets int `json:"buckets,omitempty"`
	// Rebalance is the delay between rebalancer runs. Default 60 s.
	Rebalance time.Duration `json:"rebalance"`
	// RecordFor is how long a hot range samples keys before it picks a load split point.
	// Default 10 s (CockroachDB's RecordDurationThreshold).
	RecordFor time.Duration `json:"record_for"`
	// IndexShare is the fraction of a write's work done on the range of its ID key; the rest
	// (other indexes, the SQL layer) spreads evenly over the nodes. Default 1.
	IndexShare float64 `json:"index_share"`
	// ScatterCost is the extra work, as a fraction of the ID-index work, of a write whose key
	// lands in another range than the same generator node's previous write (no batching of
	// neighbouring keys into one range's write). Default 0.
	ScatterCost float64 `json:"scatter_cost"`
	// FixedTier is the work per write, in units of one node's per-write work, of a tier that
	// does not grow with N (the three TiDB servers of TiDB's test). Default 0.
	FixedTier float64 `json:"fixed_tier"`
	// Window is the time window of the query whose touched ranges are counted. Default 60 s,
	// or the whole run if shorter.
	Window time.Duration `json:"window"`
	// Seed seeds the clock offsets, arrivals and random key bits. The same seed gives the same
	// report.
	Seed uint64 `json:"seed"`
	// SetIndexShare, SetScatterCost and SetFixedTier mark the free parameters given
	// explicitly (a zero ScatterCost or FixedTier is also their default).
	SetIndexShare bool `json:"-"`
}

// DefaultCluster is the node counts the report models: 1 to 64.
func DefaultCluster() []int {
	return []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64}
}

// ErrConfig reports a configuration the model cannot run.
var ErrConfig = errors.New("dist: bad configuration")

// Defaults returns c with its zero fields set to the defaults, or an error naming a bad one.
func (c Config) Defaults() (Config, error) {
	if c.Target.Name == "" {
		c.Target = targets[0]
	}
	if len(c.Schemes) == 0 {
		c.Schemes = DefaultSchemes()
	}
	if len(c.Cluster) == 0 {
		c.Cluster = DefaultCluster()
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Capacity, 10000)
	def(&c.RowBytes, 200)
	if !c.SetIndexShare && c.IndexShare == 0 {
		c.IndexShare = 1
	}
	if c.Generators == 0 {
		c.Generators = 8
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = time.Millisecond
	}
	if c.Seconds == 0 {
		c.Seconds = 600
	}
	if c.Samples == 0 {
		c.Samples = 500
	}
	if c.PreSplit == 0 {
		c.PreSplit = 1
	}
	if c.Rebalance == 0 {
		c.Rebalance = time.Minute
	}
	if c.RecordFor == 0 {
		c.RecordFor = 10 * time.Second
	}
	if c.Window == 0 {
		c.Window = min(time.Minute, time.Duration(c.Seconds)*time.Second)
	}
	bad := func(format string, a ...any) (Config, error) {
		return c, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
	}
	for _, n := range c.Cluster {
		if n < 1 || n > 4096 {
			return bad("cluster size %d: want 1 to 4096 nodes", n)
		}
	}
	for s, v := range c.Capacities {
		if !(v > 0) || math.IsInf(v, 0) {
			return bad("capacity of %s %v: want a positive number of writes/s", s, v)
		}
	}
	switch {
	case !(c.Capacity > 0) || math.IsInf(c.Capacity, 0):
		return bad("capacity %v: want a positive number of writes/s per node", c.Capacity)
	case c.Generators < 1 || c.Generators > 1<<16:
		return bad("%d generator nodes: want 1 to 65536", c.Generators)
	case c.ClockSkew < 0:
		return bad("clock skew %v: want 0 or more", c.ClockSkew)
	case c.Seconds < 10 || c.Seconds > 86400:
		return bad("%d seconds: want 10 to 86400", c.Seconds)
	case c.Samples < 10 || c.Samples > 100000:
		return bad("%d samples per second: want 10 to 100000", c.Samples)
	case !(c.RowBytes > 0) || math.IsInf(c.RowBytes, 0):
		return bad("row bytes %v: want a positive number", c.RowBytes)
	case c.PreSplit < 1 || c.PreSplit > 65536:
		return bad("pre-split %d: want 1 to 65536 ranges", c.PreSplit)
	case c.Buckets < 0 || c.Buckets > 65536:
		return bad("buckets %d: want 0 to 65536", c.Buckets)
	case c.Buckets > 0 && c.Target.HashKey:
		return bad("buckets %d: target %s already hashes the key", c.Buckets, c.Target.Name)
	case c.Rebalance < time.Second:
		return bad("rebalance delay %v: want at least 1s", c.Rebalance)
	case c.RecordFor < time.Second:
		return bad("load split sampling %v: want at least 1s", c.RecordFor)
	case !(c.IndexShare > 0 && c.IndexShare <= 1):
		return bad("index share %v: want above 0 and at most 1", c.IndexShare)
	case !(c.ScatterCost >= 0) || math.IsInf(c.ScatterCost, 0):
		return bad("scatter cost %v: want 0 or more", c.ScatterCost)
	case !(c.FixedTier >= 0) || math.IsInf(c.FixedTier, 0):
		return bad("fixed tier %v: want 0 or more", c.FixedTier)
	case c.Window < time.Second || int(c.Window/time.Second) > c.Seconds:
		return bad("query window %v: want 1s up to the run's %d s", c.Window, c.Seconds)
	}
	return c, nil
}

// capacityOf returns the per-node write capacity the model uses for scheme, and its source.
func (c Config) capacityOf(scheme string) (float64, string) {
	if v, ok := c.Capacities[scheme]; ok {
		return v, c.CapacitySource
	}
	return c.Capacity, "flag"
}

// keyStream is a scheme's sampled writes, drawn once and replayed for every cluster size (the
// keys do not depend on the cluster).
type keyStream struct {
	ticks [][]sample
	// raw are the keys before the target's prefix, for the probes of a point read.
	raw [][][]byte
}

// drawKeys draws c.Seconds of sampled writes of scheme, keyed as c.Target sorts them.
func drawKeys(c Config, scheme string) (*keyStream, error) {
	ks, err := newKeySource(scheme, c.Generators, c.Samples, c.ClockSkew, c.Seed)
	if err != nil {
		return nil, err
	}
	st := &keyStream{}
	for t := range c.Seconds {
		s, err := ks.tick(t)
		if err != nil {
			return nil, err
		}
		raw := make([][]byte, len(s))
		for i := range s {
			raw[i] = s[i].key
			switch {
			case c.Target.HashKey:
				s[i].key = prefixed(bucketOf(s[i].key, 1<<16), s[i].key)
			case c.Buckets > 0:
				s[i].key = prefixed(bucketOf(s[i].key, c.Buckets), s[i].key)
			}
		}
		st.ticks = append(st.ticks, s)
		st.raw = append(st.raw, raw)
	}
	return st, nil
}

// span is one range of the model: the keys from start (inclusive; nil is the table's first
// key) up to the next range's start.
type span struct {
	start []byte
	node  int
	bytes float64
	qps   float64 // writes in the last model second
	load  float64 // writes since the last rebalance
	// rate is the range's share of the writes, smoothed over rateTau model seconds so that
	// the sampling of keys does not read as load imbalance, and reset when the samples show a
	// change beyond sampling noise; hits counts this second's samples.
	rate float64
	hits int
	// keys is a reservoir of the keys written, from which a size split takes its middle key.
	keys [][]byte
	seen int
	find *finder
}

const reservoirSize = 64

// rateTau is the time constant, in model seconds, over which a range's share of the writes
// is smoothed.
const rateTau = 20.0

// finder is CockroachDB's load split finder (pkg/kv/kvserver/split/finder.go): a reservoir of
// 20 sampled keys, each counting the later writes that fall left and right of it. After the
// sampling period the key with the most even count splits the range, provided the counts
// reach 100 writes and differ by less than 25%; for append-only keys every later write lands
// right of every sample, so no key qualifies.
type finder struct {
	since   int // model second sampling began
	samples [20]struct {
		key         []byte
		left, right float64
	}
	count int
}

const (
	finderMinCounter = 100
	finderThreshold  = 0.25
)

func (f *finder) record(key []byte, weight float64, rng *rand.Rand) {
	idx := f.count
	if f.count >= len(f.samples) {
		idx = rng.IntN(f.count + 1)
	}
	f.count++
	if idx < len(f.samples) {
		f.samples[idx].key, f.samples[idx].left, f.samples[idx].right = key, 0, 0
		return
	}
	for i := range f.samples {
		if bytes.Compare(f.samples[i].key, key) <= 0 {
			f.samples[i].right += weight
		} else {
			f.samples[i].left += weight
		}
	}
}

func (f *finder) key() []byte {
	best, score := -1, 2.0
	for i, s := range f.samples {
		if s.key == nil || s.left+s.right < finderMinCounter {
			continue
		}
		b := math.Abs(s.left-s.right) / (s.left + s.right)
		if b < finderThreshold && b < score {
			best, score = i, b
		}
	}
	if best < 0 {
		return nil
	}
	return f.samples[best].key
}

// Second is the state of one model second of a run.
type Second struct {
	// Throughput is the writes per second the cluster sustained.
	Throughput float64 `json:"throughput"`
	// HotShare is the busiest node's share of the ID-index writes.
	HotShare float64 `json:"hot_share"`
	// Utilisation is the mean busy fraction of the nodes.
	Utilisation float64 `json:"utilisation"`
	// Ranges is the number of ranges at the end of the second.
	Ranges int `json:"ranges"`
}

// Run is one scheme on one cluster size.
type Run struct {
	Nodes    int      `json:"nodes"`
	Seconds  []Second `json:"-"`
	Capacity float64  `json:"-"`
	// Throughput, HotShare and Utilisation are means over the last quarter of the run.
	Throughput  float64 `json:"throughput"`
	Ideal       float64 `json:"ideal"`
	HotShare    float64 `json:"hot_share"`
	Utilisation float64 `json:"utilisation"`
	Ranges      int     `json:"ranges"`
	SizeSplits  int     `json:"size_splits"`
	LoadSplits  int     `json:"load_splits"`
	// FailedLoadSplits counts sampling periods of a hot range that found no split point.
	FailedLoadSplits int `json:"failed_load_splits"`
	// WindowRanges is the ranges holding the keys written in the last Window of the run.
	WindowRanges int `json:"window_ranges"`
	// PointReadSpans and PointReadRanges are what a point read by the ID alone probes: every
	// bucket of a hash-sharded index (which cannot derive the bucket), else one key.
	PointReadSpans  int `json:"point_read_spans"`
	PointReadRanges int `json:"point_read_ranges"`
	// WarmupSeconds is the first second the throughput reached 90% of its steady value.
	WarmupSeconds int `json:"warmup_seconds"`
}

// cluster is the model's state during one run.
type cluster struct {
	c      Config
	n      int
	ranges []*span
	rng    *rand.Rand
	sizeSp int
	loadSp int
	failed int
}

func newCluster(c Config, n int) *cluster {
	cl := &cluster{c: c, n: n, rng: rand.New(rand.NewPCG(c.Seed, uint64(n)))}
	parts := c.PreSplit
	if c.Target.HashKey && parts == 1 {
		parts = c.Target.TabletsPerNode * n
	}
	for i := range parts {
		s := &span{node: i % n}
		if i > 0 {
			// Split point i/parts of the way through the key space, as TiDB's SPLIT TABLE
			// BETWEEN and YugabyteDB's hash tablets place them.
			s.start = splitPoint(i, parts)
		}
		cl.ranges = append(cl.ranges, s)
	}
	return cl
}

// splitPoint returns the point i/n of the way through the 64-bit key space, as 8 big-endian
// bytes.
func splitPoint(i, n int) []byte {
	q, _ := mulDiv(uint64(i), uint64(n))
	return int8Raw(q)
}

// mulDiv returns floor(i * 2^64 / n) for i < n.
func mulDiv(i, n uint64) (uint64, uint64) {
	// Long division of i·2^64 by n, one bit at a time.
	var q, r uint64 = 0, i
	for range 64 {
		carry := r >> 63
		r <<= 1
		q <<= 1
		if carry == 1 || r >= n {
			r -= n
			q |= 1
		}
	}
	return q, r
}

func int8Raw(v uint64) []byte {
	b := make([]byte, 8)
	for j := range 8 {
		b[j] = byte(v >> (56 - 8*j))
	}
	return b
}

// find returns the index of the range holding key.
func (cl *cluster) find(key []byte) int {
	i := sort.Search(len(cl.ranges), func(i int) bool { return bytes.Compare(cl.ranges[i].start, key) > 0 })
	return max(i-1, 0)
}

// split splits range i at key, which must lie strictly inside it; the right part stays on the
// same node, as a split's right-hand side does until the rebalancer moves it.
//
// The write rate moves with the part of the last second's writes (tick) on either side, so
// the tail range of append-only keys keeps all of it.
func (cl *cluster) split(i int, key []byte, tick []sample) bool {
	r := cl.ranges[i]
	if bytes.Compare(key, r.start) <= 0 || (i+1 < len(cl.ranges) && bytes.Compare(key, cl.ranges[i+1].start) >= 0) {
		return false
	}
	right := &span{start: key, node: r.node}
	var lk, rk [][]byte
	for _, k := range r.keys {
		if bytes.Compare(k, key) < 0 {
			lk = append(lk, k)
		} else {
			rk = append(rk, k)
		}
	}
	frac := 0.5
	if len(r.keys) > 0 {
		frac = float64(len(lk)) / float64(len(r.keys))
	}
	right.bytes, r.bytes = r.bytes*(1-frac), r.bytes*frac
	right.load, r.load = r.load*(1-frac), r.load*frac
	rf := frac
	in, left := 0, 0
	for _, s := range tick {
		if bytes.Compare(s.key, r.start) >= 0 && (i+1 >= len(cl.ranges) || bytes.Compare(s.key, cl.ranges[i+1].start) < 0) {
			in++
			if bytes.Compare(s.key, key) < 0 {
				left++
			}
		}
	}
	if in > 0 {
		rf = float64(left) / float64(in)
	}
	right.rate, r.rate = r.rate*(1-rf), r.rate*rf
	right.qps, r.qps = r.qps*(1-rf), r.qps*rf
	right.keys, r.keys = rk, lk
	right.seen, r.seen = len(rk), len(lk)
	r.find = nil
	cl.ranges = slices.Insert(cl.ranges, i+1, right)
	return true
}

// rebalance moves leases to even out the load measured since the last run: the loaded ranges
// go, heaviest first, to the node with the least load so far; the unloaded ones to the node
// with the fewest ranges.
func (cl *cluster) rebalance() {
	order := make([]*span, len(cl.ranges))
	copy(order, cl.ranges)
	sort.SliceStable(order, func(a, b int) bool { return order[a].load > order[b].load })
	load := make([]float64, cl.n)
	count := make([]int, cl.n)
	for _, r := range order {
		best := 0
		for j := 1; j < cl.n; j++ {
			if r.load > 0 && (load[j] < load[best] || load[j] == load[best] && count[j] < count[best]) ||
				r.load == 0 && count[j] < count[best] {
				best = j
			}
		}
		r.node = best
		load[best] += r.load
		count[best]++
		r.load = 0
	}
}

// run replays st on a cluster of n nodes of capacity capa.
func run(c Config, st *keyStream, n int, capa float64) Run {
	cl := newCluster(c, n)
	out := Run{Nodes: n, Capacity: capa, Ideal: float64(n) * capa}
	rebalanceEvery := int(c.Rebalance / time.Second)
	recordFor := int(c.RecordFor / time.Second)
	prev := map[int]*span{}
	count := make([]float64, n)
	idx := make([]int, 0, c.Samples)
	for t, tick := range st.ticks {
		clear(count)
		idx = idx[:0]
		scattered := 0
		for _, s := range tick {
			i := cl.find(s.key)
			idx = append(idx, i)
			r := cl.ranges[i]
			r.hits++
			if prev[s.node] != r {
				scattered++
			}
			prev[s.node] = r
		}
		alpha := 1 - math.Exp(-1/rateTau)
		sum := 0.0
		for _, r := range cl.ranges {
			f := float64(r.hits) / float64(len(tick))
			expect := r.rate * float64(len(tick))
			switch {
			case t == 0:
				r.rate = f
			case r.hits == 0 && expect >= 5, math.Abs(float64(r.hits)-expect) > 4*math.Sqrt(expect)+4:
				// The range's load changed (it went cold behind an append-only tail, or
				// became the tail): a change no sampling noise explains resets the estimate.
				r.rate = f
			default:
				r.rate += alpha * (f - r.rate)
			}
			r.hits = 0
			count[r.node] += r.rate
			sum += r.rate
		}
		hot, total := 0.0, 0.0
		h := c.IndexShare
		scatter := float64(scattered) / float64(len(tick))
		for j := range count {
			count[j] /= sum
			d := h*count[j]*(1+c.ScatterCost*scatter) + (1-h)/float64(n)
			hot = max(hot, d)
			total += d
		}
		tput := capa / (hot + c.FixedTier)
		w := tput / float64(len(tick))
		for k, s := range tick {
			r := cl.ranges[idx[k]]
			r.bytes += w * c.RowBytes
			r.qps += w
			r.load += w
			r.seen++
			if len(r.keys) < reservoirSize {
				r.keys = append(r.keys, s.key)
			} else if j := cl.rng.IntN(r.seen); j < reservoirSize {
				r.keys[j] = s.key
			}
			if r.find != nil {
				r.find.record(s.key, w, cl.rng)
			}
		}
		out.Seconds = append(out.Seconds, Second{
			Throughput:  tput,
			HotShare:    slices.Max(count),
			Utilisation: tput * total / (float64(n) * capa),
		})
		cl.endSecond(t, recordFor, tick)
		if (t+1)%rebalanceEvery == 0 {
			cl.rebalance()
		}
		out.Seconds[t].Ranges = len(cl.ranges)
	}
	cl.summarise(c, st, &out)
	return out
}

// endSecond splits the ranges that outgrew the size limit or found a load split point, and
// starts or stops the finders of ranges above or below the load threshold.
func (cl *cluster) endSecond(t, recordFor int, tick []sample) {
	for i := 0; i < len(cl.ranges); i++ {
		r := cl.ranges[i]
		qps := r.qps
		r.qps = 0
		if float64(cl.c.Target.MaxRangeBytes) < r.bytes && len(r.keys) > 1 {
			ks := slices.Clone(r.keys)
			slices.SortFunc(ks, bytes.Compare)
			if cl.split(i, ks[len(ks)/2], tick) {
				cl.sizeSp++
				i++
				continue
			}
		}
		if cl.c.Target.SplitQPS == 0 {
			continue
		}
		switch {
		case qps <= cl.c.Target.SplitQPS:
			r.find = nil
		case r.find == nil:
			r.find = &finder{since: t}
		case t+1-r.find.since >= recordFor && r.find.count >= 2*len(r.find.samples):
			// A finder with fewer sampled keys than twice its reservoir keeps sampling: the
			// model draws only Samples keys a second over all ranges, too few to judge a range
			// that real sampling (every request) would judge in 10 s.
			if k := r.find.key(); k != nil && cl.split(i, k, tick) {
				cl.loadSp++
				i++
				continue
			}
			cl.failed++
			r.find = &finder{since: t + 1}
		}
	}
}

// summarise fills the steady-state figures of out.
func (cl *cluster) summarise(c Config, st *keyStream, out *Run) {
	from := len(out.Seconds) * 3 / 4
	var tp, hs, ut float64
	for _, s := range out.Seconds[from:] {
		tp += s.Throughput
		hs += s.HotShare
		ut += s.Utilisation
	}
	m := float64(len(out.Seconds) - from)
	out.Throughput, out.HotShare, out.Utilisation = tp/m, hs/m, ut/m
	out.Ranges = len(cl.ranges)
	out.SizeSplits, out.LoadSplits, out.FailedLoadSplits = cl.sizeSp, cl.loadSp, cl.failed
	for t, s := range out.Seconds {
		if s.Throughput >= 0.9*out.Throughput {
			out.WarmupSeconds = t
			break
		}
	}
	// The ranges a query for the last Window of writes touches.
	touched := map[int]bool{}
	first := len(st.ticks) - int(c.Window/time.Second)
	for _, tick := range st.ticks[first:] {
		for _, s := range tick {
			touched[cl.find(s.key)] = true
		}
	}
	out.WindowRanges = len(touched)
	// A point read by the ID alone: one key, or one span per bucket of a hash-sharded index.
	last := st.raw[len(st.raw)-1]
	key := last[len(last)/2]
	out.PointReadSpans, out.PointReadRanges = 1, 1
	if c.Buckets > 0 {
		probed := map[int]bool{}
		for b := range c.Buckets {
			probed[cl.find(prefixed(uint16(b), key))] = true
		}
		out.PointReadSpans, out.PointReadRanges = c.Buckets, len(probed)
	}
}
