package layouts_test

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
)

// cockroachRowID is unique_rowid()'s shape as a layout: 48 bits of 10 µs ticks since
// 2015-01-01 on top, then 15 low bits (CockroachDB's node ID; idkit needs a sequence field, so
// the low bits are split into a node and a sequence field here, which the time reversal does
// not touch).
var cockroachRowID = layouts.Layout{
	Name:        "cockroach",
	Fields:      []layouts.Field{layouts.Time(48), layouts.Node("node", 10), layouts.Seq(5)},
	Unit:        10 * time.Microsecond,
	Epoch:       time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC),
	ReverseTime: true,
}

// TestReverseTimeCockroachVectors holds reverse=time to CockroachDB's known answers: the
// vectors of TestMapToUnorderedUniqueInt ("correctly reverses timestamp") in
// cockroachdb/cockroach pkg/util/unique/unique_test.go, which check mapToUnorderedUniqueInt,
// the map unordered_unique_rowid() applies to unique_rowid()'s value (cockroach PR #70338):
// its 48 timestamp bits reversed in place above the 15 node bits. Stored of a 48/15 layout
// with ReverseTime, and ReverseField(v, 15, 48), must give the same, and undo it.
func TestReverseTimeCockroachVectors(t *testing.T) {
	if err := cockroachRowID.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		input, expected uint64
	}{
		{"asymmetrical timestamp",
			0b0101100000000000000000000000000000000000000000000000000000000001,
			0b0000000000000000000000000000000000000000000001101000000000000001},
		{"symmetrical timestamp",
			0b0100000000000000000000000000000000000000000000001000000000000101,
			0b0100000000000000000000000000000000000000000000001000000000000101},
		{"max timestamp",
			0b0111111111111111111111111111111111111111111111111000000000000001,
			0b0111111111111111111111111111111111111111111111111000000000000001},
	} {
		if got := cockroachRowID.Stored(tc.input); got != tc.expected {
			t.Errorf("%s: Stored(%064b)\n = %064b\nwant %064b", tc.name, tc.input, got, tc.expected)
		}
		if got := layouts.ReverseField(tc.input, 15, 48); got != tc.expected {
			t.Errorf("%s: ReverseField = %064b, want %064b", tc.name, got, tc.expected)
		}
		if got := cockroachRowID.Value(tc.expected); got != tc.input {
			t.Errorf("%s: Value(%064b) = %064b, want the input back", tc.name, tc.expected, got)
		}
		p := cockroachRowID.Decompose(tc.expected)
		if uint64(p.Tick) != tc.input>>15 || p.Node<<5|p.Seq != tc.input&(1<<15-1) {
			t.Errorf("%s: Decompose = tick %d, node %d, seq %d; want the input's fields", tc.name, p.Tick, p.Node, p.Seq)
		}
	}
	// CockroachDB's other case, "preserves number of one bits", over random 63-bit values,
	// and the reversal against a bit-by-bit one.
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		v := r.Uint64() >> 1
		got := cockroachRowID.Stored(v)
		if bits.OnesCount64(got) != bits.OnesCount64(v) || cockroachRowID.Value(got) != v {
			t.Fatalf("Stored(%064b) = %064b: ones or round trip differ", v, got)
		}
		want := v & (1<<15 - 1)
		for i := range 48 {
			want |= (v >> (15 + i) & 1) << (15 + 47 - i)
		}
		if got != want {
			t.Fatalf("Stored(%064b) = %064b, want %064b", v, got, want)
		}
	}
}

// TestReverseTimeValidate: reverse=time excludes Reverse, a hash field, and a time field that
// holds bit 63.
func TestReverseTimeValidate(t *testing.T) {
	both := cockroachRowID
	both.Reverse = true
	discord := layouts.Discord.Clone()
	discord.ReverseTime = true
	notTop := layouts.Layout{Name: "x", Fields: []layouts.Field{layouts.Node("region", 4), layouts.Time(48), layouts.Seq(12)}, Unit: time.Millisecond, ReverseTime: true}
	for _, l := range []layouts.Layout{both, discord} {
		if err := l.Validate(); !errors.Is(err, layouts.ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", l, err)
		}
	}
	if err := notTop.Validate(); err != nil {
		t.Errorf("a 64-bit layout whose time field is not on top: %v", err)
	}
	if _, err := cockroachRowID.Sharded(3, ""); !errors.Is(err, layouts.ErrInvalid) {
		t.Errorf("Sharded of a time-reversed layout: %v, want ErrInvalid", err)
	}
	// Mastodon's time field is on top of 64 bits: refused; 63 bits of it are fine.
	m := layouts.Mastodon.Clone()
	m.ReverseTime = true
	if err := m.Validate(); err == nil {
		t.Error("mastodon with ReverseTime validated")
	}
	m.Fields[0].Bits = 47
	if err := m.Validate(); err != nil {
		t.Errorf("a 63-bit mastodon with ReverseTime: %v", err)
	}
}

