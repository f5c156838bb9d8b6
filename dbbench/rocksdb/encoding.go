package rocksdb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// TiDB's and TiKV's key and value encodings, written by hand (importing TiDB would bring in
// most of it; TiKV is Rust):
//
//   - pingcap/tidb tablecodec/tablecodec.go: a row's record key t{tableID}_r{handle}
//     (EncodeRowKeyWithHandle, appendTableRecordPrefix) and a non-unique index key
//     t{tableID}_i{indexID}{values}{handle} (GenIndexKey: an int handle is appended as a
//     datum, flag and EncodeInt; a common handle as its encoded datums), and the value of a
//     non-unique index entry (genIndexValueVersion0: the single byte '0' for an int handle;
//     GenIndexValueForClusteredIndexVersion1: tail length, IndexVersionFlag, version 1 for a
//     common handle);
//   - pingcap/tidb util/codec/number.go EncodeInt (the sign bit flipped, 8 bytes
//     big-endian), util/codec/bytes.go EncodeBytes (the memcomparable format: groups of 8
//     bytes, each followed by a marker 0xff minus the group's padding), util/codec/codec.go
//     EncodeKey (a datum's flag byte: intFlag 3, bytesFlag 1, then its encoding);
//   - pingcap/tidb util/rowcodec (row format v2: version 128, flags, counts of not-null and
//     null columns, column IDs, end offsets, then the values; an integer in 1, 2, 4 or 8
//     little-endian bytes);
//   - tikv/tikv components/keys (DATA_PREFIX 'z' before every data key in RocksDB),
//     components/txn_types Key::from_raw and append_ts (the raw key memcomparable-encoded,
//     then the commit timestamp as !ts, 8 bytes big-endian, so newer versions sort first),
//     and Write::to_bytes (the write column family's record: type 'P', the start timestamp
//     as a varint, then a short value inline: 'v', its length, its bytes).
//
// A row of table 104 with BIGINT handle 5, as TiKV stores it in RocksDB's write column
// family (the raw key 't' 80 00 00 00 00 00 00 68 '_' 'r' 80 00 00 00 00 00 00 05 is 19
// bytes, three memcomparable groups):
//
//	7a                               'z', TiKV's data prefix
//	74 80 00 00 00 00 00 00 ff       group 1 ('t', table ID 104's first 7 bytes), marker
//	68 5f 72 80 00 00 00 00 ff       group 2
//	00 00 05 00 00 00 00 00 fa       group 3: 3 bytes and 5 of padding, marker 0xff-5
//	<8 bytes>                        !commit_ts, big-endian

// Encoding constants (TiDB util/codec, tablecodec; TiKV txn_types).
const (
	signMask    uint64 = 0x8000000000000000
	encGroup           = 8
	encMarker   byte   = 0xff
	intFlag     byte   = 3 // codec intFlag
	bytesFlag   byte   = 1 // codec bytesFlag
	dataPrefix  byte   = 'z'
	tsLen              = 8
	writePut    byte   = 'P'
	shortValue  byte   = 'v'
	rowCodecVer byte   = 128
	// indexVersionFlag is tablecodec.IndexVersionFlag, which marks a version-1 index value
	// of a table with a clustered common handle.
	indexVersionFlag byte = 125
)

// appendEncodeInt is TiDB's codec.EncodeInt: v with its sign bit flipped, big-endian, so
// that the bytes sort as the signed values.
func appendEncodeInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v)^signMask)
}

// appendEncodeBytes is TiDB's codec.EncodeBytes (TiKV's encode_bytes): data cut into groups of
// 8 bytes, the last padded with zeros, each group followed by 0xff minus its padding; an
// exact multiple of 8 ends with a whole group of padding (marker 0xf7).
func appendEncodeBytes(b, data []byte) []byte {
	for i := 0; i <= len(data); i += encGroup {
		rest := len(data) - i
		if rest >= encGroup {
			b = append(b, data[i:i+encGroup]...)
			b = append(b, encMarker)
			continue
		}
		pad := encGroup - rest
		b = append(b, data[i:]...)
		for j := 0; j < pad; j++ {
			b = append(b, 0)
		}
		b = append(b, encMarker-byte(pad))
	}
	return b
}

