package layouts_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/idkit/idkit/layouts"
)

// The run-out instants below were computed outside Go, in integer milliseconds: epoch +
// 2^timeBits × unit, and for Int64Until epoch + 2^(63-timeShift) × unit.
var presetTable = []struct {
	l          layouts.Layout
	name       string
	bits       string
	total      uint
	timeBits   uint
	nodeBits   uint
	seqBits    uint
	unit       time.Duration
	epoch      string
	perSecond  float64
	nodes      uint64
	nodeFields []string
	runsOutMs  int64 // Unix milliseconds
	runsOut    string
	int64Until string
}{
	{layouts.Twitter, "twitter", "41/5+5/12", 63, 41, 10, 12, time.Millisecond, "2010-11-04T01:42:54.657Z", 4_096_000, 1024,
		[]string{"datacenter", "worker"}, 1288834974657 + 1<<41, "2080-07-10T17:30:30.209Z", "2080-07-10T17:30:30.209Z"},
	{layouts.Discord, "discord", "42/5+5/12", 64, 42, 10, 12, time.Millisecond, "2015-01-01T00:00:00Z", 4_096_000, 1024,
		[]string{"worker", "process"}, 1420070400000 + 1<<42, "2154-05-15T07:35:11.104Z", "2084-09-06T15:47:35.552Z"},
	{layouts.Instagram, "instagram", "41/13/10", 64, 41, 13, 10, time.Millisecond, "2011-08-24T21:07:01.721Z", 1_024_000, 8192,
		[]string{"shard"}, 1314220021721 + 1<<41, "2081-04-30T12:54:37.273Z", "2046-06-27T17:00:49.497Z"},
	{layouts.Sonyflake, "sonyflake", "39/8/16", 63, 39, 16, 8, 10 * time.Millisecond, "2014-09-01T00:00:00Z", 25_600, 65536,
		[]string{"machine"}, 1409529600000 + 10<<39, "2188-11-16T03:28:58.88Z", "2188-11-16T03:28:58.88Z"},
	{layouts.Mastodon, "mastodon", "48/16", 64, 48, 0, 16, time.Millisecond, "1970-01-01T00:00:00Z", 65_536_000, 1,
		nil, 1 << 48, "10889-08-02T05:31:50.656Z", "6429-10-17T02:45:55.328Z"},
	{layouts.Baidu, "baidu", "28/22/13", 63, 28, 22, 13, time.Second, "2016-05-20T00:00:00Z", 8192, 1 << 22,
		[]string{"worker"}, 1463702400000 + 1000<<28, "2024-11-20T21:24:16Z", "2024-11-20T21:24:16Z"},
}

// rfc formats t like the table, years past 9999 included.
func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func TestPresets(t *testing.T) {
	for _, tt := range presetTable {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.l
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
			check := func(what string, got, want any) {
				t.Helper()
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("Name", l.Name, tt.name)
			check("Bits", l.Bits(), tt.bits)
			check("TotalBits", l.TotalBits(), tt.total)
			check("TimeBits", l.TimeBits(), tt.timeBits)
			check("NodeBits", l.NodeBits(), tt.nodeBits)
			check("SeqBits", l.SeqBits(), tt.seqBits)
			check("Unit", l.Unit, tt.unit)
			check("Epoch", rfc(l.Epoch), tt.epoch)
			check("IDsPerSecond", l.IDsPerSecond(), tt.perSecond)
			check("Nodes", l.Nodes(), tt.nodes)
			var nf []string
			for _, f := range l.NodeFields() {
				nf = append(nf, f.Name)
			}
			check("NodeFields", nf, tt.nodeFields)
			check("MaxTick", l.MaxTick(), int64(1)<<tt.timeBits-1)
			check("RunsOut (ms)", l.RunsOut().UnixMilli(), tt.runsOutMs)
			check("RunsOut", rfc(l.RunsOut()), tt.runsOut)
			check("Int64Until", rfc(l.Int64Until()), tt.int64Until)
			check("String", l.String(), fmt.Sprintf("%s %s %v epoch %s", tt.name, tt.bits, tt.unit, tt.epoch))
			// The last tick still fits, and IDs issued just before Int64Until fit an int64.
			last := l.Tick(l.RunsOut()) - 1
			if last != l.MaxTick() {
				t.Errorf("Tick(RunsOut)-1 = %d, want MaxTick %d", last, l.MaxTick())
			}
			tick := l.Tick(l.Int64Until()) - 1
			id, err := l.Compose(tick, l.Nodes()-1, 1<<l.SeqBits()-1)
			if err != nil || int64(id) < 0 {
				t.Errorf("largest ID before Int64Until = %d, %v; want it to fit an int64", id, err)
			}
			if tick+1 <= l.MaxTick() {
				if id, _ := l.Compose(tick+1, 0, 0); int64(id) >= 0 {
					t.Errorf("first ID at Int64Until (%d) still fits an int64", id)
				}
			}
		})
	}
}

