package idkit

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// Format is the canonical text form of an ID, which also tells its width.
type Format uint8

// The formats. The zero ID has format FormatNone.
const (
	FormatNone    Format = iota
	FormatDecimal        // 64-bit: unsigned decimal, "1541815603606036480"
	FormatULID           // 128-bit: 26 characters of Crockford base32, "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	FormatUUID           // 128-bit: 8-4-4-4-12 lowercase hex, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
)

// String returns "decimal", "ulid", "uuid" or "none".
func (f Format) String() string {
	switch f {
	case FormatDecimal:
		return "decimal"
	case FormatULID:
		return "ulid"
	case FormatUUID:
		return "uuid"
	case FormatNone:
		return "none"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ID is one identifier of any scheme: a 64-bit or 128-bit value plus its text format. It is a
// small comparable value with no pointers, so it can be a map key, compared with == and copied
// freely; the zero ID means "no ID".
//
// Its byte form is big-endian, so for time-ordered schemes byte order (and Compare) is
// generation order:
//
//	64-bit (Snowflake family):   8 bytes, the unsigned value, big-endian
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	| b0 MSB |   b1   |   b2   |   b3   |   b4   |   b5   |   b6   | b7 LSB |
//	+--------+--------+--------+--------+--------+--------+--------+--------+
//	128-bit (ULID, UUID): the 16 bytes of the format, as the wrapped library defines them
//	+--------+--------+- ... -+--------+
//	|   b0   |   b1   |       |  b15   |
//	+--------+--------+- ... -+--------+
type ID struct {
	hi, lo uint64 // 64-bit IDs use lo only
	f      Format
}

// FromUint64 returns the 64-bit ID with value v.
func FromUint64(v uint64) ID { return ID{lo: v, f: FormatDecimal} }

// FromULID returns the ULID with bytes b.
func FromULID(b [16]byte) ID { return from16(b, FormatULID) }

// FromUUID returns the UUID with bytes b.
func FromUUID(b [16]byte) ID { return from16(b, FormatUUID) }

func from16(b [16]byte, f Format) ID {
	return ID{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:]), f: f}
}

// Format returns the ID's text format.
func (id ID) Format() Format { return id.f }

// As returns id in format f. A 128-bit ID converts between FormatULID and FormatUUID with its
// 16 bytes unchanged; a 64-bit ID is FormatDecimal only. The zero ID stays the zero ID.
//
// It restores the kind a 128-bit ID loses in 16 bytes: MarshalBinary, a uuid or bytea column
// (Value and Scan), or any store of raw bytes gives back a UUID, so a ULID read from one is
// id.As(FormatULID). Gob keeps the kind by itself (see GobEncode).
//
// Errors wrap ErrSyntax: f of another width than id (a 64-bit ID cannot become a ULID), or
// FormatNone or an unknown format for a non-zero ID.
func (id ID) As(f Format) (ID, error) {
	switch {
	case id.IsZero():
		return id, nil
	case f == id.f:
		return id, nil
	case id.Bits() == 128 && (f == FormatULID || f == FormatUUID):
		id.f = f
		return id, nil
	}
	return ID{}, fmt.Errorf("%w: a %d-bit %s cannot be a %s", ErrSyntax, id.Bits(), id.f, f)
}

// Bits returns 64 or 128, or 0 for the zero ID.
func (id ID) Bits() int {
	switch id.f {
	case FormatDecimal:
		return 64
	case FormatULID, FormatUUID:
		return 128
	}
	return 0
}

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool { return id == ID{} }

// Uint64 returns the value of a 64-bit ID, or the low 64 bits of a 128-bit one.
func (id ID) Uint64() uint64 { return id.lo }

// Bytes16 returns a 128-bit ID's 16 bytes; a 64-bit ID comes back in the last 8.
func (id ID) Bytes16() [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], id.hi)
	binary.BigEndian.PutUint64(b[8:], id.lo)
	return b
}

// Compare returns -1, 0 or +1 as a sorts before, equal to or after b: by width, then by value
// (byte order), then by format.
func Compare(a, b ID) int {
	if c := cmp.Compare(a.Bits(), b.Bits()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	if c := cmp.Compare(a.lo, b.lo); c != 0 {
		return c
	}
	return cmp.Compare(a.f, b.f)
}

// String returns the canonical text: decimal for 64-bit IDs, 26-character Crockford base32 for
// ULIDs, 36-character lowercase 8-4-4-4-12 hex for UUIDs, and "" for the zero ID. This is the
// stored form; the text a scheme with prefix= or mask= shows is FormatID's.
func (id ID) String() string {
	var buf [36]byte
	return string(id.appendText(buf[:0]))
}

// AppendText appends the canonical text to b; it never fails and does not allocate when b has
// room (it implements encoding.TextAppender).
func (id ID) AppendText(b []byte) ([]byte, error) { return id.appendText(b), nil }

func (id ID) appendText(b []byte) []byte {
	switch id.f {
	case FormatDecimal:
		return strconv.AppendUint(b, id.lo, 10)
	case FormatULID:
		var u ulid.ULID = id.Bytes16()
		var out [ulid.EncodedSize]byte
		_ = u.MarshalTextTo(out[:]) // fails only for a short buffer
		return append(b, out[:]...)
	case FormatUUID:
		u := id.Bytes16()
		var out [36]byte
		hexDash(&out, &u)
		return append(b, out[:]...)
	}
	return b
}

const hexDigits = "0123456789abcdef"

func hexDash(dst *[36]byte, u *[16]byte) {
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j] = hexDigits[c>>4]
		dst[j+1] = hexDigits[c&0xf]
		j += 2
	}
}

// Parse reads an ID in any canonical text form, telling them apart by length: 1 to 20 decimal
// digits (64-bit), 26 characters of Crockford base32 (ULID, either case) or 36 characters of
// 8-4-4-4-12 hex (UUID, either case). Errors wrap ErrSyntax and quote the input.
//
// A Scheme's Parse is stricter: it also checks that the ID is one the scheme makes.
func Parse(s string) (ID, error) {
	switch {
	case len(s) == ulid.EncodedSize:
		u, err := ulid.ParseStrict(s)
		if err != nil {
			return ID{}, fmt.Errorf("%w: %s is not a ULID: %w", ErrSyntax, quote(s), err)
		}
		return FromULID(u), nil
	case len(s) == 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return ID{}, fmt.Errorf("%w: %s is not a UUID: want 8-4-4-4-12 hex digits", ErrSyntax, quote(s))
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return ID{}, fmt.Errorf("%w: %s is not a UUID: %w", ErrSyntax, quote(s), err)
		}
		return FromUUID(u), nil
	case len(s) >= 1 && len(s) <= 20:
		return parseDecimal(s)
	}
	return ID{}, fmt.Errorf("%w: %s has %d characters; want 1-20 decimal digits, a 26-character ULID or a 36-character UUID", ErrSyntax, quote(s), len(s))
}

func parseDecimal(s string) (ID, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return ID{}, fmt.Errorf("%w: %s is not a decimal ID: %q at position %d", ErrSyntax, quote(s), s[i], i+1)
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return ID{}, fmt.Errorf("%w: %s does not fit in 64 bits", ErrSyntax, quote(s))
	}
	return FromUint64(v), nil
}

// quote quotes s for an error message, cut to 48 bytes.
func quote(s string) string {
	if len(s) > 48 {
		return strconv.Quote(s[:48]) + "…"
	}
	return strconv.Quote(s)
}
