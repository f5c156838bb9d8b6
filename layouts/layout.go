// Package layouts holds the bit arithmetic of 64-bit Snowflake-family IDs: which fields an ID
// has, in which order, how wide each is, what one time tick is worth and where time starts.
//
// A Layout is plain data. It validates itself, composes and decomposes IDs, and reports its
// capacity, node count and the date its time field runs out, and gives the smallest and the
// largest ID of a time range (TickRange, TickBounds; ULIDBounds and UUIDv7Bounds for the
// 128-bit time-ordered IDs, whose time field Millis48 describes). It generates nothing: the
// generators live in package schemes, and package idkit wraps both for users.
//
// The presets (Twitter, Discord, Instagram, Sonyflake, Mastodon, Baidu) carry their published
// bits and epochs. A custom layout is a Layout literal:
//
//	l := layouts.Layout{
//		Name:   "orders",
//		Fields: []layouts.Field{layouts.Time(40), layouts.Node("region", 4), layouts.Node("host", 8), layouts.Seq(11)},
//		Unit:   time.Millisecond,
//		Epoch:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
//	}
package layouts

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxUnit is the longest time unit (tick) a layout may have. A generator's first ID waits for
// the tick after the one it started in, and a generator that ran out of sequence numbers waits
// for the next tick, so the unit bounds those waits: an hour is already far coarser than any
// published layout (Baidu's second is the coarsest preset). The shortest unit is one
// nanosecond, the resolution of time.Duration and of the clock.
const MaxUnit = time.Hour

// Errors returned by Layout methods. They are wrapped with context; match them with errors.Is.
var (
	// ErrInvalid reports a layout that cannot describe an ID: a missing time or sequence
	// field, a sequence field above the time field, a zero-width field, a duplicate name, a
	// unit outside 1ns to MaxUnit or more than 64 bits.
	ErrInvalid = errors.New("layouts: invalid layout")
	// ErrRange reports a field value that does not fit its field.
	ErrRange = errors.New("layouts: value out of range")
	// ErrUnknownField reports a field name the layout does not have.
	ErrUnknownField = errors.New("layouts: unknown field")
)

// Kind says what a field holds.
type Kind uint8

// The kinds of field. Every layout has exactly one time field and one sequence field, any
// number (zero included) of node fields, and at most one hash field, on top (see Sharded).
const (
	KindTime Kind = iota + 1
	KindNode
	KindSeq
	KindHash
)