func TestPresetLookup(t *testing.T) {
	if got := len(layouts.Presets()); got != len(presetTable) {
		t.Errorf("Presets() has %d layouts, the table %d", got, len(presetTable))
	}
	names := []string{}
	for _, l := range layouts.Presets() {
		names = append(names, l.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("Presets() not sorted by name: %v", names)
	}
	for _, tt := range presetTable {
		l, err := layouts.Preset(strings.ToUpper(tt.name))
		if err != nil || l.String() != tt.l.String() {
			t.Errorf("Preset(%q) = %v, %v", strings.ToUpper(tt.name), l, err)
		}
		// The copy shares nothing with the preset.
		l.Fields[0].Bits = 1
		if tt.l.Fields[0].Bits == 1 {
			t.Fatalf("changing Preset(%q)'s fields changed the preset", tt.name)
		}
	}
	_, err := layouts.Preset("flickr")
	if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), `"flickr"`) || !strings.Contains(err.Error(), "twitter") {
		t.Errorf("Preset(flickr) = %v; want ErrInvalid naming it and the known presets", err)
	}
}

func TestValidate(t *testing.T) {
	ms := time.Millisecond
	l := func(fs ...layouts.Field) layouts.Layout { return layouts.Layout{Name: "t", Fields: fs, Unit: ms} }
	tests := []struct {
		name string
		l    layouts.Layout
		msg  string
	}{
		{"no fields", l(), "0 time fields"},
		{"zero-width field", l(layouts.Time(41), layouts.Node("w", 0), layouts.Seq(12)), `("w") has 0 bits`},
		{"field over 64 bits", l(layouts.Time(65), layouts.Seq(12)), "65 bits"},
		{"unnamed field", l(layouts.Time(41), layouts.Node("", 5), layouts.Seq(12)), "no name"},
		{"duplicate name", l(layouts.Time(41), layouts.Node("w", 5), layouts.Node("w", 5), layouts.Seq(12)), `"w" used twice`},
		{"unknown kind", l(layouts.Time(41), layouts.Field{Name: "x", Bits: 3}, layouts.Seq(12)), `"x" has unknown kind`},
		{"no time", l(layouts.Node("w", 5), layouts.Seq(12)), "0 time fields"},
		{"two times", l(layouts.Time(20), layouts.Field{Name: "t2", Kind: layouts.KindTime, Bits: 20}, layouts.Seq(12)), "2 time fields"},
		{"no seq", l(layouts.Time(41), layouts.Node("w", 10)), "0 sequence fields"},
		{"two seqs", l(layouts.Time(41), layouts.Seq(6), layouts.Field{Name: "s2", Kind: layouts.KindSeq, Bits: 6}), "2 sequence fields"},
		{"over 64 bits", l(layouts.Time(42), layouts.Node("w", 11), layouts.Seq(12)), "65 bits (42/11/12)"},
		{"zero unit", layouts.Layout{Fields: []layouts.Field{layouts.Time(41), layouts.Seq(12)}}, "unit 0s"},
		{"negative unit", layouts.Layout{Fields: []layouts.Field{layouts.Time(41), layouts.Seq(12)}, Unit: -ms}, "unit -1ms"},
		{"63 time bits", l(layouts.Time(63), layouts.Seq(1)), "at most 62"},
		{"unit over an hour", layouts.Layout{Fields: []layouts.Field{layouts.Time(41), layouts.Seq(12)}, Unit: time.Hour + time.Nanosecond}, "unit 1h0m0.000000001s is longer than 1h0m0s"},
		{"huge unit", layouts.Layout{Fields: []layouts.Field{layouts.Time(41), layouts.Seq(12)}, Unit: 1000000 * time.Hour}, "longer than 1h0m0s"},
		{"seq above time", l(layouts.Seq(2), layouts.Time(41), layouts.Node("w", 10)), `sequence field "seq" sits above the time field "time"`},
		{"seq above node above time", l(layouts.Seq(2), layouts.Node("w", 10), layouts.Time(41)), `sequence field "seq" sits above the time field`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate() = %v; want ErrInvalid mentioning %q", err, tt.msg)
			}
		})
	}
	for _, ok := range []layouts.Layout{
		l(layouts.Time(62), layouts.Seq(2)),
		{Name: "hour", Fields: []layouts.Field{layouts.Time(20), layouts.Seq(10)}, Unit: layouts.MaxUnit},
		{Name: "ns", Fields: []layouts.Field{layouts.Time(62), layouts.Seq(2)}, Unit: time.Nanosecond},
		l(layouts.Node("w", 10), layouts.Time(41), layouts.Seq(12)),
		l(layouts.Time(39), layouts.Seq(8), layouts.Node("machine", 16)),
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%s: %v", ok.Bits(), err)
		}
	}
}

