package rocksdb

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// TestEncodeBytesVectors: TiDB's codec.EncodeBytes (TiKV's encode_bytes): groups of 8,
// marker 0xff minus the padding. The cases [], [1 2 3], [1 2 3 0] and [1 … 8] are the
// published examples of the format (MyRocks' memcomparable format, which TiDB and TiKV
// follow); the others follow from the same rule.
func TestEncodeBytesVectors(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{[]byte{}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 247}},
		{[]byte{0}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 248}},
		{[]byte{1, 2, 3}, []byte{1, 2, 3, 0, 0, 0, 0, 0, 250}},
		{[]byte{1, 2, 3, 0}, []byte{1, 2, 3, 0, 0, 0, 0, 0, 251}},
		{[]byte{1, 2, 3, 4, 5, 6, 7}, []byte{1, 2, 3, 4, 5, 6, 7, 0, 254}},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 247}},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 0, 0, 0, 0, 0, 0, 0, 0, 247}},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 9, 0, 0, 0, 0, 0, 0, 0, 248}},
	} {
		got := appendEncodeBytes(nil, c.in)
		if !bytes.Equal(got, c.want) {
			t.Errorf("EncodeBytes(% x) = % x, want % x", c.in, got, c.want)
		}
		if len(got) != encodedBytesLen(len(c.in)) {
			t.Errorf("EncodeBytes(% x): %d bytes, encodedBytesLen says %d", c.in, len(got), encodedBytesLen(len(c.in)))
		}
		data, rest, err := decodeBytes(append(got, 0xab))
		if err != nil || !bytes.Equal(data, c.in) || !bytes.Equal(rest, []byte{0xab}) {
			t.Errorf("DecodeBytes(% x) = % x, rest % x, %v", got, data, rest, err)
		}
	}
}

