package idkit_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// rangeSpecs are the layouts for range-partitioned databases the million-ID test covers, with
// the node each generator holds: sharded (TiDB's signed and unsigned AUTO_RANDOM shapes, the
// bits taken from another field, a custom hash field) and reversed (63- and 64-bit layouts),
// with and without prefix= and mask=.
var rangeSpecs = []struct {
	spec string
	node uint64
}{
	{"snowflake:shard_bits=4", 3},
	{"snowflake:layout=discord,shard_bits=5,prefix=ord", 1000},
	{"snowflake:shard_bits=2,shard_from=worker,mask=" + testMaskRef, 77},
	{"snowflake:fields=hash:3/time:40/node:10/seq:10,unit=1ms,epoch=2024-01-01,mask=" + testMaskRef, 5},
	{"snowflake:reverse=true", 37},
	{"snowflake:layout=discord,reverse=true,prefix=ord,mask=" + testMaskRef, 1023},
	{"snowflake:layout=sonyflake,reverse=true", 65535},
}

// TestRangeLayoutsMillion issues a million IDs per layout of rangeSpecs from the native
// generator on a simulated clock (so a layout with 7 sequence bits needs no 8 seconds of
// waiting) and checks: no ID repeats; each decodes to the generator's node and a time it was
// issued in; each goes through the public text and back; the layout values increase in issue
// order, and so do the stored IDs within each shard; every shard or every top-bit bucket of a
// reversed layout (past the fields below the sequence) gets its share; every ID of a sharded layout lies in its shard's range of
// ShardBounds. Under the race detector it issues 50,000; `make test` runs it once more without.
func TestRangeLayoutsMillion(t *testing.T) {
	setTestMaskKey(t)
	n, tolerance := 1_000_000, 10
	if raceEnabled {
		n, tolerance = 50_000, 15 // 15% of 50,000/32 is 6 standard deviations
	}
	for i, rs := range rangeSpecs {
		c, err := idkit.NewCodec(rs.spec)
		if err != nil {
			t.Fatalf("NewCodec(%q): %v", rs.spec, err)
		}
		l := c.(idkit.Layouter).Layout()
		t.Run(rs.spec, func(t *testing.T) {
			t.Parallel()
			start := time.Now().Truncate(time.Second)
			clk := &stepClock{now: start, rng: rand.New(rand.NewPCG(uint64(i), 11))}
			g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Node: rs.node, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]uint64, n)
			for done := 0; done < n; done += 4096 {
				if err := g.NextN(ids[done:min(n, done+4096)]); err != nil {
					t.Fatal(err)
				}
			}
			end := clk.Now().Add(time.Duration(1<<20) * l.Unit) // past the last tick issued
			sorted := slices.Clone(ids)
			slices.Sort(sorted)
			for j := 1; j < n; j++ {
				if sorted[j] == sorted[j-1] {
					t.Fatalf("ID %d issued twice", sorted[j])
				}
			}
			var ranges []idkit.Range
			if l.ShardBits() > 0 {
				if ranges, err = idkit.ShardBounds(c, start, end); err != nil || len(ranges) != int(l.Shards()) {
					t.Fatalf("ShardBounds: %d ranges, %v", len(ranges), err)
				}
			}
			hs, hb := l.KindShift(layouts.KindHash)
			buckets := make([]int, max(16, l.Shards()))
			// A reversed ID's top bits are its value's lowest: the fields below the
			// sequence (Sonyflake's machine), constant for one generator, then the
			// sequence's low bits, which spread one generator's IDs.
			ss, _ := l.KindShift(layouts.KindSeq)
			lastInShard := make([]uint64, l.Shards())
			var prevValue uint64
			var buf []byte
			for j, v := range ids {
				id := idkit.FromUint64(v)
				value := l.Value(v) &^ ((1<<hb - 1) << hs)
				if j > 0 && value <= prevValue {
					t.Fatalf("ID %d: layout value %d not above the one before, %d", j, value, prevValue)
				}
				prevValue = value
				p, err := c.Decode(id)
				if err != nil || p.Node != rs.node || p.Time.Before(start.Truncate(l.Unit)) || !p.Time.Before(end) {
					t.Fatalf("Decode(%d) = node %d time %v, %v; want node %d from %v", v, p.Node, p.Time, err, rs.node, start)
				}
				buf, err = idkit.AppendID(c, buf[:0], id)
				if err != nil {
					t.Fatal(err)
				}
				if back, err := c.Parse(string(buf)); err != nil || back != id {
					t.Fatalf("Parse(%q) = %s, %v; want %s", buf, back, err, id)
				}
				if hb > 0 {
					h := v >> hs & (1<<hb - 1)
					if v <= lastInShard[h] {
						t.Fatalf("ID %d of shard %d not above the shard's last, %d", v, h, lastInShard[h])
					}
					lastInShard[h] = v
					buckets[h]++
					if r := ranges[h]; r.Shard != h || v < r.Lo.Uint64() || v > r.Hi.Uint64() {
						t.Fatalf("ID %d of shard %d outside its ShardBounds range %+v", v, h, r)
					}
				} else {
					buckets[v>>(59-ss)&15]++
				}
			}
			k := len(buckets)
			if hb > 0 {
				k = int(l.Shards())
			}
			for b, got := range buckets[:k] {
				if want := n / k; got < want*(100-tolerance)/100 || got > want*(100+tolerance)/100 {
					t.Errorf("bucket %d of %d holds %d of %d IDs, want %d ± %d%%", b, k, got, n, want, tolerance)
				}
			}
		})
	}
}

