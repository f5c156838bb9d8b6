package layouts_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
)

// rangeLayouts are the layouts the time-range tests run over: every preset, ULID/UUIDv7's
// time field, and custom units and epochs that do not sit on a second (10 ms, 1 s, 7 ms, 3 µs
// and 1 h ticks).
func rangeLayouts() []layouts.Layout {
	odd := time.Date(2024, 2, 29, 12, 34, 56, 789_012_345, time.UTC)
	ls := append(layouts.Presets(), layouts.Millis48(),
		layouts.Layout{Name: "c10ms", Fields: []layouts.Field{layouts.Time(39), layouts.Node("n", 12), layouts.Seq(12)}, Unit: 10 * time.Millisecond, Epoch: odd},
		layouts.Layout{Name: "c1s", Fields: []layouts.Field{layouts.Time(32), layouts.Seq(2), layouts.Node("n", 4)}, Unit: time.Second, Epoch: odd},
		layouts.Layout{Name: "c7ms", Fields: []layouts.Field{layouts.Time(20), layouts.Seq(3)}, Unit: 7 * time.Millisecond, Epoch: odd},
		layouts.Layout{Name: "c3us", Fields: []layouts.Field{layouts.Time(62), layouts.Seq(2)}, Unit: 3 * time.Microsecond, Epoch: odd},
		layouts.Layout{Name: "c1h", Fields: []layouts.Field{layouts.Time(10), layouts.Node("n", 53), layouts.Seq(1)}, Unit: time.Hour, Epoch: time.Unix(0, 0).UTC()},
	)
	return ls
}

// refTicks computes, independently of the package, the ticks that start in [from, to) and
// lie in l's time field: in whole nanoseconds with big integers, rounding up.
func refTicks(l layouts.Layout, from, to time.Time) (first, last *big.Int) {
	ceil := func(t time.Time) *big.Int {
		ns := new(big.Int).Sub(big.NewInt(t.Unix()), big.NewInt(l.Epoch.Unix()))
		ns.Mul(ns, big.NewInt(1e9))
		ns.Add(ns, big.NewInt(int64(t.Nanosecond()-l.Epoch.Nanosecond())))
		u := big.NewInt(int64(l.Unit))
		ns.Add(ns, new(big.Int).Sub(u, big.NewInt(1)))
		return ns.Div(ns, u) // Euclidean: the floor for a positive divisor
	}
	first = ceil(from)
	if first.Sign() < 0 {
		first.SetInt64(0)
	}
	last = ceil(to)
	last.Sub(last, big.NewInt(1))
	if m := big.NewInt(l.MaxTick()); last.Cmp(m) > 0 {
		last = m
	}
	return first, last
}

// checkTickRange compares TickRange with refTicks, and the IDs TickBounds gives with
// Decompose: lo and hi decode to the first and last tick, the ID below lo to an earlier tick
// and the ID above hi to a later one.
func checkTickRange(t *testing.T, l layouts.Layout, from, to time.Time) {
	t.Helper()
	first, last, err := l.TickRange(from, to)
	rf, rl := refTicks(l, from, to)
	empty := !from.Before(to) || rf.Cmp(rl) > 0
	if empty {
		if !errors.Is(err, layouts.ErrNoTicks) {
			t.Fatalf("%s [%v, %v): ticks %d..%d, err %v; want ErrNoTicks", l.Name, from, to, first, last, err)
		}
		return
	}
	if err != nil || first != rf.Int64() || last != rl.Int64() {
		t.Fatalf("%s [%v, %v): ticks %d..%d, err %v; want %v..%v", l.Name, from, to, first, last, err, rf, rl)
	}
	if start := l.TickTime(first); start.Before(from) || first > 0 && !l.TickTime(first-1).Before(from) {
		t.Fatalf("%s [%v, %v): first tick %d starts at %v", l.Name, from, to, first, start)
	}
	if start := l.TickTime(last); !start.Before(to) || last < l.MaxTick() && l.TickTime(last+1).Before(to) {
		t.Fatalf("%s [%v, %v): last tick %d starts at %v", l.Name, from, to, last, start)
	}
	if l.Name == "unix-ms-48" {
		return
	}
	lo, hi, err := l.TickBounds(first, last)
	if err != nil {
		t.Fatalf("%s ticks %d..%d: %v", l.Name, first, last, err)
	}
	if p := l.Decompose(lo); p.Tick != first || p.Node != 0 || p.Seq != 0 {
		t.Fatalf("%s: lo %d decodes to %+v, want tick %d, node 0, seq 0", l.Name, lo, p, first)
	}
	if p := l.Decompose(hi); p.Tick != last || p.Node != l.Nodes()-1 || p.Seq != 1<<l.SeqBits()-1 {
		t.Fatalf("%s: hi %d decodes to %+v, want tick %d, every node and seq bit set", l.Name, hi, p, last)
	}
	if lo > 0 && l.Decompose(lo-1).Tick != first-1 {
		t.Fatalf("%s: the ID below lo %d has tick %d, want %d", l.Name, lo, l.Decompose(lo-1).Tick, first-1)
	}
	if next := hi + 1; l.Check(next) == nil && next != 0 && l.Decompose(next).Tick != last+1 {
		t.Fatalf("%s: the ID above hi %d has tick %d, want %d", l.Name, hi, l.Decompose(next).Tick, last+1)
	}
}

