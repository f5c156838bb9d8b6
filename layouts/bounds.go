package layouts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Errors of the time-range arithmetic (TickRange, TickBounds, ULIDBounds, UUIDv7Bounds),
// wrapped with context; match them with errors.Is.
var (
	// ErrNoTicks reports a time range in which no tick of the layout starts: an empty range
	// (from not before to), one that ends at or before the epoch, one that starts at or after
	// the time field runs out, or one that lies inside a single tick.
	ErrNoTicks = errors.New("layouts: no tick starts in the time range")
	// ErrUnordered reports a layout whose IDs do not sort by time across nodes: a node field
	// sits above the time field, so the IDs of one time range are not one run of values.
	ErrUnordered = errors.New("layouts: time is not the top field")
)

// TimeOrder returns nil when the time field is the most significant field, so that the IDs of
// every node sort by time and those of a range of ticks form one contiguous run of values (all
// presets). Otherwise it returns an error wrapping ErrUnordered that says why: a reversed
// layout, a sharded one (whose runs, one per shard, TickRuns gives), or the fields above the
// time field.
func (l Layout) TimeOrder() error {
	if l.Reverse {
		return fmt.Errorf("%w: layout %s is reversed, its IDs spread over the whole key space", ErrUnordered, l.label())
	}
	if l.ReverseTime {
		return fmt.Errorf("%w: layout %s has its time field reversed, its IDs of a time range form one run per tick", ErrUnordered, l.label())
	}
	if hb := l.ShardBits(); hb > 0 {
		return fmt.Errorf("%w: layout %s is sharded, its IDs of a time range form one run per shard (%d)", ErrUnordered, l.label(), uint64(1)<<hb)
	}
	var above []string
	for _, f := range l.Fields {
		if f.Kind == KindTime {
			break
		}
		above = append(above, f.Name)
	}
	if len(above) == len(l.Fields) {
		return fmt.Errorf("%w: layout %s has no time field", ErrInvalid, l.label())
	}
	if len(above) > 0 {
		return fmt.Errorf("%w: layout %s puts %s above the time field, so the IDs of one time range are spread over the values of every node",
			ErrUnordered, l.label(), strings.Join(above, ", "))
	}
	return nil
}

// TickRange returns the first and the last tick whose start, the time Decompose gives an ID of
// that tick, lies in [from, to), clamped to the ticks the time field holds (0 to MaxTick). A
// from or to inside a tick thus moves to the start of the next tick.
//
// Errors wrap ErrNoTicks (from not before to, a range that ends at or before the epoch or
// starts at or after RunsOut, a range inside one tick, in which no tick starts) or
// ErrInvalid (an invalid layout).
func (l Layout) TickRange(from, to time.Time) (first, last int64, err error) {
	if err := l.Validate(); err != nil {
		return 0, 0, err
	}
	span := func() string {
		return "[" + from.UTC().Format(time.RFC3339Nano) + ", " + to.UTC().Format(time.RFC3339Nano) + ")"
	}
	switch {
	case !from.Before(to):
		return 0, 0, fmt.Errorf("%w: %s is empty: from must be before to", ErrNoTicks, span())
	case !to.After(l.Epoch):
		return 0, 0, fmt.Errorf("%w: %s ends at or before the epoch %s of layout %s", ErrNoTicks, span(),
			l.Epoch.UTC().Format(time.RFC3339Nano), l.label())
	case !from.Before(l.RunsOut()):
		return 0, 0, fmt.Errorf("%w: %s starts at or after %s, when the time field of layout %s runs out", ErrNoTicks, span(),
			l.RunsOut().UTC().Format(time.RFC3339Nano), l.label())
	}
	first = max(l.ceilTick(from), 0)
	last = min(l.ceilTick(to)-1, l.MaxTick())
	if first > last {
		in := l.Tick(from)
		return 0, 0, fmt.Errorf("%w: %s lies inside the tick of %v that starts at %s (layout %s)", ErrNoTicks, span(),
			l.Unit, l.tickTime(in).UTC().Format(time.RFC3339Nano), l.label())
	}
	return first, last, nil
}

// ceilTick returns the first tick that starts at or after t (ticks beyond int64 saturate).
func (l Layout) ceilTick(t time.Time) int64 {
	k := l.Tick(t)
	if k != math.MaxInt64 && k != math.MinInt64 && l.tickTime(k).Before(t) {
		k++
	}
	return k
}