// TestShardBounds: a sharded layout answers with one range per shard and Where ORs them; an
// unsharded one with Bounds' one range; a reversed one, and Bounds of a sharded one, with an
// error wrapping ErrUnordered (not ErrScheme: no ID is of another scheme) that says why.
func TestShardBounds(t *testing.T) {
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	c, err := idkit.NewCodec("snowflake:shard_bits=2")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := idkit.ShardBounds(c, from, to)
	if err != nil || len(rs) != 4 {
		t.Fatalf("ShardBounds = %v, %v", rs, err)
	}
	// Twitter's 2026-01-01 tick, shifted 20 bits (2 node+seq bits gone to the hash, 5+5+10 left).
	l := c.(idkit.Layouter).Layout()
	first, last := l.Tick(from), l.Tick(to)-1
	for h, r := range rs {
		lo, hi := uint64(h)<<61|uint64(first)<<20, uint64(h)<<61|uint64(last)<<20|(1<<20-1)
		if r.Shard != uint64(h) || r.Lo.Uint64() != lo || r.Hi.Uint64() != hi {
			t.Errorf("range %d = %+v, want shard %d [%d, %d]", h, r, h, lo, hi)
		}
	}
	want := fmt.Sprintf("(id >= %d AND id <= %d) OR (id >= %d AND id <= %d) OR (id >= %d AND id <= %d) OR (id >= %d AND id <= %d)",
		rs[0].Lo.Uint64(), rs[0].Hi.Uint64(), rs[1].Lo.Uint64(), rs[1].Hi.Uint64(), rs[2].Lo.Uint64(), rs[2].Hi.Uint64(), rs[3].Lo.Uint64(), rs[3].Hi.Uint64())
	if got := idkit.Where("id", rs); got != want {
		t.Errorf("Where = %s\nwant    %s", got, want)
	}
	if _, _, err := idkit.Bounds(c, from, to); !errors.Is(err, idkit.ErrUnordered) || errors.Is(err, idkit.ErrScheme) || !errors.Is(err, layouts.ErrUnordered) || !strings.Contains(err.Error(), "ShardBounds") {
		t.Errorf("Bounds of a sharded layout: %v", err)
	}
	if _, err := idkit.ShardBounds(c, to, from); !errors.Is(err, idkit.ErrTimeRange) {
		t.Errorf("ShardBounds of an empty range: %v", err)
	}
	for _, spec := range []string{"snowflake", "uuidv7", "ulid"} {
		c, _ := idkit.NewCodec(spec)
		lo, hi, _ := idkit.Bounds(c, from, to)
		rs, err := idkit.ShardBounds(c, from, to)
		if err != nil || len(rs) != 1 || rs[0].Lo != lo || rs[0].Hi != hi {
			t.Errorf("%s: ShardBounds = %v, %v; want Bounds' [%s, %s]", spec, rs, err, lo, hi)
		}
		if w := idkit.Where("id", rs); strings.Contains(w, "(") || !strings.Contains(w, lo.String()) {
			t.Errorf("%s: Where = %s", spec, w)
		}
	}
	for _, spec := range []string{"snowflake:reverse=true", "uuidv4"} {
		c, _ := idkit.NewCodec(spec)
		if _, err := idkit.ShardBounds(c, from, to); !errors.Is(err, idkit.ErrUnordered) || strings.Contains(err.Error(), "another scheme") {
			t.Errorf("%s: ShardBounds = %v, want ErrUnordered", spec, err)
		}
	}
	rev, _ := idkit.NewCodec("snowflake:reverse=true")
	if _, _, err := idkit.Bounds(rev, from, to); !errors.Is(err, layouts.ErrUnordered) || !strings.Contains(err.Error(), "reversed") {
		t.Errorf("Bounds of a reversed layout: %v", err)
	}
}