// TestTickRangeProperties draws seeded random ranges over every preset and custom unit: on tick
// starts, a nanosecond either side of them, inside ticks, and across the epoch and run-out.
func TestTickRangeProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(19, 1))
	for _, l := range rangeLayouts() {
		max := l.MaxTick()
		at := func() time.Time {
			var tick int64
			switch rng.IntN(4) {
			case 0:
				tick = rng.Int64N(4) - 2 // around the epoch
			case 1:
				tick = max - 2 + rng.Int64N(5) // around the run-out
			default:
				tick = rng.Int64N(max)
			}
			t := l.TickTime(tick)
			switch rng.IntN(4) {
			case 0:
				return t.Add(-time.Nanosecond)
			case 1:
				return t.Add(time.Nanosecond)
			case 2:
				return t.Add(time.Duration(rng.Int64N(int64(l.Unit))))
			}
			return t
		}
		for range 2000 {
			from, to := at(), at()
			if rng.IntN(3) == 0 {
				to = from.Add(time.Duration(rng.Int64N(3 * int64(l.Unit))))
			}
			checkTickRange(t, l, from, to)
		}
	}
}

func TestTickRangeEdges(t *testing.T) {
	t.Parallel()
	tw := layouts.Twitter
	ep, ro := tw.Epoch, tw.RunsOut()
	ms := time.Millisecond
	tests := []struct {
		name        string
		l           layouts.Layout
		from, to    time.Time
		first, last int64
		err         error
	}{
		{"first millisecond", tw, ep, ep.Add(ms), 0, 0, nil},
		{"from before the epoch is clamped", tw, ep.Add(-time.Hour), ep.Add(2 * ms), 0, 1, nil},
		{"to after the run-out is clamped", tw, ro.Add(-2 * ms), ro.Add(time.Hour), tw.MaxTick() - 1, tw.MaxTick(), nil},
		{"the whole life", tw, ep.AddDate(-1, 0, 0), ro.AddDate(1, 0, 0), 0, tw.MaxTick(), nil},
		{"from inside a tick moves to the next", tw, ep.Add(ms + 1), ep.Add(3 * ms), 2, 2, nil},
		{"to inside a tick includes that tick's start", tw, ep.Add(ms), ep.Add(2*ms + 1), 1, 2, nil},
		{"10 ms ticks", layouts.Sonyflake, layouts.Sonyflake.Epoch.Add(5 * ms), layouts.Sonyflake.Epoch.Add(35 * ms), 1, 3, nil},
		{"1 s ticks", layouts.Baidu, layouts.Baidu.Epoch.Add(time.Second), layouts.Baidu.Epoch.Add(time.Minute), 1, 59, nil},
		{"ends at the epoch", tw, ep.Add(-time.Hour), ep, 0, 0, layouts.ErrNoTicks},
		{"starts at the run-out", tw, ro, ro.Add(time.Hour), 0, 0, layouts.ErrNoTicks},
		{"inside one tick", tw, ep.Add(ms + 1), ep.Add(2 * ms), 0, 0, layouts.ErrNoTicks},
		{"inside the last tick", tw, ro.Add(-ms + 1), ro.Add(time.Hour), 0, 0, layouts.ErrNoTicks},
		{"from equals to", tw, ep.Add(ms), ep.Add(ms), 0, 0, layouts.ErrNoTicks},
		{"from after to", tw, ep.Add(2 * ms), ep.Add(ms), 0, 0, layouts.ErrNoTicks},
		{"invalid layout", layouts.Layout{Fields: []layouts.Field{layouts.Time(41), layouts.Seq(12)}}, ep, ro, 0, 0, layouts.ErrInvalid},
	}
	for _, tt := range tests {
		first, last, err := tt.l.TickRange(tt.from, tt.to)
		if !errors.Is(err, tt.err) || tt.err == nil && (first != tt.first || last != tt.last) {
			t.Errorf("%s: ticks %d..%d, err %v; want %d..%d, err %v", tt.name, first, last, err, tt.first, tt.last, tt.err)
		}
	}
}