// randomLayout returns a valid layout with 2 to 5 fields in random order and widths.
func randomLayout(r *rand.Rand) layouts.Layout {
	fs := []layouts.Field{layouts.Time(uint(1 + r.IntN(40))), layouts.Seq(uint(1 + r.IntN(12)))}
	for i := range r.IntN(4) {
		fs = append(fs, layouts.Node(fmt.Sprintf("n%d", i), uint(1+r.IntN(4))))
	}
	r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	// Validate wants the time field above the sequence field; node fields go anywhere.
	ti := slices.IndexFunc(fs, func(f layouts.Field) bool { return f.Kind == layouts.KindTime })
	si := slices.IndexFunc(fs, func(f layouts.Field) bool { return f.Kind == layouts.KindSeq })
	if si < ti {
		fs[ti], fs[si] = fs[si], fs[ti]
	}
	return layouts.Layout{Name: "random", Fields: fs, Unit: time.Duration(1 + r.IntN(1e9)), Epoch: time.Unix(r.Int64N(2e9), 0)}
}

func randBelow(r *rand.Rand, bits uint) uint64 {
	if bits == 0 {
		return 0
	}
	return r.Uint64() >> (64 - bits)
}

// TestComposeDecompose: Decompose(Compose(tick, node, seq)) gives back every part, for the
// presets and for random layouts, including the extremes of each field.
func TestComposeDecompose(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ls := layouts.Presets()
	for range 200 {
		ls = append(ls, randomLayout(r))
	}
	for _, l := range ls {
		if err := l.Validate(); err != nil {
			t.Fatalf("%v: %v", l, err)
		}
		for i := range 200 {
			tick, node, seq := int64(randBelow(r, l.TimeBits())), randBelow(r, l.NodeBits()), randBelow(r, l.SeqBits())
			if i == 0 {
				tick, node, seq = l.MaxTick(), l.Nodes()-1, 1<<l.SeqBits()-1
			}
			if i == 1 {
				tick, node, seq = 0, 0, 0
			}
			id, err := l.Compose(tick, node, seq)
			if err != nil {
				t.Fatalf("%v: Compose(%d, %d, %d): %v", l, tick, node, seq, err)
			}
			if err := l.Check(id); err != nil {
				t.Fatalf("%v: Check(Compose(...)) = %v", l, err)
			}
			p := l.Decompose(id)
			if p.Tick != tick || p.Node != node || p.Seq != seq || !p.Time.Equal(l.TickTime(tick)) {
				t.Fatalf("%v: Decompose(Compose(%d, %d, %d)) = %+v", l, tick, node, seq, p)
			}
			// The named values add up to the ID, and the node ones recombine with NodeOf.
			var sum uint64
			sub := map[string]uint64{}
			for _, v := range p.Named {
				shift, width, err := l.Shift(v.Name)
				if err != nil || v.Value>>width != 0 {
					t.Fatalf("%v: field %s = %d (width %d, err %v)", l, v.Name, v.Value, width, err)
				}
				sum |= v.Value << shift
				if v.Kind == layouts.KindNode {
					sub[v.Name] = v.Value
				}
			}
			if sum != id {
				t.Fatalf("%v: named fields of %d add up to %d", l, id, sum)
			}
			if n, err := l.NodeOf(sub); err != nil || n != node {
				t.Fatalf("%v: NodeOf(%v) = %d, %v; want %d", l, sub, n, err, node)
			}
		}
	}
}

