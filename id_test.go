package idkit_test

import (
	"bytes"
	"database/sql/driver"
	"encoding/gob"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// parseTable drives TestParse and seeds FuzzParse: every canonical form, its edge values and
// near misses.
var parseTable = []struct {
	in     string
	format idkit.Format
	out    string // canonical text; "" means Parse must fail
	err    string // for failures, part of the message
}{
	{"0", idkit.FormatDecimal, "0", ""},
	{"7", idkit.FormatDecimal, "7", ""},
	{"007", idkit.FormatDecimal, "7", ""},
	{"1541815603606036480", idkit.FormatDecimal, "1541815603606036480", ""},
	{"18446744073709551615", idkit.FormatDecimal, "18446744073709551615", ""},
	{"00000000000000000001", idkit.FormatDecimal, "1", ""},
	{"18446744073709551616", 0, "", "does not fit in 64 bits"},
	{"99999999999999999999", 0, "", "does not fit in 64 bits"},
	{"123456789012345678901", 0, "", "21 characters"},
	{"", 0, "", "0 characters"},
	{"-1", 0, "", `'-' at position 1`},
	{"+1", 0, "", `'+' at position 1`},
	{"12 ", 0, "", `' ' at position 3`},
	{" 12", 0, "", `' ' at position 1`},
	{"1_000", 0, "", `'_' at position 2`},
	{"0x1f", 0, "", `'x' at position 2`},
	{"١٢٣", 0, "", "position 1"},
	{"01ARZ3NDEKTSV4RRFFQ69G5FAV", idkit.FormatULID, "01ARZ3NDEKTSV4RRFFQ69G5FAV", ""},
	{"01arz3ndektsv4rrffq69g5fav", idkit.FormatULID, "01ARZ3NDEKTSV4RRFFQ69G5FAV", ""},
	{"00000000000000000000000000", idkit.FormatULID, "00000000000000000000000000", ""},
	{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", idkit.FormatULID, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", ""},
	{"80000000000000000000000000", 0, "", "not a ULID"},
	{"01ARZ3NDEKTSV4RRFFQ69G5FAU", 0, "", "not a ULID"}, // U is not Crockford
	{"01ARZ3NDEKTSV4RRFFQ69G5FA!", 0, "", "not a ULID"},
	{"01ARZ3NDEKTSV4RRFFQ69G5FA", 0, "", "25 characters"},
	{"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", idkit.FormatUUID, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", ""},
	{"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", idkit.FormatUUID, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", ""},
	{"00000000-0000-0000-0000-000000000000", idkit.FormatUUID, "00000000-0000-0000-0000-000000000000", ""},
	{"ffffffff-ffff-ffff-ffff-ffffffffffff", idkit.FormatUUID, "ffffffff-ffff-ffff-ffff-ffffffffffff", ""},
	{"017f22e2-79b0-7cc3-98c4-dc0c0c07398g", 0, "", "not a UUID"},
	{"017f22e2079b0-7cc3-98c4-dc0c0c07398f", 0, "", "8-4-4-4-12"},
	{"017f22e279b07cc398c4dc0c0c07398f", 0, "", "32 characters"},
	{"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}", 0, "", "38 characters"},
	{"urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", 0, "", "45 characters"},
	{"017f22e2-79b0-7cc3-98c4-dc0c0c07398", 0, "", "35 characters"},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTable {
		id, err := idkit.Parse(tt.in)
		if tt.out == "" {
			if !errors.Is(err, idkit.ErrSyntax) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) = %v, %v; want ErrSyntax mentioning %q", tt.in, id, err, tt.err)
			}
			if err != nil && !id.IsZero() {
				t.Errorf("Parse(%q) failed but returned %#v", tt.in, id)
			}
			continue
		}
		if err != nil || id.Format() != tt.format || id.String() != tt.out {
			t.Errorf("Parse(%q) = %v (%v), %v; want %s (%v)", tt.in, id, id.Format(), err, tt.out, tt.format)
		}
	}
}

func TestZeroID(t *testing.T) {
	var id idkit.ID
	if !id.IsZero() || id.Bits() != 0 || id.Format() != idkit.FormatNone || id.String() != "" {
		t.Errorf("zero ID: IsZero %v, Bits %d, Format %v, String %q", id.IsZero(), id.Bits(), id.Format(), id.String())
	}
	if idkit.FromUint64(0).IsZero() {
		t.Error("FromUint64(0) is the zero ID; it is the 64-bit ID 0")
	}
	js, _ := json.Marshal(id)
	jn, _ := json.Marshal(idkit.JSONNumber{})
	mt, _ := id.MarshalText()
	mb, _ := id.MarshalBinary()
	v, err := id.Value()
	if string(js) != "null" || string(jn) != "null" || len(mt) != 0 || len(mb) != 0 || v != nil || err != nil {
		t.Errorf("zero ID encodes as JSON %s / %s, text %q, binary %x, value %v, %v", js, jn, mt, mb, v, err)
	}
	for _, in := range []string{`null`, ` null `, `""`} {
		got := idkit.FromUint64(5)
		if err := json.Unmarshal([]byte(in), &got); err != nil || !got.IsZero() {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want the zero ID", in, got, err)
		}
	}
	got := idkit.FromUint64(5)
	if err := got.UnmarshalText(nil); err != nil || !got.IsZero() {
		t.Errorf("UnmarshalText(empty) = %v, %v", got, err)
	}
	got = idkit.FromUint64(5)
	if err := got.UnmarshalBinary(nil); err != nil || !got.IsZero() {
		t.Errorf("UnmarshalBinary(empty) = %v, %v", got, err)
	}
	var n idkit.NullID
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Errorf("NullID.Scan(nil) = %+v, %v", n, err)
	}
	if v, err := n.Value(); v != nil || err != nil {
		t.Errorf("invalid NullID.Value() = %v, %v; want NULL", v, err)
	}
	if err := got.Scan(nil); !errors.Is(err, idkit.ErrSyntax) || !strings.Contains(err.Error(), "NullID") {
		t.Errorf("ID.Scan(nil) = %v; want ErrSyntax pointing to NullID", err)
	}
}