func TestTickBounds(t *testing.T) {
	t.Parallel()
	// Twitter: 22 bits below the time field.
	lo, hi, err := layouts.Twitter.TickBounds(5, 7)
	if err != nil || lo != 5<<22 || hi != 7<<22|(1<<22-1) {
		t.Errorf("twitter ticks 5..7: %d, %d, %v", lo, hi, err)
	}
	// Sonyflake: sequence and machine below the time field.
	lo, hi, err = layouts.Sonyflake.TickBounds(0, 0)
	if err != nil || lo != 0 || hi != 1<<24-1 {
		t.Errorf("sonyflake tick 0: %d, %d, %v", lo, hi, err)
	}
	// Discord uses all 64 bits: hi of the last tick is the largest uint64.
	if _, hi, err := layouts.Discord.TickBounds(0, layouts.Discord.MaxTick()); err != nil || hi != math.MaxUint64 {
		t.Errorf("discord whole life: hi %d, %v", hi, err)
	}
	for _, tt := range []struct {
		l           layouts.Layout
		first, last int64
		err         error
	}{
		{layouts.Twitter, -1, 0, layouts.ErrRange},
		{layouts.Twitter, 0, layouts.Twitter.MaxTick() + 1, layouts.ErrRange},
		{layouts.Twitter, 2, 1, layouts.ErrRange},
		{layouts.Layout{Name: "region-first", Fields: []layouts.Field{layouts.Node("region", 4), layouts.Time(41), layouts.Seq(12)}, Unit: time.Millisecond}, 0, 1, layouts.ErrUnordered},
		{layouts.Layout{Fields: []layouts.Field{layouts.Time(41)}, Unit: time.Millisecond}, 0, 1, layouts.ErrInvalid},
	} {
		if _, _, err := tt.l.TickBounds(tt.first, tt.last); !errors.Is(err, tt.err) {
			t.Errorf("%s ticks %d..%d: err %v, want %v", tt.l.Bits(), tt.first, tt.last, err, tt.err)
		}
	}
	if err := layouts.Twitter.TimeOrder(); err != nil {
		t.Errorf("twitter: %v", err)
	}
}

func TestULIDAndUUIDv7Bounds(t *testing.T) {
	t.Parallel()
	const ms = 0x0123456789ab
	lo, hi, err := layouts.ULIDBounds(ms, ms+1)
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint64(lo[:8]) != ms<<16 || binary.BigEndian.Uint64(lo[8:]) != 0 ||
		binary.BigEndian.Uint64(hi[:8]) != (ms+1)<<16|0xffff || binary.BigEndian.Uint64(hi[8:]) != math.MaxUint64 {
		t.Errorf("ULID bounds %x %x", lo, hi)
	}
	lo, hi, err = layouts.UUIDv7Bounds(ms, ms)
	if err != nil {
		t.Fatal(err)
	}
	if lo != [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0} ||
		hi != [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0x7f, 0xff, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} {
		t.Errorf("UUIDv7 bounds %x %x", lo, hi)
	}
	for _, r := range [][2]int64{{-1, 0}, {0, 1 << 48}, {5, 4}} {
		if _, _, err := layouts.ULIDBounds(r[0], r[1]); !errors.Is(err, layouts.ErrRange) {
			t.Errorf("ULID %v: %v", r, err)
		}
		if _, _, err := layouts.UUIDv7Bounds(r[0], r[1]); !errors.Is(err, layouts.ErrRange) {
			t.Errorf("UUIDv7 %v: %v", r, err)
		}
	}
}

// FuzzTickRange feeds TickRange arbitrary instants over every test layout: it must not panic,
// and must agree with the reference arithmetic.
func FuzzTickRange(f *testing.F) {
	tw := layouts.Twitter
	f.Add(uint8(0), tw.Epoch.Unix(), int64(tw.Epoch.Nanosecond()), tw.RunsOut().Unix(), int64(0))
	f.Add(uint8(3), int64(-1<<40), int64(-1), int64(1<<40), int64(1e9+5))
	f.Add(uint8(7), int64(0), int64(1), int64(0), int64(2))
	f.Fuzz(func(t *testing.T, which uint8, fromSec, fromNs, toSec, toNs int64) {
		ls := rangeLayouts()
		l := ls[int(which)%len(ls)]
		// Seconds within ±2^50 (35 million years) keep time.Time's arithmetic exact.
		from := time.Unix(fromSec%(1<<50), fromNs)
		to := time.Unix(toSec%(1<<50), toNs)
		checkTickRange(t, l, from, to)
	})
}
