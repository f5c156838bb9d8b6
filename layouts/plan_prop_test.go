package layouts_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
)

// exactYears returns the float64 nearest to the years from a to b, and its neighbours below
// and above: the three requirements that sit on the edge of a life ending at b.
func exactYears(a, b time.Time) [3]float64 {
	ns := new(big.Int).Sub(big.NewInt(b.Unix()), big.NewInt(a.Unix()))
	ns.Mul(ns, big.NewInt(int64(time.Second)))
	ns.Add(ns, big.NewInt(int64(b.Nanosecond()-a.Nanosecond())))
	y, _ := new(big.Rat).SetFrac(ns, big.NewInt(int64(layouts.Year))).Float64()
	return [3]float64{math.Nextafter(y, 0), y, math.Nextafter(y, math.Inf(1))}
}

// edgeRate returns a rate on the edge of 2^seq IDs per tick of unit, or a neighbour of it.
func edgeRate(rng *rand.Rand, seq uint, unit time.Duration) float64 {
	x := new(big.Rat).SetFrac(new(big.Int).Lsh(big.NewInt(int64(time.Second)), seq), big.NewInt(int64(unit)))
	f, _ := x.Float64()
	switch rng.IntN(3) {
	case 0:
		return math.Nextafter(f, 0)
	case 1:
		return math.Nextafter(f, math.Inf(1))
	}
	return f
}

// randomRequirement draws a requirement, most of them on an exact edge of a time or sequence
// field (the life of 2^b ticks from the epoch or from a preset's epoch, the rate of 2^s IDs
// per tick), where truncated arithmetic contradicts itself.
func randomRequirement(rng *rand.Rand) layouts.Requirement {
	presets := layouts.Presets()
	units := []time.Duration{0, time.Millisecond, 10 * time.Millisecond, time.Second, time.Nanosecond, 7 * time.Millisecond, 3 * time.Microsecond, time.Hour}
	var r layouts.Requirement
	r.Unit = units[rng.IntN(len(units))]
	if rng.IntN(4) == 0 {
		r.Unit = time.Duration(1 + rng.Int64N(int64(time.Hour)))
	}
	switch rng.IntN(3) {
	case 0:
		r.Epoch = planEpoch
	case 1:
		r.Epoch = presets[rng.IntN(len(presets))].Epoch
	default:
		r.Epoch = time.Unix(1e9+rng.Int64N(1e9), rng.Int64N(1e9)).UTC()
	}
	unit := r.Unit
	if unit == 0 {
		unit = layouts.DefaultPlanUnits[rng.IntN(len(layouts.DefaultPlanUnits))]
	}
	switch rng.IntN(4) {
	case 0: // a life from anywhere
		r.Years = math.Exp(rng.Float64()*20 - 8)
	case 1: // a preset's run-out, from the requirement's epoch
		p := presets[rng.IntN(len(presets))]
		if rng.IntN(2) == 0 {
			r.Epoch = p.Epoch
		}
		r.Years = exactYears(r.Epoch, p.RunsOut())[rng.IntN(3)]
	default: // 2^b ticks
		b := uint(1 + rng.IntN(62))
		l := layouts.Layout{Fields: []layouts.Field{layouts.Time(b), layouts.Seq(1)}, Unit: unit, Epoch: r.Epoch}
		r.Years = exactYears(r.Epoch, l.RunsOut())[rng.IntN(3)]
	}
	if r.Years <= 0 {
		r.Years = math.SmallestNonzeroFloat64
	}
	switch rng.IntN(3) {
	case 0:
		r.IDsPerSecond = math.Floor(math.Exp(rng.Float64() * 16))
	case 1:
		r.IDsPerSecond = edgeRate(rng, uint(rng.IntN(24)), unit)
	}
	r.Nodes = uint64(1) << rng.IntN(20)
	if rng.IntN(2) == 0 {
		r.Nodes += uint64(rng.IntN(3)) - 1
	}
	if rng.IntN(4) == 0 && r.Nodes >= 4 {
		r.Datacenters = min(r.Nodes, uint64(1+rng.IntN(8)))
	}
	if rng.IntN(4) == 0 {
		r.ShardBits = uint(rng.IntN(8))
	}
	if rng.IntN(4) == 0 {
		r.HashBits = uint(1 + rng.IntN(layouts.MaxShardBits))
	}
	r.MaxBits = []uint{0, 53, 63, 64, 40, 58}[rng.IntN(6)]
	return r
}

// timeShort and rateShort pick Check's phrases about the time field and the rate.
func timeShort(short []string) bool {
	for _, s := range short {
		if strings.HasPrefix(s, "runs out") || strings.HasPrefix(s, "ran out") {
			return true
		}
	}
	return false
}

func rateShort(short []string) bool {
	for _, s := range short {
		if strings.Contains(s, "IDs/s per node") {
			return true
		}
	}
	return false
}

