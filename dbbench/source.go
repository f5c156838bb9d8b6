package dbbench

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/idkit/idkit"
)

// column is the kind of id column a row uses.
type column int

const (
	colIdentity    column = iota // bigint identity, filled by the database
	colBigint                    // 64-bit IDs as int64
	colUUID                      // 128-bit IDs as 16 raw bytes
	colText                      // canonical text, COLLATE "C"
	colTextICU                   // canonical text, COLLATE "und-x-icu" (PostgreSQL)
	colTextDefault               // canonical text, the database's default collation (InnoDB)
	colUUIDNative                // 128-bit UUIDs in MariaDB's UUID type
)

// Row-name suffixes that store a 128-bit spec other than as 16 raw bytes:
// "uuidv7-text", "ulid-text-icu", "uuidv4-native", …
const (
	suffixText        = "-text"
	suffixTextICU     = "-text-icu"
	suffixTextDefault = "-text-default"
	suffixNative      = "-native"
)

// errICUSQLite rejects the ICU row on SQLite, which has no ICU collations.
var errICUSQLite = fmt.Errorf("dbbench: scheme %q needs PostgreSQL (ICU collations); SQLite has none", RowULIDTextICU)

// row is one scheme to benchmark, resolved.
type row struct {
	label string // as asked for
	spec  string // idkit spec, "" for bigserial
	col   column
	canon string // canonical spec of the first generator
	// unsigned is set for 64-bit layouts that use bit 63, which need an
	// unsigned column (BIGINT UNSIGNED on InnoDB).
	unsigned bool
	textLen  int // characters of the text form, for text columns
}

// value is one generated key, in the form sent to the database.
type value struct {
	i64 int64
	u64 uint64 // for unsigned rows
	b16 [16]byte
	str string
}

// resolveRow works out a row's column type by making one generator and one
// ID. A label is a row name (RowBigserial, RowAutoIncrement), an idkit spec,
// or a 128-bit spec followed by a storage suffix: "-text" (text, binary
// collation), "-text-icu" (PostgreSQL's ICU root collation),
// "-text-default" (the database's default collation, InnoDB) or "-native"
// (MariaDB's UUID type, for UUID specs only).
func resolveRow(label string) (row, error) {
	switch label {
	case RowBigserial, RowAutoIncrement:
		return row{label: label, col: colIdentity}, nil
	}
	spec, col := label, column(-1)
	if _, err := idkit.New(label); err != nil {
		for _, sf := range []struct {
			suffix string
			col    column
		}{{suffixTextDefault, colTextDefault}, {suffixTextICU, colTextICU}, {suffixText, colText}, {suffixNative, colUUIDNative}} {
			if base, ok := strings.CutSuffix(label, sf.suffix); ok && base != "" {
				spec, col = base, sf.col
				break
			}
		}
	}
	s, err := idkit.New(spec)
	if err != nil {
		return row{}, fmt.Errorf("dbbench: scheme %q: %w", label, err)
	}
	defer closeScheme(s)
	id, err := s.Next()
	if err != nil {
		return row{}, fmt.Errorf("dbbench: scheme %q: first ID: %w", label, err)
	}
	r := row{label: label, spec: spec, canon: s.Name(), col: col}
	switch {
	case id.Bits() == 64 && col < 0:
		r.col = colBigint
		if l, ok := s.(idkit.Layouter); ok && l.Layout().TotalBits() == 64 {
			r.unsigned = true
		}
	case id.Bits() == 128 && col < 0:
		r.col = colUUID
	case id.Bits() == 128 && col == colUUIDNative:
		if !strings.HasPrefix(s.Name(), "uuid") {
			return row{}, fmt.Errorf("dbbench: scheme %q: the UUID column type takes UUIDs only, and %s IDs are not UUIDs (their version and variant bits are not set)", label, s.Name())
		}
	case id.Bits() == 128:
		r.textLen = len(id.String())
	default:
		return row{}, fmt.Errorf("dbbench: scheme %q: a %d-bit ID has no %s form here; text and native forms are for 128-bit IDs", label, id.Bits(), strings.TrimPrefix(label, spec))
	}
	return r, nil
}