// TestComposeQuick checks the round trip with testing/quick on the Twitter layout.
func TestComposeQuick(t *testing.T) {
	l := layouts.Twitter
	f := func(tick int64, node, seq uint64) bool {
		tick &= l.MaxTick()
		node &= 1<<10 - 1
		seq &= 1<<12 - 1
		id, err := l.Compose(tick, node, seq)
		if err != nil {
			return false
		}
		p := l.Decompose(id)
		// Twitter's bits by hand: time << 22 | datacenter << 17 | worker << 12 | seq.
		return p.Tick == tick && p.Node == node && p.Seq == seq && id == uint64(tick)<<22|node<<12|seq
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func TestComposeErrors(t *testing.T) {
	l := layouts.Twitter
	tests := []struct {
		tick      int64
		node, seq uint64
		msg       string
	}{
		{-1, 0, 0, "tick -1"},
		{l.MaxTick() + 1, 0, 0, fmt.Sprintf("tick %d", l.MaxTick()+1)},
		{0, 1024, 0, "node 1024"},
		{0, 0, 4096, "sequence 4096"},
	}
	for _, tt := range tests {
		_, err := l.Compose(tt.tick, tt.node, tt.seq)
		if !errors.Is(err, layouts.ErrRange) || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), "twitter") {
			t.Errorf("Compose(%d, %d, %d) = %v; want ErrRange mentioning %q and the layout", tt.tick, tt.node, tt.seq, err, tt.msg)
		}
	}
	if err := l.Check(1 << 63); !errors.Is(err, layouts.ErrRange) {
		t.Errorf("Check(1<<63) on a 63-bit layout = %v, want ErrRange", err)
	}
	if err := layouts.Discord.Check(1<<64 - 1); err != nil {
		t.Errorf("Check(max) on a 64-bit layout = %v", err)
	}
}

func TestNodeOf(t *testing.T) {
	tests := []struct {
		l      layouts.Layout
		values map[string]uint64
		want   uint64
		err    error
		msg    string
	}{
		{layouts.Twitter, map[string]uint64{"datacenter": 1, "worker": 3}, 1<<5 | 3, nil, ""},
		{layouts.Twitter, map[string]uint64{"worker": 31}, 31, nil, ""},
		{layouts.Twitter, map[string]uint64{}, 0, nil, ""},
		{layouts.Discord, map[string]uint64{"worker": 1, "process": 0}, 1 << 5, nil, ""},
		{layouts.Twitter, map[string]uint64{"worker": 32}, 0, layouts.ErrRange, "worker=32"},
		{layouts.Twitter, map[string]uint64{"shard": 1}, 0, layouts.ErrUnknownField, `"shard"`},
		{layouts.Twitter, map[string]uint64{"seq": 1}, 0, layouts.ErrUnknownField, "datacenter, worker"},
		{layouts.Mastodon, map[string]uint64{"node": 0}, 0, layouts.ErrUnknownField, "none"},
	}
	for _, tt := range tests {
		got, err := tt.l.NodeOf(tt.values)
		if tt.err == nil && (err != nil || got != tt.want) {
			t.Errorf("%s.NodeOf(%v) = %d, %v; want %d", tt.l.Name, tt.values, got, err, tt.want)
		}
		if tt.err != nil && (!errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg)) {
			t.Errorf("%s.NodeOf(%v) = %v; want %v mentioning %q", tt.l.Name, tt.values, err, tt.err, tt.msg)
		}
	}
}

