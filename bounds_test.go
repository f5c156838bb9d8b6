package idkit_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// rangedSpecs are the specs the time-range tests run over, with the length of their tick: every
// preset, custom units (10 ms, 1 s, 7 ms) on epochs that do not sit on a second, sonyflake with
// its default and a custom start, ulid and uuidv7.
var rangedSpecs = []struct {
	spec string
	unit time.Duration
}{
	{"snowflake:layout=twitter", time.Millisecond},
	{"snowflake:layout=discord", time.Millisecond},
	{"snowflake:layout=instagram", time.Millisecond},
	{"snowflake:layout=mastodon", time.Millisecond},
	{"snowflake:layout=sonyflake", 10 * time.Millisecond},
	{"snowflake:layout=baidu", time.Second},
	{"snowflake:fields=time:39/region:4/host:8/seq:12,unit=10ms,epoch=2024-02-29T12:34:56.789Z", 10 * time.Millisecond},
	{"snowflake:fields=time:32/seq:10/node:8,unit=1s,epoch=2020-01-01T00:00:00.5Z", time.Second},
	{"snowflake:time_bits=44,node_bits=8,seq_bits=11,unit=7ms,epoch=1700000000123", 7 * time.Millisecond},
	{"sonyflake", 10 * time.Millisecond},
	{"sonyflake:start=2020-01-01", 10 * time.Millisecond},
	{"ulid", time.Millisecond},
	{"ulid:monotonic=false", time.Millisecond},
	{"uuidv7", time.Millisecond},
}

func bounds(t testing.TB, c idkit.Codec, from, to time.Time) (lo, hi idkit.ID) {
	t.Helper()
	lo, hi, err := idkit.Bounds(c, from, to)
	if err != nil {
		t.Fatalf("bounds [%v, %v): %v", from, to, err)
	}
	return lo, hi
}

// checkInTick checks the target of issue 19: id lies inside the bounds of its own tick and
// outside those of the ticks either side (and of a range that starts inside its tick).
func checkInTick(t *testing.T, c idkit.Codec, unit time.Duration, id idkit.ID) {
	t.Helper()
	p, err := c.Decode(id)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	at := p.Time
	if lo, hi := bounds(t, c, at, at.Add(unit)); idkit.Compare(id, lo) < 0 || idkit.Compare(id, hi) > 0 {
		t.Fatalf("%s (tick %v) is outside the bounds of its tick, %s to %s", id, at, lo, hi)
	}
	if _, hi, err := idkit.Bounds(c, at.Add(-unit), at); err == nil && idkit.Compare(id, hi) <= 0 {
		t.Fatalf("%s (tick %v) is not above the bounds of the tick before, up to %s", id, at, hi)
	}
	if lo, _, err := idkit.Bounds(c, at.Add(unit), at.Add(2*unit)); err == nil && idkit.Compare(id, lo) >= 0 {
		t.Fatalf("%s (tick %v) is not below the bounds of the tick after, from %s", id, at, lo)
	}
	// A range from inside the tick starts at the next one.
	if lo, _, err := idkit.Bounds(c, at.Add(1), at.Add(2*unit)); err == nil && idkit.Compare(id, lo) >= 0 {
		t.Fatalf("%s (tick %v) is not below the bounds of a range from inside its tick, from %s", id, at, lo)
	}
}

// TestBoundsLiveGenerators runs the generators idkit.New returns (node 0 and the highest node
// where the scheme has one) and checks every ID against the bounds of its own tick and of its
// neighbours, through both the scheme and NewCodec.
func TestBoundsLiveGenerators(t *testing.T) {
	t.Parallel()
	for _, rs := range rangedSpecs {
		t.Run(rs.spec, func(t *testing.T) {
			t.Parallel()
			c, err := idkit.NewCodec(rs.spec)
			if err != nil {
				t.Fatal(err)
			}
			var specs []string
			switch lo, ok := c.(idkit.Layouter); {
			case !ok:
				specs = []string{rs.spec}
			case strings.HasPrefix(rs.spec, "sonyflake"):
				sep := ":"
				if strings.Contains(rs.spec, ":") {
					sep = ","
				}
				specs = []string{rs.spec, rs.spec + sep + "machine=65535"}
			default:
				l := lo.Layout()
				if err := checkFixedClock(t, c, l, rs.unit); err != nil {
					t.Fatal(err)
				}
				if !l.RunsOut().After(time.Now()) {
					return // baidu ran out in 2024; the simulated clock covered it
				}
				specs = []string{rs.spec + ",node=0"}
				if l.NodeBits() > 0 {
					specs = append(specs, fmt.Sprintf("%s,node=%d", rs.spec, l.Nodes()-1))
				}
			}
			for _, spec := range specs {
				s, err := idkit.New(spec)
				if err != nil {
					t.Fatal(err)
				}
				n := 3000
				if rs.unit >= time.Second {
					n = 1100 // 2^10 IDs a tick: one tick boundary, not three
				}
				for range n {
					id, err := s.Next()
					if err != nil {
						t.Fatal(err)
					}
					checkInTick(t, s, rs.unit, id)
					checkInTick(t, c, rs.unit, id)
				}
			}
		})
	}
}

