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
	return &ulidScheme{g: g, name: name}, nil
}

// codecULID reads a ulid spec for NewCodec: every ULID parses and decodes alike.
func codecULID(sp *Settings) (Codec, error) {
	if _, err := sp.Bool("monotonic", true); err != nil {
		return nil, err
	}
	if err := sp.Done("monotonic"); err != nil {
		return nil, err
	}
	return ulidCodec{}, nil
}

// ulidScheme wraps schemes.ULID.
type ulidScheme struct {
	ulidCodec
	g    *schemes.ULID
	name string
}

// ulidCodec parses and decodes ULIDs.
type ulidCodec struct{}

func (s *ulidScheme) Name() string { return s.name }

func (s *ulidScheme) Next() (ID, error) {
	b, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromULID(b), nil
}

func (ulidCodec) Parse(text string) (ID, error) {
	if len(text) != ulid.EncodedSize {
		return ID{}, fmt.Errorf("%w: %s: a ULID has %d characters, not %d", ErrSyntax, quote(text), ulid.EncodedSize, len(text))
	}
	return Parse(text)
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
	return &uuidv7Scheme{uuidv7Codec{uuidScheme{version: 7}}, g}, nil
}

// codecUUID returns the NewCodec function of UUID version v, which takes no settings.
func codecUUID(v int) CodecFunc {
	return func(sp *Settings) (Codec, error) {
		if err := sp.Done(); err != nil {
			return nil, err
		}
		if v == 7 {
			return &uuidv7Codec{uuidScheme{version: v}}, nil
		}
		return &uuidScheme{version: v}, nil
	}
}

func buildUUIDv4(_ context.Context, sp *Settings) (Scheme, error) {
	if err := sp.Done(); err != nil {
		return nil, err
	}
	g, _ := schemes.NewUUIDv4(schemes.UUIDSettings{})
	return &uuidv4Scheme{uuidScheme{version: 4}, g}, nil
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

// uuidScheme holds what UUID schemes share: their name, Parse and Decode.
type uuidScheme struct {
	version int
}

func (s *uuidScheme) Name() string { return fmt.Sprintf("uuidv%d", s.version) }

func (s *uuidScheme) Parse(text string) (ID, error) {
	u, err := uuid.Parse(text)
	if err != nil {
		return ID{}, fmt.Errorf("%w: %s is not a UUID: %w", ErrSyntax, quote(text), err)
	}
	id := FromUUID(u)
	if err := s.check(id); err != nil {
		return ID{}, err
	}
	return id, nil
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

func (s *uuidScheme) Decode(id ID) (Parts, error) {
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
	return layoutCodec{l}, nil
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
	name := fmt.Sprintf("sonyflake:machine=%d", set.Machine)
	if !set.StartTime.IsZero() {
		name += ",start=" + set.StartTime.UTC().Format(time.RFC3339Nano)
	}
	return &sonyflakeScheme{layoutCodec: layoutCodec{g.Layout()}, g: g, name: name}, nil
}

// sonyflakeScheme wraps schemes.Sonyflake, the github.com/sony/sonyflake adapter.
type sonyflakeScheme struct {
	layoutCodec
	g    *schemes.Sonyflake
	name string
}

func (s *sonyflakeScheme) Name() string { return s.name }

func (s *sonyflakeScheme) Next() (ID, error) {
	v, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromUint64(v), nil
}
