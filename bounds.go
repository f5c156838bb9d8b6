package idkit

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idkit/idkit/layouts"
)

// ErrTimeRange reports a time range that holds no ID of the scheme: from not before to, a
// range wholly before the scheme's epoch or after its time field runs out, or one that lies
// inside a single tick (no tick starts in it). See TimeRanger.
var ErrTimeRange = errors.New("idkit: no IDs in the time range")

// The time-ordered schemes and their codecs answer time ranges.
var (
	_ TimeRanger = layoutCodec{}
	_ TimeRanger = (*snowflakeScheme)(nil)
	_ TimeRanger = (*sonyflakeScheme)(nil)
	_ TimeRanger = ulidCodec{}
	_ TimeRanger = (*ulidScheme)(nil)
	_ TimeRanger = (*uuidv7Codec)(nil)
	_ TimeRanger = (*uuidv7Scheme)(nil)
)

// TimeRanger is implemented by the schemes whose IDs sort by time across all their nodes, and
// by their codecs (NewCodec): every snowflake layout whose time field is its top field (all
// the presets), sonyflake, ulid and uuidv7. Schemes without time order (uuidv4, segment) do
// not implement it; the package function Bounds says so with an error wrapping ErrUnordered.
// A snowflake layout with shard_bits, reverse=time or reverse=true implements it but refuses
// every range with an error wrapping ErrUnordered: a sharded layout's IDs of a time range are
// one run per shard and a time-reversed layout's one run per tick (ShardBounds gives them), a
// reversed layout's are no run at all.
//
// It answers "the rows made between two times" from the primary key alone:
//
//	lo, hi, err := idkit.Bounds(s, from, to)
//	rows, err := db.QueryContext(ctx, "SELECT … FROM t WHERE id >= $1 AND id <= $2", lo, hi)
//
// (ID's Value gives a database the form its column holds, for 64-bit and 128-bit IDs alike.)
//
// An ID's decoded time (Parts.Time) is the start of its tick: 1 ms for the twitter, discord,
// instagram and mastodon layouts, ULID and UUIDv7, 10 ms for sonyflake, 1 s for baidu, the
// spec's unit= for a custom layout. The bounds are exact on ticks: an ID lies in [lo, hi]
// exactly when its decoded time lies in [from, to), and a from or to inside a tick moves to
// the start of the next tick. A query by a wall-clock time that is not on a tick boundary can
// therefore differ from a query on a created_at column (the time the application read when it
// made the ID) by at most one tick at each edge.
type TimeRanger interface {
	// Bounds returns the smallest and the largest ID that any node of the scheme can issue
	// with a decoded time in [from, to): lo has every bit below the time at its smallest
	// allowed value and hi at its largest (a UUIDv7 keeps its version and variant bits). A
	// range that overlaps the life of the scheme's time field is clamped to it.
	//
	// Errors wrap ErrTimeRange (from not before to, a range wholly before the epoch or after
	// the time field runs out, a range inside one tick) or ErrUnordered (a custom layout with
	// a node field above the time field, whose IDs of one time range are no single run).
	Bounds(from, to time.Time) (lo, hi ID, err error)
}

// Bounds returns c's bounds of the time range [from, to) when c, or a codec it wraps (see As),
// is a TimeRanger (see there), and otherwise an error wrapping ErrUnordered that says c's IDs
// carry no time order.
func Bounds(c Codec, from, to time.Time) (lo, hi ID, err error) {
	tr, ok := As[TimeRanger](c)
	if !ok {
		name := "this scheme"
		if n, ok := c.(interface{ Name() string }); ok {
			name = n.Name()
		}
		return ID{}, ID{}, fmt.Errorf("%w: %s: its IDs are not ordered by time, so no range of IDs holds a time range (index a created_at column instead)", ErrUnordered, name)
	}
	return tr.Bounds(from, to)
}

