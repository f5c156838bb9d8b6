package schemes_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// mustSnowflake starts a generator or fails the test.
func mustSnowflake(t testing.TB, s schemes.SnowflakeSettings) *schemes.Snowflake {
	t.Helper()
	g, err := schemes.NewSnowflake(s)
	if err != nil {
		t.Fatalf("NewSnowflake: %v", err)
	}
	return g
}

func mustNext(t testing.TB, g *schemes.Snowflake) uint64 {
	t.Helper()
	id, err := g.Next()
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return id
}

// custom returns a layout with the given fields, a 1 ms unit and epoch e.
func custom(e time.Time, unit time.Duration, fs ...layouts.Field) layouts.Layout {
	return layouts.Layout{Name: "test", Fields: fs, Unit: unit, Epoch: e}
}

// seq22 is a layout whose cap (2^22 IDs per ms) is out of reach, so tests and benchmarks see
// the generator's own cost rather than the clock's.
var seq22 = custom(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Millisecond,
	layouts.Time(41), layouts.Seq(22))

func TestNewSnowflakeErrors(t *testing.T) {
	clk := newFakeClock(t0)
	tests := []struct {
		name string
		s    schemes.SnowflakeSettings
		want error
		msg  string
	}{
		{"no seq field", schemes.SnowflakeSettings{Layout: custom(t0, time.Millisecond, layouts.Time(41))}, schemes.ErrSettings, "sequence"},
		{"fields over 64 bits", schemes.SnowflakeSettings{Layout: custom(t0, time.Millisecond, layouts.Time(41), layouts.Node("n", 12), layouts.Seq(12))}, schemes.ErrSettings, "65 bits"},
		{"zero unit", schemes.SnowflakeSettings{Layout: custom(t0, 0, layouts.Time(41), layouts.Seq(12))}, schemes.ErrSettings, "unit"},
		{"node out of range", schemes.SnowflakeSettings{Node: 1024}, schemes.ErrSettings, "node 1024"},
		{"node without node bits", schemes.SnowflakeSettings{Layout: layouts.Mastodon, Node: 1}, schemes.ErrSettings, "node 1"},
		{"negative lookahead", schemes.SnowflakeSettings{Lookahead: -1}, schemes.ErrSettings, "lookahead -1"},
		{"lookahead over the bound", schemes.SnowflakeSettings{Lookahead: schemes.MaxLookahead + 1}, schemes.ErrSettings, "lookahead 1048577 outside 0 to 1048576"},
		{"lookahead overflowing the tick", schemes.SnowflakeSettings{Lookahead: math.MaxInt, Clock: clk}, schemes.ErrSettings, "lookahead"},
		{"mark window over the bound", schemes.SnowflakeSettings{Marks: &memMarks{}, MarkWindow: 2 * time.Hour}, schemes.ErrSettings, "mark window 2h0m0s is longer than 1h0m0s"},
		{"unit over an hour", schemes.SnowflakeSettings{Layout: custom(t0.AddDate(-1, 0, 0), 2*time.Hour, layouts.Time(30), layouts.Seq(12))}, schemes.ErrSettings, "unit 2h0m0s is longer than 1h0m0s"},
		{"unit of a century", schemes.SnowflakeSettings{Layout: custom(t0.AddDate(-1, 0, 0), 1000000*time.Hour, layouts.Time(30), layouts.Seq(12))}, schemes.ErrSettings, "longer than 1h0m0s"},
		{"seq above time", schemes.SnowflakeSettings{Layout: custom(t0, time.Millisecond, layouts.Seq(2), layouts.Time(41), layouts.Node("w", 10))}, schemes.ErrSettings, "sits above the time field"},
		{"clock before epoch", schemes.SnowflakeSettings{Layout: custom(t0.Add(time.Hour), time.Millisecond, layouts.Time(41), layouts.Seq(12)), Clock: clk}, schemes.ErrTimeOverflow, "before the epoch"},
		{"time field used up", schemes.SnowflakeSettings{Layout: custom(t0.Add(-time.Second), time.Millisecond, layouts.Time(8), layouts.Seq(12)), Clock: clk}, schemes.ErrTimeOverflow, "ran out"},
		{"epoch over 146 years back", schemes.SnowflakeSettings{Layout: custom(t0.AddDate(-300, 0, 0), time.Millisecond, layouts.Time(46), layouts.Node("n", 6), layouts.Seq(12)), Clock: clk}, schemes.ErrSettings, "1725-03-01"},
		{"baidu ran out in 2024", schemes.SnowflakeSettings{Layout: layouts.Baidu}, schemes.ErrTimeOverflow, "baidu"},
		{"mark store fails", schemes.SnowflakeSettings{Marks: &memMarks{loadErr: errors.New("disk on fire")}}, schemes.ErrMark, "disk on fire"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := schemes.NewSnowflake(tt.s)
			if !errors.Is(err, tt.want) {
				t.Fatalf("NewSnowflake = %v, %v; want error wrapping %v", g, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
}

func TestSnowflakeZeroSettingsIsTwitter(t *testing.T) {
	g := mustSnowflake(t, schemes.SnowflakeSettings{})
	if l := g.Layout(); l.Name != "twitter" || l.Bits() != "41/5+5/12" {
		t.Errorf("zero settings give layout %v, want twitter", l)
	}
	if g.Node() != 0 {
		t.Errorf("Node() = %d, want 0", g.Node())
	}
	before := time.Now()
	id := mustNext(t, g)
	after := time.Now()
	p := layouts.Twitter.Decompose(id)
	if p.Time.Before(before.Add(-2*time.Millisecond)) || p.Time.After(after.Add(time.Millisecond)) {
		t.Errorf("ID time %v not within [%v, %v]", p.Time, before, after)
	}
}

// TestSnowflakePresets runs every usable preset on a fake clock that moves one tick every 1000
// IDs: fields come back as set, IDs strictly increase.
func TestSnowflakePresets(t *testing.T) {
	for _, l := range layouts.Presets() {
		if l.Name == "baidu" {
			continue // ran out of time in 2024; TestNewSnowflakeErrors covers it
		}
		t.Run("layout="+l.Name, func(t *testing.T) {
			clk := newFakeClock(t0)
			node := l.Nodes() - 1 // every node bit set, to catch fields bleeding into each other
			if node > 1<<20 {
				node = 12345
			}
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Node: node, Clock: clk})
			var prev uint64
			for i := range 5000 {
				if i%1000 == 999 {
					clk.Step(l.Unit)
				}
				id := mustNext(t, g)
				if id <= prev {
					t.Fatalf("ID %d: %d not above %d", i, id, prev)
				}
				prev = id
				if err := l.Check(id); err != nil {
					t.Fatal(err)
				}
				p := l.Decompose(id)
				if p.Node != node {
					t.Fatalf("ID %d has node %d, want %d", id, p.Node, node)
				}
				if now := clk.Now(); p.Time.After(now) || p.Time.Before(now.Add(-l.Unit)) {
					t.Fatalf("ID %d has time %v, clock reads %v", id, p.Time, now)
				}
			}
		})
	}
}

// TestSnowflakeSeqAboveNode checks the core on a layout whose sequence sits above the node
// (Sonyflake's order): IDs still increase and keep the node.
func TestSnowflakeSeqAboveNode(t *testing.T) {
	clk := newFakeClock(t0)
	l := custom(t0.Add(-time.Hour), time.Millisecond, layouts.Time(40), layouts.Seq(4), layouts.Node("machine", 6))
	g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Node: 63, Clock: clk})
	var prev uint64
	for range 100 { // 16 per tick: crosses several ticks through Sleep
		id := mustNext(t, g)
		if id <= prev || l.Decompose(id).Node != 63 {
			t.Fatalf("ID %d after %d (node %d)", id, prev, l.Decompose(id).Node)
		}
		prev = id
	}
	buf := make([]uint64, 40)
	if err := g.NextN(buf); err != nil {
		t.Fatal(err)
	}
	for _, id := range buf {
		if id <= prev || l.Decompose(id).Node != 63 {
			t.Fatalf("batch ID %d after %d (node %d)", id, prev, l.Decompose(id).Node)
		}
		prev = id
	}
}