func TestShift(t *testing.T) {
	want := map[string][2]uint{"time": {22, 41}, "datacenter": {17, 5}, "worker": {12, 5}, "seq": {0, 12}}
	for name, w := range want {
		s, n, err := layouts.Twitter.Shift(name)
		if err != nil || s != w[0] || n != w[1] {
			t.Errorf("Twitter.Shift(%q) = %d, %d, %v; want %d, %d", name, s, n, err, w[0], w[1])
		}
	}
	if s, n := layouts.Sonyflake.KindShift(layouts.KindSeq); s != 16 || n != 8 {
		t.Errorf("Sonyflake.KindShift(seq) = %d, %d; want 16, 8", s, n)
	}
	if _, _, err := layouts.Twitter.Shift("shard"); !errors.Is(err, layouts.ErrUnknownField) {
		t.Errorf("Shift(shard) = %v, want ErrUnknownField", err)
	}
}

func TestTick(t *testing.T) {
	l := layouts.Layout{Fields: []layouts.Field{layouts.Time(41), layouts.Seq(12)}, Unit: 10 * time.Millisecond, Epoch: time.Unix(100, 0)}
	tests := []struct {
		t    time.Time
		want int64
	}{
		{time.Unix(100, 0), 0},
		{time.Unix(100, 9_999_999), 0},
		{time.Unix(100, 10_000_000), 1},
		{time.Unix(99, 999_999_999), -1}, // before the epoch rounds down
		{time.Unix(99, 990_000_000), -1},
		{time.Unix(99, 989_999_999), -2},
	}
	for _, tt := range tests {
		if got := l.Tick(tt.t); got != tt.want {
			t.Errorf("Tick(%v) = %d, want %d", tt.t, got, tt.want)
		}
	}
	if got := l.TickTime(7); !got.Equal(time.Unix(100, 70_000_000)) {
		t.Errorf("TickTime(7) = %v", got)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[layouts.Kind]string{layouts.KindTime: "time", layouts.KindNode: "node", layouts.KindSeq: "seq", 9: "Kind(9)"} {
		if k.String() != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), want)
		}
	}
}

// TestTickFarFromEpoch: Tick must stay exact more than 292 years from the epoch (the range of
// time.Duration), as TickTime does: Mastodon's time field runs to the year 10889.
func TestTickFarFromEpoch(t *testing.T) {
	l := layouts.Mastodon
	for _, tick := range []int64{1 << 43, 1 << 47, l.MaxTick()} {
		if got := l.Tick(l.TickTime(tick)); got != tick {
			t.Errorf("Tick(TickTime(%d)) = %d", tick, got)
		}
	}
	// Far before the epoch: exact, and rounding down as near ones do. 970-01-01 to
	// 1970-01-01 holds 1000*365 days plus 242 leap days.
	far := l.Epoch.AddDate(-1000, 0, 0)
	want := -(int64(365*1000+242) * 86400 * 1000)
	if got := l.Tick(far); got != want {
		t.Errorf("Tick 1000 years before the epoch = %d, want %d", got, want)
	}
	if got := l.Tick(far.Add(-time.Nanosecond)); got != want-1 {
		t.Errorf("Tick 1 ns earlier = %d, want %d", got, want-1)
	}
}

// TestHugeUnit: a layout whose time field is worth more than a Duration's range of a product
// must still report its run-out date exactly and at once (a loop of chunks would take 2^62
// steps). 2^62 ticks of the longest unit are far beyond a Duration.
func TestHugeUnit(t *testing.T) {
	l := layouts.Layout{Name: "eons", Fields: []layouts.Field{layouts.Time(62), layouts.Seq(2)}, Unit: layouts.MaxUnit, Epoch: time.Unix(0, 0).UTC()}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	go func() { done <- l.RunsOut() }()
	select {
	case got := <-done:
		// 2^62 hours is far past time.Time's range: it saturates in the future.
		if !got.After(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("RunsOut = %v, want a far-future instant", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunsOut did not return within 5 s")
	}
	if got := l.Tick(l.TickTime(12345)); got != 12345 {
		t.Errorf("Tick(TickTime(12345)) = %d", got)
	}
}