// stepClock is a simulated clock that moves forward by a few hundred microseconds per reading.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
	rng *rand.Rand
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Duration(c.rng.Int64N(int64(500 * time.Microsecond))))
	return c.now
}

func (c *stepClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// checkFixedClock runs the native generator of layout l on a simulated clock near the epoch,
// in the middle of the life and just before the run-out, for node 0 and the highest node, so
// that every preset (baidu's ran out in 2024) is checked in every part of its life.
func checkFixedClock(t *testing.T, c idkit.Codec, l layouts.Layout, unit time.Duration) error {
	t.Helper()
	rng := rand.New(rand.NewPCG(19, uint64(l.TimeBits())))
	// A generator starts at most 2^62 ns after its epoch (schemes.NewSnowflake).
	end := min(l.MaxTick(), int64(1<<62)/int64(l.Unit)) - 2000
	for _, tick := range []int64{1, end / 2, end} {
		for _, node := range []uint64{0, l.Nodes() - 1} {
			clk := &stepClock{now: l.TickTime(tick), rng: rng}
			g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Node: node, Clock: clk})
			if err != nil {
				return fmt.Errorf("layout %s, tick %d, node %d: %w", l.Name, tick, node, err)
			}
			for range 1000 {
				v, err := g.Next()
				if err != nil {
					return fmt.Errorf("layout %s, tick %d, node %d: %w", l.Name, tick, node, err)
				}
				checkInTick(t, c, unit, idkit.FromUint64(v))
			}
		}
	}
	return nil
}

