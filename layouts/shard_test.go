package layouts_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
)

// TestReverse63Spanner holds Reverse63 to Spanner's definition of BIT_REVERSE(x, preserve_sign
// => true), which bit_reversed_positive sequences apply to a counter: the Cloud Spanner
// emulator's common/bit_reverse.cc reverses all 64 bits, then moves the old sign bit (now bit
// 0) back to bit 63 and shifts the rest right by one. The values for 1, 10 and 100 are the
// ones GoogleSQL's BIT_REVERSE documentation lists for preserve_sign TRUE.
func TestReverse63Spanner(t *testing.T) {
	for _, tt := range []struct{ in, want uint64 }{
		{0, 0},
		{1, 4611686018427387904},   // 2^62
		{10, 2882303761517117440},  // 2^61 + 2^59
		{100, 1369094286720630784}, // 2^60 + 2^57 + 2^56
		{1<<63 - 1, 1<<63 - 1},
		{1 << 62, 1},
	} {
		if got := layouts.Reverse63(tt.in); got != tt.want {
			t.Errorf("Reverse63(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
	// The emulator's algorithm, spelled out, on random positive values; and the reversal is
	// its own inverse.
	spanner := func(x uint64) uint64 {
		var r uint64
		for i := range 64 {
			r |= (x >> i & 1) << (63 - i)
		}
		sign := (r & 1) << 63
		return sign | r>>1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		x := rng.Uint64() >> 1
		if got, want := layouts.Reverse63(x), spanner(x); got != want {
			t.Fatalf("Reverse63(%d) = %d, Spanner's BIT_REVERSE gives %d", x, got, want)
		}
		if back := layouts.Reverse63(layouts.Reverse63(x)); back != x {
			t.Fatalf("Reverse63 twice gives %d for %d", back, x)
		}
	}
}

// TestShardedTiDBPlacement holds the hash field to TiDB's AUTO_RANDOM(S) layout (docs
// "AUTO_RANDOM", the structure tables): with a sign bit, 1 sign bit, S shard bits, then the
// auto-increment bits (R-1-S with R = 64); without one (BIGINT UNSIGNED), the S shard bits
// are the top bits. TiDB's default S is 5, its range 1 to 15.
func TestShardedTiDBPlacement(t *testing.T) {
	for _, tt := range []struct {
		base      layouts.Layout
		s         uint
		shardMask uint64
		bits      string
	}{
		// Signed BIGINT AUTO_RANDOM(5): bits 62 to 58.
		{layouts.Twitter, 5, 0x7C00_0000_0000_0000, "5/41/5+5/7"},
		// BIGINT UNSIGNED AUTO_RANDOM(5): bits 63 to 59.
		{layouts.Discord, 5, 0xF800_0000_0000_0000, "5/42/5+5/7"},
		{layouts.Twitter, 1, 0x4000_0000_0000_0000, "1/41/5+5/11"},
		{layouts.Twitter, 4, 0x7800_0000_0000_0000, "4/41/5+5/8"}, // the example: 8 seq bits left
		{layouts.Instagram, 3, 0xE000_0000_0000_0000, "3/41/13/7"},
	} {
		l, err := tt.base.Sharded(tt.s, "")
		if err != nil {
			t.Fatalf("%s.Sharded(%d): %v", tt.base.Name, tt.s, err)
		}
		if l.Bits() != tt.bits || l.TotalBits() != tt.base.TotalBits() || l.ShardBits() != tt.s || l.Shards() != 1<<tt.s {
			t.Errorf("%s.Sharded(%d) = %s (%d bits, %d shards)", tt.base.Name, tt.s, l.Bits(), l.TotalBits(), l.Shards())
		}
		shift, width := l.KindShift(layouts.KindHash)
		if got := (uint64(1)<<width - 1) << shift; got != tt.shardMask {
			t.Errorf("%s.Sharded(%d): hash field mask %#x, want TiDB's %#x", tt.base.Name, tt.s, got, tt.shardMask)
		}
		// Time and node fields keep their widths and order, S bits lower (the sequence gave
		// up S bits); unit and epoch are unchanged.
		ts, _ := l.KindShift(layouts.KindTime)
		bts, _ := tt.base.KindShift(layouts.KindTime)
		if ts != bts-tt.s || l.TimeBits() != tt.base.TimeBits() || l.Unit != tt.base.Unit || !l.Epoch.Equal(tt.base.Epoch) {
			t.Errorf("%s.Sharded(%d) moved the time field from bit %d to %d", tt.base.Name, tt.s, bts, ts)
		}
	}
}

// TestShardedComposeCheck: stored IDs carry the hash of their other fields, decompose back,
// and Check refuses an ID whose hash field was changed.
func TestShardedComposeCheck(t *testing.T) {
	l, err := layouts.Twitter.Sharded(4, "")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int, l.Shards())
	for range 20000 {
		tick, node, seq := rng.Int64N(l.MaxTick()+1), rng.Uint64N(l.Nodes()), rng.Uint64N(1<<l.SeqBits())
		id, err := l.Compose(tick, node, seq)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := l.ComposeValue(tick, node, seq)
		if hash := id >> 59; id&^(0xf<<59) != v || hash != layouts.ShardHash(v, 4) {
			t.Fatalf("Compose = %#x, value %#x: the hash field is not ShardHash of the value", id, v)
		}
		if err := l.Check(id); err != nil {
			t.Fatalf("Check(%d): %v", id, err)
		}
		p := l.Decompose(id)
		if p.Tick != tick || p.Node != node || p.Seq != seq || p.Hash != id>>59 || p.Named[0].Name != "hash" {
			t.Fatalf("Decompose(%d) = %+v, want tick %d node %d seq %d", id, p, tick, node, seq)
		}
		counts[p.Hash]++
		if err := l.Check(id ^ 1<<59); !errors.Is(err, layouts.ErrRange) || !strings.Contains(err.Error(), "hash field holds") {
			t.Fatalf("Check of an ID with a flipped hash bit: %v", err)
		}
	}
	for h, n := range counts {
		if n < 20000/16*8/10 || n > 20000/16*12/10 {
			t.Errorf("shard %d holds %d of 20000 random IDs, want about %d", h, n, 20000/16)
		}
	}
}

// TestReversedComposeCheck: a reversed layout's stored ID is Reverse63 of its value, Decompose
// undoes it, Check refuses what no value reverses to, and a 64-bit layout stops at Int64Until.
func TestReversedComposeCheck(t *testing.T) {
	for _, base := range []layouts.Layout{layouts.Twitter, layouts.Discord, layouts.Sonyflake, {Name: "small", Fields: []layouts.Field{layouts.Time(30), layouts.Seq(10)}, Unit: time.Second}} {
		l := base.Clone()
		l.Reverse = true
		if err := l.Validate(); err != nil {
			t.Fatal(err)
		}
		if l.StoredBits() != 63 || l.TimeOrder() == nil || !errors.Is(l.TimeOrder(), layouts.ErrUnordered) {
			t.Errorf("%s reversed: StoredBits %d, TimeOrder %v", base.Name, l.StoredBits(), l.TimeOrder())
		}
		if want := base.Int64Until(); !l.RunsOut().Equal(want) {
			t.Errorf("%s reversed runs out %s, want %s (Int64Until)", base.Name, l.RunsOut(), want)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for range 5000 {
			tick, node, seq := rng.Int64N(l.MaxTick()+1), rng.Uint64N(l.Nodes()), rng.Uint64N(1<<l.SeqBits())
			id, err := l.Compose(tick, node, seq)
			if err != nil {
				t.Fatal(err)
			}
			v, _ := base.Compose(tick, node, seq)
			if id != layouts.Reverse63(v) || id>>63 != 0 {
				t.Fatalf("%s: Compose = %d, want Reverse63(%d) = %d", base.Name, id, v, layouts.Reverse63(v))
			}
			if err := l.Check(id); err != nil {
				t.Fatalf("%s: Check(%d): %v", base.Name, id, err)
			}
			if p := l.Decompose(id); p.Tick != tick || p.Node != node || p.Seq != seq {
				t.Fatalf("%s: Decompose(%d) = %+v", base.Name, id, p)
			}
		}
		if err := l.Check(1 << 63); !errors.Is(err, layouts.ErrRange) {
			t.Errorf("%s: Check(2^63) = %v", base.Name, err)
		}
		if tb := l.TotalBits(); tb < 63 {
			if err := l.Check(1); !errors.Is(err, layouts.ErrRange) {
				t.Errorf("%s: Check(1) = %v, want ErrRange (a %d-bit value reverses into the top bits)", base.Name, err, tb)
			}
		}
		if _, err := l.Compose(l.MaxTick()+1, 0, 0); !errors.Is(err, layouts.ErrRange) {
			t.Errorf("%s: Compose past MaxTick = %v", base.Name, err)
		}
	}
}

func TestShardedErrors(t *testing.T) {
	rev := layouts.Twitter.Clone()
	rev.Reverse = true
	for _, tt := range []struct {
		l    layouts.Layout
		bits uint
		from string
		want string
	}{
		{layouts.Twitter, 0, "", "want 1 to 15"},
		{layouts.Twitter, 16, "", "want 1 to 15"},
		{layouts.Twitter, 12, "", "12-bit seq field would leave it none"},
		{layouts.Twitter, 4, "time", "cannot come out of the time field"},
		{layouts.Twitter, 4, "region", `no field "region"`},
		{layouts.Twitter, 5, "worker", "5-bit worker field would leave it none"},
		{rev, 4, "", "reversed"},
	} {
		_, err := tt.l.Sharded(tt.bits, tt.from)
		if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s.Sharded(%d, %q) = %v, want ErrInvalid with %q", tt.l, tt.bits, tt.from, err, tt.want)
		}
	}
	twice, _ := layouts.Twitter.Sharded(2, "")
	if _, err := twice.Sharded(2, ""); !errors.Is(err, layouts.ErrInvalid) {
		t.Errorf("sharding twice: %v", err)
	}
	// Validate: the hash field sits on top, right above the time field, at most 15 bits wide,
	// never in a reversed layout.
	for _, tt := range []struct {
		fs   []layouts.Field
		rev  bool
		want string
	}{
		{[]layouts.Field{layouts.Time(41), layouts.Hash(4), layouts.Seq(12)}, false, "must be the top field"},
		{[]layouts.Field{layouts.Hash(4), layouts.Node("n", 4), layouts.Time(41), layouts.Seq(12)}, false, "directly above the time field"},
		{[]layouts.Field{layouts.Hash(16), layouts.Time(40), layouts.Seq(8)}, false, "at most 15"},
		{[]layouts.Field{layouts.Hash(4), layouts.Time(41), layouts.Seq(12)}, true, "both reversed and sharded"},
	} {
		l := layouts.Layout{Name: "x", Fields: tt.fs, Unit: time.Millisecond, Reverse: tt.rev}
		if err := l.Validate(); !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%s) = %v, want %q", l, err, tt.want)
		}
	}
}

