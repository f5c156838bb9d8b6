// Package rocksdb is idbench's engine over RocksDB, the storage engine of TiKV (TiDB's
// storage layer) and of YugabyteDB's DocDB, through the cgo binding github.com/linxGnu/grocksdb
// against the system's librocksdb. Each table is laid out as TiDB lays out a clustered table
// and TiKV stores it (encoding.go): the record key t{tableID}_r{handle} with TiDB's
// memcomparable encodings, under TiKV's data prefix and memcomparable key encoding with the
// commit timestamp as the version suffix, the row in TiDB's row format v2 inside the write
// column family's record, as a one-phase commit writes it. Batches are committed with the
// write-ahead log synced, and the engine is measured with RocksDB's own statistics (LSM).
//
// The engine needs the C library, so it is built only with the build tag rocksdb
// (go build -tags rocksdb, with librocksdb-dev installed); without the tag Open returns
// ErrNotBuilt and everything else in the package (its name, column rule, report texts and
// encodings) is still there, so that the engine table lists it unconditionally.
package rocksdb

import (
	"errors"
	"fmt"

	"github.com/idkit/idkit/dbbench/engine"
)

// Name is the engine's name in Config.DB and in a report's Settings.Engine.
const Name = "rocksdb"

// ErrNotBuilt is returned by Open in a binary built without the rocksdb build tag.
var ErrNotBuilt = errors.New("dbbench: rocksdb: this idbench was built without RocksDB; build it with `go build -tags rocksdb ./cmd/idbench` (needs the C library: apt-get install librocksdb-dev)")

// ErrNoApp is returned by the app workload's calls: the rocksdb engine loads the table
// workload only.
var ErrNoApp = errors.New("dbbench: rocksdb: the app workload is not available on this engine (use --workload table)")

// The memtable (write_buffer_size) and the LRU block cache are engine.KVMemTable and
// engine.KVBlockCache (8 and 32 MiB), as the pebble engine's. TiKV itself uses a 128 MiB
// write buffer for its write column family and a block cache of 45% of RAM.
const bloomBits = 10 // TiKV's bloom-filter-bits-per-key

// firstTableID is the table ID of the load table, as in the pebble engine (a TiDB cluster's
// first user table gets an ID near it; every ID is 8 bytes in a key, so its value changes
// no size).
const firstTableID = 104

// Report is the report dialect of RocksDB.
func Report() engine.ReportText {
	return engine.KVText{
		Title:      "RocksDB (TiKV's storage engine)",
		MemTable:   "rocksdb write buffer",
		BlockCache: "rocksdb block cache",
		Options:    "rocksdb options",
		BulkUnit:   "RocksDB write batch",
		TextKeys:   "Text keys are VARBINARY columns of a clustered primary key (a common handle), key-encoded as TiDB's EncodeKey of bytes (flag, memcomparable groups), compared as bytes.",
		LSM: engine.LSMText{
			Engine: "RocksDB",
			Layout: "laid out as TiDB lays out a clustered table `(id PRIMARY KEY CLUSTERED, payload BIGINT)` and TiKV stores it: " +
				"each row under the record key `t{104}_r{id}` (TiDB's tablecodec: an integer id as the handle, EncodeInt; any other as a common handle, EncodeKey's bytes), " +
				"with TiKV's data prefix `z`, its memcomparable key encoding and the commit timestamp as the version suffix, the row in TiDB's row format v2 inside the write column family's record, as a one-phase commit writes it",
			IndexLayout: "a secondary index on payload as keys of their own, `t{104}_i{1}{payload}{id}`",
			Counters:    "RocksDB's statistics: the tickers `rocksdb.wal.bytes`, `rocksdb.flush.write.bytes` and `rocksdb.compact.write.bytes`",
			Events: "RocksDB's property `rocksdb.cfstats` (its `Compaction Stats` table by level, whose L0 row counts the flushes, and its `Stalls(count)` line) and the ticker `rocksdb.stall.micros`; " +
				"RocksDB has no L0 sublevels, so the L0 figure is its most L0 files, each a sorted run a read may consult",
			L0Name:    "L0 files max",
			PointRead: "block-cache hits and block reads (RocksDB's per-thread perf context, `block_cache_hit_count` + `block_read_count`, index and filter blocks included: they are cached as TiKV caches them) of a Get of a sampled row's stored key, which consults the bloom filters as TiKV's point get consults its prefix filters",
			IndexJoin: "as TiDB's IndexLookUp reads them (a batch of handles, looked up in key order)",
		},
	}.Report()
}

