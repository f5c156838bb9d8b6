package idkit

import (
	"context"
	"fmt"
)

// This file holds what New puts around a scheme added with Register, for the prefix and mask
// settings (see New). Only Register makes it reachable (through entry.text), so that a program
// that registers no scheme does not link it: the light root stays light.

// Widther is an optional interface of a registered scheme (and its codec) whose 64-bit IDs use
// fewer than 64 bits, such as segment's, which stay positive as signed 64-bit integers. IDWidth
// returns how many low bits they use; New's mask= then permutes that width, so that masked IDs
// stay below 2^IDWidth and fit the same columns and JSON rules as the stored ones. A Layouter
// needs no Widther: its layout gives the width.
type Widther interface {
	IDWidth() int
}

// TakeText is for a registered scheme that applies the prefix and mask settings itself, for
// instance by building its codec with NewCodec from a spec that carries them (as the remote
// scheme does with its service's scheme): it returns them as written, "" when absent (New has
// checked them and loaded the mask key), and New then returns the scheme as it is instead of
// wrapping it. Its Parse must then read, and its AppendID (Formatter) write, the public text.
func (sp *Settings) TakeText() (prefix, mask string) {
	t := sp.takeText()
	if t == nil {
		return "", ""
	}
	return t.prefix, t.maskRef
}

// textWrapper applies the prefix and mask settings around what a registered scheme builds.
type textWrapper interface {
	scheme(sp *Settings, s Scheme) (Scheme, error)
	codec(sp *Settings, c Codec) (Codec, error)
}

// registeredText is the textWrapper Register gives every scheme it adds.
type registeredText struct{}

func (registeredText) scheme(sp *Settings, s Scheme) (Scheme, error) {
	pc, err := sp.wrapText(s)
	if err != nil || pc == nil {
		return s, err
	}
	return &publicScheme{publicCodec: *pc, s: s, name: pc.t.name(s.Name())}, nil
}

func (registeredText) codec(sp *Settings, c Codec) (Codec, error) {
	pc, err := sp.wrapText(c)
	if err != nil || pc == nil {
		return c, err
	}
	return *pc, nil
}

// publicCodec adds a text form to a registered scheme's codec. The codec still checks every
// ID it reads. Unwrap gives the codec, where As finds its optional interfaces (Layouter,
// TimeRanger): the layout and time bounds are the stored IDs', which the text form does not
// change.
type publicCodec struct {
	c Codec
	t *textForm
}

// Unwrap returns the registered scheme's own codec.
func (p publicCodec) Unwrap() Codec { return p.c }

func (p publicCodec) Parse(text string) (ID, error) {
	var v ID
	if p.t.typeid {
		tid, err := parseTypeID(text)
		if err != nil {
			return ID{}, err
		}
		if err := p.t.checkTypeID(tid, text); err != nil {
			return ID{}, err
		}
		v = ID{hi: tid.hi, lo: tid.lo, f: FormatUUID}
		if tid.bits == 64 {
			v.f = FormatDecimal
		}
	} else {
		var err error
		if v, err = Parse(text); err != nil {
			return ID{}, err
		}
	}
	id, err := p.t.reveal(v, text)
	if err != nil {
		return ID{}, err
	}
	// The scheme's own Parse checks the ID and gives it its format: 16 bytes read as a UUID
	// may be the scheme's ULID.
	got, err := p.c.Parse(id.String())
	if err != nil && id.Bits() == 128 {
		if u, uerr := p.c.Parse(ID{hi: id.hi, lo: id.lo, f: FormatULID}.String()); uerr == nil {
			return u, nil
		}
	}
	if err != nil {
		return ID{}, fmt.Errorf("%w (read from %s)", err, quote(text))
	}
	return got, nil
}

func (p publicCodec) Decode(id ID) (Parts, error) { return p.c.Decode(id) }

func (p publicCodec) AppendID(b []byte, id ID) ([]byte, error) {
	if id.IsZero() {
		return b, nil
	}
	if p.t.kind == maskPerm {
		if id.Bits() != 64 {
			return b, fmt.Errorf("%w: %s is a %d-bit ID; this scheme masks 64-bit IDs", ErrScheme, id, id.Bits())
		}
		if p.t.bits < 64 && id.lo>>p.t.bits != 0 {
			return b, fmt.Errorf("%w: %s has bits above the %d this scheme's IDs have", ErrScheme, id, p.t.bits)
		}
	}
	return p.t.append(b, id), nil
}

// publicScheme adds a text form to a registered scheme. It is a Batcher, ContextScheme,
// ContextBatcher and io.Closer whatever the scheme is (through NextBatchContext and
// NextContext, which fall back to Next, and a Close that does nothing for a scheme without
// one). The optional interfaces only the scheme can answer (Layouter, Noder, StatsReporter,
// Fenced, TimeRanger, and any a package defines) are not methods of publicScheme, which would
// take a type per combination of them: Unwrap gives the scheme, and As finds them there.
type publicScheme struct {
	publicCodec
	s    Scheme
	name string
}

// Unwrap returns the registered scheme.
func (p *publicScheme) Unwrap() Scheme { return p.s }

func (p *publicScheme) Name() string      { return p.name }
func (p *publicScheme) Next() (ID, error) { return p.s.Next() }

func (p *publicScheme) NextContext(ctx context.Context) (ID, error) { return NextContext(ctx, p.s) }

func (p *publicScheme) NextBatch(dst []ID) error {
	return NextBatchContext(context.Background(), p.s, dst)
}

func (p *publicScheme) NextBatchContext(ctx context.Context, dst []ID) error {
	return NextBatchContext(ctx, p.s, dst)
}

func (p *publicScheme) Close() error {
	if c, ok := p.s.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// wrapText gives a registered scheme's codec the spec's text form, unless the scheme applied
// it itself (Settings.TakeText). A mask permutes 64-bit IDs over the IDs' width: the layout's
// for a Layouter, IDWidth for a Widther, else 64 bits. A registered 128-bit scheme cannot be
// masked this way.
func (sp *Settings) wrapText(c Codec) (*publicCodec, error) {
	if sp.text == nil || sp.textTaken {
		return nil, nil
	}
	t := sp.text
	if t.maskRef != "" {
		bits := 64
		if l, ok := c.(Layouter); ok {
			bits = int(l.Layout().StoredBits())
		} else if w, ok := c.(Widther); ok {
			if bits = w.IDWidth(); bits < 1 || bits > 64 {
				return nil, sp.Errorf("mask=%s: the scheme says its IDs have %d bits; want 1 to 64", t.maskRef, bits)
			}
		}
		if err := t.bindPerm(sp, bits); err != nil {
			return nil, err
		}
	}
	return &publicCodec{c: c, t: t}, nil
}
