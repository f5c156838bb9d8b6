package layouts

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// ErrNoFit reports a requirement no layout of the allowed width can meet. The error is a
// *NoFitError, which says by how much each requirement would have to be relaxed.
var ErrNoFit = errors.New("layouts: no layout fits")

// Year is the length of a year as the planner counts it: 365.2425 days, the mean Gregorian
// year.
const Year = time.Duration(365.2425 * 24 * float64(time.Hour))

// Requirement is what a fleet of Snowflake-family generators needs from a layout. The
// zero value of a field means the default noted.
type Requirement struct {
	// IDsPerSecond is the peak rate one node must sustain without waiting for the next
	// tick. Zero means one ID per tick.
	IDsPerSecond float64
	// Nodes is how many generators must hold distinct node values at once. Zero means 1,
	// which needs no node field.
	Nodes uint64
	// Datacenters, when non-zero, splits the node into a "datacenter" field holding this
	// many values and a "worker" field holding Nodes/Datacenters (rounded up), as Twitter's
	// layout does. Zero means one field named "node".
	Datacenters uint64
	// ShardBits is the width of a "shard" field placed above the node, for IDs that carry the
	// logical shard of their row (Instagram's layout). Zero means none.
	ShardBits uint
	// HashBits is the width of a hash field on top, above the time (TiDB's AUTO_RANDOM shape,
	// see Layout.Sharded), which spreads the IDs over 2^HashBits shards of a range-partitioned
	// database. Zero means none; at most MaxShardBits.
	HashBits uint
	// Years is how long, counted from Epoch, the time field must last.
	Years float64
	// Unit is the time unit, at most MaxUnit. Zero means the planner tries 1ms, 10ms and 1s.
	Unit time.Duration
	// Epoch is the instant whose tick is zero; the life counts from it.
	Epoch time.Time
	// MaxBits caps the total width: 53 keeps IDs exact in a JavaScript number (below 2^53),
	// 63 in a signed 64-bit column (below 2^63), 64 allows all 64 bits. Zero means 63.
	MaxBits uint
}

// Spare says which field receives the bits a requirement leaves unused.
type Spare uint8

// The ways to spend spare bits. A layout that spends none leaves its top bits zero.
const (
	SpareNone Spare = iota // no spare bits
	SpareTime              // a longer life
	SpareSeq               // more IDs per tick
	SpareNode              // more nodes
)

// String returns "none", "time", "seq" or "node".
func (s Spare) String() string {
	switch s {
	case SpareNone:
		return "none"
	case SpareTime:
		return "time"
	case SpareSeq:
		return "seq"
	case SpareNode:
		return "node"
	}
	return fmt.Sprintf("Spare(%d)", uint8(s))
}

// DefaultPlanUnits are the units Plan tries when Requirement.Unit is zero: Twitter's
// millisecond, Sonyflake's 10 ms and Baidu's second.
var DefaultPlanUnits = []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second}

// Fit is one layout that meets a requirement, with its headroom against it.
type Fit struct {
	Layout Layout
	Spare  Spare   // where the unused bits went
	Nodes  uint64  // node values per shard: 2^(node bits - shard bits)
	Rate   float64 // Layout.IDsPerSecond() / Requirement.IDsPerSecond
	Fleet  float64 // Nodes / Requirement.Nodes
	Life   float64 // years from Epoch until the time field runs out
}

// Need is the width each field must have for a requirement at one unit.
type Need struct {
	Unit                               time.Duration
	Hash, Time, Shard, DC, Worker, Seq uint // Worker is the whole node when DC is 0
}

// Total returns the bits a Need adds up to.
func (n Need) Total() uint { return n.Hash + n.Time + n.Shard + n.DC + n.Worker + n.Seq }

// BitsFor returns the width of the smallest field that holds n distinct values: 0 for n <= 1.
func BitsFor(n uint64) uint {
	if n <= 1 {
		return 0
	}
	return uint(bits.Len64(n - 1))
}

// SeqBitsFor returns the width of a sequence field that lets one node issue idsPerSecond
// within every tick of unit (at least 1, since a layout needs a sequence field). It returns
// 64 when the rate needs more than 63 bits.
func SeqBitsFor(idsPerSecond float64, unit time.Duration) uint {
	return max(1, BitsFor(IDsPerTick(idsPerSecond, unit)))
}

// TimeBitsFor returns the width of a time field of the given unit that lasts at least years.
// It returns 64 when that needs more than 63 bits.
func TimeBitsFor(years float64, unit time.Duration) uint {
	return max(1, BitsFor(TicksFor(years, unit)))
}

