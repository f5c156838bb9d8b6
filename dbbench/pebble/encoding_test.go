package pebble

import (
	"bytes"
	"math"
	"testing"
)

// Vectors from cockroachdb/cockroach pkg/util/encoding/encoding_test.go
// (TestEncodeDecodeVarint, TestEncodeDecodeUvarint, TestEncodeDecodeBytes).

func TestVarintAscendingCockroachVectors(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{math.MinInt64, []byte{0x80, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
		{math.MinInt64 + 1, []byte{0x80, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}},
		{-1 << 8, []byte{0x86, 0xff, 0x00}},
		{-1, []byte{0x87, 0xff}},
		{0, []byte{0x88}},
		{1, []byte{0x89}},
		{109, []byte{0xf5}},
		{112, []byte{0xf6, 0x70}},
		{1 << 8, []byte{0xf7, 0x01, 0x00}},
		{math.MaxInt64, []byte{0xfd, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		if got := appendVarintAscending(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("EncodeVarintAscending(%d) = % x, cockroach's vector % x", c.v, got, c.want)
		}
	}
}

func TestUvarintAscendingCockroachVectors(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0x88}},
		{1, []byte{0x89}},
		{109, []byte{0xf5}},
		{110, []byte{0xf6, 0x6e}},
		{1 << 8, []byte{0xf7, 0x01, 0x00}},
		{math.MaxUint64, []byte{0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		if got := appendUvarintAscending(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("EncodeUvarintAscending(%d) = % x, cockroach's vector % x", c.v, got, c.want)
		}
	}
}

func TestBytesAscendingCockroachVectors(t *testing.T) {
	cases := []struct{ v, want []byte }{
		{[]byte{0, 1, 'a'}, []byte{0x12, 0x00, 0xff, 1, 'a', 0x00, 0x01}},
		{[]byte{0, 'a'}, []byte{0x12, 0x00, 0xff, 'a', 0x00, 0x01}},
		{[]byte{0, 0xff, 'a'}, []byte{0x12, 0x00, 0xff, 0xff, 'a', 0x00, 0x01}},
		{[]byte{'a'}, []byte{0x12, 'a', 0x00, 0x01}},
		{[]byte{'b'}, []byte{0x12, 'b', 0x00, 0x01}},
		{[]byte{'b', 0}, []byte{0x12, 'b', 0x00, 0xff, 0x00, 0x01}},
		{[]byte{'b', 0, 0}, []byte{0x12, 'b', 0x00, 0xff, 0x00, 0xff, 0x00, 0x01}},
		{[]byte{'b', 0, 0, 'a'}, []byte{0x12, 'b', 0x00, 0xff, 0x00, 0xff, 'a', 0x00, 0x01}},
		{[]byte{'b', 0xff}, []byte{0x12, 'b', 0xff, 0x00, 0x01}},
		{[]byte("hello"), []byte{0x12, 'h', 'e', 'l', 'l', 'o', 0x00, 0x01}},
	}
	for i, c := range cases {
		got := appendBytesAscending(nil, c.v)
		if !bytes.Equal(got, c.want) {
			t.Errorf("EncodeBytesAscending(% x) = % x, cockroach's vector % x", c.v, got, c.want)
		}
		if i > 0 && bytes.Compare(cases[i-1].want, got) >= 0 {
			t.Errorf("% x does not sort after % x", got, cases[i-1].want)
		}
	}
}

// TestRowKeyLayout checks a whole row key against CockroachDB's layout of /Table/104/1/5/0:
// f0 89 8d 88, then the MVCC suffix; and that Split finds the row key again.
func TestRowKeyLayout(t *testing.T) {
	k := appendFamily0(appendVarintAscending(appendIndexPrefix(nil, 104, 1), 5))
	if want := []byte{0xf0, 0x89, 0x8d, 0x88}; !bytes.Equal(k, want) {
		t.Fatalf("/Table/104/1/5/0 = % x, want % x", k, want)
	}
	v := appendMVCCVersion(bytes.Clone(k), 1_700_000_000_000_000_000)
	if len(v) != len(k)+mvccSuffixLen || v[len(k)] != 0 || v[len(v)-1] != 9 {
		t.Fatalf("versioned key % x: want key, 0x00, 8 bytes of wall time, 0x09", v)
	}
	if n := mvccComparer().Split(v); n != len(k) {
		t.Errorf("Split(% x) = %d, want %d", v, n, len(k))
	}
	if n := mvccComparer().Split(k); n != len(k) {
		t.Errorf("Split of an unversioned key = %d, want its length %d", n, len(k))
	}
}

// TestVarintOrderAndLen checks that the key encoding of INT8 keeps numeric order across the
// length classes and that varintLen reads each length back.
func TestVarintOrderAndLen(t *testing.T) {
	vals := []int64{math.MinInt64, -1 << 40, -70000, -256, -255, -1, 0, 1, 109, 110, 255, 256, 1 << 20, 1 << 40, math.MaxInt64}
	var prev []byte
	for _, v := range vals {
		b := appendVarintAscending(nil, v)
		if prev != nil && bytes.Compare(prev, b) >= 0 {
			t.Errorf("encoding of %d (% x) does not sort after % x", v, b, prev)
		}
		n, err := varintLen(append(bytes.Clone(b), 0x12, 0x00))
		if err != nil || n != len(b) {
			t.Errorf("varintLen(% x…) = %d, %v; want %d", b, n, err, len(b))
		}
		prev = b
	}
	if _, err := varintLen([]byte{0x12}); err == nil {
		t.Error("varintLen accepted a bytes marker")
	}
}