// TestReverseTimeTickRuns checks TickRuns of a small time-reversed layout against every ID it
// can make: the runs hold exactly the IDs of the ticks asked for, ascending and disjoint,
// with touching runs merged.
func TestReverseTimeTickRuns(t *testing.T) {
	l := layouts.Layout{Name: "small", Fields: []layouts.Field{layouts.Time(4), layouts.Node("n", 1), layouts.Seq(1)}, Unit: time.Second, ReverseTime: true}
	if err := l.TimeOrder(); !errors.Is(err, layouts.ErrUnordered) {
		t.Fatalf("TimeOrder = %v, want ErrUnordered", err)
	}
	for first := int64(0); first < 16; first++ {
		for last := first; last < 16; last++ {
			runs, err := l.TickRuns(first, last)
			if err != nil {
				t.Fatal(err)
			}
			var in []uint64
			for tick := first; tick <= last; tick++ {
				for node := range uint64(2) {
					for seq := range uint64(2) {
						id, err := l.Compose(tick, node, seq)
						if err != nil {
							t.Fatal(err)
						}
						in = append(in, id)
					}
				}
			}
			slices.Sort(in)
			var got []uint64
			for i, r := range runs {
				if r[0] > r[1] || i > 0 && r[0] <= runs[i-1][1]+1 {
					t.Fatalf("ticks %d..%d: runs %v not ascending, disjoint and merged", first, last, runs)
				}
				for id := r[0]; id <= r[1]; id++ {
					got = append(got, id)
				}
			}
			if !slices.Equal(got, in) {
				t.Fatalf("ticks %d..%d: runs %v hold %v, want %v", first, last, runs, got, in)
			}
		}
	}
	if _, err := cockroachRowID.TickRuns(0, layouts.MaxTickRuns); !errors.Is(err, layouts.ErrUnordered) {
		t.Errorf("%d ticks: %v, want ErrUnordered", layouts.MaxTickRuns+1, err)
	}
	if runs, err := cockroachRowID.TickRuns(0, layouts.MaxTickRuns-1); err != nil || len(runs) == 0 {
		t.Errorf("%d ticks: %d runs, %v", layouts.MaxTickRuns, len(runs), err)
	}
}

// TestShardByTick: with ShardByTick one node's IDs of one tick share a shard (the hash of
// their time and node fields), Check accepts them and refuses another hash, the shard changes
// from tick to tick over every shard, and TickRuns still holds every ID of its ticks.
func TestShardByTick(t *testing.T) {
	l, err := layouts.Twitter.Sharded(5, "")
	if err != nil {
		t.Fatal(err)
	}
	l.ShardByTick = true
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	noHash := layouts.Twitter.Clone()
	noHash.ShardByTick = true
	if err := noHash.Validate(); !errors.Is(err, layouts.ErrInvalid) {
		t.Errorf("ShardByTick without a hash field: %v, want ErrInvalid", err)
	}
	const ticks = 3200
	hits := make([]int, 32)
	base := l.Tick(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	runs, err := l.TickRuns(base, base+ticks-1)
	if err != nil {
		t.Fatal(err)
	}
	for k := range int64(ticks) {
		// Every sequence number of the first ticks; the first and the last of the others.
		seqs := []uint64{0, 127}
		if k < 4 {
			seqs = seqs[:0]
			for seq := range uint64(128) {
				seqs = append(seqs, seq)
			}
		}
		var shard uint64
		for i, seq := range seqs {
			id, err := l.Compose(base+k, 3, seq)
			if err != nil {
				t.Fatal(err)
			}
			p := l.Decompose(id)
			if i == 0 {
				shard = p.Hash
				hits[shard]++
			}
			if p.Hash != shard || p.Seq != seq || p.Tick != base+k {
				t.Fatalf("tick %d seq %d: %+v, want shard %d", k, seq, p, shard)
			}
			if err := l.Check(id); err != nil {
				t.Fatal(err)
			}
			if err := l.Check(id ^ 1<<58); !errors.Is(err, layouts.ErrRange) {
				t.Fatalf("Check of an ID with another hash: %v", err)
			}
			if r := runs[p.Hash]; id < r[0] || id > r[1] {
				t.Fatalf("ID %d of shard %d outside its run %v", id, p.Hash, r)
			}
		}
	}
	for h, n := range hits {
		if n < ticks/32/2 {
			t.Errorf("shard %d is the shard of %d of %d ticks, want about %d", h, n, ticks, ticks/32)
		}
	}
}
