package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/idkit/idkit"
)

// farPast and farFuture are the ends of time for a query open on one side: far enough out for
// every layout (a 62-bit field of hours lasts 5e14 years), and near enough for time.Time.
func farPast() time.Time   { return time.Unix(-1<<62, 0) }
func farFuture() time.Time { return time.Unix(1<<62, 0) }

// boundsQuery is inspect's time-range mode: --from and --to (either may be left open), or --at.
type boundsQuery struct {
	spec     string
	from, to *time.Time // nil: open
	at       bool       // --at: only the lowest ID matters
}

// parseBoundsTime reads the value of a time flag with idkit's time parser.
func parseBoundsTime(flag, v string) (*time.Time, error) {
	t, err := idkit.ParseTime(v)
	if err != nil {
		return nil, usagef("inspect", "inspect: --%s %q: want an RFC 3339 time (2026-01-01T00:00:00Z, fractions allowed), a date (2026-01-01, midnight UTC) or Unix milliseconds", flag, v)
	}
	return &t, nil
}

// ranges answers q with codec c: the runs of IDs with a decoded time in the range (one, or
// one per shard of a sharded layout), and the decoded times of the first and the last tick.
func (q boundsQuery) ranges(c idkit.Codec) (rs []idkit.Range, loTime, hiTime time.Time, err error) {
	if _, ok := idkit.As[idkit.TimeRanger](c); !ok {
		_, _, err := idkit.Bounds(c, farPast(), farFuture())
		return nil, loTime, hiTime, fmt.Errorf("inspect: --scheme %s: %w", idkit.Redact(q.spec), err)
	}
	from, to := farPast(), farFuture()
	if q.from != nil {
		from = *q.from
	}
	if q.to != nil {
		to = *q.to
	}
	if q.from == nil || q.to == nil {
		// An open end stands for the whole life of the time field; say plainly when the
		// given end lies beyond it, rather than quoting a range to the end of time.
		all, err := idkit.ShardBounds(c, farPast(), farFuture())
		if err != nil {
			return nil, loTime, hiTime, fmt.Errorf("inspect: %w", err)
		}
		first, last := all[0].LoTime, all[0].HiTime
		switch {
		case q.from != nil && from.After(last):
			return nil, loTime, hiTime, fmt.Errorf("inspect: %w: no ID of %s has a decoded time at or after %s: the last tick of its time field starts at %s",
				idkit.ErrTimeRange, idkit.Redact(q.spec), formatTime(from), formatTime(last))
		case q.to != nil && !to.After(first):
			return nil, loTime, hiTime, fmt.Errorf("inspect: %w: no ID of %s has a decoded time before %s: its first tick starts at %s",
				idkit.ErrTimeRange, idkit.Redact(q.spec), formatTime(to), formatTime(first))
		}
	}
	rs, err = idkit.ShardBounds(c, from, to)
	if err != nil {
		return nil, loTime, hiTime, fmt.Errorf("inspect: %w", err)
	}
	return rs, rs[0].LoTime, rs[0].HiTime, nil
}

// sqlLiteral writes id as a SQL literal of its stored form: a 64-bit ID as its unsigned
// decimal, a 128-bit one as quoted text.
func sqlLiteral(id idkit.ID) string {
	if id.Bits() == 64 {
		return id.String()
	}
	return "'" + id.String() + "'"
}

// where writes the condition that selects the IDs from lo to hi (from lo on, for --at).
func (q boundsQuery) where(lo, hi idkit.ID) string {
	if q.at {
		return "id >= " + sqlLiteral(lo)
	}
	return "id >= " + sqlLiteral(lo) + " AND id <= " + sqlLiteral(hi)
}

// describe says in words what the bounds hold.
func (q boundsQuery) describe() string {
	name := idkit.Redact(q.spec)
	if q.at {
		return fmt.Sprintf("The lowest ID of %s with a decoded time at or after %s", name, formatTime(*q.from))
	}
	from, to := "its first tick", "the end of its time field"
	if q.from != nil {
		from = formatTime(*q.from)
	}
	if q.to != nil {
		to = formatTime(*q.to)
	}
	return fmt.Sprintf("IDs of %s with a decoded time from %s to before %s", name, from, to)
}

// runBounds prints the bounds of q as text or JSON.
func runBounds(stdout io.Writer, c idkit.Codec, q boundsQuery, asJSON bool) error {
	rs, loTime, hiTime, err := q.ranges(c)
	if err != nil {
		return err
	}
	if len(rs) > 1 {
		return runShardBounds(stdout, q, rs, loTime, hiTime, asJSON)
	}
	lo, hi := rs[0].Lo, rs[0].Hi
	if asJSON {
		return writeBoundsJSON(stdout, q, lo, hi, loTime, hiTime)
	}
	ew := &errWriter{w: stdout}
	ew.printf("%s:\n\n", q.describe())
	if ew.err != nil {
		return fmt.Errorf("inspect: writing: %w", ew.err)
	}
	t := newTable(stdout, "BOUND", "ID", "DECODED TIME")
	if err := t.row("lo", lo.String(), formatTime(loTime)); err != nil {
		return fmt.Errorf("inspect: writing: %w", err)
	}
	if !q.at {
		if err := t.row("hi", hi.String(), formatTime(hiTime)); err != nil {
			return fmt.Errorf("inspect: writing: %w", err)
		}
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("inspect: writing: %w", err)
	}
	ew.printf("\nWHERE %s\n", q.where(lo, hi))
	if lo.Format() == idkit.FormatULID {
		ulo, _ := lo.As(idkit.FormatUUID) // a 128-bit ID is both
		uhi, _ := hi.As(idkit.FormatUUID)
		ew.printf("(ULIDs kept as 16 bytes in a uuid column: WHERE %s)\n", q.where(ulo, uhi))
	}
	if top := max(lo.Uint64(), hi.Uint64()); lo.Bits() == 64 && top > math.MaxInt64 {
		ew.printf("(IDs above 2^63-1 do not fit a signed bigint; numeric(20,0) and BIGINT UNSIGNED hold them as these numbers)\n")
	}
	if ew.err != nil {
		return fmt.Errorf("inspect: writing: %w", ew.err)
	}
	return nil
}