// TestSnowflakeFirstIDWaits: a generator pretends the tick it starts in is used up, so its first
// ID is from the next tick.
func TestSnowflakeFirstIDWaits(t *testing.T) {
	clk := newFakeClock(t0.Add(300 * time.Microsecond))
	g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk})
	id := mustNext(t, g)
	if got, want := layouts.Twitter.Decompose(id).Time, t0.Add(time.Millisecond); !got.Equal(want) {
		t.Errorf("first ID at %v, want %v", got, want)
	}
	if now := clk.Now(); !now.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("clock at %v after the first ID, want it slept to exactly %v", now, t0.Add(time.Millisecond))
	}
}

// TestSnowflakeExhaustion: once a tick's 4096 sequence numbers are used, Next waits for the
// next tick, never running ahead of the clock without a lookahead.
func TestSnowflakeExhaustion(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk})
	l := layouts.Twitter
	first := l.Decompose(mustNext(t, g))
	prev := first
	for i := 1; i < 3*4096; i++ {
		p := l.Decompose(mustNext(t, g))
		want := prev
		want.Seq++
		if want.Seq == 4096 {
			want.Tick, want.Seq = want.Tick+1, 0
		}
		if p.Tick != want.Tick || p.Seq != want.Seq {
			t.Fatalf("ID %d: tick %d seq %d, want tick %d seq %d", i, p.Tick, p.Seq, want.Tick, want.Seq)
		}
		if p.Time.After(clk.Now()) {
			t.Fatalf("ID %d at %v, ahead of the clock %v without lookahead", i, p.Time, clk.Now())
		}
		prev = p
	}
	if got := prev.Tick - first.Tick; got != 2 {
		t.Errorf("3×4096 IDs spanned %d ticks, want 2 after the first", got)
	}
	if slept, bad := clk.Stats(); bad != 0 || slept != 3*time.Millisecond {
		t.Errorf("slept %v with %d non-positive sleeps; want 3ms (start + 2 exhaustions), 0", slept, bad)
	}
}