// TestPlanProperties draws many thousands of seeded random requirements, most on an exact
// edge, and checks that Plan agrees with Requirement.Check (issue 17 item 12): every layout
// Plan returns passes Check with headroom of at least 1; the time and sequence widths NeedAt
// asks for are the least that Check accepts, for designed layouts and for every preset alike;
// and each relaxation of a refusal does fit.
func TestPlanProperties(t *testing.T) {
	t.Parallel()
	n := 10000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(17, 12))
	plans, failed := 0, 0
	for range n {
		r := randomRequirement(rng)
		bad := planAgrees(t, r)
		plans++
		if bad {
			failed++
			if failed > 20 {
				t.Fatalf("stopping after %d disagreements in %d requirements", failed, plans)
			}
		}
	}
	t.Logf("%d requirements, %d disagreements", plans, failed)
}

// planAgrees reports through t every way Plan, NeedAt and Check disagree about r, and
// returns whether there was one.
func planAgrees(t *testing.T, r layouts.Requirement) (bad bool) {
	t.Helper()
	errorf := func(format string, args ...any) {
		t.Helper()
		bad = true
		t.Errorf("%+v: "+format, append([]any{r}, args...)...)
	}
	mb := r.MaxBits
	if mb == 0 {
		mb = 63
	}
	fits, err := layouts.Plan(r)
	var nf *layouts.NoFitError
	switch {
	case errors.As(err, &nf):
		for _, x := range nf.Relaxations() {
			rr := r
			rr.Unit = x.Unit
			switch x.Name {
			case "max-bits":
				rr.MaxBits = uint(x.Value)
			case "nodes":
				rr.Nodes = uint64(x.Value)
				if rr.Datacenters > rr.Nodes {
					continue
				}
			case "rate":
				rr.IDsPerSecond = x.Value
			case "years":
				rr.Years = x.Value
			case "shard-bits":
				rr.ShardBits = uint(x.Value)
			case "hash-bits":
				rr.HashBits = uint(x.Value)
			}
			if _, err := layouts.Plan(rr); err != nil {
				errorf("relaxing %s to %v at %v still fails: %v", x.Name, x.Value, x.Unit, err)
			}
		}
	case err != nil:
		errorf("%v", err)
	}
	for _, f := range fits {
		l := f.Layout
		if err := l.Validate(); err != nil {
			errorf("%v", err)
		}
		if l.TotalBits() > mb {
			errorf("%s has %d bits, more than %d", l.Bits(), l.TotalBits(), mb)
		}
		if short := r.Check(l); len(short) > 0 {
			errorf("planned %s %v falls short: %v", l.Bits(), l.Unit, short)
		}
		if f.Rate < 1 || f.Fleet < 1 || f.Life < r.Years {
			errorf("planned %s %v has headroom below 1: rate %v fleet %v life %v", l.Bits(), l.Unit, f.Rate, f.Fleet, f.Life)
		}
	}
	// The widths NeedAt asks for are the least Check accepts: one bit fewer falls short.
	units := []time.Duration{r.Unit}
	if r.Unit == 0 {
		units = layouts.DefaultPlanUnits
	}
	for _, u := range units {
		need := r.NeedAt(u)
		for _, tb := range []uint{need.Time - 1, need.Time} {
			if tb < 1 || tb > 62 {
				continue
			}
			l := layouts.Layout{Fields: []layouts.Field{layouts.Time(tb), layouts.Seq(1)}, Unit: u, Epoch: r.Epoch}
			if got, want := timeShort(r.Check(l)), tb < need.Time; got != want {
				errorf("at %v the need is %d time bits, yet Check of %d bits says short %v: %v", u, need.Time, tb, got, r.Check(l))
			}
		}
		for _, sb := range []uint{need.Seq - 1, need.Seq} {
			if sb < 1 || sb > 62 {
				continue
			}
			l := layouts.Layout{Fields: []layouts.Field{layouts.Time(1), layouts.Seq(sb)}, Unit: u, Epoch: r.Epoch}
			if got, want := rateShort(r.Check(l)), sb < need.Seq; got != want {
				errorf("at %v the need is %d sequence bits, yet Check of %d bits says short %v: %v", u, need.Seq, sb, got, r.Check(l))
			}
		}
	}
	// The presets against the same need, where the requirement counts from their epoch.
	for _, p := range layouts.Presets() {
		if !p.Epoch.Equal(r.Epoch) {
			continue
		}
		need := r.NeedAt(p.Unit)
		short := r.Check(p)
		if got, want := timeShort(short), need.Time > p.TimeBits(); got != want {
			errorf("%s: the need at %v is %d time bits against its %d, yet Check says short %v: %v", p.Name, p.Unit, need.Time, p.TimeBits(), got, short)
		}
		if got, want := rateShort(short), need.Seq > p.SeqBits(); got != want {
			errorf("%s: the need at %v is %d sequence bits against its %d, yet Check says short %v: %v", p.Name, p.Unit, need.Seq, p.SeqBits(), got, short)
		}
	}
	return bad
}