// Range is one run of stored IDs, Lo to Hi (both included), that ShardBounds returns.
type Range struct {
	// Shard is the shard (the hash field's value) whose IDs the run holds; 0 for a layout
	// without a hash field (a time-reversed layout's runs, one per tick, are all shard 0).
	Shard  uint64
	Lo, Hi ID
	// LoTime and HiTime are the first and the last tick of the time range asked for, the
	// same for every run: for one range and for a sharded layout's, the decoded times of Lo
	// and Hi. (A sharded layout's Lo and Hi are no IDs of it, since their hash fields do not
	// match: Decode refuses them.)
	LoTime, HiTime time.Time
}

// ShardRanger is implemented by the schemes whose IDs of a time range form one run per shard:
// the snowflake layouts (and their codecs) with shard_bits, whose hash field on top spreads
// the IDs over 2^S shards, each ordered by time; and those with reverse=time, whose IDs of
// one tick form one run (a time range of n ticks is up to n runs, at most
// layouts.MaxTickRuns). Call it through ShardBounds, which answers for every time-ordered
// scheme.
type ShardRanger interface {
	// ShardBounds returns, for each shard in order, the smallest and the largest ID any node
	// can issue in that shard with a decoded time in [from, to); see TimeRanger.Bounds for
	// how the range meets ticks and the life of the time field. Errors are Bounds'.
	ShardBounds(from, to time.Time) ([]Range, error)
}

var (
	_ ShardRanger = layoutCodec{}
	_ ShardRanger = (*snowflakeScheme)(nil)
)

// ShardBounds returns the runs of stored IDs that hold exactly the IDs of c with a decoded
// time in [from, to): one per shard, in ascending order, for a sharded snowflake layout
// (shard_bits=S gives 2^S); one per tick for a time-reversed one (reverse=time; runs that
// touch are merged, and a range of more than layouts.MaxTickRuns ticks is refused with
// ErrUnordered); and for every other TimeRanger the one run Bounds returns. A query ORs them
// (Where writes the condition):
//
//	rs, err := idkit.ShardBounds(s, from, to)
//	rows, err := db.QueryContext(ctx, "SELECT … FROM t WHERE "+idkit.Where("id", rs))
//
// Errors wrap ErrTimeRange or ErrUnordered as Bounds'; a scheme without time order (uuidv4,
// segment, a reversed layout) gets Bounds' error.
func ShardBounds(c Codec, from, to time.Time) ([]Range, error) {
	if sr, ok := c.(ShardRanger); ok {
		return sr.ShardBounds(from, to)
	}
	lo, hi, err := Bounds(c, from, to)
	if err != nil {
		return nil, err
	}
	return oneRange(c, lo, hi)
}

// oneRange is the Range of a TimeRanger's bounds, with their decoded times.
func oneRange(c Codec, lo, hi ID) ([]Range, error) {
	pl, err := c.Decode(lo)
	if err != nil {
		return nil, fmt.Errorf("idkit: decoding the bounds: %w", err)
	}
	ph, err := c.Decode(hi)
	if err != nil {
		return nil, fmt.Errorf("idkit: decoding the bounds: %w", err)
	}
	return []Range{{Lo: lo, Hi: hi, LoTime: pl.Time, HiTime: ph.Time}}, nil
}

// Where returns the SQL condition on column that selects the IDs of ranges: "id >= lo AND
// id <= hi" for one range, and the ranges' conditions in parentheses joined by OR for more.
// 64-bit IDs are written as unsigned decimals, 128-bit ones as quoted text (UUID or ULID, as
// ID.String writes them). column is written as given: quote it yourself if it needs quotes.
func Where(column string, ranges []Range) string {
	var b strings.Builder
	for i, r := range ranges {
		if i > 0 {
			b.WriteString(" OR ")
		}
		if len(ranges) > 1 {
			b.WriteByte('(')
		}
		b.WriteString(column + " >= " + sqlLiteral(r.Lo) + " AND " + column + " <= " + sqlLiteral(r.Hi))
		if len(ranges) > 1 {
			b.WriteByte(')')
		}
	}
	return b.String()
}

// sqlLiteral writes id as a SQL literal of its stored form: a 64-bit ID as its unsigned
// decimal, a 128-bit one as quoted text.
func sqlLiteral(id ID) string {
	if id.Bits() == 64 {
		return id.String()
	}
	return "'" + id.String() + "'"
}