// String returns "time", "node", "seq" or "hash".
func (k Kind) String() string {
	switch k {
	case KindTime:
		return "time"
	case KindNode:
		return "node"
	case KindSeq:
		return "seq"
	case KindHash:
		return "hash"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Field is one run of bits in an ID.
type Field struct {
	Name string // "time", "seq", or the node part's name such as "worker"
	Kind Kind
	Bits uint
}

// Time returns the time field of the given width.
func Time(bits uint) Field { return Field{Name: "time", Kind: KindTime, Bits: bits} }

// Seq returns the sequence field of the given width.
func Seq(bits uint) Field { return Field{Name: "seq", Kind: KindSeq, Bits: bits} }

// Node returns a node field (or one named part of the node, such as "datacenter") of the given
// width.
func Node(name string, bits uint) Field { return Field{Name: name, Kind: KindNode, Bits: bits} }

// Layout describes a 64-bit Snowflake-family ID. Fields run from the most significant bit down;
// bits above the fields' total are zero. A layout whose fields total 63 bits or less always fits
// a signed int64 (a PostgreSQL bigint); one that uses all 64 bits does so until Int64Until.
//
// The node value of an ID is the concatenation of its node fields in layout order, so for
// Twitter's datacenter(5)+worker(5) the node is datacenter<<5 | worker.
//
// Three settings shape the IDs for range-partitioned databases (Spanner, CockroachDB, TiDB),
// where an ever-increasing key sends every insert to the last range. A hash field on top
// (Sharded, TiDB's AUTO_RANDOM shape) spreads the IDs over 2^S shards, each time-ordered.
// Reverse (Spanner's bit_reversed_positive) stores the bit reversal of the layout's value,
// which spreads them over the whole key space and gives up time order. ReverseTime
// (CockroachDB's unordered_unique_rowid) reverses the time field's bits alone, in place. The
// layout's value is what the fields compose; the stored ID is what Compose returns and
// Decompose and Check read.
type Layout struct {
	Name   string        // the preset's name, or a user's label
	Fields []Field       // from the most significant field down
	Unit   time.Duration // what one tick of the time field is worth
	Epoch  time.Time     // the instant whose tick is zero
	// Reverse stores each ID as the bit reversal of the layout's value over 63 bits: value
	// bit i becomes bit 62-i, and bit 63 stays zero (see Stored). A layout of 64 bits then
	// ends at Int64Until: MaxTick is the last tick whose value stays below 2^63.
	Reverse bool
	// ReverseTime stores each ID with its time field's bits reversed in place (tick bit i
	// becomes bit width-1-i of the field) and every other field where it was. On a layout of
	// 48 time bits on top of 15 low bits it is CockroachDB's mapToUnorderedUniqueInt, which
	// unordered_unique_rowid() applies to unique_rowid()'s value. The IDs of one tick stay one
	// run of values; those of consecutive ticks land far apart. It excludes Reverse and a hash
	// field, and a time field that holds bit 63 (its lowest bit would become the sign bit).
	ReverseTime bool
	// ShardByTick makes the hash field (see Sharded) a hash of the time and node fields only,
	// the value with its sequence field zeroed, so that one node's IDs of one tick share a
	// shard, as the rows of one transaction share TiDB's AUTO_RANDOM shard: a batch reserved
	// within one tick lands in one shard, and the shard still changes from tick to tick. It
	// needs a hash field.
	ShardByTick bool
}

// Validate reports whether l describes a usable ID. Its error wraps ErrInvalid and names the
// offending part.
//
// The time field must sit above the sequence field: the sequence restarts at zero on every
// tick, so with the sequence above the time an ID of a later tick would sort below the IDs of
// the tick before, and a generator's IDs would not increase. Node fields may sit anywhere: a
// generator's node is constant, so they do not change its order (Sonyflake puts the sequence
// above its machine field).
func (l Layout) Validate() error {
	var total uint
	var nTime, nSeq int
	var seqName string
	seen := make(map[string]bool, len(l.Fields))
	for i, f := range l.Fields {
		if f.Bits == 0 || f.Bits > 64 {
			return fmt.Errorf("%w: field %d (%q) has %d bits, want 1 to 64", ErrInvalid, i, f.Name, f.Bits)
		}
		if f.Name == "" {
			return fmt.Errorf("%w: field %d has no name", ErrInvalid, i)
		}
		if seen[f.Name] {
			return fmt.Errorf("%w: field name %q used twice", ErrInvalid, f.Name)
		}
		seen[f.Name] = true
		switch f.Kind {
		case KindTime:
			nTime++
			if seqName != "" {
				return fmt.Errorf("%w: sequence field %q sits above the time field %q; it must sit below, or IDs of a later tick sort below those of the tick before", ErrInvalid, seqName, f.Name)
			}
		case KindSeq:
			nSeq++
			seqName = f.Name
		case KindNode:
		case KindHash:
			if err := l.validHash(i, f); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: field %q has unknown kind %d", ErrInvalid, f.Name, f.Kind)
		}
		total += f.Bits
	}
	switch {
	case nTime != 1:
		return fmt.Errorf("%w: %d time fields, want exactly 1", ErrInvalid, nTime)
	case nSeq != 1:
		return fmt.Errorf("%w: %d sequence fields, want exactly 1", ErrInvalid, nSeq)
	case total > 64:
		return fmt.Errorf("%w: fields total %d bits (%s), more than 64", ErrInvalid, total, l.bitString())
	case l.Unit <= 0:
		return fmt.Errorf("%w: time unit %v must be positive", ErrInvalid, l.Unit)
	case l.Unit > MaxUnit:
		return fmt.Errorf("%w: time unit %v is longer than %v (a generator may wait a whole unit for its next tick)", ErrInvalid, l.Unit, MaxUnit)
	case l.TimeBits() > 62:
		return fmt.Errorf("%w: time field of %d bits, at most 62 are supported", ErrInvalid, l.TimeBits())
	}
	var why string
	switch {
	case l.ShardByTick && l.sumBits(KindHash) == 0:
		why = "shards by tick without a hash field"
	case l.ReverseTime && l.Reverse:
		why = "reverses both its whole value and its time field"
	case l.ReverseTime && total == 64 && l.Fields[0].Kind == KindTime:
		why = "has time on top of 64 bits: reversed in place, the tick's lowest bit would be the sign bit (use a 63-bit layout)"
	default:
		return nil
	}
	return fmt.Errorf("%w: layout %s %s", ErrInvalid, l.label(), why)
}

// bitString renders the widths as "41/5+5/12" in layout order.
func (l Layout) bitString() string {
	var b strings.Builder
	prevNode := false
	for i, f := range l.Fields {
		if i > 0 {
			if prevNode && f.Kind == KindNode {
				b.WriteByte('+')
			} else {
				b.WriteByte('/')
			}
		}
		fmt.Fprintf(&b, "%d", f.Bits)
		prevNode = f.Kind == KindNode
	}
	return b.String()
}

// Bits returns the widths in layout order, node parts joined by '+', e.g. "41/5+5/12".
func (l Layout) Bits() string { return l.bitString() }

// FieldList returns the fields as name:bits from the most significant down, joined by '/':
// "time:41/datacenter:5/worker:5/seq:12", the form idkit's fields= setting reads.
func (l Layout) FieldList() string {
	var b strings.Builder
	for i, f := range l.Fields {
		if i > 0 {
			b.WriteByte('/')
		}
		fmt.Fprintf(&b, "%s:%d", f.Name, f.Bits)
	}
	return b.String()
}

// TotalBits returns the sum of the field widths.
func (l Layout) TotalBits() uint {
	var n uint
	for _, f := range l.Fields {
		n += f.Bits
	}
	return n
}

func (l Layout) sumBits(k Kind) uint {
	var n uint
	for _, f := range l.Fields {
		if f.Kind == k {
			n += f.Bits
		}
	}
	return n
}

// TimeBits returns the width of the time field.
func (l Layout) TimeBits() uint { return l.sumBits(KindTime) }

// NodeBits returns the total width of the node fields.
func (l Layout) NodeBits() uint { return l.sumBits(KindNode) }

// SeqBits returns the width of the sequence field.
func (l Layout) SeqBits() uint { return l.sumBits(KindSeq) }

// Shift returns the position of the lowest bit of the named field and its width.
func (l Layout) Shift(name string) (shift, width uint, err error) {
	pos := l.TotalBits()
	for _, f := range l.Fields {
		pos -= f.Bits
		if f.Name == name {
			return pos, f.Bits, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: %q (layout %s has %s)", ErrUnknownField, name, l.label(), strings.Join(l.FieldNames(), ", "))
}

// KindShift returns the position and width of the time or sequence field.
func (l Layout) KindShift(k Kind) (shift, width uint) {
	pos := l.TotalBits()
	for _, f := range l.Fields {
		pos -= f.Bits
		if f.Kind == k {
			return pos, f.Bits
		}
	}
	return 0, 0
}

// FieldNames returns the field names in layout order.
func (l Layout) FieldNames() []string {
	names := make([]string, len(l.Fields))
	for i, f := range l.Fields {
		names[i] = f.Name
	}
	return names
}

// NodeFields returns the node fields in layout order.
func (l Layout) NodeFields() []Field {
	var out []Field
	for _, f := range l.Fields {
		if f.Kind == KindNode {
			out = append(out, f)
		}
	}
	return out
}

func (l Layout) label() string {
	if l.Name != "" {
		return l.Name
	}
	return l.bitString()
}

// IDsPerSecond returns the most IDs one node can issue per second: 2^seq per tick.
func (l Layout) IDsPerSecond() float64 {
	return math.Ldexp(1, int(l.SeqBits())) * float64(time.Second) / float64(l.Unit)
}

// Nodes returns how many distinct node values the layout holds (1 when it has no node field).
func (l Layout) Nodes() uint64 {
	n := l.NodeBits()
	if n >= 64 {
		return math.MaxUint64
	}
	return 1 << n
}

// MaxTick returns the largest tick the time field holds: 2^timeBits-1, or for a reversed
// layout of 64 bits the last tick whose value stays below 2^63 (Reverse works on 63 bits).
func (l Layout) MaxTick() int64 {
	if l.Reverse && l.TotalBits() == 64 {
		return l.int64Tick() - 1
	}
	return int64(1)<<l.TimeBits() - 1
}

// RunsOut returns the first instant the time field cannot hold: Epoch + 2^timeBits ticks.
// Times past the range of time.Time saturate.
func (l Layout) RunsOut() time.Time { return l.tickTime(l.MaxTick()).Add(l.Unit) }

// Int64Until returns the first instant at which IDs no longer fit a signed int64: RunsOut for
// layouts of 63 bits or less, earlier for those that use the 64th bit (Discord, Instagram,
// Mastodon), whose top time bit is the sign bit.
func (l Layout) Int64Until() time.Time { return l.tickTime(l.int64Tick()) }

// int64Tick returns the first tick whose IDs no longer fit a signed int64 (MaxTick+1 for
// layouts of 63 bits or less).
func (l Layout) int64Tick() int64 {
	if l.TotalBits() < 64 {
		return int64(1) << l.TimeBits()
	}
	shift, _ := l.KindShift(KindTime)
	if shift == 63 {
		// The time field is one bit wide at the top; every tick but zero sets the sign bit.
		return 1
	}
	// The first tick with bit 63 set is 2^(63-shift); tick values stay below it.
	return int64(1) << (63 - shift)
}

// tickTime returns Epoch + tick*Unit. A product beyond time.Duration's range (±292 years) is
// computed exactly in seconds and nanoseconds, so far-off run-out dates (Mastodon's year
// 10889) stay exact. Instants beyond time.Time's range saturate.
func (l Layout) tickTime(tick int64) time.Time {
	if d, ok := mulDuration(tick, l.Unit); ok {
		return l.Epoch.Add(d)
	}
	secs, nsec := int128Of(tick).mul(uint64(l.Unit)).divFloor(uint64(time.Second))
	sum := secs.add(int128Of(l.Epoch.Unix()))
	s, ok := sum.int64()
	if !ok {
		if sum.hi >= 0 {
			return time.Unix(math.MaxInt64/2, 0).In(l.Epoch.Location())
		}
		return time.Unix(math.MinInt64/2, 0).In(l.Epoch.Location())
	}
	return time.Unix(s, int64(l.Epoch.Nanosecond())+int64(nsec)).In(l.Epoch.Location())
}

// mulDuration returns tick*unit when it fits a Duration.
func mulDuration(tick int64, unit time.Duration) (time.Duration, bool) {
	if tick == 0 {
		return 0, true
	}
	p := tick * int64(unit)
	if p/tick != int64(unit) || (tick == -1 && unit == math.MinInt64) {
		return 0, false
	}
	return time.Duration(p), true
}

// TickTime returns the instant a tick stands for.
func (l Layout) TickTime(tick int64) time.Time { return l.tickTime(tick) }

// Tick returns the tick t falls in (rounding down), which may be negative before the epoch.
// It is exact at any distance from the epoch; ticks beyond int64 saturate.
func (l Layout) Tick(t time.Time) int64 {
	if d := t.Sub(l.Epoch); d > math.MinInt64 && d < math.MaxInt64 {
		q := int64(d / l.Unit)
		if d < 0 && d%l.Unit != 0 {
			q--
		}
		return q
	}
	// Sub saturated: count whole seconds and nanoseconds instead, floored.
	total := int128Of(t.Unix()).add(int128Of(l.Epoch.Unix()).neg()).mul(uint64(time.Second))
	total = total.add(int128Of(int64(t.Nanosecond() - l.Epoch.Nanosecond())))
	q, _ := total.divFloor(uint64(l.Unit))
	if v, ok := q.int64(); ok {
		return v
	}
	if q.hi >= 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// Parts is an ID taken apart by a Layout.
type Parts struct {
	Tick  int64     // the raw time field
	Time  time.Time // Epoch + Tick*Unit
	Node  uint64    // the node fields concatenated in layout order
	Seq   uint64
	Hash  uint64  // the hash field, the ID's shard (0 without one)
	Named []Value // every field, in layout order
}

// Value is one field's value, by name.
type Value struct {
	Name  string
	Kind  Kind
	Value uint64
}

// Decompose splits a stored ID into its fields, undoing Reverse. Bits outside the layout's
// value are ignored, and so is a hash field that does not match the other fields; call Check
// first where they matter.
func (l Layout) Decompose(id uint64) Parts {
	id = l.Value(id)
	p := Parts{Named: make([]Value, 0, len(l.Fields))}
	pos := l.TotalBits()
	for _, f := range l.Fields {
		pos -= f.Bits
		v := (id >> pos) & mask(f.Bits)
		p.Named = append(p.Named, Value{Name: f.Name, Kind: f.Kind, Value: v})
		switch f.Kind {
		case KindTime:
			p.Tick = int64(v)
		case KindSeq:
			p.Seq = v
		case KindNode:
			p.Node = p.Node<<f.Bits | v
		case KindHash:
			p.Hash = v
		}
	}
	p.Time = l.tickTime(p.Tick)
	return p
}

// Check reports whether id can have come from l: no bits set above the layout's total (for a
// reversed layout: none below the bits its value reverses into, and bit 63 clear), a hash
// field that matches the other fields, and for a reversed layout of 64 bits a tick no later
// than MaxTick. Its errors wrap ErrRange.
func (l Layout) Check(id uint64) error {
	total := l.TotalBits()
	if l.Reverse {
		// A reversed value fills bits 62 down to 63-total; bit 63 stays clear.
		if total > 63 {
			total = 63
		}
		if id>>63 != 0 || id&mask(63-total) != 0 {
			return fmt.Errorf("%w: %d is not a reversed ID of layout %s (bits 62 to %d)", ErrRange, id, l.label(), 63-total)
		}
		return nil
	}
	if total < 64 && id>>total != 0 {
		return fmt.Errorf("%w: %d has bits set above the %d bits of layout %s", ErrRange, id, total, l.label())
	}
	if hs, hb := l.KindShift(KindHash); hb > 0 {
		got, want := id>>hs&mask(hb), ShardHash(l.hashInput(id&^(mask(hb)<<hs)), hb)
		if got != want {
			return fmt.Errorf("%w: %d is not an ID of the sharded layout %s: its hash field holds %d, its other fields hash to %d", ErrRange, id, l.label(), got, want)
		}
	}
	return nil
}

// ComposeValue is Compose without the last steps of the stored form: the hash field stays
// zero and the value is not reversed. Generators compose with it and call Stored.
func (l Layout) ComposeValue(tick int64, node, seq uint64) (uint64, error) {
	if tick < 0 || tick > l.MaxTick() {
		return 0, fmt.Errorf("%w: tick %d outside the %d-bit time field of layout %s", ErrRange, tick, l.TimeBits(), l.label())
	}
	if nb := l.NodeBits(); node > mask(nb) {
		return 0, fmt.Errorf("%w: node %d outside the %d node bits of layout %s (0 to %d)", ErrRange, node, nb, l.label(), mask(nb))
	}
	if sb := l.SeqBits(); seq > mask(sb) {
		return 0, fmt.Errorf("%w: sequence %d outside the %d-bit sequence field of layout %s", ErrRange, seq, sb, l.label())
	}
	return l.compose(uint64(tick), node, seq), nil
}

// Compose builds the stored ID of a tick, a node value and a sequence number, checking each
// against its field: the fields' value, with the hash field filled in and reversed as the
// layout says (see Stored).
func (l Layout) Compose(tick int64, node, seq uint64) (uint64, error) {
	v, err := l.ComposeValue(tick, node, seq)
	if err != nil {
		return 0, err
	}
	return l.Stored(v), nil
}

func (l Layout) compose(tick, node, seq uint64) uint64 {
	var id uint64
	pos := l.TotalBits()
	nodeLeft := l.NodeBits()
	for _, f := range l.Fields {
		pos -= f.Bits
		var v uint64
		switch f.Kind {
		case KindTime:
			v = tick
		case KindSeq:
			v = seq
		case KindNode:
			nodeLeft -= f.Bits
			v = (node >> nodeLeft) & mask(f.Bits)
		}
		id |= v << pos
	}
	return id
}

// NodeOf combines named node-field values into one node value, e.g. {"datacenter": 1,
// "worker": 3} for Twitter. Fields not named are zero. Every name must be a node field of l
// and every value must fit its field.
func (l Layout) NodeOf(values map[string]uint64) (uint64, error) {
	var node uint64
	used := 0
	for _, f := range l.Fields {
		if f.Kind != KindNode {
			continue
		}
		v, ok := values[f.Name]
		if ok {
			used++
			if v > mask(f.Bits) {
				return 0, fmt.Errorf("%w: %s=%d does not fit its %d bits (0 to %d)", ErrRange, f.Name, v, f.Bits, mask(f.Bits))
			}
		}
		node = node<<f.Bits | v
	}
	if used != len(values) {
		for name := range values {
			if f, ok := l.field(name); !ok || f.Kind != KindNode {
				return 0, fmt.Errorf("%w: %q is not a node field of layout %s (node fields: %s)", ErrUnknownField, name, l.label(), strings.Join(nodeNames(l), ", "))
			}
		}
	}
	return node, nil
}

func nodeNames(l Layout) []string {
	var out []string
	for _, f := range l.NodeFields() {
		out = append(out, f.Name)
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func (l Layout) field(name string) (Field, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

func mask(bits uint) uint64 {
	if bits >= 64 {
		return math.MaxUint64
	}
	return 1<<bits - 1
}

// String describes the layout in one line, e.g. "twitter 41/5+5/12 1ms epoch
// 2010-11-04T01:42:54.657Z", with " reversed" at the end for a reversed layout and
// " time-reversed" for one whose time field is reversed (ReverseTime). A hash field
// shows as its width, first: "4/41/5+5/8".
func (l Layout) String() string {
	s := fmt.Sprintf("%s %s %v epoch %s", l.label(), l.bitString(), l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano))
	if l.Reverse {
		s += " reversed"
	}
	if l.ReverseTime {
		s += " time-reversed"
	}
	if l.ShardByTick {
		s += " sharded-by-tick"
	}
	return s
}
