package pebble

import (
	"bytes"
	"encoding/binary"
)

// CockroachDB's key and value encodings, written by hand from cockroachdb/cockroach (importing
// it would bring in most of CockroachDB): pkg/util/encoding/encoding.go for the ordered
// key encodings, pkg/keys/keys.go for a table's key prefix and a row's column family, and
// pkg/storage/mvcc_key.go for the MVCC version suffix. encoding_test.go holds them to the
// byte vectors of cockroach's pkg/util/encoding/encoding_test.go.
//
// A row of table 104, index 1 (the primary key) with INT8 key 5, as CockroachDB stores it in
// Pebble:
//
//	f0          /Table/104   EncodeUvarintAscending(104): 0x88+104
//	89          /1           EncodeUvarintAscending(1): the primary index
//	8d          /5           EncodeVarintAscending(5)
//	88          /0           MakeFamilyKey(key, 0): column family 0, no length suffix
//	00          MVCC sentinel
//	<8 bytes>   the version's wall time, big-endian
//	09          the timestamp's length, itself included

// Constants of the ordered encodings (cockroach pkg/util/encoding/encoding.go).
const (
	intMin      = 0x80 // IntMin
	intMaxWidth = 8
	intZero     = intMin + intMaxWidth           // 136: uvarint 0 is one byte, 0x88
	intSmall    = intMax - intZero - intMaxWidth // 109: the largest uvarint that is its tag
	intMax      = 0xfd                           // IntMax

	bytesMarker byte = 0x12 // bytesMarker: starts an ascending BYTES/STRING/UUID key
	escape      byte = 0x00 // escape: a 0x00 in the data…
	escaped00   byte = 0xff // …is written 0x00 0xff
	escapedTerm byte = 0x01 // the value ends with 0x00 0x01
)

// appendUvarintAscending is cockroach's encoding.EncodeUvarintAscending: an ordered,
// length-prefixed unsigned integer; values up to 109 are one byte, 0x88+v; larger ones a tag
// byte 0xf5+n (n the number of big-endian bytes that follow, 1–8).
func appendUvarintAscending(b []byte, v uint64) []byte {
	if v <= intSmall {
		return append(b, intZero+byte(v))
	}
	n := 8
	for n > 1 && v>>(8*(n-1)) == 0 {
		n--
	}
	b = append(b, byte(intMax-8+n))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// appendVarintAscending is cockroach's encoding.EncodeVarintAscending, the key encoding of an
// INT8 column: a non-negative value as appendUvarintAscending; a negative one as tag
// 0x88-n followed by its n low bytes (n the fewest that hold it), so that it sorts below
// every non-negative value.
func appendVarintAscending(b []byte, v int64) []byte {
	if v >= 0 {
		return appendUvarintAscending(b, uint64(v))
	}
	n := 1
	for n < 8 && v < -(int64(1)<<(8*n))+1 {
		n++
	}
	// v >= -(1<<(8n))+1 ⇔ v >= -0xff…ff (n bytes of 0xff), cockroach's case bounds.
	b = append(b, byte(intMin+8-n))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// appendBytesAscending is cockroach's encoding.EncodeBytesAscending (and
// EncodeStringAscending, which writes the same bytes), the key encoding of a BYTES, STRING or
// UUID column: marker 0x12, the data with each 0x00 written 0x00 0xff, then 0x00 0x01.
func appendBytesAscending(b, data []byte) []byte {
	b = append(b, bytesMarker)
	for {
		i := bytes.IndexByte(data, escape)
		if i < 0 {
			break
		}
		b = append(b, data[:i]...)
		b = append(b, escape, escaped00)
		data = data[i+1:]
	}
	b = append(b, data...)
	return append(b, escape, escapedTerm)
}

// appendIndexPrefix is /Table/<table>/<index>/: cockroach's keys.MakeTableIDIndexID for the
// system tenant (SystemSQLCodec.IndexPrefix), the table and index IDs each as
// appendUvarintAscending.
func appendIndexPrefix(b []byte, table, index uint32) []byte {
	return appendUvarintAscending(appendUvarintAscending(b, uint64(table)), uint64(index))
}

// appendFamily0 ends a primary-index key with column family 0: cockroach's
// keys.MakeFamilyKey(key, 0), uvarint 0 and, for family 0, no length suffix.
func appendFamily0(b []byte) []byte { return appendUvarintAscending(b, 0) }

// mvccSuffixLen is the MVCC version suffix of a key with a wall time only: the sentinel 0x00,
// 8 bytes of wall time and the length byte 9 (cockroach pkg/storage/mvcc_key.go,
// EncodeMVCCKey: [key] [sentinel] [timeWall] [timeLength]).
const mvccSuffixLen = 1 + 8 + 1

// appendMVCCVersion appends the version suffix of a key written at wall time wall (Unix
// nanoseconds, logical 0).
func appendMVCCVersion(b []byte, wall int64) []byte {
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(wall))
	return append(b, 9)
}

// Value encodings (cockroach pkg/roachpb/data.go Value, pkg/util/encoding value tags).
const (
	valueTypeTuple = 10 // roachpb.ValueType_TUPLE: a row's non-key columns, column-ID delta + value each
	valueTypeBytes = 3  // roachpb.ValueType_BYTES: a secondary index entry's value (empty here)
	encTypeInt     = 3  // encoding.Int: the value tag of an INT8 column
)

// appendRowValue appends a roachpb.Value holding a row's column family 0 of one INT8 column
// (the load table's payload, column ID 2 after id's 1): the 4-byte checksum (left 0, as a
// Value before InitChecksum), tag TUPLE, then encoding.EncodeIntValue(colIDDelta 2, v): the
// value tag colIDDelta<<4|Int as a one-byte uvarint, and v as a stdlib zigzag varint
// (EncodeNonsortingStdlibVarint).
func appendRowValue(b []byte, payload int64) []byte {
	b = append(b, 0, 0, 0, 0, valueTypeTuple, 2<<4|encTypeInt)
	return binary.AppendVarint(b, payload)
}

// appendIndexValue appends the value of a non-unique secondary index entry, whose key holds
// the indexed column and the primary key: an empty BYTES roachpb.Value (checksum, tag).
func appendIndexValue(b []byte) []byte { return append(b, 0, 0, 0, 0, valueTypeBytes) }
