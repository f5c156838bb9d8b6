package idkit

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
)

var (
	_ driver.Valuer = ID{}
	_ driver.Valuer = NullID{}
)

// Value implements driver.Valuer: a 64-bit ID that fits is an int64 (for a bigint column);
// one with the top bit set, which only 64-bit layouts that use all 64 bits produce (discord or
// instagram with an old epoch, or after 2084), is its decimal text, since database/sql rejects
// uint64 values above 2^63-1. A 128-bit ID is its 16 bytes (for a uuid or bytea column). The
// zero ID is NULL.
//
// Where a 64-bit ID with bit 63 set can occur, give its column a type that holds it exactly:
//
//	PostgreSQL       numeric(20,0): exact and in numeric order. A bigint column refuses the
//	                 decimal text with "out of range".
//	MySQL, MariaDB   BIGINT UNSIGNED: exact and in order; the server converts the text.
//	SQLite           TEXT (or BLOB, or ANY in a STRICT table): the text is kept exactly, but a
//	                 column of INTEGER or NUMERIC affinity (INTEGER, BIGINT, INT8, NUMERIC, …)
//	                 turns text above 2^63-1 into a REAL and loses the low bits, and Scan then
//	                 refuses it. TEXT sorts by text, which is numeric order only among IDs of
//	                 the same number of digits; for ordered, compact keys store
//	                 MarshalBinary's 8 big-endian bytes in a BLOB and read them back with
//	                 UnmarshalBinary.
//
// IDs below 2^63 fit every signed 64-bit integer column (bigint, BIGINT, INTEGER).
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
// columns that drivers return as text and numeric columns. NULL is an error; scan into NullID
// where NULL is allowed.
//
// 16 bytes do not say whether they are a ULID or a UUID: a receiver holding a ULID keeps the
// ULID format, otherwise they become a UUID. To read ULIDs from a uuid or bytea column, scan
// into an ID set to any ULID first, or convert afterwards with As(FormatULID).
//
// A floating-point value is refused (wrapping ErrSyntax): a double holds integers exactly only
// up to 2^53, so the column has lost, or can lose, the ID's low bits. SQLite does this to a
// bit-63 ID's decimal text in an INTEGER or NUMERIC column; see Value for the column types
// that keep such IDs.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		return fmt.Errorf("%w: NULL (scan into idkit.NullID to allow it)", ErrSyntax)
	case int64:
		if v < 0 {
			return fmt.Errorf("%w: negative database value %d; IDs are unsigned", ErrSyntax, v)
		}
		*id = FromUint64(uint64(v))
	case uint64:
		*id = FromUint64(v)
	case float64:
		return scanFloat(v)
	case float32:
		return scanFloat(float64(v))
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
		return fmt.Errorf("%w: cannot scan a %T; want an integer, 16 bytes or text", ErrSyntax, src)
	}
	return nil
}

// scanFloat is the error for a floating-point database value.
func scanFloat(v float64) error {
	const use = "store 64-bit IDs in bigint (numeric(20,0) where bit 63 can be set) in PostgreSQL, BIGINT UNSIGNED in MySQL, and TEXT or BLOB in SQLite, whose INTEGER and NUMERIC columns turn text above 2^63-1 into REAL"
	if v >= 1<<53 || v <= -(1<<53) || v != math.Trunc(v) {
		return fmt.Errorf("%w: the database returned the floating-point number %g: the column lost precision (a double holds integers exactly only up to 2^53); %s", ErrSyntax, v, use)
	}
	return fmt.Errorf("%w: the database returned the floating-point number %g: a floating-point column loses the low bits of IDs above 2^53; %s", ErrSyntax, v, use)
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
