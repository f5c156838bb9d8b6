package idkit

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
)

var (
	_ sql.Scanner   = (*ID)(nil)
	_ driver.Valuer = ID{}
	_ sql.Scanner   = (*NullID)(nil)
	_ driver.Valuer = NullID{}
)

// Value implements driver.Valuer: a 64-bit ID that fits is an int64 (for a bigint column);
// one with the top bit set, which only 64-bit layouts such as discord produce, is its decimal
// text (for a numeric column), since database/sql rejects uint64 values above 2^63-1. A
// 128-bit ID is its 16 bytes (for a uuid or bytea column). The zero ID is NULL.
func (id ID) Value() (driver.Value, error) {
	switch id.Bits() {
	case 64:
		if id.lo <= math.MaxInt64 {
			return int64(id.lo), nil
		}
		return strconv.FormatUint(id.lo, 10), nil
	case 128:
		b := id.Bytes16()
		return b[:], nil
	}
	return nil, nil
}

// Scan implements sql.Scanner. It accepts an int64 (bigint), a uint64, 16 bytes (uuid or
// bytea; 16 ASCII digits count as text), or text in any canonical form, which covers uuid
// columns that drivers return as text and numeric columns. A receiver holding a ULID keeps the ULID format for 128-bit
// values; otherwise they become UUIDs. NULL is an error; scan into NullID where NULL is
// allowed.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		return fmt.Errorf("%w: NULL (scan into idkit.NullID to allow it)", ErrSyntax)
	case int64:
		if v < 0 {
			return fmt.Errorf("%w: negative database value %d", ErrSyntax, v)
		}
		*id = FromUint64(uint64(v))
	case uint64:
		*id = FromUint64(v)
	case []byte:
		// 16 bytes are a uuid or bytea value, unless they are all ASCII digits: then they are
		// a 16-digit ID as text, as drivers return bigint and numeric columns (MySQL's text
		// protocol). No RFC 9562 UUID is all digits: its version and variant bytes are not.
		if len(v) == 16 && !allDigits(v) {
			*id = id.adopt(FromUUID([16]byte(v)))
			return nil
		}
		return id.scanText(string(v))
	case string:
		return id.scanText(v)
	default:
		return fmt.Errorf("%w: cannot scan a %T", ErrSyntax, src)
	}
	return nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (id *ID) scanText(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*id = id.adopt(v)
	return nil
}

// NullID is an ID that may be NULL in a database, like sql.NullString.
type NullID struct {
	ID    ID
	Valid bool // Valid is true if ID is not NULL
}

// Scan implements sql.Scanner.
func (n *NullID) Scan(src any) error {
	if src == nil {
		n.ID, n.Valid = ID{}, false
		return nil
	}
	if err := n.ID.Scan(src); err != nil {
		return err
	}
	n.Valid = true
	return nil
}

// Value implements driver.Valuer.
func (n NullID) Value() (driver.Value, error) {
	if !n.Valid {
		return nil, nil
	}
	return n.ID.Value()
}