func TestFormatString(t *testing.T) {
	for f, want := range map[idkit.Format]string{idkit.FormatNone: "none", idkit.FormatDecimal: "decimal", idkit.FormatULID: "ulid", idkit.FormatUUID: "uuid", 9: "Format(9)"} {
		if f.String() != want {
			t.Errorf("Format(%d).String() = %q, want %q", f, f.String(), want)
		}
	}
}

func TestUnmarshalJSON(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical text; "" means an error
	}{
		{`"1541815603606036480"`, "1541815603606036480"},
		{`1541815603606036480`, "1541815603606036480"},
		{` 42 `, "42"},
		{`18446744073709551615`, "18446744073709551615"},
		{`"01ARZ3NDEKTSV4RRFFQ69G5FAV"`, "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{`"017f22e2-79b0-7cc3-98c4-dc0c0c07398f"`, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
		{`"\u0034\u0032"`, "42"},
		{`18446744073709551616`, ""},
		{`-1`, ""},
		{`1.5`, ""},
		{`1e3`, ""},
		{`true`, ""},
		{`{}`, ""},
		{`[]`, ""},
		{`"`, ""},
		{`"x"`, ""},
		{`"42`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		var id idkit.ID
		err := id.UnmarshalJSON([]byte(tt.in))
		if tt.want == "" {
			if !errors.Is(err, idkit.ErrSyntax) {
				t.Errorf("UnmarshalJSON(%s) = %v, %v; want ErrSyntax", tt.in, id, err)
			}
			continue
		}
		if err != nil || id.String() != tt.want {
			t.Errorf("UnmarshalJSON(%s) = %v, %v; want %s", tt.in, id, err, tt.want)
		}
	}
}

// TestUnmarshalKeepsULID: 128-bit values that do not say their format (bytes, UUID text from a
// PostgreSQL uuid column) keep a ULID receiver's format, and become UUIDs otherwise.
func TestUnmarshalKeepsULID(t *testing.T) {
	u, _ := idkit.Parse("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	b := u.Bytes16()
	asUUID := idkit.FromUUID(b)
	for name, f := range map[string]func(*idkit.ID) error{
		"UnmarshalBinary": func(id *idkit.ID) error { return id.UnmarshalBinary(b[:]) },
		"UnmarshalText":   func(id *idkit.ID) error { return id.UnmarshalText([]byte(asUUID.String())) },
		"Scan([]byte)":    func(id *idkit.ID) error { return id.Scan(b[:]) },
		"Scan(uuid text)": func(id *idkit.ID) error { return id.Scan(asUUID.String()) },
		"UnmarshalJSON":   func(id *idkit.ID) error { return id.UnmarshalJSON([]byte(`"` + asUUID.String() + `"`)) },
	} {
		keep := idkit.FromULID([16]byte{})
		if err := f(&keep); err != nil || keep != u {
			t.Errorf("%s into a ULID = %v, %v; want the ULID %v", name, keep, err, u)
		}
		var zero idkit.ID
		if err := f(&zero); err != nil || zero != asUUID {
			t.Errorf("%s into the zero ID = %v (%v), %v; want the UUID", name, zero, zero.Format(), err)
		}
	}
	// A 64-bit receiver does not turn 128-bit values into anything else.
	r := idkit.FromUint64(9)
	if err := r.UnmarshalBinary(b[:]); err != nil || r != asUUID {
		t.Errorf("UnmarshalBinary(16 bytes) into a 64-bit ID = %v, %v", r, err)
	}
}

func TestValueScan(t *testing.T) {
	top, _ := idkit.Parse("18446744073709551615")
	tests := []struct {
		name string
		id   idkit.ID
		want driver.Value
	}{
		{"fits int64", idkit.FromUint64(1541815603606036480), int64(1541815603606036480)},
		{"max int64", idkit.FromUint64(1<<63 - 1), int64(1<<63 - 1)},
		{"top bit set", idkit.FromUint64(1 << 63), "9223372036854775808"},
		{"max uint64", top, "18446744073709551615"},
		{"uuid", idkit.FromUUID([16]byte{0: 1, 15: 2}), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}},
	}
	for _, tt := range tests {
		v, err := tt.id.Value()
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := tt.want.([]byte); ok {
			if vb, ok := v.([]byte); !ok || !bytes.Equal(vb, b) {
				t.Errorf("%s: Value() = %#v, want %x", tt.name, v, b)
			}
		} else if v != tt.want {
			t.Errorf("%s: Value() = %#v, want %#v", tt.name, v, tt.want)
		}
		var got idkit.ID
		if err := got.Scan(v); err != nil || got != tt.id {
			t.Errorf("%s: Scan(%#v) = %v, %v", tt.name, v, got, err)
		}
	}
	bad := []any{int64(-1), 1.5, true, []byte("nope"), "x", []byte{1, 2, 3}}
	for _, v := range bad {
		var id idkit.ID
		if err := id.Scan(v); !errors.Is(err, idkit.ErrSyntax) {
			t.Errorf("Scan(%#v) = %v, want ErrSyntax", v, err)
		}
	}
	var id idkit.ID
	if err := id.Scan(uint64(1 << 63)); err != nil || id != idkit.FromUint64(1<<63) {
		t.Errorf("Scan(uint64) = %v, %v", id, err)
	}
}

// TestScanDecimalBytes: drivers such as go-sql-driver/mysql (text protocol) and database/sql
// with a RawBytes-style path return integer and numeric columns as []byte text. A 16-digit ID is
// 16 bytes of text, not the 16 bytes of a UUID.
func TestScanDecimalBytes(t *testing.T) {
	want := idkit.FromUint64(1234567890123456)
	var id idkit.ID
	if err := id.Scan([]byte("1234567890123456")); err != nil || id != want {
		t.Errorf("Scan([]byte(%q)) = %v (%v), %v; want the 64-bit ID %v", "1234567890123456", id, id.Format(), err, want)
	}
}

func TestUnmarshalBinaryErrors(t *testing.T) {
	for _, n := range []int{1, 7, 9, 15, 17, 32} {
		var id idkit.ID
		if err := id.UnmarshalBinary(make([]byte, n)); !errors.Is(err, idkit.ErrSyntax) {
			t.Errorf("UnmarshalBinary(%d bytes) = %v, want ErrSyntax", n, err)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	id := idkit.FromUint64(1541815603606036480)
	u, _ := idkit.Parse("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	buf := make([]byte, 0, 64)
	for _, x := range []idkit.ID{id, u} {
		if a := testing.AllocsPerRun(100, func() { _, _ = x.AppendText(buf[:0]) }); a != 0 {
			t.Errorf("AppendText(%v) allocates %v times", x, a)
		}
		if a := testing.AllocsPerRun(100, func() { _, _ = x.AppendBinary(buf[:0]) }); a != 0 {
			t.Errorf("AppendBinary(%v) allocates %v times", x, a)
		}
	}
	s, err := idkit.New("snowflake:fields=time:41/seq:22,epoch=2024-01-01")
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(1000, func() { _, _ = s.Next() }); a != 0 {
		t.Errorf("snowflake Next through idkit.Scheme allocates %v times per ID", a)
	}
}

// FuzzParse: Parse and every scheme's Parse never panic, and what they accept prints back to
// text that parses to the same ID.
func FuzzParse(f *testing.F) {
	for _, tt := range parseTable {
		f.Add(tt.in)
	}
	for _, v := range loadVectors(f) {
		f.Add(v.ID)
	}
	var schemes []idkit.Scheme
	for _, spec := range []string{"snowflake", "snowflake:layout=discord", "snowflake:layout=sonyflake", "snowflake:fields=time:20/seq:10,unit=1h,epoch=2025-01-01", "ulid", "uuidv7", "uuidv4", "sonyflake"} {
		s, err := idkit.New(spec)
		if err != nil {
			f.Fatal(err)
		}
		schemes = append(schemes, s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		check := func(who string, id idkit.ID, err error) {
			if err != nil {
				if !errors.Is(err, idkit.ErrSyntax) && !errors.Is(err, idkit.ErrScheme) {
					t.Fatalf("%s(%q): error %v wraps neither ErrSyntax nor ErrScheme", who, in, err)
				}
				return
			}
			if id.IsZero() {
				t.Fatalf("%s(%q) succeeded with the zero ID", who, in)
			}
			again, err := idkit.Parse(id.String())
			if err != nil || again != id {
				t.Fatalf("%s(%q) = %#v; its text %q parses to %#v, %v", who, in, id, id.String(), again, err)
			}
			var u idkit.ID
			if err := u.UnmarshalText([]byte(in)); err != nil && who == "idkit.Parse" {
				t.Fatalf("Parse(%q) succeeded, UnmarshalText failed: %v", in, err)
			}
		}
		id, err := idkit.Parse(in)
		check("idkit.Parse", id, err)
		for _, s := range schemes {
			id, err := s.Parse(in)
			check(s.Name()+".Parse", id, err)
			if err == nil {
				if again, err := s.Parse(id.String()); err != nil || again != id {
					t.Fatalf("%s.Parse(%q) = %v; Parse(String()) = %v, %v", s.Name(), in, id, again, err)
				}
				if _, err := s.Decode(id); err != nil {
					t.Fatalf("%s.Parse(%q) accepted %v but Decode fails: %v", s.Name(), in, id, err)
				}
			}
		}
	})
}

// FuzzUnmarshalJSON: never panics; what it accepts marshals and unmarshals back unchanged.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"1541815603606036480"`, `1541815603606036480`, `null`, `""`, `"01ARZ3NDEKTSV4RRFFQ69G5FAV"`,
		`"017f22e2-79b0-7cc3-98c4-dc0c0c07398f"`, `"\u0031"`, `18446744073709551616`, `-1`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var id idkit.ID
		if err := id.UnmarshalJSON(in); err != nil {
			if !errors.Is(err, idkit.ErrSyntax) {
				t.Fatalf("UnmarshalJSON(%q): %v does not wrap ErrSyntax", in, err)
			}
			return
		}
		for _, v := range []json.Marshaler{id, idkit.JSONNumber{ID: id}} {
			out, err := v.MarshalJSON()
			if err != nil || !json.Valid(out) {
				t.Fatalf("UnmarshalJSON(%q) = %v; MarshalJSON = %q, %v", in, id, out, err)
			}
			var back idkit.ID
			if err := json.Unmarshal(out, &back); err != nil || back != id {
				t.Fatalf("UnmarshalJSON(%q) = %#v; round trip through %s gives %#v, %v", in, id, out, back, err)
			}
		}
	})
}

// FuzzScan: Scan never panics on strings, bytes and integers; what it accepts goes back
// through Value and Scan unchanged.
func FuzzScan(f *testing.F) {
	f.Add("1541815603606036480", []byte("1234567890123456"), int64(42))
	f.Add("017f22e2-79b0-7cc3-98c4-dc0c0c07398f", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, int64(-1))
	f.Add("01ARZ3NDEKTSV4RRFFQ69G5FAV", []byte("18446744073709551615"), int64(1<<63-1))
	f.Fuzz(func(t *testing.T, s string, b []byte, n int64) {
		for _, src := range []any{s, b, n} {
			var id idkit.ID
			if err := id.Scan(src); err != nil {
				if !errors.Is(err, idkit.ErrSyntax) {
					t.Fatalf("Scan(%#v): %v does not wrap ErrSyntax", src, err)
				}
				continue
			}
			v, err := id.Value()
			if err != nil || !driver.IsValue(v) {
				t.Fatalf("Scan(%#v) = %v; Value() = %#v, %v", src, id, v, err)
			}
			var back idkit.ID
			if id.Format() == idkit.FormatULID {
				back = idkit.FromULID([16]byte{}) // bytes do not say ULID; the receiver does
			}
			if err := back.Scan(v); err != nil || back != id {
				t.Fatalf("Scan(%#v) = %#v; Scan(Value()) = %#v, %v", src, id, back, err)
			}
		}
	})
}

// TestErrorMessages: each bad JSON or database value gets a message that names its problem,
// not a catch-all.
func TestErrorMessages(t *testing.T) {
	jsonTests := []struct{ in, want string }{
		{`-1`, "negative"},
		{`-0`, "negative"},
		{`1.5`, "not an integer"},
		{`1e3`, "not an integer"},
		{`18446744073709551616`, "does not fit in 64 bits"},
		{`true`, "a boolean"},
		{`{"id":1}`, "an object"},
		{`[1]`, "an array"},
		{``, "empty"},
		{`x`, "not valid JSON"},
		{`"x"`, `"x"`},
	}
	for _, tt := range jsonTests {
		var id idkit.ID
		err := id.UnmarshalJSON([]byte(tt.in))
		if !errors.Is(err, idkit.ErrSyntax) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("UnmarshalJSON(%s) = %v; want ErrSyntax saying %q", tt.in, err, tt.want)
		}
	}
	scan := []struct {
		in   any
		want string
	}{
		{int64(-1), "negative database value -1; IDs are unsigned"},
		{1.8446744073709552e19, "lost precision"},
		{float64(42), "floating-point"},
		{float32(1.5), "lost precision"},
		{true, "cannot scan a bool"},
		{nil, "NullID"},
	}
	for _, tt := range scan {
		var id idkit.ID
		err := id.Scan(tt.in)
		if !errors.Is(err, idkit.ErrSyntax) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Scan(%#v) = %v; want ErrSyntax saying %q", tt.in, err, tt.want)
		}
	}
}

