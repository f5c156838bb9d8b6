package idkit

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/idkit/idkit/schemes"
)

func buildULID(_ context.Context, sp *Settings) (Scheme, error) {
	mono, err := sp.Bool("monotonic", true)
	if err != nil {
		return nil, err
	}
	if err := sp.Done("monotonic"); err != nil {
		return nil, err
	}
	g, err := schemes.NewULID(schemes.ULIDSettings{NonMonotonic: !mono})
	if err != nil {
		return nil, fmt.Errorf("idkit: starting %s: %w", quote(sp.String()), err)
	}
	name := "ulid"
	if !mono {
		name = "ulid:monotonic=false"
	}
	t := sp.textMasked(maskULID)
	return &ulidScheme{ulidCodec: ulidCodec{t}, g: g, name: t.name(name)}, nil
}

// codecULID reads a ulid spec for NewCodec: every ULID parses and decodes alike.
func codecULID(sp *Settings) (Codec, error) {
	if _, err := sp.Bool("monotonic", true); err != nil {
		return nil, err
	}
	if err := sp.Done("monotonic"); err != nil {
		return nil, err
	}
	return ulidCodec{sp.textMasked(maskULID)}, nil
}

// ulidScheme wraps schemes.ULID.
type ulidScheme struct {
	ulidCodec
	g    *schemes.ULID
	name string
}

// ulidCodec parses, formats and decodes ULIDs.
type ulidCodec struct {
	t *textForm // nil: ULID text
}

func (s *ulidScheme) Name() string { return s.name }

func (s *ulidScheme) Next() (ID, error) {
	b, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromULID(b), nil
}

func (c ulidCodec) Parse(text string) (ID, error) {
	if c.t == nil {
		return parseULID(text)
	}
	return c.t.parse(text, FormatULID, parseULID)
}

func parseULID(text string) (ID, error) {
	if len(text) != ulid.EncodedSize {
		return ID{}, fmt.Errorf("%w: %s: a ULID has %d characters, not %d", ErrSyntax, quote(text), ulid.EncodedSize, len(text))
	}
	return Parse(text)
}

// AppendID appends the public text: the ULID, or the scheme's prefixed or masked form. A
// 128-bit ID of UUID format is written as the ULID with its bytes.
func (c ulidCodec) AppendID(b []byte, id ID) ([]byte, error) {
	if id.IsZero() {
		return b, nil
	}
	if id.Bits() != 128 {
		return b, fmt.Errorf("%w: %s is a %d-bit %s, not a ULID", ErrScheme, id, id.Bits(), id.Format())
	}
	id.f = FormatULID
	if c.t == nil {
		return id.appendText(b), nil
	}
	return c.t.append(b, id), nil
}

func (ulidCodec) Decode(id ID) (Parts, error) {
	if id.Bits() != 128 {
		return Parts{}, fmt.Errorf("%w: %s is a %d-bit %s, not a ULID", ErrScheme, id, id.Bits(), id.Format())
	}
	ms := id.hi >> 16
	return Parts{Time: time.UnixMilli(int64(ms)).UTC(), Fields: []Field{{Name: "time", Value: ms}}}, nil
}

func buildUUIDv7(_ context.Context, sp *Settings) (Scheme, error) {
	if err := sp.Done(); err != nil {
		return nil, err
	}
	g, _ := schemes.NewUUIDv7(schemes.UUIDSettings{})
	return &uuidv7Scheme{uuidv7Codec{uuidScheme{version: 7, t: sp.textMasked(maskUUIDv47)}}, g}, nil
}

// buildTypeID builds the typeid scheme: UUIDv7s whose public text is a TypeID, with the
// spec's prefix or the empty one.
func buildTypeID(_ context.Context, sp *Settings) (Scheme, error) {
	c, err := codecTypeID(sp)
	if err != nil {
		return nil, err
	}
	g, _ := schemes.NewUUIDv7(schemes.UUIDSettings{})
	return &uuidv7Scheme{*c.(*uuidv7Codec), g}, nil
}