// TestSnowflakeLookahead: with a lookahead of n ticks a burst runs up to n ticks ahead of the
// clock, then waits; it never runs further.
func TestSnowflakeLookahead(t *testing.T) {
	for _, n := range []int{1, 3, 10} {
		t.Run(fmt.Sprintf("lookahead=%d", n), func(t *testing.T) {
			clk := newFakeClock(t0)
			l := layouts.Twitter
			g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Lookahead: n})
			// A new generator starts n ticks ahead (its predecessor may have used them);
			// let the clock catch up so the burst starts in sync.
			prev := mustNext(t, g)
			if ahead := l.Decompose(prev).Tick - l.Tick(clk.Now()); ahead < 0 || ahead > int64(n) {
				t.Fatalf("first ID %d ticks ahead, want 0..%d", ahead, n)
			}
			clk.Step(time.Duration(n+2) * time.Millisecond)
			slept0, _ := clk.Stats()
			burst := 4096 * (n + 1)
			for i := range burst + 4096 {
				id := mustNext(t, g)
				if id <= prev {
					t.Fatalf("ID %d: %d not above %d", i, id, prev)
				}
				prev = id
				ahead := l.Decompose(id).Tick - l.Tick(clk.Now())
				if ahead > int64(n) {
					t.Fatalf("ID %d is %d ticks ahead of the clock, lookahead %d", i, ahead, n)
				}
				slept, _ := clk.Stats()
				if i < burst && slept != slept0 {
					t.Fatalf("ID %d of a %d-ID burst waited %v; lookahead %d should cover it", i, burst, slept-slept0, n)
				}
			}
			if slept, bad := clk.Stats(); slept == slept0 || bad != 0 {
				t.Errorf("a burst beyond the lookahead never waited (slept %v, %d bad sleeps)", slept-slept0, bad)
			}
		})
	}
}