// roundTripIDs has one ID of every format, the zero ID, and a 64-bit ID with bit 63 set.
func roundTripIDs(t *testing.T) []idkit.ID {
	t.Helper()
	var ids []idkit.ID
	for _, s := range []string{"1541815603606036480", "18446744073709551615", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"} {
		id, err := idkit.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return append(ids, idkit.ID{})
}

// TestRoundTripsKeepKind sends every format through text, JSON, gob, binary and SQL (Value and
// Scan) into a fresh ID. Text, JSON and gob keep the format, so the ID comes back ==; binary
// and SQL keep the 16 bytes of a 128-bit ID but not its kind (a ULID comes back as a UUID),
// and As restores it.
func TestRoundTripsKeepKind(t *testing.T) {
	type rec struct {
		ID   idkit.ID
		Note string
	}
	ways := []struct {
		name      string
		keepsKind bool
		trip      func(idkit.ID) (idkit.ID, error)
	}{
		{"text", true, func(id idkit.ID) (got idkit.ID, err error) {
			b, err := id.MarshalText()
			if err == nil {
				err = got.UnmarshalText(b)
			}
			return got, err
		}},
		{"json", true, func(id idkit.ID) (idkit.ID, error) {
			b, err := json.Marshal(rec{ID: id})
			var got rec
			if err == nil {
				err = json.Unmarshal(b, &got)
			}
			return got.ID, err
		}},
		{"gob", true, func(id idkit.ID) (idkit.ID, error) {
			var buf bytes.Buffer
			err := gob.NewEncoder(&buf).Encode(rec{ID: id, Note: "x"})
			var got rec
			if err == nil {
				err = gob.NewDecoder(&buf).Decode(&got)
			}
			return got.ID, err
		}},
		{"binary", false, func(id idkit.ID) (got idkit.ID, err error) {
			b, err := id.MarshalBinary()
			if err == nil {
				err = got.UnmarshalBinary(b)
			}
			return got, err
		}},
		{"sql", false, func(id idkit.ID) (got idkit.ID, err error) {
			v, err := id.Value()
			if err != nil {
				return got, err
			}
			if v == nil {
				var n idkit.NullID
				err = n.Scan(v)
				return n.ID, err
			}
			err = got.Scan(v)
			return got, err
		}},
	}
	for _, way := range ways {
		for _, id := range roundTripIDs(t) {
			got, err := way.trip(id)
			if err != nil {
				t.Errorf("%s: %v (%v): %v", way.name, id, id.Format(), err)
				continue
			}
			if way.keepsKind || id.Format() != idkit.FormatULID {
				if got != id {
					t.Errorf("%s: %v (%v) came back as %v (%v)", way.name, id, id.Format(), got, got.Format())
				}
				continue
			}
			if got.Format() != idkit.FormatUUID || got.Bytes16() != id.Bytes16() {
				t.Errorf("%s: ULID %v came back as %v (%v), want the UUID with its bytes", way.name, id, got, got.Format())
			}
			if back, err := got.As(idkit.FormatULID); err != nil || back != id {
				t.Errorf("%s: As(FormatULID) = %v, %v; want %v", way.name, back, err, id)
			}
		}
	}
}

func TestAs(t *testing.T) {
	ids := roundTripIDs(t)
	dec, ulid, uuid, zero := ids[0], ids[2], ids[3], ids[4]
	ok := []struct {
		id   idkit.ID
		f    idkit.Format
		want idkit.Format
	}{
		{dec, idkit.FormatDecimal, idkit.FormatDecimal},
		{ulid, idkit.FormatUUID, idkit.FormatUUID},
		{uuid, idkit.FormatULID, idkit.FormatULID},
		{ulid, idkit.FormatULID, idkit.FormatULID},
		{zero, idkit.FormatULID, idkit.FormatNone},
	}
	for _, tt := range ok {
		got, err := tt.id.As(tt.f)
		if err != nil || got.Format() != tt.want || got.Bytes16() != tt.id.Bytes16() {
			t.Errorf("%v.As(%v) = %v (%v), %v", tt.id, tt.f, got, got.Format(), err)
		}
	}
	bad := []struct {
		id idkit.ID
		f  idkit.Format
	}{{dec, idkit.FormatULID}, {uuid, idkit.FormatDecimal}, {ulid, idkit.FormatNone}, {dec, idkit.Format(9)}}
	for _, tt := range bad {
		if got, err := tt.id.As(tt.f); !errors.Is(err, idkit.ErrSyntax) {
			t.Errorf("%v.As(%v) = %v, %v; want ErrSyntax", tt.id, tt.f, got, err)
		}
	}
}

// TestGobDecode reads the bytes GobEncode writes and the bare bytes of MarshalBinary, and
// refuses the rest with a message.
func TestGobDecode(t *testing.T) {
	for _, id := range roundTripIDs(t) {
		b, err := id.GobEncode()
		if err != nil {
			t.Fatal(err)
		}
		var got idkit.ID
		if err := got.GobDecode(b); err != nil || got != id {
			t.Errorf("GobDecode(GobEncode(%v)) = %v, %v", id, got, err)
		}
		raw, _ := id.MarshalBinary()
		if err := got.GobDecode(raw); err != nil || got.Bytes16() != id.Bytes16() {
			t.Errorf("GobDecode(MarshalBinary(%v)) = %v, %v", id, got, err)
		}
	}
	bad := []struct {
		in   []byte
		want string
	}{
		{[]byte{1, 2, 3}, "3 bytes"},
		{append([]byte{byte(idkit.FormatULID)}, make([]byte, 8)...), "format byte 2"},
		{append([]byte{byte(idkit.FormatDecimal)}, make([]byte, 16)...), "format byte 1"},
		{append([]byte{0}, make([]byte, 16)...), "format byte 0"},
	}
	for _, tt := range bad {
		var id idkit.ID
		if err := id.GobDecode(tt.in); !errors.Is(err, idkit.ErrSyntax) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("GobDecode(%x) = %v; want ErrSyntax saying %q", tt.in, err, tt.want)
		}
	}
}

// FuzzGobDecode: GobDecode never panics; what it accepts encodes and decodes back unchanged.
func FuzzGobDecode(f *testing.F) {
	for _, id := range []string{"1541815603606036480", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"} {
		v, _ := idkit.Parse(id)
		b, _ := v.GobEncode()
		f.Add(b)
		raw, _ := v.MarshalBinary()
		f.Add(raw)
	}
	f.Add([]byte{})
	f.Add([]byte{9, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		var id idkit.ID
		if err := id.GobDecode(b); err != nil {
			if !errors.Is(err, idkit.ErrSyntax) {
				t.Fatalf("GobDecode(%x): %v does not wrap ErrSyntax", b, err)
			}
			return
		}
		enc, err := id.GobEncode()
		if err != nil {
			t.Fatal(err)
		}
		var back idkit.ID
		if err := back.GobDecode(enc); err != nil || back != id {
			t.Fatalf("GobDecode(%x) = %v; GobEncode then GobDecode = %v, %v", b, id, back, err)
		}
	})
}