// codecTypeID reads a typeid spec: its Parse takes any TypeID of its prefix, version 7 or not,
// as the TypeID specification asks.
func codecTypeID(sp *Settings) (Codec, error) {
	if err := sp.Done(); err != nil {
		return nil, err
	}
	t := sp.textMasked(maskUUIDv47)
	if t == nil {
		t = &textForm{}
	}
	t.typeid = true
	return &uuidv7Codec{uuidScheme{version: 7, t: t, typeid: true}}, nil
}

// codecUUID returns the NewCodec function of UUID version v, which takes no settings of its
// own.
func codecUUID(v int) CodecFunc {
	return func(sp *Settings) (Codec, error) {
		if err := sp.Done(); err != nil {
			return nil, err
		}
		switch v {
		case 4:
			return uuidv4Codec(sp)
		case 7:
			return &uuidv7Codec{uuidScheme{version: v, t: sp.textMasked(maskUUIDv47)}}, nil
		}
		return &uuidScheme{version: v}, nil
	}
}

// uuidv4Codec refuses a mask: a UUIDv4 tells nothing a mask could hide.
func uuidv4Codec(sp *Settings) (*uuidScheme, error) {
	t := sp.takeText()
	if t != nil && t.maskRef != "" {
		return nil, sp.Errorf("mask=%s: a UUIDv4 is random: it shows no time, node or count to hide (for ordered keys with opaque public text, mask a uuidv7)", t.maskRef)
	}
	return &uuidScheme{version: 4, t: t}, nil
}

func buildUUIDv4(_ context.Context, sp *Settings) (Scheme, error) {
	if err := sp.Done(); err != nil {
		return nil, err
	}
	c, err := uuidv4Codec(sp)
	if err != nil {
		return nil, err
	}
	g, _ := schemes.NewUUIDv4(schemes.UUIDSettings{})
	return &uuidv4Scheme{*c, g}, nil
}

// uuidv4Scheme and uuidv7Scheme wrap the generators by their concrete types (no function value
// in between), so that the adapter adds as little as it can to the library call.
type uuidv4Scheme struct {
	uuidScheme
	g *schemes.UUIDv4
}

func (s *uuidv4Scheme) Next() (ID, error) {
	b, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromUUID(b), nil
}

type uuidv7Scheme struct {
	uuidv7Codec
	g *schemes.UUIDv7
}

func (s *uuidv7Scheme) Next() (ID, error) {
	b, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromUUID(b), nil
}

// uuidScheme holds what UUID schemes share: their name, Parse, AppendID and Decode.
type uuidScheme struct {
	version int
	t       *textForm // nil: UUID text
	typeid  bool      // the typeid scheme: reads any UUID, as TypeID text
}

func (s *uuidScheme) Name() string {
	if s.typeid {
		return s.t.name("typeid")
	}
	return s.t.name(fmt.Sprintf("uuidv%d", s.version))
}

func (s *uuidScheme) Parse(text string) (ID, error) {
	var id ID
	var err error
	if s.t == nil {
		id, err = parseUUID(text)
	} else {
		id, err = s.t.parse(text, FormatUUID, parseUUID)
	}
	if err != nil {
		return ID{}, err
	}
	if s.typeid {
		return id, nil // any 128 bits; a masked one is a UUIDv7 by construction
	}
	if err := s.check(id); err != nil {
		return ID{}, err
	}
	return id, nil
}

func parseUUID(text string) (ID, error) {
	u, err := uuid.Parse(text)
	if err != nil {
		return ID{}, fmt.Errorf("%w: %s is not a UUID: %w", ErrSyntax, quote(text), err)
	}
	return FromUUID(u), nil
}

// AppendID appends the public text: the UUID, or the scheme's TypeID or masked form.
func (s *uuidScheme) AppendID(b []byte, id ID) ([]byte, error) {
	if id.IsZero() {
		return b, nil
	}
	var err error
	switch {
	case !s.typeid:
		err = s.check(id)
	case id.Bits() != 128:
		err = fmt.Errorf("%w: %s is a %d-bit %s; a TypeID holds 128 bits", ErrScheme, id, id.Bits(), id.Format())
	case s.t.kind == maskUUIDv47:
		err = s.check(id) // UUIDv47 masks UUIDv7s only
	}
	if err != nil {
		return b, err
	}
	id.f = FormatUUID
	if s.t == nil {
		return id.appendText(b), nil
	}
	return s.t.append(b, id), nil
}