// TestPlanExactEdges is the regression test of issue 17 item 12: a life of exactly 2^41 ms
// from Twitter's epoch (and 2^39 × 10 ms from Sonyflake's) is where the planner asked for 42
// (40) bits yet listed the preset as fitting, or called the preset short while designing
// layouts of its width. Below the edge the preset's width is needed and fits; above it one
// more bit is needed and the preset falls short; on the float64 nearest the edge both agree.
func TestPlanExactEdges(t *testing.T) {
	t.Parallel()
	for _, p := range []layouts.Layout{layouts.Twitter, layouts.Sonyflake} {
		for i, y := range exactYears(p.Epoch, p.RunsOut()) {
			r := layouts.Requirement{IDsPerSecond: 1, Years: y, Unit: p.Unit, Epoch: p.Epoch, MaxBits: 64}
			need := r.NeedAt(p.Unit).Time
			short := r.Check(p)
			switch {
			case i == 0 && (need != p.TimeBits() || len(short) > 0):
				t.Errorf("%s, %v years (just below its life): need %d time bits, short %v; want %d and none", p.Name, y, need, short, p.TimeBits())
			case i == 2 && (need != p.TimeBits()+1 || !timeShort(short)):
				t.Errorf("%s, %v years (just above its life): need %d time bits, short %v; want %d and a run-out", p.Name, y, need, short, p.TimeBits()+1)
			case (need > p.TimeBits()) != timeShort(short):
				t.Errorf("%s, %v years (its life, rounded): need %d time bits, yet short %v", p.Name, y, need, short)
			}
			planAgrees(t, r)
			// The same requirement counted from a day later needs the same field to last a
			// day longer: the preset is short, and the designs (on that epoch) still pass.
			r.Epoch = r.Epoch.Add(24 * time.Hour)
			if !timeShort(r.Check(p)) {
				t.Errorf("%s, %v years from a day after its epoch: not short", p.Name, y)
			}
			planAgrees(t, r)
		}
	}
}

// FuzzPlan feeds Plan arbitrary requirements: it must never panic, must refuse an invalid
// one with ErrInvalid, and must otherwise agree with Check (see planAgrees).
func FuzzPlan(f *testing.F) {
	for _, p := range []layouts.Layout{layouts.Twitter, layouts.Sonyflake} {
		for _, y := range exactYears(p.Epoch, p.RunsOut()) {
			f.Add(1.0, y, uint64(1), uint64(0), uint8(0), int64(p.Unit), p.Epoch.Unix(), int64(p.Epoch.Nanosecond()), uint8(64), uint8(0))
		}
	}
	f.Add(100000.0, 70.0, uint64(1024), uint64(0), uint8(0), int64(time.Millisecond), planEpoch.Unix(), int64(0), uint8(63), uint8(0))
	f.Add(5000.0, 30.0, uint64(256), uint64(4), uint8(6), int64(0), planEpoch.Unix(), int64(0), uint8(53), uint8(0))
	f.Add(4096000.0, 1e5, uint64(1), uint64(0), uint8(0), int64(time.Nanosecond), int64(0), int64(1), uint8(0), uint8(0))
	f.Add(1.0, 1.0, uint64(1), uint64(0), uint8(0), int64(2*time.Hour), planEpoch.Unix(), int64(0), uint8(63), uint8(0))
	f.Add(math.NaN(), math.Inf(1), uint64(0), uint64(3), uint8(70), int64(-1), int64(-1e12), int64(-5), uint8(99), uint8(0))
	f.Add(50000.0, 50.0, uint64(64), uint64(0), uint8(0), int64(time.Millisecond), planEpoch.Unix(), int64(0), uint8(63), uint8(4))
	f.Add(5000.0, 30.0, uint64(256), uint64(4), uint8(6), int64(0), planEpoch.Unix(), int64(0), uint8(64), uint8(15))
	f.Fuzz(func(t *testing.T, rate, years float64, nodes, dcs uint64, shard uint8, unit, sec, nsec int64, maxBits, hash uint8) {
		r := layouts.Requirement{IDsPerSecond: rate, Years: years, Nodes: nodes, Datacenters: dcs, ShardBits: uint(shard), HashBits: uint(hash % 17),
			Unit: time.Duration(unit), Epoch: time.Unix(sec%(1<<40), nsec), MaxBits: uint(maxBits)}
		if _, err := layouts.Plan(r); errors.Is(err, layouts.ErrInvalid) {
			return
		}
		planAgrees(t, r)
	})
}