// TestSnowflakeClockSteps steps the clock back by 1 ms, 50 ms and 2 s under each drift policy:
// no duplicates, nothing going backwards, and an error naming the drift where the policy
// refuses.
func TestSnowflakeClockSteps(t *testing.T) {
	type outcome int
	const (
		wait outcome = iota
		cont
		fail
	)
	policies := []struct {
		name   string
		p      schemes.DriftPolicy
		result map[time.Duration]outcome
	}{
		{"default", schemes.DriftPolicy{}, map[time.Duration]outcome{time.Millisecond: wait, 50 * time.Millisecond: cont, 2 * time.Second: fail}},
		{"always-wait", schemes.DriftPolicy{MaxWait: time.Hour, MaxContinue: -1}, map[time.Duration]outcome{time.Millisecond: wait, 50 * time.Millisecond: wait, 2 * time.Second: wait}},
		{"always-continue", schemes.DriftPolicy{MaxWait: -1, MaxContinue: time.Hour}, map[time.Duration]outcome{time.Millisecond: cont, 50 * time.Millisecond: cont, 2 * time.Second: cont}},
		{"off", schemes.DriftPolicy{MaxWait: -1, MaxContinue: -1}, map[time.Duration]outcome{time.Millisecond: fail, 50 * time.Millisecond: fail, 2 * time.Second: fail}},
	}
	l := layouts.Twitter
	for _, pol := range policies {
		for _, step := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 2 * time.Second} {
			t.Run(fmt.Sprintf("policy=%s/step=%v", pol.name, step), func(t *testing.T) {
				clk := newFakeClock(t0)
				g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Drift: pol.p})
				seen := map[uint64]bool{}
				var prev uint64
				issue := func(n int) error {
					for i := range n {
						id, err := g.Next()
						if err != nil {
							return err
						}
						if seen[id] || id <= prev {
							t.Fatalf("ID %d after the step: %d (previous %d, duplicate %v)", i, id, prev, seen[id])
						}
						seen[id], prev = true, id
						maxCont := pol.p.MaxContinue
						if maxCont == 0 {
							maxCont = schemes.DefaultMaxContinue
						}
						if ahead := l.Decompose(id).Time.Sub(clk.Now()); maxCont > 0 && ahead > maxCont+l.Unit {
							t.Fatalf("ID %d runs %v ahead of the clock, policy continues up to %v", i, ahead, maxCont)
						}
					}
					return nil
				}
				if err := issue(100); err != nil {
					t.Fatal(err)
				}
				clk.Step(-step) // the clock was on a tick boundary, so the drift is exactly step
				slept0, _ := clk.Stats()
				err := issue(5000) // more than one tick's sequence, to exhaust it while behind
				slept, bad := clk.Stats()
				if bad != 0 {
					t.Errorf("%d non-positive sleeps", bad)
				}
				switch pol.result[step] {
				case wait:
					if err != nil {
						t.Fatalf("policy %s, step %v: %v; want it to wait", pol.name, step, err)
					}
					if slept-slept0 < step {
						t.Errorf("slept %v, want at least the step %v", slept-slept0, step)
					}
				case cont:
					if err != nil {
						t.Fatalf("policy %s, step %v: %v; want it to continue", pol.name, step, err)
					}
					if slept-slept0 >= step {
						t.Errorf("slept %v for a %v step; want it to continue, not wait", slept-slept0, step)
					}
				case fail:
					if !errors.Is(err, schemes.ErrClockBackward) {
						t.Fatalf("policy %s, step %v: err = %v, want ErrClockBackward", pol.name, step, err)
					}
					if want := step.String() + " behind"; !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not name the drift (%q)", err, want)
					}
					// Once the clock is back, the generator carries on above its last ID.
					clk.Step(step)
					if err := issue(10); err != nil {
						t.Fatalf("after the clock came back: %v", err)
					}
				}
			})
		}
	}
}