// encodedBytesLen is the length of appendEncodeBytes of n bytes.
func encodedBytesLen(n int) int { return (n/encGroup + 1) * (encGroup + 1) }

// errCorrupt is returned, wrapped with the part that is wrong, by decodeBytes.
var errCorrupt = errors.New("dbbench: rocksdb: bad memcomparable encoding")

// decodeBytes is TiDB's codec.DecodeBytes: the data of the appendEncodeBytes at the start of
// b, and the rest of b.
func decodeBytes(b []byte) (data, rest []byte, err error) {
	for {
		if len(b) < encGroup+1 {
			return nil, nil, fmt.Errorf("%w: %d bytes left, a group needs 9", errCorrupt, len(b))
		}
		group, marker := b[:encGroup], b[encGroup]
		b = b[encGroup+1:]
		pad := int(encMarker - marker)
		if pad > encGroup {
			return nil, nil, fmt.Errorf("%w: marker %#x", errCorrupt, marker)
		}
		data = append(data, group[:encGroup-pad]...)
		if pad == 0 {
			continue
		}
		for _, c := range group[encGroup-pad:] {
			if c != 0 {
				return nil, nil, fmt.Errorf("%w: padding byte %#x", errCorrupt, c)
			}
		}
		return data, b, nil
	}
}

// appendRecordPrefix is t{tableID}_r.
func appendRecordPrefix(b []byte, table int64) []byte {
	return append(appendEncodeInt(append(b, 't'), table), '_', 'r')
}

// appendIndexPrefix is t{tableID}_i{indexID}.
func appendIndexPrefix(b []byte, table, index int64) []byte {
	return appendEncodeInt(append(appendEncodeInt(append(b, 't'), table), '_', 'i'), index)
}

// appendDataKey appends TiKV's key of raw in RocksDB without its version: the data prefix
// 'z' and raw memcomparable-encoded (Key::from_raw).
func appendDataKey(b, raw []byte) []byte {
	return appendEncodeBytes(append(b, dataPrefix), raw)
}

// appendTS appends the version suffix of commit timestamp ts (append_ts: !ts big-endian).
func appendTS(b []byte, ts uint64) []byte { return binary.BigEndian.AppendUint64(b, ^ts) }

// appendWriteRecord appends the write column family's record of a put whose value fits
// inline (Write::to_bytes with a short value, ≤ 255 bytes).
func appendWriteRecord(b []byte, startTS uint64, value []byte) []byte {
	b = binary.AppendUvarint(append(b, writePut), startTS)
	return append(append(b, shortValue, byte(len(value))), value...)
}

// appendCompactInt appends v as rowcodec writes an integer column: in the fewest of 1, 2, 4
// or 8 little-endian bytes that hold it.
func appendCompactInt(b []byte, v int64) []byte {
	switch {
	case v == int64(int8(v)):
		return append(b, byte(v))
	case v == int64(int16(v)):
		return binary.LittleEndian.AppendUint16(b, uint16(v))
	case v == int64(int32(v)):
		return binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(b, uint64(v))
}

// appendRowValue appends a row in TiDB's row format v2 (small: one-byte column IDs,
// two-byte offsets): with an int handle only payload (column 2) is stored, the key holds
// id; with a common handle id (column 1, its bytes) is stored too, as TiDB stores every
// column of a clustered common-handle row.
func appendRowValue(b []byte, id []byte, payload int64) []byte {
	var data [8]byte
	pay := appendCompactInt(data[:0], payload)
	b = append(b, rowCodecVer, 0)
	if id == nil {
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = append(b, 2)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(pay)))
		return append(b, pay...)
	}
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = append(b, 1, 2)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(id)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(id)+len(pay)))
	return append(append(b, id...), pay...)
}

// appendIndexValue appends the value of a non-unique index entry: '0' for an int handle
// (the old encoding), tail length 0, IndexVersionFlag, version 1 for a common handle.
func appendIndexValue(b []byte, common bool) []byte {
	if common {
		return append(b, 0, indexVersionFlag, 1)
	}
	return append(b, '0')
}
