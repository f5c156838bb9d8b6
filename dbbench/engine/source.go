package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit"
)

// Column is the kind of id column a row uses.
type Column int

const (
	ColIdentity    Column = iota // bigint identity, filled by the database
	ColBigint                    // 64-bit IDs as int64
	ColUint64                    // 64-bit IDs that set bit 63: numeric(20,0) / 8-byte BLOB / BIGINT UNSIGNED
	ColUUID                      // 128-bit IDs as 16 raw bytes
	ColText                      // canonical text, COLLATE "C"
	ColTextICU                   // canonical text, COLLATE "und-x-icu" (PostgreSQL)
	ColTextDefault               // canonical text, the database's default collation (InnoDB)
	ColUUIDNative                // 128-bit UUIDs in MariaDB's UUID type
	ColPublicText                // the scheme's public text (idkit.FormatID), a TypeID with its prefix, compared as bytes
)

// Row-name suffixes that store a 128-bit spec other than as 16 raw bytes:
// "uuidv7-text", "ulid-text-icu", "uuidv4-native", …
const (
	suffixText        = "-text"
	suffixTextICU     = "-text-icu"
	SuffixTextDefault = "-text-default"
	suffixNative      = "-native"
)

// ErrICUSQLite rejects the ICU row on SQLite, which has no ICU collations.
var ErrICUSQLite = fmt.Errorf("dbbench: scheme %q needs PostgreSQL (ICU collations); SQLite has none", RowULIDTextICU)

// ErrForInnoDB rejects a MariaDB/MySQL column type (a -text-default or -native row) elsewhere.
func ErrForInnoDB(label string) error {
	return fmt.Errorf("dbbench: scheme %q is for MariaDB/MySQL (--db mariadb-local or mysql://…)", label)
}

// typeIDTextSpec is the spec of the RowTypeIDText row: UUIDv7s shown as TypeIDs with a
// four-letter type prefix, "user_" and 26 characters, as an API would show a user's ID.
const typeIDTextSpec = "typeid:prefix=user"

// Row is one scheme to benchmark, resolved.
type Row struct {
	Label string // as asked for, with any password hidden (idkit.Redact)
	Spec  string // idkit spec, "" for bigserial
	Col   Column
	Canon string        // canonical spec of the first generator, with any password hidden
	Fleet FleetSettings // the simulated fleet, when Config.Nodes > 1 or Config.FleetRate > 0

	Shard     int    // instagram-plpgsql: the shard of next_id()
	StoreStep uint64 // segment: the step, with the store in the benchmark database
	// Unsigned is set for 64-bit layouts that use bit 63 on InnoDB, which
	// stores them in BIGINT UNSIGNED.
	Unsigned bool
	TextLen  int // characters of the text form, for text columns
}

// Value is one generated key, in the form sent to the database.
type Value struct {
	I64 int64
	U64 uint64 // for ColUint64 and unsigned rows
	B16 [16]byte
	Str string
}