// TestRangeLayoutsRefuseOthers: a reversed or sharded codec refuses stored IDs its layout
// cannot make (a hash field that does not match, bits outside the reversed value), through
// Parse and Decode alike.
func TestRangeLayoutsRefuseOthers(t *testing.T) {
	for _, tt := range []struct {
		spec string
		id   uint64
		want string
	}{
		{"snowflake:shard_bits=4", 1, "hash field holds"},
		{"snowflake:fields=time:41/seq:12,reverse=true", 1, "not a reversed ID"},
		{"snowflake:layout=twitter,reverse=true", 1 << 63, "not a reversed ID"},
	} {
		c, err := idkit.NewCodec(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		_, perr := c.Parse(fmt.Sprint(tt.id))
		_, derr := c.Decode(idkit.FromUint64(tt.id))
		for _, err := range []error{perr, derr} {
			if !errors.Is(err, idkit.ErrScheme) || !errors.Is(err, layouts.ErrRange) {
				t.Errorf("%s: %d: %v, want ErrScheme and ErrRange", tt.spec, tt.id, err)
			}
		}
	}
}

// FuzzShardBounds feeds arbitrary ranges to sharded layouts: ShardBounds must not panic, must
// fail only with ErrTimeRange, and must otherwise give 2^S ascending, disjoint ranges whose
// decoded times lie in [from, to), each holding only its own shard's hash bits.
func FuzzShardBounds(f *testing.F) {
	f.Add(uint8(0), int64(1767225600000), int64(0), int64(1767312000000), int64(0))
	f.Add(uint8(1), int64(1288834974657), int64(1), int64(1288834974658), int64(0))
	f.Add(uint8(2), int64(-5), int64(0), int64(1<<48), int64(5))
	specs := []string{"snowflake:shard_bits=4", "snowflake:layout=discord,shard_bits=5", "snowflake:fields=hash:3/time:40/node:10/seq:10,unit=10ms,epoch=2024-01-01"}
	f.Fuzz(func(t *testing.T, which uint8, fromMs, fromNs, toMs, toNs int64) {
		c, err := idkit.NewCodec(specs[int(which)%len(specs)])
		if err != nil {
			t.Fatal(err)
		}
		from := time.UnixMilli(fromMs % (1 << 52)).Add(time.Duration(fromNs % 1e9))
		to := time.UnixMilli(toMs % (1 << 52)).Add(time.Duration(toNs % 1e9))
		rs, err := idkit.ShardBounds(c, from, to)
		if err != nil {
			if !errors.Is(err, idkit.ErrTimeRange) {
				t.Fatalf("[%v, %v): %v", from, to, err)
			}
			return
		}
		l := c.(idkit.Layouter).Layout()
		hs, hb := l.KindShift(layouts.KindHash)
		if len(rs) != 1<<hb || rs[0].LoTime.Before(from) || !rs[0].HiTime.Before(to) || rs[0].HiTime.Before(rs[0].LoTime) {
			t.Fatalf("[%v, %v): %d ranges, times %v to %v", from, to, len(rs), rs[0].LoTime, rs[0].HiTime)
		}
		for i, r := range rs {
			lo, hi := r.Lo.Uint64(), r.Hi.Uint64()
			if lo > hi || lo>>hs != uint64(i) || hi>>hs != uint64(i) || i > 0 && lo <= rs[i-1].Hi.Uint64() {
				t.Fatalf("[%v, %v): range %d = [%d, %d]", from, to, i, lo, hi)
			}
		}
	})
}

// TestReverseTimeScheme: a reverse=time scheme issues the stored forms of increasing layout
// values (its time field reversed in place, the rest kept), which decode to its node and the
// time they were made; ShardBounds answers a time range with one run per tick that holds every
// one of them and no ID of a tick outside it, and Bounds refuses, saying so (not "ID of
// another scheme").
func TestReverseTimeScheme(t *testing.T) {
	s, err := idkit.New("snowflake:reverse=time,node=3")
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	l := s.(idkit.Layouter).Layout()
	before := time.Now()
	ids := make([]idkit.ID, 10_000)
	if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
		t.Fatal(err)
	}
	var prev uint64
	first, last := int64(1<<62), int64(0)
	for i, id := range ids {
		v := l.Value(id.Uint64())
		if i > 0 && v <= prev {
			t.Fatalf("ID %d: layout value %d not above %d", i, v, prev)
		}
		prev = v
		if id.Uint64() != layouts.ReverseField(v, 22, 41) {
			t.Fatalf("ID %d = %d, want its value %d with bits 22 to 62 reversed", i, id.Uint64(), v)
		}
		p, err := s.Decode(id)
		if err != nil || p.Node != 3 || p.Time.Before(before.Truncate(time.Millisecond)) || p.Time.After(time.Now()) {
			t.Fatalf("Decode(%s) = node %d, time %v, %v", id, p.Node, p.Time, err)
		}
		tick := l.Tick(p.Time)
		first, last = min(first, tick), max(last, tick)
	}
	from, to := l.TickTime(first), l.TickTime(last+1)
	rs, err := idkit.ShardBounds(s, from, to)
	if err != nil || len(rs) == 0 || len(rs) > int(last-first+1) {
		t.Fatalf("ShardBounds over %d ticks: %d runs, %v", last-first+1, len(rs), err)
	}
	in := func(v uint64) bool {
		for _, r := range rs {
			if v >= r.Lo.Uint64() && v <= r.Hi.Uint64() {
				return true
			}
		}
		return false
	}
	for _, id := range ids {
		if !in(id.Uint64()) {
			t.Fatalf("ID %s outside the runs %v", id, rs)
		}
	}
	for _, tick := range []int64{first - 1, last + 1, last + 1000} {
		if out, _ := l.Compose(tick, 3, 0); in(out) {
			t.Errorf("an ID of tick %d (outside %d..%d) lies in the runs", tick, first, last)
		}
	}
	if !strings.Contains(idkit.Where("id", rs), "id >= ") {
		t.Errorf("Where = %s", idkit.Where("id", rs))
	}
	_, _, err = idkit.Bounds(s, from, to)
	if !errors.Is(err, idkit.ErrUnordered) || errors.Is(err, idkit.ErrScheme) || !strings.Contains(err.Error(), "one range per tick") || strings.Contains(err.Error(), "another scheme") {
		t.Errorf("Bounds of a time-reversed layout: %v", err)
	}
	if _, err := idkit.ShardBounds(s, from, from.Add(time.Hour)); !errors.Is(err, idkit.ErrUnordered) {
		t.Errorf("ShardBounds over an hour of 1 ms ticks: %v, want ErrUnordered (more than %d runs)", err, layouts.MaxTickRuns)
	}
}