// TicksFor returns how many ticks of unit a time field must hold to last years (of Year
// each): years × Year / unit rounded up, computed exactly on the float64 years as given, so
// that a life of exactly 2^b ticks needs b bits and one a hair longer needs b+1. It returns
// math.MaxUint64 when the count does not fit (or years is not finite, or unit is not
// positive), and 0 for years of 0 or less.
func TicksFor(years float64, unit time.Duration) uint64 {
	if unit <= 0 {
		return math.MaxUint64
	}
	life, ok := lifeNs(years)
	if !ok {
		return math.MaxUint64
	}
	return ceilUint64(life.Quo(life, new(big.Rat).SetInt64(int64(unit))))
}

// IDsPerTick returns how many IDs one node issues within a tick of unit at idsPerSecond:
// idsPerSecond × unit rounded up, computed exactly. It returns math.MaxUint64 when the count
// does not fit (or the rate is not finite, or unit is not positive), and 0 for a rate of 0 or
// less.
func IDsPerTick(idsPerSecond float64, unit time.Duration) uint64 {
	if unit <= 0 {
		return math.MaxUint64
	}
	rate := new(big.Rat)
	if rate.SetFloat64(idsPerSecond) == nil {
		return math.MaxUint64
	}
	return ceilUint64(rate.Mul(rate, big.NewRat(int64(unit), int64(time.Second))))
}

// lifeNs returns years × Year in nanoseconds, exactly; false when years is not finite.
func lifeNs(years float64) (*big.Rat, bool) {
	life := new(big.Rat)
	if life.SetFloat64(years) == nil {
		return nil, false
	}
	return life.Mul(life, new(big.Rat).SetInt64(int64(Year))), true
}

// ceilUint64 rounds x up to a whole number: 0 for x <= 0, math.MaxUint64 beyond a uint64.
func ceilUint64(x *big.Rat) uint64 {
	if x.Sign() <= 0 {
		return 0
	}
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsUint64() {
		return math.MaxUint64
	}
	return q.Uint64()
}

// spanNs returns t - from in nanoseconds, exactly, at any distance.
func spanNs(from, t time.Time) *big.Int {
	d := new(big.Int).Sub(big.NewInt(t.Unix()), big.NewInt(from.Unix()))
	d.Mul(d, big.NewInt(int64(time.Second)))
	return d.Add(d, big.NewInt(int64(t.Nanosecond())-int64(from.Nanosecond())))
}

// spanToTick returns the nanoseconds from epoch to the start of tick of l (l.Epoch + tick ×
// l.Unit), exactly: how long from epoch a field holding the ticks below tick lasts.
func spanToTick(epoch time.Time, l Layout, tick *big.Int) *big.Int {
	d := new(big.Int).Mul(tick, big.NewInt(int64(l.Unit)))
	return d.Add(d, spanNs(epoch, l.Epoch))
}

// yearsOf converts nanoseconds to years of Year, rounded to the nearest float64.
func yearsOf(ns *big.Int) float64 {
	y, _ := new(big.Rat).SetFrac(ns, big.NewInt(int64(Year))).Float64()
	return y
}

func (r Requirement) maxBits() uint {
	if r.MaxBits == 0 {
		return 63
	}
	return r.MaxBits
}

func (r Requirement) nodes() uint64 { return max(r.Nodes, 1) }

// NeedAt returns the field widths r needs at unit.
func (r Requirement) NeedAt(unit time.Duration) Need {
	n := Need{Unit: unit, Hash: r.HashBits, Time: TimeBitsFor(r.Years, unit), Shard: r.ShardBits, Seq: SeqBitsFor(r.IDsPerSecond, unit)}
	if r.Datacenters > 0 {
		n.DC = BitsFor(r.Datacenters)
		n.Worker = BitsFor((r.nodes() + r.Datacenters - 1) / r.Datacenters)
	} else {
		n.Worker = BitsFor(r.nodes())
	}
	return n
}

// units returns the units r asks Plan to try.
func (r Requirement) units() []time.Duration {
	if r.Unit > 0 {
		return []time.Duration{r.Unit}
	}
	return DefaultPlanUnits
}