// TestBoundsProperties draws seeded random ranges for every spec, with from and to on tick
// starts, a nanosecond either side and inside ticks, and checks the bounds are exact: lo and
// hi decode to the first and last tick that start in [from, to), lo carries the smallest and
// hi the largest bits below the time, and (for 64-bit IDs) the ID below lo and the one above hi
// decode to times outside the range.
func TestBoundsProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(19, 2))
	now := time.Now()
	for _, rs := range rangedSpecs {
		c, err := idkit.NewCodec(rs.spec)
		if err != nil {
			t.Fatal(err)
		}
		base := now.Truncate(rs.unit)
		if lo, ok := c.(idkit.Layouter); ok {
			base = lo.Layout().TickTime(lo.Layout().MaxTick() / 3)
		}
		at := func() time.Time {
			t := base.Add(time.Duration(rng.Int64N(1000)) * rs.unit)
			switch rng.IntN(4) {
			case 0:
				return t.Add(-time.Nanosecond)
			case 1:
				return t.Add(time.Nanosecond)
			case 2:
				return t.Add(time.Duration(rng.Int64N(int64(rs.unit))))
			}
			return t
		}
		for range 500 {
			from, to := at(), at()
			if !from.Before(to) {
				from, to = to, from
			}
			lo, hi, err := idkit.Bounds(c, from, to)
			first := from.Add(-1).Truncate(rs.unit)
			if lo, ok := c.(idkit.Layouter); ok {
				l := lo.Layout()
				first = l.TickTime(l.Tick(from.Add(-1)))
			}
			first = first.Add(rs.unit) // the first tick start at or after from
			if !first.Before(to) {
				if !errors.Is(err, idkit.ErrTimeRange) {
					t.Fatalf("%s [%v, %v): no tick starts in it, yet %s..%s, %v", rs.spec, from, to, lo, hi, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s [%v, %v): %v", rs.spec, from, to, err)
			}
			checkExact(t, c, rs.spec, rs.unit, from, to, first, lo, hi)
		}
	}
}

func checkExact(t *testing.T, c idkit.Codec, spec string, unit time.Duration, from, to, first time.Time, lo, hi idkit.ID) {
	t.Helper()
	pl, err := c.Decode(lo)
	if err != nil {
		t.Fatalf("%s: lo %s: %v", spec, lo, err)
	}
	ph, err := c.Decode(hi)
	if err != nil {
		t.Fatalf("%s: hi %s: %v", spec, hi, err)
	}
	if !pl.Time.Equal(first) || !ph.Time.Before(to) || ph.Time.Add(unit).Before(to) {
		t.Fatalf("%s [%v, %v): lo %s at %v, hi %s at %v; want lo at %v, hi at the last tick before %v", spec, from, to, lo, pl.Time, hi, ph.Time, first, to)
	}
	switch lo.Format() {
	case idkit.FormatDecimal:
		if pl.Node != 0 || pl.Seq != 0 {
			t.Fatalf("%s: lo %s has node %d, seq %d", spec, lo, pl.Node, pl.Seq)
		}
		below, above := idkit.FromUint64(lo.Uint64()-1), idkit.FromUint64(hi.Uint64()+1)
		if p, err := c.Decode(below); lo.Uint64() > 0 && (err != nil || !p.Time.Before(from)) {
			t.Fatalf("%s [%v, %v): the ID below lo, %s, decodes to %v (%v)", spec, from, to, below, p.Time, err)
		}
		if p, err := c.Decode(above); err == nil && above.Uint64() != 0 && p.Time.Before(to) {
			t.Fatalf("%s [%v, %v): the ID above hi, %s, decodes to %v", spec, from, to, above, p.Time)
		}
	case idkit.FormatULID:
		l, h := lo.Bytes16(), hi.Bytes16()
		if binary.BigEndian.Uint64(l[:8])&0xffff != 0 || lo.Uint64() != 0 || binary.BigEndian.Uint64(h[:8])&0xffff != 0xffff || hi.Uint64() != 1<<64-1 {
			t.Fatalf("%s: entropy of lo %s or hi %s is not all 0 or all 1", spec, lo, hi)
		}
	case idkit.FormatUUID:
		if pl.Version != 7 || ph.Version != 7 || pl.Fields[1].Value != 0 || ph.Fields[1].Value != 0xfff ||
			lo.Uint64() != 1<<63 || hi.Uint64() != 1<<63|(1<<62-1) {
			t.Fatalf("%s: lo %s or hi %s does not carry version 7, the variant and the extreme random bits", spec, lo, hi)
		}
	}
}

func TestBoundsEdges(t *testing.T) {
	t.Parallel()
	tw, err := idkit.NewCodec("snowflake:layout=twitter")
	if err != nil {
		t.Fatal(err)
	}
	ep, ro := layouts.Twitter.Epoch, layouts.Twitter.RunsOut()
	day := 24 * time.Hour
	ms := time.Millisecond
	tests := []struct {
		name     string
		spec     string
		from, to time.Time
		lo, hi   string
		err      error
	}{
		{"the epoch's first tick", "snowflake:layout=twitter", ep, ep.Add(ms), "0", "4194303", nil},
		{"clamped to the epoch", "snowflake:layout=twitter", ep.Add(-day), ep.Add(ms), "0", "4194303", nil},
		{"clamped to the run-out", "snowflake:layout=twitter", ro.Add(-ms), ro.Add(day), "9223372036850581504", "9223372036854775807", nil},
		{"wholly before the epoch", "snowflake:layout=twitter", ep.Add(-day), ep, "", "", idkit.ErrTimeRange},
		{"wholly after the run-out", "snowflake:layout=twitter", ro, ro.Add(day), "", "", idkit.ErrTimeRange},
		{"empty", "snowflake:layout=twitter", ep.Add(day), ep.Add(day), "", "", idkit.ErrTimeRange},
		{"reversed", "snowflake:layout=twitter", ep.Add(day), ep, "", "", idkit.ErrTimeRange},
		{"inside one tick", "snowflake:layout=twitter", ep.Add(ms + 1), ep.Add(2 * ms), "", "", idkit.ErrTimeRange},
		{"inside one 1 s tick", "snowflake:layout=baidu", layouts.Baidu.Epoch.Add(ms), layouts.Baidu.Epoch.Add(999 * ms), "", "", idkit.ErrTimeRange},
		{"discord sets bit 63", "snowflake:layout=discord", layouts.Discord.Int64Until(), layouts.Discord.Int64Until().Add(ms), "9223372036854775808", "9223372036858970111", nil},
		{"ulid's first millisecond", "ulid", time.Unix(0, 0), time.Unix(0, int64(ms)), "00000000000000000000000000", "0000000000ZZZZZZZZZZZZZZZZ", nil},
		{"ulid before 1970", "ulid", time.Unix(-10, 0), time.Unix(0, 0), "", "", idkit.ErrTimeRange},
		{"ulid clamped to its run-out", "ulid", time.UnixMilli(1<<48 - 1), time.UnixMilli(1 << 50), "7ZZZZZZZZZ0000000000000000", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", nil},
		{"ulid after its run-out", "ulid", time.UnixMilli(1 << 48), time.UnixMilli(1 << 50), "", "", idkit.ErrTimeRange},
		{"uuidv7 of RFC 9562's example millisecond", "uuidv7", time.UnixMilli(0x017f22e279b0), time.UnixMilli(0x017f22e279b1),
			"017f22e2-79b0-7000-8000-000000000000", "017f22e2-79b0-7fff-bfff-ffffffffffff", nil},
		{"uuidv4 has no time order", "uuidv4", ep, ro, "", "", idkit.ErrUnordered},
		{"node bits above the time", "snowflake:fields=region:4/time:41/seq:12", ep, ro, "", "", idkit.ErrUnordered},
		{"reversed", "snowflake:reverse=true", ep, ro, "", "", idkit.ErrUnordered},
		{"time-reversed: one run per tick", "snowflake:reverse=time", ep, ro, "", "", idkit.ErrUnordered},
	}
	for _, tt := range tests {
		c, err := idkit.NewCodec(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi, err := idkit.Bounds(c, tt.from, tt.to)
		if !errors.Is(err, tt.err) || tt.err == nil && (lo.String() != tt.lo || hi.String() != tt.hi) {
			t.Errorf("%s: %s..%s, err %v; want %s..%s, err %v", tt.name, lo, hi, err, tt.lo, tt.hi, tt.err)
		}
	}
	// The codec of uuidv4, and the scheme, do not implement TimeRanger at all.
	c, _ := idkit.NewCodec("uuidv4")
	s, _ := idkit.New("uuidv4")
	if _, ok := c.(idkit.TimeRanger); ok {
		t.Error("the uuidv4 codec is a TimeRanger")
	}
	if _, ok := s.(idkit.TimeRanger); ok {
		t.Error("the uuidv4 scheme is a TimeRanger")
	}
	// The message names what is wrong.
	_, _, err = idkit.Bounds(tw, ep.Add(-day), ep)
	if want := "idkit: no IDs in the time range: layouts: no tick starts in the time range: [2010-11-03T01:42:54.657Z, 2010-11-04T01:42:54.657Z) ends at or before the epoch 2010-11-04T01:42:54.657Z of layout twitter"; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// FuzzBounds feeds arbitrary ranges to every spec: Bounds must not panic, must fail only with
// ErrTimeRange, and must otherwise give IDs that decode to tick starts in [from, to).
func FuzzBounds(f *testing.F) {
	f.Add(uint8(0), int64(1288834974657), int64(0), int64(1288834974658), int64(0))
	f.Add(uint8(5), int64(1463702400000), int64(1), int64(1463702401000), int64(-1))
	f.Add(uint8(11), int64(-5), int64(0), int64(1<<48), int64(5))
	f.Add(uint8(13), int64(1<<47), int64(999999), int64(1<<47+1), int64(0))
	f.Fuzz(func(t *testing.T, which uint8, fromMs, fromNs, toMs, toNs int64) {
		rs := rangedSpecs[int(which)%len(rangedSpecs)]
		c, err := idkit.NewCodec(rs.spec)
		if err != nil {
			t.Fatal(err)
		}
		from := time.UnixMilli(fromMs % (1 << 52)).Add(time.Duration(fromNs % 1e9))
		to := time.UnixMilli(toMs % (1 << 52)).Add(time.Duration(toNs % 1e9))
		lo, hi, err := idkit.Bounds(c, from, to)
		if err != nil {
			if !errors.Is(err, idkit.ErrTimeRange) {
				t.Fatalf("%s [%v, %v): %v", rs.spec, from, to, err)
			}
			return
		}
		if idkit.Compare(lo, hi) > 0 {
			t.Fatalf("%s [%v, %v): lo %s above hi %s", rs.spec, from, to, lo, hi)
		}
		pl, err1 := c.Decode(lo)
		ph, err2 := c.Decode(hi)
		if err1 != nil || err2 != nil || pl.Time.Before(from) || !ph.Time.Before(to) {
			t.Fatalf("%s [%v, %v): lo %s (%v, %v) hi %s (%v, %v)", rs.spec, from, to, lo, pl.Time, err1, hi, ph.Time, err2)
		}
	})
}
