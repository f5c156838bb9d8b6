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
// receiver holds one); no bytes give the zero ID. Other lengths are an error wrapping
// ErrSyntax.
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
// 64-bit ID) or null (the zero ID).
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
	case len(b) > 0 && b[0] >= '0' && b[0] <= '9':
		v, err := parseDecimal(string(b))
		if err != nil {
			return err
		}
		*id = v
		return nil
	}
	return fmt.Errorf("%w: JSON %s is neither a string, a number nor null", ErrSyntax, quote(string(b)))
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