// check rejects requirements no arithmetic can serve.
func (r Requirement) check() error {
	switch {
	case math.IsNaN(r.IDsPerSecond) || math.IsInf(r.IDsPerSecond, 0) || r.IDsPerSecond < 0:
		return fmt.Errorf("%w: rate %v IDs/s: want a finite number of at least 0", ErrInvalid, r.IDsPerSecond)
	case math.IsNaN(r.Years) || math.IsInf(r.Years, 0) || r.Years <= 0:
		return fmt.Errorf("%w: life of %v years: want a finite number above 0", ErrInvalid, r.Years)
	case r.Unit < 0:
		return fmt.Errorf("%w: time unit %v must be positive", ErrInvalid, r.Unit)
	case r.Unit > MaxUnit:
		return fmt.Errorf("%w: time unit %v is longer than %v", ErrInvalid, r.Unit, MaxUnit)
	case r.MaxBits > 64:
		return fmt.Errorf("%w: %d bits in all: IDs have at most 64", ErrInvalid, r.MaxBits)
	case r.HashBits > MaxShardBits:
		return fmt.Errorf("%w: %d hash bits: at most %d", ErrInvalid, r.HashBits, MaxShardBits)
	case r.Datacenters > r.nodes():
		return fmt.Errorf("%w: %d datacenters for %d nodes: want at most one datacenter per node", ErrInvalid, r.Datacenters, r.nodes())
	}
	return nil
}

// Plan returns the layouts that meet r, for each unit tried in order (r.Unit, or
// DefaultPlanUnits), one per way of spending the spare bits (time, seq, node; fewer when
// two give the same layout or there are none to spend). Fields run (hash /) time / shard /
// datacenter / worker (or node) / seq, as in Twitter's layout.
//
// Plan returns an error wrapping ErrInvalid for a requirement out of range, and a *NoFitError
// (matching ErrNoFit) when no unit leaves room for every field.
func Plan(r Requirement) ([]Fit, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var fits []Fit
	var needs []Need
	for _, u := range r.units() {
		n := r.NeedAt(u)
		needs = append(needs, n)
		if n.Total() > r.maxBits() || n.Time > 62 {
			continue
		}
		if n.Total() == r.maxBits() {
			fits = append(fits, r.fit(r.layout(n, SpareNone), SpareNone))
			continue
		}
		var prev Layout
		for _, sp := range []Spare{SpareTime, SpareSeq, SpareNode} {
			l := r.layout(n, sp)
			if prev.Fields != nil && l.Bits() == prev.Bits() {
				continue
			}
			prev = l
			fits = append(fits, r.fit(l, sp))
		}
	}
	if len(fits) == 0 {
		return nil, &NoFitError{Requirement: r, Needs: needs}
	}
	return fits, nil
}

// layout builds the layout of need n with the spare bits given to sp. The time field stays
// within the 62 bits Validate allows; bits it cannot take are left unused at the top.
func (r Requirement) layout(n Need, sp Spare) Layout {
	spare := r.maxBits() - n.Total()
	switch sp {
	case SpareTime:
		add := min(spare, 62-n.Time)
		n.Time += add
	case SpareSeq:
		n.Seq += spare
	case SpareNode:
		n.Worker += spare
	}
	var fs []Field
	if n.Hash > 0 {
		fs = append(fs, Hash(n.Hash))
	}
	fs = append(fs, Time(n.Time))
	if n.Shard > 0 {
		fs = append(fs, Node("shard", n.Shard))
	}
	if n.DC > 0 {
		fs = append(fs, Node("datacenter", n.DC))
	}
	if n.Worker > 0 {
		name := "node"
		if n.Shard > 0 || n.DC > 0 {
			name = "worker"
		}
		fs = append(fs, Node(name, n.Worker))
	}
	fs = append(fs, Seq(n.Seq))
	return Layout{Name: "plan", Fields: fs, Unit: n.Unit, Epoch: r.Epoch}
}

// fit measures l against r.
func (r Requirement) fit(l Layout, sp Spare) Fit {
	nodeBits := l.NodeBits() - r.ShardBits
	f := Fit{Layout: l, Spare: sp, Nodes: uint64(1) << nodeBits}
	if r.IDsPerSecond > 0 {
		f.Rate = l.IDsPerSecond() / r.IDsPerSecond
	} else {
		f.Rate = math.Inf(1)
	}
	f.Fleet = float64(f.Nodes) / float64(r.nodes())
	f.Life = Lifetime(l)
	return f
}

// Lifetime returns the years from l's epoch until its time field runs out, 2^timeBits ×
// Unit / Year rounded to the nearest float64 (so a layout that lasts at least y years, for a
// float64 y, has a Lifetime of at least y).
func Lifetime(l Layout) float64 {
	ns := new(big.Int).Lsh(big.NewInt(int64(l.Unit)), l.TimeBits())
	return yearsOf(ns)
}