// Columns is RocksDB's column rule (engine.KVColumns): keys of idkit's generators and the
// engine's own sequence; no collations, server-side generators or MariaDB/MySQL types.
func Columns(r engine.Row) (engine.Row, error) { return engine.KVColumns(Name, r) }

// columnType names the TiDB column type of a key column and how it is keyed.
func columnType(c engine.Column) string {
	switch c {
	case engine.ColIdentity:
		return "BIGINT AUTO_INCREMENT (int handle)"
	case engine.ColBigint:
		return "BIGINT (int handle)"
	case engine.ColUint64:
		return "BIGINT UNSIGNED (int handle)"
	case engine.ColUUID:
		return "BINARY(16) (common handle)"
	default:
		return "VARBINARY (common handle)"
	}
}

// intHandle reports whether a key of column c is an int handle: TiDB keys a clustered
// integer primary key by its value (PKIsHandle); any other is a common handle.
func intHandle(c engine.Column) bool {
	return c == engine.ColIdentity || c == engine.ColBigint || c == engine.ColUint64
}

// handle returns a key's handle: for an int handle its int64 (a BIGINT UNSIGNED's bits, as
// TiDB keeps an unsigned handle); for a common handle its bytes.
func handle(c engine.Column, v *engine.Value) (int64, []byte) {
	switch c {
	case engine.ColIdentity, engine.ColBigint:
		return v.I64, nil
	case engine.ColUint64:
		return int64(v.U64), nil
	case engine.ColUUID:
		return 0, v.B16[:]
	default:
		return 0, []byte(v.Str)
	}
}

// appendHandle appends the handle part of a record key: EncodeInt for an int handle, the
// common handle's EncodeKey (bytesFlag, EncodeBytes) otherwise.
func appendHandle(b []byte, c engine.Column, v *engine.Value) []byte {
	h, raw := handle(c, v)
	if intHandle(c) {
		return appendEncodeInt(b, h)
	}
	return appendEncodeBytes(append(b, bytesFlag), raw)
}

// recordKey appends the raw record key t{table}_r{handle}.
func recordKey(b []byte, table int64, c engine.Column, v *engine.Value) []byte {
	return appendHandle(appendRecordPrefix(b, table), c, v)
}

// indexKey appends the raw key of the non-unique index entry (payload, handle): the index
// prefix, payload as an int datum, then an int handle as an int datum (intFlag, EncodeInt) or
// a common handle's encoding.
func indexKey(b []byte, table, index int64, c engine.Column, v *engine.Value, payload int64) []byte {
	b = appendEncodeInt(append(appendIndexPrefix(b, table, index), intFlag), payload)
	if intHandle(c) {
		h, _ := handle(c, v)
		return appendEncodeInt(append(b, intFlag), h)
	}
	return appendHandle(b, c, v)
}

// recordFromIndex returns the raw record key of the raw index key k of table: the handle
// is what follows the index prefix and the payload datum.
func recordFromIndex(k []byte, table, index int64) ([]byte, error) {
	pre := len(appendIndexPrefix(nil, table, index)) + 1 + 8
	if len(k) <= pre {
		return nil, fmt.Errorf("%w: index key of %d bytes", errCorrupt, len(k))
	}
	h := k[pre:]
	rec := appendRecordPrefix(nil, table)
	if h[0] == intFlag {
		if len(h) != 9 {
			return nil, fmt.Errorf("%w: int handle of %d bytes", errCorrupt, len(h)-1)
		}
		return append(rec, h[1:]...), nil
	}
	return append(rec, h...), nil
}
