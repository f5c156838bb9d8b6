package layouts

import (
	"errors"
	"fmt"
	"math"
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
	// Years is how long, counted from Epoch, the time field must last.
	Years float64
	// Unit is the time unit. Zero means the planner tries 1ms, 10ms and 1s.
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
	Unit                         time.Duration
	Time, Shard, DC, Worker, Seq uint // Worker is the whole node when DC is 0
}

// Total returns the bits a Need adds up to.
func (n Need) Total() uint { return n.Time + n.Shard + n.DC + n.Worker + n.Seq }

// BitsFor returns the width of the smallest field that holds n distinct values: 0 for n <= 1.
func BitsFor(n uint64) uint {
	if n <= 1 {
		return 0
	}
	return uint(bits.Len64(n - 1))
}

// SeqBitsFor returns the width of a sequence field that lets one node issue idsPerSecond
// within every tick of unit (at least 1, since a layout needs a sequence field). It returns
// 64 or more when the rate needs more than 63 bits.
func SeqBitsFor(idsPerSecond float64, unit time.Duration) uint {
	perTick := math.Ceil(idsPerSecond * unit.Seconds())
	return max(1, floatBits(perTick))
}

// TimeBitsFor returns the width of a time field of the given unit that lasts at least years.
// It returns 64 or more when that needs more than 63 bits.
func TimeBitsFor(years float64, unit time.Duration) uint {
	ticks := math.Ceil(years * float64(Year) / float64(unit))
	return max(1, floatBits(ticks))
}

// floatBits returns the width holding v distinct values, 64 for anything not below 2^63.
func floatBits(v float64) uint {
	switch {
	case math.IsNaN(v) || v >= 1<<63:
		return 64
	case v <= 1:
		return 0
	}
	return BitsFor(uint64(v))
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
	n := Need{Unit: unit, Time: TimeBitsFor(r.Years, unit), Shard: r.ShardBits, Seq: SeqBitsFor(r.IDsPerSecond, unit)}
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
	case r.MaxBits > 64:
		return fmt.Errorf("%w: %d bits in all: IDs have at most 64", ErrInvalid, r.MaxBits)
	case r.Datacenters > r.nodes():
		return fmt.Errorf("%w: %d datacenters for %d nodes: want at most one datacenter per node", ErrInvalid, r.Datacenters, r.nodes())
	}
	return nil
}

// Plan returns the layouts that meet r, for each unit tried in order (r.Unit, or
// DefaultPlanUnits), one per way of spending the spare bits (time, seq, node; fewer when
// two give the same layout or there are none to spend). Fields run time / shard /
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
	fs := []Field{Time(n.Time)}
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

// Lifetime returns the years from l's epoch until its time field runs out.
func Lifetime(l Layout) float64 {
	return math.Ldexp(1, int(l.TimeBits())) * float64(l.Unit) / float64(Year)
}

// Check returns the ways l falls short of r, as phrases such as "runs out 2080-07-10, 54.6
// years after the epoch of the requirement", or none when l meets it. Unlike Plan it takes l's
// own epoch, unit and fields as given; Requirement.Datacenters and ShardBits are compared
// with l's total node width.
func (r Requirement) Check(l Layout) []string {
	var out []string
	if rate := l.IDsPerSecond(); rate < r.IDsPerSecond {
		out = append(out, fmt.Sprintf("%.0f IDs/s per node, %.0f needed", rate, r.IDsPerSecond))
	}
	need := BitsFor(r.nodes()) + r.ShardBits
	if r.Datacenters > 0 {
		n := r.NeedAt(l.Unit)
		need = n.DC + n.Worker + n.Shard
	}
	if l.NodeBits() < need {
		out = append(out, fmt.Sprintf("%d node bits, %d needed", l.NodeBits(), need))
	}
	if ro := l.RunsOut(); r.yearsTo(ro) < r.Years {
		if !ro.After(r.Epoch) {
			out = append(out, fmt.Sprintf("ran out %s", ro.UTC().Format(time.DateOnly)))
		} else {
			out = append(out, fmt.Sprintf("runs out %s, %.1f years after %s", ro.UTC().Format(time.DateOnly),
				r.yearsTo(ro), r.Epoch.UTC().Format(time.DateOnly)))
		}
	}
	switch mb := r.maxBits(); {
	case mb <= 53 && l.TotalBits() > 53:
		out = append(out, fmt.Sprintf("%d bits, above 2^53", l.TotalBits()))
	case mb == 63 && l.TotalBits() == 64:
		if iu := l.Int64Until(); r.yearsTo(iu) < r.Years {
			out = append(out, fmt.Sprintf("sets the sign bit from %s", iu.UTC().Format(time.DateOnly)))
		}
	case mb < 63 && mb > 53 && l.TotalBits() > mb:
		out = append(out, fmt.Sprintf("%d bits, more than %d", l.TotalBits(), mb))
	}
	return out
}

// yearsTo returns the years from r.Epoch to t, in whole seconds, without the ±292-year limit
// of time.Duration.
func (r Requirement) yearsTo(t time.Time) float64 {
	return float64(t.Unix()-r.Epoch.Unix()) / Year.Seconds()
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
	Name  string        // "max-bits", "nodes", "rate", "years", "shard-bits", "datacenters"
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
				better(Relax{Name: "rate", Value: math.Floor(math.Ldexp(1, s) / n.Unit.Seconds()), Unit: n.Unit}, true)
			}
			if s := int(n.Shard) - over; s >= 0 && over > 0 {
				better(Relax{Name: "shard-bits", Value: float64(s), Unit: n.Unit}, true)
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
	for _, name := range []string{"max-bits", "nodes", "rate", "years", "shard-bits"} {
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

// String renders the widths of a Need: "time 42 + node 10 + seq 7".
func (n Need) String() string {
	var ps []string
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
