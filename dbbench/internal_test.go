package dbbench

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestKeysEncodeBinary checks that every key value dbbench hands pgx has a
// binary encode plan for its column type: a uuid goes as 16 raw bytes,
// never through its text form.
func TestKeysEncodeBinary(t *testing.T) {
	m := pgtype.NewMap()
	v := &Value{I64: 1 << 60, B16: [16]byte{0: 1, 15: 2}, Str: "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
	tests := []struct {
		col  Column
		oid  uint32
		want any
	}{
		{ColBigint, pgtype.Int8OID, int64(1 << 60)},
		{ColIdentity, pgtype.Int8OID, int64(1 << 60)},
		{ColUUID, pgtype.UUIDOID, pgtype.UUID{Bytes: v.B16, Valid: true}},
		{ColText, pgtype.TextOID, v.Str},
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
		if tt.col == ColUUID && (len(buf) != 16 || buf[0] != 1 || buf[15] != 2) {
			t.Errorf("uuid encoded as %x, want the 16 raw bytes", buf)
		}
	}
}

// TestBit63KeyEncodesBinary: an ID with bit 63 set goes to numeric(20,0) in
// binary and comes back exact.
func TestBit63KeyEncodesBinary(t *testing.T) {
	m := pgtype.NewMap()
	v := &Value{U64: 1<<64 - 1}
	got := pgKey(ColUint64, v)
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

func TestNodeSpec(t *testing.T) {
	tests := []struct {
		spec    string
		i, k    int
		want    string
		wantErr bool
	}{
		{"snowflake", 0, 1, "snowflake", false},
		{"snowflake", 2, 4, "snowflake:node=2", false},
		{"snowflake:layout=discord", 3, 4, "snowflake:layout=discord,node=3", false},
		{"sonyflake", 1, 2, "sonyflake:machine=1", false},
		{"ulid", 1, 2, "ulid", false},
		{"snowflake:node=1", 1, 2, "", true},
		// Names and keys in any case, as idkit.New reads them.
		{"SNOWFLAKE", 2, 4, "SNOWFLAKE:node=2", false},
		{"SonyFlake", 1, 2, "SonyFlake:machine=1", false},
		{"snowflake:Layout=discord", 3, 4, "snowflake:Layout=discord,node=3", false},
		{"snowflake:WORKER=1", 1, 2, "", true},
		{"snowflake:lease=etcd://127.0.0.1:1/x", 1, 2, "", true},
		{"snowflake:", 1, 2, "", true},
	}
	for _, tt := range tests {
		got, err := NodeSpec(tt.spec, tt.i, tt.k)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("nodeSpec(%q, %d, %d) = %q, %v; want %q (error %v)", tt.spec, tt.i, tt.k, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestRecorderCurve(t *testing.T) {
	r := NewRecorder(1000, 4, 100, nil)
	for i := 0; i < 10; i++ {
		r.Add(100)
	}
	c := r.Curve()
	if len(c) != 4 || c[0].Rows != 300 || c[3].Rows != 1000 {
		t.Errorf("curve %+v, want chunks of 300 rows ending at 1000", c)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