func closeScheme(s idkit.Scheme) {
	if c, ok := s.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// nodeSpec returns the spec of generator i of k for a spec: Snowflake-family
// specs get a distinct node (sonyflake: machine) number; other schemes are
// independent generators of the same spec.
func nodeSpec(spec string, i, k int) (string, error) {
	if k == 1 {
		return spec, nil
	}
	name, params, _ := strings.Cut(spec, ":")
	var key string
	switch name {
	case "snowflake":
		key = "node"
	case "sonyflake":
		key = "machine"
	default:
		return spec, nil
	}
	for _, kv := range strings.Split(params, ",") {
		field, _, _ := strings.Cut(kv, "=")
		switch strings.TrimSpace(field) {
		case "node", "machine", "worker", "datacenter", "process", "shard":
			return "", fmt.Errorf("dbbench: scheme %q sets a node field (%s), which conflicts with --nodes %d", spec, field, k)
		}
	}
	sep := ":"
	if params != "" {
		sep = ","
	}
	return spec + sep + key + "=" + strconv.Itoa(i), nil
}

// source generates the keys of one load: nodes generators whose IDs are
// interleaved round-robin, in the order rows are asked for. It is safe for
// concurrent use.
type source struct {
	col      column
	unsigned bool
	gens     []idkit.Scheme
	n        atomic.Uint64
	seq      atomic.Int64 // for colIdentity on engines without sequences
}

func newSource(r row, nodes int) (*source, error) {
	s := &source{col: r.col, unsigned: r.unsigned}
	if r.col == colIdentity {
		return s, nil
	}
	for i := 0; i < nodes; i++ {
		spec, err := nodeSpec(r.spec, i, nodes)
		if err != nil {
			s.close()
			return nil, err
		}
		g, err := idkit.New(spec)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("dbbench: scheme %q, node %d: %w", r.label, i, err)
		}
		s.gens = append(s.gens, g)
	}
	return s, nil
}

func (s *source) close() {
	for _, g := range s.gens {
		closeScheme(g)
	}
	s.gens = nil
}

// next fills v with the next key.
func (s *source) next(v *value) error {
	if s.col == colIdentity {
		v.i64 = s.seq.Add(1)
		return nil
	}
	g := s.gens[0]
	if len(s.gens) > 1 {
		g = s.gens[(s.n.Add(1)-1)%uint64(len(s.gens))]
	}
	id, err := g.Next()
	if err != nil {
		return fmt.Errorf("dbbench: generate ID: %w", err)
	}
	switch s.col {
	case colBigint:
		u := id.Uint64()
		v.u64 = u
		if u > math.MaxInt64 && !s.unsigned {
			return fmt.Errorf("dbbench: scheme %s made ID %d, which does not fit a signed bigint column", g.Name(), u)
		}
		v.i64 = int64(u)
	case colUUID:
		v.b16 = id.Bytes16()
	case colUUIDNative:
		v.b16 = id.Bytes16()
	case colText, colTextICU, colTextDefault:
		v.str = id.String()
	}
	return nil
}

// prefetch runs next in its own goroutine, so that generating keys overlaps
// with sending them, and hands them out in blocks. It keeps a fixed number
// of blocks in flight: memory does not grow with the row count.
type prefetch struct {
	blocks chan []value
	free   chan []value
	errc   chan error
	cur    []value
	pos    int
	cancel context.CancelFunc
	done   chan struct{}
}

const prefetchBlock = 1024

func newPrefetch(ctx context.Context, src *source, total int) *prefetch {
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetch{
		blocks: make(chan []value, 4),
		free:   make(chan []value, 6),
		errc:   make(chan error, 1),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	for i := 0; i < 6; i++ {
		p.free <- make([]value, prefetchBlock)
	}
	go func() {
		defer close(p.done)
		defer close(p.blocks)
		for left := total; left > 0; {
			var b []value
			select {
			case b = <-p.free:
			case <-ctx.Done():
				return
			}
			n := min(left, prefetchBlock)
			b = b[:n]
			for i := range b {
				if err := src.next(&b[i]); err != nil {
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

// next returns a pointer to the next key, valid until the following call.
func (p *prefetch) next() (*value, error) {
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

// stop ends the generator goroutine and waits for it.
func (p *prefetch) stop() {
	p.cancel()
	<-p.done
}
