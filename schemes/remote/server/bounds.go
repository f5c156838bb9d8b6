package server

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
)

// farPast and farFuture stand for an open end of a time range: far enough out for every
// layout, near enough for time.Time (as idbench inspect uses them).
var (
	farPast   = time.Unix(-1<<62, 0)
	farFuture = time.Unix(1<<62, 0)
)

// timeRange is a Bounds request read: from and to (nil for an open end), or at.
type timeRange struct {
	from, to *time.Time
	at       bool
}

// readRange reads the times of a Bounds request with idkit.ParseTime. Errors are
// INVALID_ARGUMENT naming the field.
func readRange(from, to, at string) (timeRange, error) {
	var r timeRange
	if at != "" && (from != "" || to != "") {
		return r, connect.NewError(connect.CodeInvalidArgument, errors.New("give at alone, or from and to"))
	}
	for _, f := range []struct {
		name, v string
		dst     **time.Time
	}{{"from", from, &r.from}, {"to", to, &r.to}, {"at", at, &r.from}} {
		if f.v == "" {
			continue
		}
		t, err := idkit.ParseTime(f.v)
		if err != nil {
			return r, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s=%q: want an RFC 3339 time (2026-01-01T09:30:00Z, fractions allowed), a date (2026-01-01, midnight UTC) or Unix milliseconds", f.name, cut(f.v)))
		}
		*f.dst = &t
	}
	r.at = at != ""
	return r, nil
}

// bounds answers a Bounds request.
func (s *Server) bounds(req *v1.BoundsRequest) (*v1.BoundsResponse, error) {
	g, err := s.lookup(req.GetGenerator())
	if err != nil {
		return nil, err
	}
	r, err := readRange(req.GetFrom(), req.GetTo(), req.GetAt())
	if err != nil {
		return nil, err
	}
	return g.bounds(r)
}

// bounds returns the generator's bounds of r in the stored form: one range, or for a
// sharded snowflake layout one per shard (idkit.ShardBounds). Errors are INVALID_ARGUMENT
// wrapping idkit.ErrScheme (no time order) or idkit.ErrTimeRange (no ID in the range).
func (g *generator) bounds(r timeRange) (*v1.BoundsResponse, error) {
	c := g.s
	invalid := func(err error) error {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("generator %q: %w", g.name, err))
	}
	if _, ok := idkit.As[idkit.TimeRanger](c); !ok {
		_, _, err := idkit.Bounds(c, farPast, farFuture)
		return nil, invalid(err)
	}
	from, to := farPast, farFuture
	if r.from != nil {
		from = *r.from
	}
	if r.to != nil {
		to = *r.to
	}
	if r.from == nil || r.to == nil {
		// An open end stands for the whole life of the time field; say plainly when the given
		// end lies beyond it, rather than quoting a range to the end of time.
		all, err := idkit.ShardBounds(c, farPast, farFuture)
		if err != nil {
			return nil, invalid(err)
		}
		first, last := all[0].LoTime, all[0].HiTime
		switch {
		case r.from != nil && from.After(last):
			return nil, invalid(fmt.Errorf("%w: no ID has a decoded time at or after %s: the last tick of its time field starts at %s",
				idkit.ErrTimeRange, idkit.FormatTime(from), idkit.FormatTime(last)))
		case r.to != nil && !to.After(first):
			return nil, invalid(fmt.Errorf("%w: no ID has a decoded time before %s: its first tick starts at %s",
				idkit.ErrTimeRange, idkit.FormatTime(to), idkit.FormatTime(first)))
		}
	}
	rs, err := idkit.ShardBounds(c, from, to)
	if err != nil {
		return nil, invalid(err)
	}
	lo, hi := rs[0].Lo, rs[len(rs)-1].Hi
	out := &v1.BoundsResponse{
		LoText: lo.String(), HiText: hi.String(),
		LoTime: idkit.FormatTime(rs[0].LoTime), HiTime: idkit.FormatTime(rs[0].HiTime),
	}
	if lo.Bits() == 64 {
		out.Lo64, out.Hi64 = lo.Uint64(), hi.Uint64()
	} else {
		l, h := lo.Bytes16(), hi.Bytes16()
		out.Lo128, out.Hi128 = l[:], h[:]
	}
	switch {
	case len(rs) > 1:
		// The shards' IDs interleave: even for at, each shard's range needs its end.
		out.Where = idkit.Where("id", rs)
		out.Shards = make([]*v1.ShardRange, len(rs))
		for i, sr := range rs {
			out.Shards[i] = &v1.ShardRange{Shard: sr.Shard, Lo64: sr.Lo.Uint64(), Hi64: sr.Hi.Uint64(), LoText: sr.Lo.String(), HiText: sr.Hi.String()}
		}
	case r.at:
		out.Where = "id >= " + sqlLiteral(lo)
	default:
		out.Where = "id >= " + sqlLiteral(lo) + " AND id <= " + sqlLiteral(hi)
	}
	tick := tickOf(c)
	if tick > 0 {
		out.Tick = tick.String()
	}
	out.Note = boundsNote(tick, r.at)
	return out, nil
}

// sqlLiteral writes id as a SQL literal of its stored form: a 64-bit ID as its unsigned
// decimal, a 128-bit one as quoted text.
func sqlLiteral(id idkit.ID) string {
	if id.Bits() == 64 {
		return id.String()
	}
	return "'" + id.String() + "'"
}

// tickOf is the tick of a time-ordered scheme: its layout's unit, the millisecond for the
// 128-bit time-ordered schemes (ulid, uuidv7 and typeid, which is UUIDv7), 0 when unknown.
func tickOf(c idkit.Codec) time.Duration {
	if l, ok := idkit.As[idkit.Layouter](c); ok {
		return l.Layout().Unit
	}
	n, ok := c.(interface{ Name() string })
	if !ok {
		return 0
	}
	base, _, _ := strings.Cut(n.Name(), ":")
	switch base {
	case "ulid", "uuidv7", "typeid":
		return time.Millisecond
	}
	return 0
}

// boundsNote says how the bounds meet the times asked for.
func boundsNote(tick time.Duration, at bool) string {
	of := "ticks"
	if tick > 0 {
		of = "ticks of " + tick.String()
	}
	if at {
		return "exact on " + of + ": an ID is at or above lo exactly when its decoded time (the start of its tick) is at or after at; " +
			"an at inside a tick moves to the start of the next tick, so against a created_at column the rows can differ by at most one tick at that edge"
	}
	return "exact on " + of + ": an ID lies in [lo, hi] exactly when its decoded time (the start of its tick) lies in [from, to); " +
		"a from or to inside a tick moves to the start of the next tick, so against a created_at column the rows can differ by at most one tick at each edge"
}