// ResolveRow works out a row's column type by making one generator and one
// ID. Both honour ctx: a generator may wait a whole tick for its first ID.
// A label is a row name (RowBigserial, RowAutoIncrement, RowTypeIDText), an
// idkit spec, or a 128-bit spec followed by a storage suffix: "-text" (text,
// binary collation), "-text-icu" (PostgreSQL's ICU root collation),
// "-text-default" (the database's default collation, InnoDB) or "-native"
// (MariaDB's UUID type, for UUID specs only). A spec whose public text is a
// TypeID (the typeid scheme, or any scheme with prefix=) takes "-text" only,
// at any width: its keys are the public text (idkit.FormatID), compared as
// bytes. Row names and suffixes are matched without regard to case, as
// idkit.New matches scheme names.
func ResolveRow(ctx context.Context, label string) (Row, error) {
	if r, ok, err := resolveServerRow(label); ok {
		return r, err
	}
	switch l := strings.ToLower(label); l {
	case RowBigserial, RowAutoIncrement, RowTypeIDText:
		label = l
	}
	switch label {
	case RowBigserial, RowAutoIncrement:
		return Row{Label: label, Col: ColIdentity}, nil
	}
	spec, col := label, Column(-1)
	if label == RowTypeIDText {
		spec, col = typeIDTextSpec, ColText
	} else if _, err := idkit.NewCodec(label); err != nil {
		for _, sf := range []struct {
			suffix string
			col    Column
		}{{SuffixTextDefault, ColTextDefault}, {suffixTextICU, ColTextICU}, {suffixText, ColText}, {suffixNative, ColUUIDNative}} {
			if n := len(label) - len(sf.suffix); n > 0 && strings.EqualFold(label[n:], sf.suffix) {
				spec, col = label[:n], sf.col
				break
			}
		}
	}
	s, err := idkit.NewContext(ctx, spec)
	if err != nil {
		return Row{}, interrupted(ctx, fmt.Errorf("dbbench: scheme %q: %w", label, err))
	}
	defer closeScheme(s)
	id, err := idkit.NextContext(ctx, s)
	if err != nil {
		return Row{}, interrupted(ctx, fmt.Errorf("dbbench: scheme %q: first ID: %w", label, err))
	}
	// The spec is redacted apart from its storage suffix, which would otherwise read as part
	// of a mask=env:NAME reference ("env:NAME-text" is no variable name) and hide it.
	shown := idkit.Redact(label)
	if spec != label && strings.HasPrefix(label, spec) {
		shown = idkit.Redact(spec) + label[len(spec):]
	}
	r := Row{Label: shown, Spec: spec, Canon: idkit.Redact(s.Name()), Col: col}
	if col >= 0 && typeIDText(spec) {
		if col != ColText {
			return Row{}, fmt.Errorf("dbbench: scheme %q: %s shows its IDs as TypeID text, which dbbench stores with the suffix %q (its public text, compared as bytes), or as the ID itself without a suffix", label, s.Name(), suffixText)
		}
		text, err := idkit.FormatID(s, id)
		if err != nil {
			return Row{}, fmt.Errorf("dbbench: scheme %q: public text: %w", label, err)
		}
		r.Col, r.TextLen = ColPublicText, len(text)
		return r, nil
	}
	switch {
	case id.Bits() == 64 && col < 0:
		r.Col = ColBigint
		if setsBit63(s, id) {
			r.Col = ColUint64
		}
		if l, ok := idkit.As[idkit.Layouter](s); ok && l.Layout().TotalBits() == 64 {
			r.Unsigned = true
		}
	case id.Bits() == 128 && col < 0:
		r.Col = ColUUID
	case id.Bits() == 128 && col == ColUUIDNative:
		if !strings.HasPrefix(s.Name(), "uuid") {
			return Row{}, fmt.Errorf("dbbench: scheme %q: the UUID column type takes UUIDs only, and %s IDs are not UUIDs (their version and variant bits are not set)", label, s.Name())
		}
	case id.Bits() == 128:
		r.TextLen = len(id.String())
	default:
		return Row{}, fmt.Errorf("dbbench: scheme %q: a %d-bit ID has no %s form here; text and native forms are for 128-bit IDs", label, id.Bits(), strings.TrimPrefix(label, spec))
	}
	return r, nil
}

// typeIDText reports whether a spec's public text is TypeID text (a prefix, '_' and a
// fixed-width suffix, in ID order): the typeid scheme's, or any scheme's with prefix=.
func typeIDText(spec string) bool {
	sp, err := idkit.ParseSpec(spec)
	if err != nil {
		return false
	}
	_, prefixed := sp.Lookup("prefix")
	return sp.Scheme() == "typeid" || prefixed
}

// KeysOrdered reports whether a row's keys sort as its IDs do, so that an ID range is a key
// range: every column but public text holds the stored ID; public text keeps the order only
// without a mask (a masked public text is a keyed permutation of the ID, with no time order).
func KeysOrdered(r Row) bool {
	if r.Col != ColPublicText {
		return true
	}
	sp, err := idkit.ParseSpec(r.Spec)
	if err != nil {
		return false
	}
	return !sp.Has("mask")
}