// TestSnowflakeTimeOverflow: when the time field is used up, Next and NextN return
// ErrTimeOverflow and never wrap, whether the clock passes the end or the sequence of the last
// tick runs out. The 64-bit cases have no node field, so time and sequence fill the word.
func TestSnowflakeTimeOverflow(t *testing.T) {
	tests := []struct {
		name  string
		l     func() layouts.Layout
		clock time.Duration // clock step after the first ID; 0 lets exhaustion move it
	}{
		{"time6+seq8/exhaust", func() layouts.Layout {
			return custom(t0.Add(-60*time.Millisecond), time.Millisecond, layouts.Time(6), layouts.Seq(8))
		}, 0},
		{"time6+node4+seq8/clock", func() layouts.Layout {
			return custom(t0.Add(-60*time.Millisecond), time.Millisecond, layouts.Time(6), layouts.Node("n", 4), layouts.Seq(8))
		}, time.Hour},
		{"time60+seq4/exhaust", func() layouts.Layout { // all 64 bits
			return custom(t0.Add(-(1<<60-3)*time.Nanosecond), time.Nanosecond, layouts.Time(60), layouts.Seq(4))
		}, 0},
		{"time8+seq56/clock", func() layouts.Layout { // all 64 bits
			return custom(t0.Add(-250*time.Millisecond), time.Millisecond, layouts.Time(8), layouts.Seq(56))
		}, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%v", tt.name, batch), func(t *testing.T) {
				l := tt.l()
				clk := newFakeClock(t0)
				g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Clock: clk})
				next := func() ([]uint64, error) {
					if !batch {
						id, err := g.Next()
						return []uint64{id}, err
					}
					buf := make([]uint64, 7)
					err := g.NextN(buf)
					return buf, err
				}
				var ids []uint64
				var err error
				for i := 0; i < 10000; i++ {
					if i == 1 && tt.clock != 0 {
						clk.Step(tt.clock)
					}
					var got []uint64
					got, err = next()
					if err != nil {
						break
					}
					ids = append(ids, got...)
				}
				if !errors.Is(err, schemes.ErrTimeOverflow) {
					t.Fatalf("after %d IDs: err = %v, want ErrTimeOverflow", len(ids), err)
				}
				for i, id := range ids {
					if tick := l.Decompose(id).Tick; tick > l.MaxTick() {
						t.Fatalf("ID %d has tick %d beyond %d", id, tick, l.MaxTick())
					}
					if i > 0 && id <= ids[i-1] {
						t.Fatalf("ID %d (%d) not above %d: wrapped around", i, id, ids[i-1])
					}
				}
				clk.Step(time.Hour)
				if got, err := next(); !errors.Is(err, schemes.ErrTimeOverflow) {
					t.Errorf("later call = %v, %v; want ErrTimeOverflow again", got, err)
				}
			})
		}
	}
}

// TestSnowflakeRestartSameTick: a generator restarted with the same node on the same clock
// instant (inside the tick its predecessor last issued in) issues none of its IDs.
func TestSnowflakeRestartSameTick(t *testing.T) {
	for _, look := range []int{0, 2} {
		t.Run(fmt.Sprintf("lookahead=%d/clock=fake", look), func(t *testing.T) {
			clk := newFakeClock(t0.Add(400 * time.Microsecond))
			s := schemes.SnowflakeSettings{Clock: clk, Node: 7, Lookahead: look}
			g1 := mustSnowflake(t, s)
			seen := map[uint64]bool{}
			for range 5000 { // past one tick's sequence, so g1 used its lookahead
				seen[mustNext(t, g1)] = true
			}
			g2 := mustSnowflake(t, s) // same instant as g1's last ID
			for i := range 5000 {
				if id := mustNext(t, g2); seen[id] {
					t.Fatalf("restarted generator reissued ID %d (its %dth)", id, i)
				}
			}
		})
	}
	t.Run("clock=system", func(t *testing.T) {
		seen := map[uint64]bool{}
		for range 5 {
			g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22})
			for range 1000 {
				id := mustNext(t, g)
				if seen[id] {
					t.Fatalf("restarted generator reissued ID %d", id)
				}
				seen[id] = true
			}
		}
	})
}