// Check returns the ways l falls short of r, as phrases such as "runs out 2080-07-10, 54.6
// years after 2026-01-01", or none when l meets it. Unlike Plan it takes l's own epoch, unit
// and fields as given; Requirement.Datacenters and ShardBits are compared with l's total node
// width. The rate and the life are compared exactly, as Plan and NeedAt count them: a layout
// whose time field runs out exactly Years after r.Epoch meets the requirement, one that runs
// out a nanosecond sooner does not.
func (r Requirement) Check(l Layout) []string {
	var out []string
	if sb := l.SeqBits(); sb < 64 && IDsPerTick(r.IDsPerSecond, l.Unit) > uint64(1)<<sb {
		out = append(out, fmt.Sprintf("%.0f IDs/s per node, %s needed", math.Floor(l.IDsPerSecond()),
			strconv.FormatFloat(r.IDsPerSecond, 'f', -1, 64)))
	}
	need := BitsFor(r.nodes()) + r.ShardBits
	if r.Datacenters > 0 {
		n := r.NeedAt(l.Unit)
		need = n.DC + n.Worker + n.Shard
	}
	if l.NodeBits() < need {
		out = append(out, fmt.Sprintf("%d node bits, %d needed", l.NodeBits(), need))
	}
	if l.ShardBits() < r.HashBits {
		out = append(out, fmt.Sprintf("%d hash bits, %d needed (shard_bits=)", l.ShardBits(), r.HashBits))
	}
	life := spanToTick(r.Epoch, l, new(big.Int).Lsh(big.NewInt(1), l.TimeBits()))
	if !r.lasts(life) {
		ro := l.RunsOut().UTC().Format(time.DateOnly)
		if life.Sign() <= 0 {
			out = append(out, fmt.Sprintf("ran out %s", ro))
		} else {
			out = append(out, fmt.Sprintf("runs out %s, %s years after %s", ro, floorTenth(yearsOf(life)), r.Epoch.UTC().Format(time.DateOnly)))
		}
	}
	switch mb := r.maxBits(); {
	case mb == 63 && l.TotalBits() == 64:
		if !r.lasts(spanToTick(r.Epoch, l, big.NewInt(l.int64Tick()))) {
			out = append(out, fmt.Sprintf("sets the sign bit from %s", l.Int64Until().UTC().Format(time.DateOnly)))
		}
	case mb == 53 && l.TotalBits() > 53:
		out = append(out, fmt.Sprintf("%d bits, above 2^53", l.TotalBits()))
	case mb < 63 && l.TotalBits() > mb:
		out = append(out, fmt.Sprintf("%d bits, more than %d", l.TotalBits(), mb))
	}
	return out
}

// lasts reports whether a time field lasting ns nanoseconds from r.Epoch meets r.Years,
// compared exactly.
func (r Requirement) lasts(ns *big.Int) bool {
	need, ok := lifeNs(r.Years)
	if !ok {
		return math.IsNaN(r.Years) || r.Years < 0
	}
	return new(big.Rat).SetInt(ns).Cmp(need) >= 0
}

// floorTenth writes years rounded down to one decimal, so that a life just short of the
// requirement never prints as equal to it.
func floorTenth(y float64) string {
	return strconv.FormatFloat(math.Floor(y*10)/10, 'f', 1, 64)
}

// NoFitError is Plan's error when nothing fits. It matches ErrNoFit with errors.Is.
type NoFitError struct {
	Requirement Requirement
	Needs       []Need // one per unit tried
}

// Is reports whether target is ErrNoFit.
func (e *NoFitError) Is(target error) bool { return target == ErrNoFit }

// Relax is one way to make a requirement fit: the requirement named Name would have to
// become Value (at Unit).
type Relax struct {
	Name  string        // "max-bits", "nodes", "rate", "years", "shard-bits", "hash-bits", "datacenters"
	Value float64       // the value that fits
	Unit  time.Duration // the unit at which it fits
}

