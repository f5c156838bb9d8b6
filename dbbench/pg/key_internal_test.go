package pg

import (
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestKeysEncodeBinary checks that every key value dbbench hands pgx has a
// binary encode plan for its column type: a uuid goes as 16 raw bytes,
// never through its text form.
func TestKeysEncodeBinary(t *testing.T) {
	m := pgtype.NewMap()
	v := &engine.Value{I64: 1 << 60, B16: [16]byte{0: 1, 15: 2}, Str: "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
	tests := []struct {
		col  engine.Column
		oid  uint32
		want any
	}{
		{engine.ColBigint, pgtype.Int8OID, int64(1 << 60)},
		{engine.ColIdentity, pgtype.Int8OID, int64(1 << 60)},
		{engine.ColUUID, pgtype.UUIDOID, pgtype.UUID{Bytes: v.B16, Valid: true}},
		{engine.ColText, pgtype.TextOID, v.Str},
	}
	for _, tt := range tests {
		got := pgKey(tt.col, v)
		if got != tt.want {
			t.Errorf("pgKey(%v) = %#v, want %#v", tt.col, got, tt.want)
		}
		if m.PlanEncode(tt.oid, pgtype.BinaryFormatCode, got) == nil {
			t.Errorf("no binary encode plan for %T into OID %d", got, tt.oid)
		}
		buf, err := m.Encode(tt.oid, pgtype.BinaryFormatCode, got, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.col == engine.ColUUID && (len(buf) != 16 || buf[0] != 1 || buf[15] != 2) {
			t.Errorf("uuid encoded as %x, want the 16 raw bytes", buf)
		}
	}
}

// TestBit63KeyEncodesBinary: an ID with bit 63 set goes to numeric(20,0) in
// binary and comes back exact.
func TestBit63KeyEncodesBinary(t *testing.T) {
	m := pgtype.NewMap()
	v := &engine.Value{U64: 1<<64 - 1}
	got := pgKey(engine.ColUint64, v)
	buf, err := m.Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, got, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n pgtype.Numeric
	if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, buf, &n); err != nil {
		t.Fatal(err)
	}
	if !n.Valid || n.Exp != 0 || !n.Int.IsUint64() || n.Int.Uint64() != v.U64 {
		t.Errorf("numeric %+v, want %d", n, v.U64)
	}
}