// TestTickRuns: one run per shard, each holding exactly the IDs of the tick range in that
// shard.
func TestTickRuns(t *testing.T) {
	l, err := layouts.Discord.Sharded(3, "")
	if err != nil {
		t.Fatal(err)
	}
	first, last := int64(1_000_000), int64(1_000_999)
	runs, err := l.TickRuns(first, last)
	if err != nil || len(runs) != 8 {
		t.Fatalf("TickRuns = %d runs, %v", len(runs), err)
	}
	for h := 1; h < len(runs); h++ {
		if runs[h][0] <= runs[h-1][1] {
			t.Fatalf("runs %d and %d overlap or are out of order: %v", h-1, h, runs)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		tick := first - 500 + rng.Int64N(2000)
		id, _ := l.Compose(tick, rng.Uint64N(l.Nodes()), rng.Uint64N(1<<l.SeqBits()))
		h := l.Decompose(id).Hash
		in := id >= runs[h][0] && id <= runs[h][1]
		if want := tick >= first && tick <= last; in != want {
			t.Fatalf("ID %d of tick %d, shard %d: in its shard's run %v, want %v", id, tick, h, in, want)
		}
	}
	// Unsharded: one run, TickBounds. Reversed: ErrUnordered.
	if runs, err := layouts.Twitter.TickRuns(first, last); err != nil || len(runs) != 1 {
		t.Errorf("Twitter.TickRuns = %v, %v", runs, err)
	}
	rev := layouts.Twitter.Clone()
	rev.Reverse = true
	if _, err := rev.TickRuns(first, last); !errors.Is(err, layouts.ErrUnordered) {
		t.Errorf("reversed TickRuns: %v", err)
	}
}