func TestSnowflakeNextN(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustSnowflake(t, schemes.SnowflakeSettings{Clock: clk, Node: 5})
	l := layouts.Twitter
	prev := mustNext(t, g)
	for _, n := range []int{0, 1, 100, 4095, 4096, 10000} {
		buf := make([]uint64, n)
		if err := g.NextN(buf); err != nil {
			t.Fatalf("NextN(%d): %v", n, err)
		}
		for i, id := range buf {
			if id <= prev {
				t.Fatalf("NextN(%d)[%d] = %d, not above %d", n, i, id, prev)
			}
			p, q := l.Decompose(prev), l.Decompose(id)
			if q.Node != 5 {
				t.Fatalf("NextN(%d)[%d] has node %d", n, i, q.Node)
			}
			// Consecutive: the next sequence number, or sequence 0 of a later tick.
			if p.Tick == q.Tick && q.Seq != p.Seq+1 || p.Tick != q.Tick && q.Seq != 0 {
				t.Fatalf("NextN(%d)[%d]: %v after %v is not the next ID", n, i, q, p)
			}
			if q.Time.After(clk.Now()) {
				t.Fatalf("NextN(%d)[%d] at %v, ahead of the clock %v", n, i, q.Time, clk.Now())
			}
			prev = id
		}
	}
	if _, bad := clk.Stats(); bad != 0 {
		t.Errorf("%d non-positive sleeps", bad)
	}
}

func TestSnowflakeZeroAllocs(t *testing.T) {
	g := mustSnowflake(t, schemes.SnowflakeSettings{Layout: seq22})
	buf := make([]uint64, 512)
	if a := testing.AllocsPerRun(1000, func() { _, _ = g.Next() }); a != 0 {
		t.Errorf("Next allocates %v times per ID", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = g.NextN(buf) }); a != 0 {
		t.Errorf("NextN allocates %v times per batch", a)
	}
}

// firstDuplicate reports the first duplicate in ids, which it sorts.
func firstDuplicate(ids []uint64) (uint64, bool) {
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return ids[i], true
		}
	}
	return 0, false
}