// TickBounds returns the smallest and the largest ID that any node can have with a tick from
// first to last, both included: first's tick with every bit below the time field zero, and
// last's with every bit below it one. Compared as unsigned integers, an ID lies in [lo, hi]
// exactly when its tick lies in [first, last].
//
// Errors wrap ErrInvalid (an invalid layout), ErrUnordered (a node field above the time
// field, see TimeOrder) or ErrRange (first above last, or a tick outside 0 to MaxTick).
func (l Layout) TickBounds(first, last int64) (lo, hi uint64, err error) {
	if err := l.Validate(); err != nil {
		return 0, 0, err
	}
	if err := l.TimeOrder(); err != nil {
		return 0, 0, err
	}
	if first < 0 || last > l.MaxTick() || first > last {
		return 0, 0, fmt.Errorf("%w: ticks %d to %d: want 0 <= first <= last <= %d for the %d-bit time field of layout %s",
			ErrRange, first, last, l.MaxTick(), l.TimeBits(), l.label())
	}
	shift, _ := l.KindShift(KindTime)
	return uint64(first) << shift, uint64(last)<<shift | mask(shift), nil
}

// Millis48 returns the time field that ULIDs and UUIDv7s share, as a layout of their top 64
// bits: 48 bits of Unix milliseconds, then 16 other bits (a ULID's first entropy bits; a
// UUIDv7's version and rand_a), here called a sequence field. Its TickRange turns times into
// the millisecond ticks ULIDBounds and UUIDv7Bounds take.
func Millis48() Layout {
	return Layout{Name: "unix-ms-48", Fields: []Field{Time(48), Seq(16)}, Unit: time.Millisecond, Epoch: time.Unix(0, 0).UTC()}
}

// ULIDBounds returns the smallest and the largest ULID, as their 16 bytes, whose 48-bit
// millisecond time lies from first to last (both included): every entropy bit zero in lo and
// one in hi.
//
//	0                   1                   2                   3
//	0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      32_bit_uint_time_high                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     16_bit_uint_time_low      |  entropy: 0 in lo, 1 in hi    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                entropy (64 bits): 0 in lo, 1 in hi            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Errors wrap ErrRange: a tick outside 0 to 2^48-1, or first above last.
func ULIDBounds(first, last int64) (lo, hi [16]byte, err error) {
	if err := check48(first, last); err != nil {
		return lo, hi, err
	}
	binary.BigEndian.PutUint64(lo[:8], uint64(first)<<16)
	binary.BigEndian.PutUint64(hi[:8], uint64(last)<<16|0xffff)
	binary.BigEndian.PutUint64(hi[8:], math.MaxUint64)
	return lo, hi, nil
}

// UUIDv7Bounds returns the smallest and the largest RFC 9562 version 7 UUID, as their 16
// bytes, whose unix_ts_ms lies from first to last (both included). Both carry version 7 and
// the variant bits 10, which every UUIDv7 has; rand_a and rand_b are zero in lo and all ones
// in hi:
//
//	unix_ts_ms (48) | ver 0111 | rand_a (12) | var 10 | rand_b (62)
//	lo: first       | 7        | 0x000       | 10     | 0
//	hi: last        | 7        | 0xfff       | 10     | 2^62-1
//
// Errors wrap ErrRange: a tick outside 0 to 2^48-1, or first above last.
func UUIDv7Bounds(first, last int64) (lo, hi [16]byte, err error) {
	if err := check48(first, last); err != nil {
		return lo, hi, err
	}
	binary.BigEndian.PutUint64(lo[:8], uint64(first)<<16|0x7000)
	binary.BigEndian.PutUint64(lo[8:], 1<<63)
	binary.BigEndian.PutUint64(hi[:8], uint64(last)<<16|0x7fff)
	binary.BigEndian.PutUint64(hi[8:], 1<<63|(1<<62-1))
	return lo, hi, nil
}

func check48(first, last int64) error {
	if first < 0 || last > 1<<48-1 || first > last {
		return fmt.Errorf("%w: milliseconds %d to %d: want 0 <= first <= last <= 2^48-1", ErrRange, first, last)
	}
	return nil
}