// check accepts only RFC 9562 UUIDs of the scheme's version.
func (s *uuidScheme) check(id ID) error {
	if id.Bits() != 128 {
		return fmt.Errorf("%w: %s is a %d-bit %s, not a UUID", ErrScheme, id, id.Bits(), id.Format())
	}
	u := uuid.UUID(id.Bytes16())
	if u.Variant() != uuid.RFC4122 {
		return fmt.Errorf("%w: %s has variant %v, want RFC 9562", ErrScheme, id, u.Variant())
	}
	if int(u.Version()) != s.version {
		return fmt.Errorf("%w: %s is a version %d UUID, want version %d", ErrScheme, id, u.Version(), s.version)
	}
	return nil
}

// Decode takes a UUID apart. The typeid scheme decodes any 128-bit ID: the time of a
// UUIDv7, only the version of others.
func (s *uuidScheme) Decode(id ID) (Parts, error) {
	if s.typeid && id.Bits() == 128 && s.check(id) != nil {
		return Parts{Version: int(id.hi >> 12 & 0xf)}, nil
	}
	if err := s.check(id); err != nil {
		return Parts{}, err
	}
	p := Parts{Version: s.version}
	if s.version == 7 {
		ms := id.hi >> 16
		p.Time = time.UnixMilli(int64(ms)).UTC()
		p.Fields = []Field{{Name: "time", Value: ms}, {Name: "rand_a", Value: id.hi & 0xfff}}
	}
	return p, nil
}

// sonyflakeSettings reads a sonyflake spec's machine (or node) and start.
func sonyflakeSettings(sp *Settings) (schemes.SonyflakeSettings, error) {
	m, okM, err := sp.Uint("machine", 1<<16-1)
	if err != nil {
		return schemes.SonyflakeSettings{}, err
	}
	n, okN, err := sp.Uint("node", 1<<16-1)
	if err != nil {
		return schemes.SonyflakeSettings{}, err
	}
	if okM && okN {
		return schemes.SonyflakeSettings{}, sp.Errorf("machine=%d and node=%d both given; node is another name for machine", m, n)
	}
	if okN {
		m = n
	}
	start, _, err := sp.Time("start")
	if err != nil {
		return schemes.SonyflakeSettings{}, err
	}
	if err := sp.Done("machine", "node", "start"); err != nil {
		return schemes.SonyflakeSettings{}, err
	}
	return schemes.SonyflakeSettings{Machine: uint16(m), StartTime: start}, nil
}

// codecSonyflake reads a sonyflake spec for NewCodec: the layout with its start as epoch.
func codecSonyflake(sp *Settings) (Codec, error) {
	set, err := sonyflakeSettings(sp)
	if err != nil {
		return nil, err
	}
	l, err := schemes.SonyflakeLayout(set.StartTime)
	if err != nil {
		return nil, sp.Wrapf(err, "sonyflake")
	}
	text, err := sp.textLayout(l)
	if err != nil {
		return nil, err
	}
	return layoutCodec{l, text}, nil
}

func buildSonyflake(_ context.Context, sp *Settings) (Scheme, error) {
	set, err := sonyflakeSettings(sp)
	if err != nil {
		return nil, err
	}
	g, err := schemes.NewSonyflake(set)
	if err != nil {
		return nil, sp.Wrapf(err, "sonyflake")
	}
	text, err := sp.textLayout(g.Layout())
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("sonyflake:machine=%d", set.Machine)
	if !set.StartTime.IsZero() {
		name += ",start=" + set.StartTime.UTC().Format(time.RFC3339Nano)
	}
	return &sonyflakeScheme{layoutCodec: layoutCodec{g.Layout(), text}, g: g, name: text.name(name)}, nil
}

// sonyflakeScheme wraps schemes.Sonyflake, the github.com/sony/sonyflake adapter.
type sonyflakeScheme struct {
	layoutCodec
	g    *schemes.Sonyflake
	name string
}

func (s *sonyflakeScheme) Name() string { return s.name }

// Node returns the machine ID (idkit.Noder), as the native snowflake schemes return their node.
func (s *sonyflakeScheme) Node() uint64 { return uint64(s.g.Machine()) }

func (s *sonyflakeScheme) Next() (ID, error) {
	v, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromUint64(v), nil
}