// TestEncodeIntVectors: TiDB's codec.EncodeInt flips the sign bit, big-endian.
func TestEncodeIntVectors(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{math.MinInt64, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{-1, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{0, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{104, []byte{0x80, 0, 0, 0, 0, 0, 0, 0x68}},
		{math.MaxInt64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		if got := appendEncodeInt(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("EncodeInt(%d) = % x, want % x", c.v, got, c.want)
		}
	}
}

// TestRecordKeyLayout: the stored key of table 104's row with BIGINT handle 5 is the one
// spelled out in encoding.go's comment, and a common handle's is t{104}_r, bytesFlag, the
// UUID's memcomparable groups.
func TestRecordKeyLayout(t *testing.T) {
	v := engine.Value{I64: 5}
	raw := recordKey(nil, 104, engine.ColBigint, &v)
	wantRaw := []byte{'t', 0x80, 0, 0, 0, 0, 0, 0, 0x68, '_', 'r', 0x80, 0, 0, 0, 0, 0, 0, 5}
	if !bytes.Equal(raw, wantRaw) {
		t.Fatalf("raw key % x, want % x", raw, wantRaw)
	}
	got := appendTS(appendDataKey(nil, raw), 7)
	want := []byte{'z',
		0x74, 0x80, 0, 0, 0, 0, 0, 0, 0xff,
		0x68, 0x5f, 0x72, 0x80, 0, 0, 0, 0, 0xff,
		0, 0, 5, 0, 0, 0, 0, 0, 0xfa,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf8}
	if !bytes.Equal(got, want) {
		t.Errorf("stored key % x, want % x", got, want)
	}
	var u engine.Value
	for i := range u.B16 {
		u.B16[i] = byte(i + 1)
	}
	raw = recordKey(nil, 104, engine.ColUUID, &u)
	if len(raw) != 11+1+encodedBytesLen(16) || raw[11] != bytesFlag {
		t.Errorf("UUID record key % x: want t{104}_r, flag 1, 27 bytes of groups (16 bytes are two whole groups and one of padding)", raw)
	}
}

// TestEncodingKeepsOrder: the memcomparable encoding of raw keys, and the record keys of
// BIGINT handles, sort as the values they encode.
func TestEncodingKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		a, b := make([]byte, r.IntN(20)), make([]byte, r.IntN(20))
		for j := range a {
			a[j] = byte(r.IntN(3)) // few distinct bytes: many shared prefixes
		}
		for j := range b {
			b[j] = byte(r.IntN(3))
		}
		if got, want := bytes.Compare(appendEncodeBytes(nil, a), appendEncodeBytes(nil, b)), bytes.Compare(a, b); got != want {
			t.Fatalf("% x vs % x: encoded compare %d, raw %d", a, b, got, want)
		}
		x, y := engine.Value{I64: int64(r.Uint64())}, engine.Value{I64: int64(r.Uint64())}
		kx, ky := appendDataKey(nil, recordKey(nil, 104, engine.ColBigint, &x)), appendDataKey(nil, recordKey(nil, 104, engine.ColBigint, &y))
		if got, want := bytes.Compare(kx, ky), cmpInt(x.I64, y.I64); got != want {
			t.Fatalf("handles %d vs %d: keys compare %d", x.I64, y.I64, got)
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestRecordFromIndex: the record key is found again from the index entry's key, for an int
// and a common handle; a key too short is an error.
func TestRecordFromIndex(t *testing.T) {
	var u engine.Value
	u.B16[3] = 9
	for _, c := range []struct {
		col engine.Column
		v   engine.Value
		idx int64
	}{
		{engine.ColBigint, engine.Value{I64: -42}, 1},
		{engine.ColUint64, engine.Value{U64: math.MaxUint64}, 1},
		{engine.ColUUID, u, 2},
		{engine.ColText, engine.Value{Str: "01JAB\x00CD"}, 2},
	} {
		ix := indexKey(nil, 104, c.idx, c.col, &c.v, 77)
		got, err := recordFromIndex(ix, 104, c.idx)
		if err != nil {
			t.Fatal(err)
		}
		if want := recordKey(nil, 104, c.col, &c.v); !bytes.Equal(got, want) {
			t.Errorf("%v: record key % x from index key, want % x", c.col, got, want)
		}
	}
	if _, err := recordFromIndex(appendIndexPrefix(nil, 104, 1), 104, 1); !errors.Is(err, errCorrupt) {
		t.Errorf("short index key: %v, want errCorrupt", err)
	}
}

// TestRowValue: row format v2 of payload alone (int handle) and of id and payload (common
// handle), and the write record around it.
func TestRowValue(t *testing.T) {
	if got, want := appendRowValue(nil, nil, 1), []byte{128, 0, 1, 0, 0, 0, 2, 1, 0, 1}; !bytes.Equal(got, want) {
		t.Errorf("row (payload 1) % x, want % x", got, want)
	}
	if got, want := appendRowValue(nil, []byte{0xaa, 0xbb}, 300), []byte{128, 0, 2, 0, 0, 0, 1, 2, 2, 0, 4, 0, 0xaa, 0xbb, 0x2c, 0x01}; !bytes.Equal(got, want) {
		t.Errorf("row (id aabb, payload 300) % x, want % x", got, want)
	}
	if got, want := appendWriteRecord(nil, 300, []byte{'0'}), []byte{'P', 0xac, 0x02, 'v', 1, '0'}; !bytes.Equal(got, want) {
		t.Errorf("write record % x, want % x", got, want)
	}
}

// FuzzDecodeBytes: decodeBytes never panics; what it accepts re-encodes to the bytes it
// consumed.
func FuzzDecodeBytes(f *testing.F) {
	f.Add(appendEncodeBytes(nil, []byte("0123456789")))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xf7})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		data, rest, err := decodeBytes(b)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v is not errCorrupt", err)
			}
			return
		}
		if enc := appendEncodeBytes(nil, data); !bytes.Equal(enc, b[:len(b)-len(rest)]) {
			t.Fatalf("decoded % x re-encodes to % x, consumed % x", data, enc, b[:len(b)-len(rest)])
		}
	})
}