// Relaxations returns, for each requirement that can be relaxed alone to make a layout fit,
// the least relaxation over the units tried. Requirements that cannot help are left out.
// Rates are whole IDs per second and years have three significant digits, both rounded
// down, so that each value as printed fits.
func (e *NoFitError) Relaxations() []Relax {
	r := e.Requirement
	best := map[string]Relax{}
	better := func(x Relax, larger bool) {
		old, ok := best[x.Name]
		if !ok || (larger && x.Value > old.Value) || (!larger && x.Value < old.Value) {
			best[x.Name] = x
		}
	}
	for _, n := range e.Needs {
		if n.Time <= 62 && n.Total() <= 64 {
			better(Relax{Name: "max-bits", Value: float64(n.Total()), Unit: n.Unit}, false)
		}
		over := int(n.Total()) - int(r.maxBits())
		if n.Time > 62 {
			over = max(over, 0)
		}
		// Each field alone giving up the excess bits.
		if n.Time <= 62 {
			if w := int(n.Worker) - over; w >= 0 && over > 0 {
				nodes := math.Ldexp(1, w)
				if n.DC > 0 {
					nodes *= float64(r.Datacenters)
				}
				better(Relax{Name: "nodes", Value: nodes, Unit: n.Unit}, true)
			}
			if s := int(n.Seq) - over; s >= 1 && over > 0 {
				better(Relax{Name: "rate", Value: ratePerTick(uint(s), n.Unit), Unit: n.Unit}, true)
			}
			if s := int(n.Shard) - over; s >= 0 && over > 0 {
				better(Relax{Name: "shard-bits", Value: float64(s), Unit: n.Unit}, true)
			}
			if h := int(n.Hash) - over; h >= 0 && over > 0 {
				better(Relax{Name: "hash-bits", Value: float64(h), Unit: n.Unit}, true)
			}
		}
		if t := min(62, int(r.maxBits())-int(n.Total()-n.Time)); t >= 1 {
			y := floorSignificant(math.Ldexp(1, t) * float64(n.Unit) / float64(Year))
			if y < r.Years && y > 0 {
				better(Relax{Name: "years", Value: y, Unit: n.Unit}, true)
			}
		}
	}
	var out []Relax
	for _, name := range []string{"max-bits", "nodes", "rate", "years", "shard-bits", "hash-bits"} {
		if x, ok := best[name]; ok {
			out = append(out, x)
		}
	}
	return out
}

// Closest returns the Need of the unit tried that needs the fewest bits.
func (e *NoFitError) Closest() Need {
	closest := e.Needs[0]
	for _, n := range e.Needs[1:] {
		if n.Total() < closest.Total() {
			closest = n
		}
	}
	return closest
}

// Error names, for the unit that comes closest, the bits needed and the bits allowed, and
// lists the relaxations that would fit.
func (e *NoFitError) Error() string {
	closest := e.Closest()
	var b strings.Builder
	fmt.Fprintf(&b, "layouts: no layout fits: at %v the requirement needs %d bits (%s) and %d are allowed",
		closest.Unit, closest.Total(), closest.String(), e.Requirement.maxBits())
	if closest.Time > 62 {
		fmt.Fprintf(&b, ", and a time field holds at most 62")
	}
	if rs := e.Relaxations(); len(rs) > 0 {
		b.WriteString("; relax one of:")
		for i, x := range rs {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s %s (at %v)", x.Name, formatRelax(x), x.Unit)
		}
	}
	return b.String()
}

// ratePerTick returns the whole IDs per second that 2^seq IDs per tick of unit sustain,
// rounded down exactly (and down again to a float64), so that the rate fits seq bits.
func ratePerTick(seq uint, unit time.Duration) float64 {
	q := new(big.Int).Lsh(big.NewInt(int64(time.Second)), seq)
	q.Quo(q, big.NewInt(int64(unit)))
	f, acc := new(big.Float).SetInt(q).Float64()
	if acc == big.Above {
		f = math.Nextafter(f, 0)
	}
	return f
}

func formatRelax(x Relax) string {
	return strconv.FormatFloat(x.Value, 'f', -1, 64)
}

// floorSignificant rounds v > 0 down to three significant digits, and a little further so
// that the product with a year in nanoseconds does not round up past a whole tick count.
func floorSignificant(v float64) float64 {
	v *= 1 - 1e-9
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(v)))
	return math.Floor(v*scale) / scale
}

// String renders the widths of a Need: "time 42 + node 10 + seq 7", with "hash 4 + " first
// when it has a hash field.
func (n Need) String() string {
	var ps []string
	if n.Hash > 0 {
		ps = append(ps, fmt.Sprintf("hash %d", n.Hash))
	}
	ps = append(ps, fmt.Sprintf("time %d", n.Time))
	if n.Shard > 0 {
		ps = append(ps, fmt.Sprintf("shard %d", n.Shard))
	}
	if n.DC > 0 {
		ps = append(ps, fmt.Sprintf("datacenter %d", n.DC), fmt.Sprintf("worker %d", n.Worker))
	} else if n.Worker > 0 {
		ps = append(ps, fmt.Sprintf("node %d", n.Worker))
	}
	ps = append(ps, fmt.Sprintf("seq %d", n.Seq))
	return strings.Join(ps, " + ")
}
