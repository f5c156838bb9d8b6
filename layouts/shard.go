package layouts

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
)

// MaxShardBits is the widest hash field: 2^15 shards, TiDB's upper bound for AUTO_RANDOM's
// shard bits (1 to 15). A time range over a sharded layout is one run of IDs per shard, so the
// width also bounds how many runs TickRuns returns.
const MaxShardBits = 15

// Hash returns a hash field of the given width (the shard bits), named "hash". A layout holds
// at most one, as its top field; see Sharded.
func Hash(bits uint) Field { return Field{Name: "hash", Kind: KindHash, Bits: bits} }

// ShardHash returns the hash field of a layout value v whose hash field is zero: the top
// width bits of MurmurHash3's 64-bit finalizer (fmix64) of v. The finalizer is a bijection
// of 64-bit words in which every input bit flips each output bit with probability about 1/2,
// so IDs that differ only in their sequence land on unrelated shards. width is 1 to 64.
func ShardHash(v uint64, width uint) uint64 {
	v ^= v >> 33
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	v *= 0xc4ceb9fe1a85ec53
	v ^= v >> 33
	return v >> (64 - width)
}

// Reverse63 reverses the low 63 bits of v: bit i becomes bit 62-i, and bit 63 of the result
// is zero. For v below 2^63 it is Spanner's BIT_REVERSE(v, preserve_sign => true), which
// bit_reversed_positive sequences apply to a counter, and it is its own inverse.
func Reverse63(v uint64) uint64 { return bits.Reverse64(v&(1<<63-1)) >> 1 }

// ReverseField reverses the width bits of v from bit shift up, in place: bit shift+i becomes
// bit shift+width-1-i, and the bits outside the field are kept. It is its own inverse. With
// shift 15 and width 48 it is CockroachDB's mapToUnorderedUniqueInt (pkg/util/unique), which
// unordered_unique_rowid() applies to unique_rowid()'s 48-bit timestamp above its 15 node
// bits. width is 1 to 64 and shift+width at most 64.
func ReverseField(v uint64, shift, width uint) uint64 {
	f := v >> shift & mask(width)
	return v&^(mask(width)<<shift) | bits.Reverse64(f)>>(64-width)<<shift
}

// Stored returns the stored ID of a layout value v whose hash field is zero: v with the hash
// field filled in (ShardHash of v, or of v without its sequence field with ShardByTick), or v's bit reversal over 63 bits for a reversed layout,
// or v with its time field reversed in place (ReverseField) for a time-reversed one, or v
// itself.
func (l Layout) Stored(v uint64) uint64 {
	if l.Reverse {
		return Reverse63(v)
	}
	if l.ReverseTime {
		return l.flipTime(v)
	}
	if hs, hb := l.KindShift(KindHash); hb > 0 {
		return v | ShardHash(l.hashInput(v), hb)<<hs
	}
	return v
}

// hashInput is what the hash field hashes of a value whose hash field is zero: the value, or
// with ShardByTick the value without its sequence field.
func (l Layout) hashInput(v uint64) uint64 {
	if l.ShardByTick {
		ss, sb := l.KindShift(KindSeq)
		return v &^ (mask(sb) << ss)
	}
	return v
}

// Value returns the layout value of a stored ID: the ID itself, or for a reversed layout its
// reversal (Reverse63 undoes itself), or for a time-reversed one the ID with its time field
// reversed back. The hash field is kept.
func (l Layout) Value(id uint64) uint64 {
	if l.Reverse {
		return Reverse63(id)
	}
	if l.ReverseTime {
		return l.flipTime(id)
	}
	return id
}

// flipTime reverses v's time field in place (ReverseTime), for Stored and Value alike.
//
//go:noinline
func (l Layout) flipTime(v uint64) uint64 {
	s, w := l.KindShift(KindTime)
	return ReverseField(v, s, w)
}

// ShardBits returns the width of the hash field, 0 when the layout has none.
func (l Layout) ShardBits() uint { return l.sumBits(KindHash) }

// Shards returns how many shards the hash field spreads IDs over: 2^ShardBits (1 without a
// hash field).
func (l Layout) Shards() uint64 { return 1 << l.ShardBits() }

// StoredBits returns how many low bits a stored ID may use: TotalBits, or 63 for a reversed
// layout, whose value is reversed over bits 0 to 62 whatever its width. A 64-bit mask of the
// stored IDs permutes this many bits.
func (l Layout) StoredBits() uint {
	if l.Reverse {
		return 63
	}
	return l.TotalBits()
}

// validHash checks the hash field f, field i of l.
func (l Layout) validHash(i int, f Field) error {
	var why string
	switch {
	case i != 0:
		why = "it must be the top field"
	case f.Bits > MaxShardBits:
		why = "at most 15 bits"
	case l.Reverse || l.ReverseTime:
		why = "the layout is both reversed and sharded"
	case len(l.Fields) < 2 || l.Fields[1].Kind != KindTime:
		why = "it must sit directly above the time field"
	default:
		return nil
	}
	return fmt.Errorf("%w: hash field %q (%d bits): %s", ErrInvalid, f.Name, f.Bits, why)
}