// TestSnowflakeFieldOrders runs the core over every order of time, sequence and node fields.
// Orders with the sequence above the time field are refused (a later tick's sequence 0 would
// sort below the tick before); every other order keeps the promises: Next and NextN issue
// strictly increasing IDs with the generator's node, across many ticks and with batches that
// straddle them.
func TestSnowflakeFieldOrders(t *testing.T) {
	tm, sq, nd := layouts.Time(30), layouts.Seq(3), layouts.Node("n", 5)
	orders := [][]layouts.Field{
		{tm, sq}, {sq, tm},
		{tm, nd, sq}, {tm, sq, nd}, {nd, tm, sq},
		{sq, tm, nd}, {sq, nd, tm}, {nd, sq, tm},
	}
	for _, fs := range orders {
		l := custom(t0.Add(-time.Hour), time.Millisecond, fs...)
		names := strings.Join(l.FieldNames(), "/")
		t.Run(names, func(t *testing.T) {
			node := uint64(0)
			if l.NodeBits() > 0 {
				node = 21
			}
			clk := newFakeClock(t0)
			g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Node: node, Clock: clk})
			si := slices.IndexFunc(fs, func(f layouts.Field) bool { return f.Kind == layouts.KindSeq })
			ti := slices.IndexFunc(fs, func(f layouts.Field) bool { return f.Kind == layouts.KindTime })
			if si < ti {
				if !errors.Is(err, schemes.ErrSettings) || !strings.Contains(err.Error(), "sits above the time field") {
					t.Fatalf("NewSnowflake = %v; want ErrSettings saying the sequence sits above the time field", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var prev uint64
			check := func(what string, id uint64) {
				t.Helper()
				if id <= prev {
					t.Fatalf("%s: %d not above %d", what, id, prev)
				}
				if p := l.Decompose(id); p.Node != node {
					t.Fatalf("%s: node %d, want %d", what, p.Node, node)
				}
				prev = id
			}
			for i := range 50 { // 8 per tick: crosses ticks
				check(fmt.Sprintf("Next %d", i), mustNext(t, g))
			}
			for _, n := range []int{1, 3, 8, 13, 40} {
				buf := make([]uint64, n)
				if err := g.NextN(buf); err != nil {
					t.Fatal(err)
				}
				for i, id := range buf {
					check(fmt.Sprintf("NextN(%d)[%d]", n, i), id)
				}
				check("Next after a batch", mustNext(t, g))
			}
		})
	}
}

// TestSnowflakeEndOfTimeLookahead restarts a generator near the end of a time field that fills
// the word with the sequence (8+56 bits), with a lookahead that reaches past the last tick.
// Its start guard (start tick plus lookahead) and a mark past the field must not wrap to a low
// tick: the successor must fail with ErrTimeOverflow rather than reissue its predecessor's IDs.
func TestSnowflakeEndOfTimeLookahead(t *testing.T) {
	// Tick 253 of 255 (and 0.4 ms into it) at t0.
	l := custom(t0.Add(-253*time.Millisecond-400*time.Microsecond), time.Millisecond, layouts.Time(8), layouts.Seq(56))
	for _, tt := range []struct {
		name  string
		look  int
		marks schemes.MarkStore
	}{
		{"lookahead=3", 3, nil},
		{"lookahead=100", 100, nil},
		{"mark far past the field", 0, &memMarks{mark: t0.AddDate(100, 0, 0)}},
		{"mark at the last tick", 0, &memMarks{mark: l.TickTime(255)}},
	} {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%v", tt.name, batch), func(t *testing.T) {
				clk := newFakeClock(t0)
				g1 := mustSnowflake(t, schemes.SnowflakeSettings{Layout: l, Clock: clk})
				seen := map[uint64]bool{}
				for range 10 { // tick 254, after the start wait
					seen[mustNext(t, g1)] = true
				}
				g2, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Clock: clk, Lookahead: tt.look, Marks: tt.marks})
				if err != nil {
					t.Fatal(err)
				}
				for i := range 20 {
					var ids []uint64
					if batch {
						ids = make([]uint64, 3)
						err = g2.NextN(ids)
					} else {
						var id uint64
						id, err = g2.Next()
						ids = []uint64{id}
					}
					if err != nil {
						break
					}
					for _, id := range ids {
						if seen[id] {
							t.Fatalf("call %d: the successor reissued %d (tick %d)", i, id, l.Decompose(id).Tick)
						}
					}
				}
				if !errors.Is(err, schemes.ErrTimeOverflow) {
					t.Errorf("successor's error = %v, want ErrTimeOverflow", err)
				}
			})
		}
	}
}

// TestSnowflakeStats checks the counters a service exports: ticks whose sequence ran out,
// waits for a clock behind the last ID, and IDs issued ahead of it.
func TestSnowflakeStats(t *testing.T) {
	l := layouts.Layout{Name: "stats", Fields: []layouts.Field{layouts.Time(41), layouts.Node("node", 10), layouts.Seq(2)}, Unit: time.Millisecond, Epoch: t0.Add(-time.Hour)}
	clk := newFakeClock(t0)
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	mustNext(t, g)
	if s := g.Stats(); s != (schemes.SnowflakeStats{}) {
		t.Errorf("after the first ID (which waits out the start tick): %+v, want all zero", s)
	}
	for range 11 { // 4 IDs a tick: 12 IDs use up the sequence of the first two ticks
		mustNext(t, g)
	}
	if s := g.Stats(); s.SeqExhausted != 2 || s.DriftWaits != 0 || s.DriftContinued != 0 {
		t.Errorf("after 12 IDs at 4 a tick: %+v, want SeqExhausted 2", s)
	}
	clk.Step(-3 * time.Millisecond) // within the default 5 ms wait
	mustNext(t, g)
	if s := g.Stats(); s.DriftWaits != 1 {
		t.Errorf("after a 3 ms step back: %+v, want DriftWaits 1", s)
	}
	clk.Step(-50 * time.Millisecond) // within the default 100 ms continue bound
	mustNext(t, g)
	if s := g.Stats(); s.DriftContinued < 1 {
		t.Errorf("after a 50 ms step back: %+v, want DriftContinued at least 1", s)
	}
}
