package idkit

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
)

var (
	_ fmt.Stringer               = ID{}
	_ encoding.TextMarshaler     = ID{}
	_ encoding.TextAppender      = ID{}
	_ encoding.TextUnmarshaler   = (*ID)(nil)
	_ encoding.BinaryMarshaler   = ID{}
	_ encoding.BinaryAppender    = ID{}
	_ encoding.BinaryUnmarshaler = (*ID)(nil)
	_ json.Marshaler             = ID{}
	_ json.Unmarshaler           = (*ID)(nil)
	_ json.Marshaler             = JSONNumber{}
	_ json.Unmarshaler           = (*JSONNumber)(nil)
)

// MarshalText returns the canonical text (see String); the zero ID gives empty text.
func (id ID) MarshalText() ([]byte, error) { return id.appendText(nil), nil }

// UnmarshalText reads any canonical text form (see Parse). A receiver that holds a ULID keeps
// the ULID format when given UUID text, as a ULID stored in a PostgreSQL uuid column comes
// back. Empty text gives the zero ID.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = ID{}
		return nil
	}
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*id = id.adopt(v)
	return nil
}

// adopt returns v, keeping the receiver's 128-bit format (ULID or UUID) when both are 128 bits.
func (id ID) adopt(v ID) ID {
	if v.Bits() == 128 && id.Bits() == 128 {
		v.f = id.f
	}
	return v
}

// MarshalBinary returns the big-endian bytes: 8 for a 64-bit ID, 16 for a 128-bit one, none
// for the zero ID.
//
// 16 bytes do not say whether they are a ULID or a UUID, so UnmarshalBinary reads them as a
// UUID (unless its receiver holds a ULID): a ULID comes back as the UUID with the same bytes,
// equal in Compare's byte order but not ==. Restore the kind with As(FormatULID), or use text,
// JSON or gob, which keep it.
func (id ID) MarshalBinary() ([]byte, error) { return id.AppendBinary(nil) }

// AppendBinary appends the big-endian bytes to b (it implements encoding.BinaryAppender).
func (id ID) AppendBinary(b []byte) ([]byte, error) {
	switch id.Bits() {
	case 64:
		return binary.BigEndian.AppendUint64(b, id.lo), nil
	case 128:
		b = binary.BigEndian.AppendUint64(b, id.hi)
		return binary.BigEndian.AppendUint64(b, id.lo), nil
	}
	return b, nil
}

// UnmarshalBinary reads 8 bytes as a 64-bit ID and 16 bytes as a UUID (or as a ULID if the
// receiver holds one; else convert with As(FormatULID)); no bytes give the zero ID. Other
// lengths are an error wrapping ErrSyntax.
func (id *ID) UnmarshalBinary(b []byte) error {
	switch len(b) {
	case 0:
		*id = ID{}
	case 8:
		*id = FromUint64(binary.BigEndian.Uint64(b))
	case 16:
		*id = id.adopt(FromUUID([16]byte(b)))
	default:
		return fmt.Errorf("%w: %d bytes; want 8 or 16", ErrSyntax, len(b))
	}
	return nil
}

// GobEncode implements gob.GobEncoder: one format byte, then the big-endian bytes of
// MarshalBinary, so that a ULID comes back a ULID (gob would otherwise use MarshalBinary, whose
// 16 bytes read back as a UUID). The zero ID encodes as no bytes.
func (id ID) GobEncode() ([]byte, error) {
	if id.IsZero() {
		return nil, nil
	}
	return id.AppendBinary([]byte{byte(id.f)})
}

// GobDecode implements gob.GobDecoder. It reads what GobEncode writes, and also the bare 8 or
// 16 bytes of MarshalBinary (16 bytes then give a UUID, as UnmarshalBinary does). Errors wrap
// ErrSyntax.
//
// A gob stream written by an idkit without GobEncode holds IDs as encoding.BinaryMarshaler
// values, and gob refuses to decode those into a type with GobDecode ("gob: wrong type
// (idkit.ID)"); decode such a stream with that idkit version and encode it again.
func (id *ID) GobDecode(b []byte) error {
	switch len(b) {
	case 0, 8, 16:
		return id.UnmarshalBinary(b)
	case 9:
		if Format(b[0]) == FormatDecimal {
			*id = FromUint64(binary.BigEndian.Uint64(b[1:]))
			return nil
		}
	case 17:
		if f := Format(b[0]); f == FormatULID || f == FormatUUID {
			*id = from16([16]byte(b[1:]), f)
			return nil
		}
	default:
		return fmt.Errorf("%w: gob value of %d bytes; want 9 or 17 (or 8 or 16 from an older idkit)", ErrSyntax, len(b))
	}
	return fmt.Errorf("%w: gob value of %d bytes with format byte %d, which is not a %d-bit format", ErrSyntax, len(b), b[0], (len(b)-1)*8)
}

// MarshalJSON returns the canonical text as a JSON string, for 64-bit IDs too: JavaScript
// numbers are doubles and silently round integers above 2^53, which every current Snowflake ID
// exceeds. Use JSONNumber where a consumer needs a bare number. The zero ID is null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 40)
	b = append(b, '"')
	b = id.appendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string in any canonical text form, a bare JSON number (a
// 64-bit ID: a non-negative integer) or null (the zero ID). Errors wrap ErrSyntax and name
// what is wrong: a negative or fractional number, a number beyond 64 bits, a boolean, an
// object or an array.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*id = ID{}
		return nil
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return fmt.Errorf("%w: JSON string %s: %w", ErrSyntax, quote(string(b)), err)
		}
		return id.UnmarshalText([]byte(s))
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		switch {
		case b[0] == '-':
			return fmt.Errorf("%w: JSON number %s is negative; IDs are unsigned", ErrSyntax, quote(string(b)))
		case bytes.ContainsAny(b, ".eE"):
			return fmt.Errorf("%w: JSON number %s is not an integer; a 64-bit ID is a whole number (or send it as a string)", ErrSyntax, quote(string(b)))
		}
		v, err := parseDecimal(string(b))
		if err != nil {
			return err
		}
		*id = v
		return nil
	}
	what := "not valid JSON"
	switch {
	case string(b) == "true" || string(b) == "false":
		what = "a boolean"
	case len(b) > 0 && b[0] == '{':
		what = "an object"
	case len(b) > 0 && b[0] == '[':
		what = "an array"
	case len(b) == 0:
		what = "empty"
	}
	return fmt.Errorf("%w: JSON %s is %s; want a string, a non-negative integer or null", ErrSyntax, quote(string(b)), what)
}

// JSONNumber is an ID that marshals 64-bit values as bare JSON numbers, for consumers that
// decode 64-bit integers exactly (Go, Java, JavaScript with BigInt-aware parsers). 128-bit IDs
// still marshal as strings. It unmarshals both forms.
//
//	type Order struct {
//		ID idkit.JSONNumber `json:"id"` // {"id":1541815603606036480}
//	}
type JSONNumber struct{ ID }

// MarshalJSON writes a 64-bit ID as a JSON number, anything else as ID.MarshalJSON does.
func (n JSONNumber) MarshalJSON() ([]byte, error) {
	if n.Bits() == 64 {
		return strconv.AppendUint(nil, n.lo, 10), nil
	}
	return n.ID.MarshalJSON()
}

// UnmarshalJSON reads what ID.UnmarshalJSON reads.
func (n *JSONNumber) UnmarshalJSON(b []byte) error { return n.ID.UnmarshalJSON(b) }