// Sharded returns l with a hash field of width shardBits on top, TiDB's AUTO_RANDOM shape: the
// hash's bits come out of the field named from (the sequence field when from is empty), and
// every other field keeps its order and width, so the layout's total width, time field and
// node fields are unchanged (they sit shardBits lower when the bits come from below them).
// With Twitter's 63 bits and shardBits 4 the IDs are
//
//	sign(0) | hash (4) | time (41) | datacenter (5) | worker (5) | seq (8)
//
// and with a layout of 64 bits the hash takes the top bit too (TiDB's BIGINT UNSIGNED shape).
//
// Stored IDs carry ShardHash of the other fields in the hash field: they stay unique (the
// hash is a function of bits that are unique on their own) and, within each of the 2^S
// shards, ordered by time. A generator's IDs in issue order are not increasing any more.
//
// Errors wrap ErrInvalid: a width of 0 or above MaxShardBits, an l that is invalid, reversed
// or sharded already, a from that names no field or the time field, or a field that would be
// left with no bits.
func (l Layout) Sharded(shardBits uint, from string) (Layout, error) {
	out := l.Clone()
	idx := -1
	for i, f := range out.Fields {
		if from == "" && f.Kind == KindSeq || from != "" && f.Name == from {
			idx = i
		}
	}
	var why string
	switch {
	case shardBits == 0 || shardBits > MaxShardBits:
		why = "want 1 to 15 (as TiDB's AUTO_RANDOM)"
	case l.ShardBits() > 0:
		why = "the layout has a hash field already"
	case idx < 0:
		why = "no field " + strconv.Quote(from) + " to take them from"
	case out.Fields[idx].Kind == KindTime:
		why = "they cannot come out of the time field"
	case out.Fields[idx].Bits <= shardBits:
		why = "the " + strconv.Itoa(int(out.Fields[idx].Bits)) + "-bit " + out.Fields[idx].Name + " field would leave it none"
	default:
		out.Fields[idx].Bits -= shardBits
		out.Fields = append([]Field{Hash(shardBits)}, out.Fields...)
		if err := out.Validate(); err != nil {
			return l, err
		}
		return out, nil
	}
	return l, fmt.Errorf("%w: %d shard bits on layout %s: %s", ErrInvalid, shardBits, l.label(), why)
}

// MaxTickRuns is the most runs TickRuns returns: 2^MaxShardBits, the shards of the widest
// hash field, and the ticks of the longest time range it answers for a time-reversed layout.
const MaxTickRuns = 1 << MaxShardBits

// TickRuns returns the runs of stored IDs, in ascending order, that hold every ID with a tick
// from first to last (both included): one run, TickBounds, for a time-ordered layout; one per
// shard for a sharded one, whose shard h holds h's hash bits over TickBounds of the fields
// below (runs[h] is shard h's); and for a time-reversed layout (ReverseTime) one per tick,
// the tick's reversed time field over every value of the bits below it, ascending, with runs
// that touch merged. Errors are those of TickBounds: ErrUnordered for a reversed layout, a
// node field above the time field, or a time-reversed range of more than MaxTickRuns ticks;
// ErrRange for ticks out of range.
func (l Layout) TickRuns(first, last int64) (runs [][2]uint64, err error) {
	if l.ReverseTime {
		return l.reversedTickRuns(first, last)
	}
	hs, hb := l.KindShift(KindHash)
	if hb == 0 {
		lo, hi, err := l.TickBounds(first, last)
		if err != nil {
			return nil, err
		}
		return [][2]uint64{{lo, hi}}, nil
	}
	lo, hi, err := l.unsharded().TickBounds(first, last)
	if err != nil {
		return nil, err
	}
	runs = make([][2]uint64, 1<<hb)
	for h := range runs {
		top := uint64(h) << hs
		runs[h] = [2]uint64{top | lo, top | hi}
	}
	return runs, nil
}

// unsharded is l without its hash field: the fields below it, as TickBounds sees them.
func (l Layout) unsharded() Layout {
	if l.ShardBits() == 0 {
		return l
	}
	out := l
	out.Fields = l.Fields[1:]
	out.ShardByTick = false
	return out
}

// reversedTickRuns is TickRuns for a time-reversed layout: each tick's IDs are one run, the
// reversed tick above every value of the fields below the time field.
func (l Layout) reversedTickRuns(first, last int64) ([][2]uint64, error) {
	plain := l
	plain.ReverseTime = false
	if _, _, err := plain.TickBounds(first, last); err != nil {
		return nil, err
	}
	if n := uint64(last - first + 1); n > MaxTickRuns {
		return nil, fmt.Errorf("%w: layout %s has its time field reversed: ticks %d to %d are %d runs of IDs, more than %d (narrow the range, or index a created_at column)",
			ErrUnordered, l.label(), first, last, n, MaxTickRuns)
	}
	shift, width := l.KindShift(KindTime)
	revs := make([]uint64, 0, last-first+1)
	for t := first; t <= last; t++ {
		revs = append(revs, bits.Reverse64(uint64(t))>>(64-width))
	}
	slices.Sort(revs)
	runs := make([][2]uint64, 0, len(revs))
	for _, r := range revs {
		lo, hi := r<<shift, r<<shift|mask(shift)
		if n := len(runs); n > 0 && runs[n-1][1]+1 == lo {
			runs[n-1][1] = hi
			continue
		}
		runs = append(runs, [2]uint64{lo, hi})
	}
	return runs, nil
}