// runShardBounds prints the ranges of a sharded layout, one per shard, as text or JSON. For
// --at each shard's range runs to the end of the time field: the shards' IDs interleave, so
// "id >= lo" alone would take in other shards' earlier IDs.
func runShardBounds(stdout io.Writer, q boundsQuery, rs []idkit.Range, loTime, hiTime time.Time, asJSON bool) error {
	where := idkit.Where("id", rs)
	if asJSON {
		j := q.jsonHead(rs[0].Lo, loTime, where)
		j.Hi, j.HiTime = str(rs[len(rs)-1].Hi.String()), str(formatTime(hiTime))
		for _, r := range rs {
			j.Shards = append(j.Shards, shardJSON{Shard: r.Shard, Lo: r.Lo.String(), Hi: r.Hi.String()})
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(j); err != nil {
			return fmt.Errorf("inspect: writing: %w", err)
		}
		return nil
	}
	ew := &errWriter{w: stdout}
	ew.printf("%s:\n", q.describe())
	ew.printf("the layout is sharded: its IDs lie in %d runs, one per value of its hash field, each ordered by time.\n", len(rs))
	ew.printf("Decoded times: lo %s, hi %s.\n\n", formatTime(loTime), formatTime(hiTime))
	if ew.err != nil {
		return fmt.Errorf("inspect: writing: %w", ew.err)
	}
	t := newTable(stdout, ">SHARD", "LO", "HI")
	for _, r := range rs {
		if err := t.row(strconv.FormatUint(r.Shard, 10), r.Lo.String(), r.Hi.String()); err != nil {
			return fmt.Errorf("inspect: writing: %w", err)
		}
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("inspect: writing: %w", err)
	}
	ew.printf("\nWHERE %s\n", where)
	if rs[len(rs)-1].Hi.Uint64() > math.MaxInt64 {
		ew.printf("(IDs above 2^63-1 do not fit a signed bigint; numeric(20,0) and BIGINT UNSIGNED hold them as these numbers)\n")
	}
	if ew.err != nil {
		return fmt.Errorf("inspect: writing: %w", ew.err)
	}
	return nil
}

// shardJSON is one shard's range in inspect's --json answer for a sharded layout.
type shardJSON struct {
	Shard uint64 `json:"shard"`
	Lo    string `json:"lo"`
	Hi    string `json:"hi"`
}

// boundsJSON is inspect's --json answer in time-range mode.
type boundsJSON struct {
	Scheme string  `json:"scheme"`
	From   *string `json:"from,omitempty"`
	To     *string `json:"to,omitempty"`
	At     *string `json:"at,omitempty"`
	Lo     string  `json:"lo"`
	LoTime string  `json:"lo_time"`
	Hi     *string `json:"hi,omitempty"`
	HiTime *string `json:"hi_time,omitempty"`
	LoUUID *string `json:"lo_uuid,omitempty"`
	HiUUID *string `json:"hi_uuid,omitempty"`
	// Shards holds a sharded layout's ranges, one per shard; Lo is then the first shard's
	// lowest ID and Hi the last shard's highest, and only Where selects exactly the range.
	Shards []shardJSON `json:"shards,omitempty"`
	Where  string      `json:"where"`
}

// str returns a pointer to s, for the optional fields of boundsJSON.
func str(s string) *string { return &s }

// jsonHead fills the fields of q's JSON answer that every form has: the scheme, the times
// asked for, lo and where.
func (q boundsQuery) jsonHead(lo idkit.ID, loTime time.Time, where string) boundsJSON {
	j := boundsJSON{Scheme: idkit.Redact(q.spec), Lo: lo.String(), LoTime: formatTime(loTime), Where: where}
	switch {
	case q.at:
		j.At = str(formatTime(*q.from))
	default:
		if q.from != nil {
			j.From = str(formatTime(*q.from))
		}
		if q.to != nil {
			j.To = str(formatTime(*q.to))
		}
	}
	return j
}

func writeBoundsJSON(w io.Writer, q boundsQuery, lo, hi idkit.ID, loTime, hiTime time.Time) error {
	j := q.jsonHead(lo, loTime, q.where(lo, hi))
	if !q.at {
		j.Hi, j.HiTime = str(hi.String()), str(formatTime(hiTime))
	}
	if lo.Format() == idkit.FormatULID {
		ulo, _ := lo.As(idkit.FormatUUID)
		j.LoUUID = str(ulo.String())
		if !q.at {
			uhi, _ := hi.As(idkit.FormatUUID)
			j.HiUUID = str(uhi.String())
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // keep "id >= lo" readable
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("inspect: writing: %w", err)
	}
	return nil
}