// ShardBounds implements ShardRanger for snowflake layouts: for a sharded one, one range per
// value of its hash field; for a time-reversed one, one per tick; otherwise Bounds.
func (c layoutCodec) ShardBounds(from, to time.Time) ([]Range, error) {
	if c.l.ShardBits() == 0 && !c.l.ReverseTime {
		lo, hi, err := c.Bounds(from, to)
		if err != nil {
			return nil, err
		}
		return oneRange(c, lo, hi)
	}
	first, last, err := c.l.TickRange(from, to)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTimeRange, err)
	}
	runs, err := c.l.TickRuns(first, last)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnordered, err)
	}
	out := make([]Range, len(runs))
	lt, ht := c.l.TickTime(first).UTC(), c.l.TickTime(last).UTC()
	for i, r := range runs {
		out[i] = Range{Lo: FromUint64(r[0]), Hi: FromUint64(r[1]), LoTime: lt, HiTime: ht}
		if c.l.ShardBits() > 0 {
			out[i].Shard = uint64(i)
		}
	}
	return out, nil
}

// Bounds implements TimeRanger for snowflake and sonyflake layouts. A sharded layout's IDs of
// a time range are one run per shard and a time-reversed layout's one per tick
// (ShardBounds), a reversed layout's no run at all: they get an error wrapping ErrUnordered
// that says so.
func (c layoutCodec) Bounds(from, to time.Time) (lo, hi ID, err error) {
	if err := c.l.TimeOrder(); err != nil {
		switch {
		case c.l.ShardBits() > 0:
			return ID{}, ID{}, fmt.Errorf("%w: %w; ShardBounds gives one range per shard", ErrUnordered, err)
		case c.l.ReverseTime:
			return ID{}, ID{}, fmt.Errorf("%w: %w; ShardBounds gives one range per tick", ErrUnordered, err)
		}
		return ID{}, ID{}, fmt.Errorf("%w: %w", ErrUnordered, err)
	}
	first, last, err := c.l.TickRange(from, to)
	if err != nil {
		return ID{}, ID{}, fmt.Errorf("%w: %w", ErrTimeRange, err)
	}
	l, h, err := c.l.TickBounds(first, last)
	if err != nil {
		return ID{}, ID{}, fmt.Errorf("idkit: bounds of layout %s: %w", c.l.Name, err)
	}
	return FromUint64(l), FromUint64(h), nil
}

// millisRange returns the Unix milliseconds of ULID and UUIDv7 times that start in [from, to).
func millisRange(from, to time.Time) (first, last int64, err error) {
	first, last, err = layouts.Millis48().TickRange(from, to)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrTimeRange, err)
	}
	return first, last, nil
}

// Bounds implements TimeRanger for ULIDs: 48 bits of milliseconds, then 80 bits of entropy,
// all zero in lo and all one in hi.
func (ulidCodec) Bounds(from, to time.Time) (lo, hi ID, err error) {
	first, last, err := millisRange(from, to)
	if err != nil {
		return ID{}, ID{}, err
	}
	l, h, err := layouts.ULIDBounds(first, last)
	if err != nil {
		return ID{}, ID{}, fmt.Errorf("idkit: bounds of ulid: %w", err)
	}
	return FromULID(l), FromULID(h), nil
}

// uuidv7Codec parses and decodes UUIDv7s and answers time ranges; the uuidv4 codec does not.
type uuidv7Codec struct {
	uuidScheme
}

// Bounds implements TimeRanger for UUIDv7s: unix_ts_ms, then version 7, rand_a, the variant
// and rand_b, with rand_a and rand_b all zero in lo and all one in hi.
func (*uuidv7Codec) Bounds(from, to time.Time) (lo, hi ID, err error) {
	first, last, err := millisRange(from, to)
	if err != nil {
		return ID{}, ID{}, err
	}
	l, h, err := layouts.UUIDv7Bounds(first, last)
	if err != nil {
		return ID{}, ID{}, fmt.Errorf("idkit: bounds of uuidv7: %w", err)
	}
	return FromUUID(l), FromUUID(h), nil
}