// setsBit63 reports whether s makes, or within a day will make, 64-bit IDs
// with bit 63 set, which a signed bigint column cannot hold: a layout that
// uses all 64 bits (Discord, Instagram) past its Int64Until.
func setsBit63(s idkit.Scheme, first idkit.ID) bool {
	if first.Uint64() > math.MaxInt64 {
		return true
	}
	l, ok := idkit.As[idkit.Layouter](s)
	return ok && l.Layout().TotalBits() == 64 && time.Until(l.Layout().Int64Until()) < 24*time.Hour
}

// interrupted wraps err in ErrInterrupted when ctx has ended, as Run documents.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return err
}

func closeScheme(s idkit.Scheme) {
	if c, ok := s.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// NodeSpec returns the spec of generator i of k for a spec: Snowflake-family
// specs get a distinct node (sonyflake: machine) number; other schemes are
// independent generators of the same spec.
func NodeSpec(spec string, i, k int) (string, error) {
	if k == 1 || spec == "" { // "": a row whose keys the database makes
		return spec, nil
	}
	// Read the spec as idkit.New does (names and keys in any case), so that SNOWFLAKE and
	// snowflake get the same node numbers.
	sp, err := idkit.ParseSpec(spec)
	if err != nil {
		return "", fmt.Errorf("dbbench: %w", err)
	}
	var key string
	switch sp.Scheme() {
	case "snowflake":
		key = "node"
	case "sonyflake":
		key = "machine"
	default:
		return spec, nil
	}
	for _, field := range sp.Keys() {
		switch field {
		case "node", "machine", "worker", "datacenter", "process", "shard", "lease":
			return "", fmt.Errorf("dbbench: scheme %q sets a node field (%s), which conflicts with --nodes %d", sp, field, k)
		}
	}
	sep := ":"
	if len(sp.Keys()) > 0 {
		sep = ","
	}
	return strings.TrimSpace(spec) + sep + key + "=" + strconv.Itoa(i), nil
}

// Source generates the keys of one load: one generator, or a simulated fleet
// of nodes whose IDs interleave as their clocks order them (see fleet). It is
// safe for concurrent use.
type Source struct {
	Col      Column
	Unsigned bool
	Fleet    *Fleet       // the simulated fleet, or nil for gen
	gen      idkit.Scheme // the one generator when there is no fleet
	seq      atomic.Int64 // for ColIdentity on engines without sequences
}

// NewSource returns the keys of row r: from its generator, or from a simulated fleet of nodes
// generators when r.Fleet asks for one.
func NewSource(r Row, nodes int) (*Source, error) {
	s := &Source{Col: r.Col, Unsigned: r.Unsigned}
	if r.Col.ServerMade() {
		return s, nil
	}
	if r.Fleet.Rate > 0 {
		f, err := newFleet(r, nodes, r.Fleet)
		if err != nil {
			return nil, err
		}
		s.Fleet = f
		return s, nil
	}
	if nodes > 1 {
		// Config.fleet gives every run with more than one node a fleet; several plain
		// generators would interleave in an order no real fleet produces.
		return nil, fmt.Errorf("dbbench: scheme %q: %d nodes need the fleet simulation (Config.FleetRate above 0)", r.Label, nodes)
	}
	g, err := idkit.New(r.Spec)
	if err != nil {
		return nil, fmt.Errorf("dbbench: scheme %q: %w", r.Label, err)
	}
	s.gen = g
	return s, nil
}

// Durability describes the class of each store the source's generators rest on, credentials
// redacted; nil when they rest on none.
func (s *Source) Durability() []string {
	if s.Fleet != nil && s.Fleet.Durability != nil {
		return s.Fleet.Durability()
	}
	if s.gen == nil {
		return nil
	}
	ds, _ := idkit.DurabilityOf(s.gen)
	var out []string
	for _, d := range ds {
		out = append(out, idkit.Redact(d.String()))
	}
	return out
}

// Close releases the source's generators and stores.
func (s *Source) Close() {
	if s.Fleet != nil {
		s.Fleet.Close()
	}
	if s.gen != nil {
		closeScheme(s.gen)
		s.gen = nil
	}
}

// Next fills v with the next key; nextContext is the form whose generator waits end with ctx.
func (s *Source) Next(v *Value) error { return s.NextContext(context.Background(), v) }

// NextContext fills v with the next key. A generator that waits for its clock (a Snowflake
// layout with a long tick) stops when ctx is done, so Ctrl-C ends a load at once.
func (s *Source) NextContext(ctx context.Context, v *Value) error {
	if s.Col == ColIdentity {
		v.I64 = s.seq.Add(1)
		return nil
	}
	if s.Fleet != nil {
		return s.Fleet.Next(v)
	}
	g := s.gen
	id, err := idkit.NextContext(ctx, g)
	if err != nil {
		return fmt.Errorf("dbbench: generate ID: %w", err)
	}
	switch s.Col {
	case ColBigint:
		u := id.Uint64()
		v.U64 = u
		if u > math.MaxInt64 && !s.Unsigned {
			return fmt.Errorf("dbbench: scheme %s made ID %d, which does not fit a signed bigint column", g.Name(), u)
		}
		v.I64 = int64(u)
	case ColUint64:
		v.U64 = id.Uint64()
	case ColUUID:
		v.B16 = id.Bytes16()
	case ColUUIDNative:
		v.B16 = id.Bytes16()
	case ColText, ColTextICU, ColTextDefault:
		v.Str = id.String()
	case ColPublicText:
		if v.Str, err = idkit.FormatID(g, id); err != nil {
			return fmt.Errorf("dbbench: public text of an ID: %w", err)
		}
	}
	return nil
}

// Prefetch runs next in its own goroutine, so that generating keys overlaps
// with sending them, and hands them out in blocks. It keeps a fixed number
// of blocks in flight: memory does not grow with the row count.
type Prefetch struct {
	blocks chan []Value
	free   chan []Value
	errc   chan error
	cur    []Value
	pos    int
	cancel context.CancelFunc
	done   chan struct{}
}

const prefetchBlock = 1024

// NewPrefetch generates total keys of src ahead of the loader, in blocks, on a goroutine that
// ends when they are taken, when ctx ends or on Stop.
func NewPrefetch(ctx context.Context, src *Source, total int) *Prefetch {
	ctx, cancel := context.WithCancel(ctx)
	p := &Prefetch{
		blocks: make(chan []Value, 4),
		free:   make(chan []Value, 6),
		errc:   make(chan error, 1),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	for i := 0; i < 6; i++ {
		p.free <- make([]Value, prefetchBlock)
	}
	go func() {
		defer close(p.done)
		defer close(p.blocks)
		for left := total; left > 0; {
			var b []Value
			select {
			case b = <-p.free:
			case <-ctx.Done():
				return
			}
			n := min(left, prefetchBlock)
			b = b[:n]
			for i := range b {
				if err := src.NextContext(ctx, &b[i]); err != nil {
					p.errc <- err
					return
				}
			}
			left -= n
			select {
			case p.blocks <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	return p
}

// Next returns a pointer to the next key, valid until the following call.
func (p *Prefetch) Next() (*Value, error) {
	if p.pos == len(p.cur) {
		if p.cur != nil {
			p.free <- p.cur[:cap(p.cur)]
			p.cur = nil
		}
		b, ok := <-p.blocks
		if !ok {
			select {
			case err := <-p.errc:
				return nil, err
			default:
				return nil, fmt.Errorf("dbbench: key generator stopped early")
			}
		}
		p.cur, p.pos = b, 0
	}
	v := &p.cur[p.pos]
	p.pos++
	return v, nil
}

// Stop ends the generator goroutine and waits for it.
func (p *Prefetch) Stop() {
	p.cancel()
	<-p.done
}
