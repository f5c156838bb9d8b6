// Package pebble is idbench's engine over Pebble (github.com/cockroachdb/pebble/v2),
// CockroachDB's storage engine: each table is laid out as CockroachDB lays out a SQL table
// (keys /Table/<id>/<index>/<key>/<family> with CockroachDB's ordered encodings and an MVCC
// version suffix, the row as a roachpb.Value; encoding.go), written through batches committed
// with the write-ahead log synced, and measured with Pebble's own counters (LSM).
//
// It runs the table workload (engine.TableLoader); the app workload's SQL is not spoken here
// (AppDialect's row writers return ErrNoApp).
package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/idkit/idkit/dbbench/engine"
)

// Name is the engine's name in Config.DB and in a report's Settings.Engine.
const Name = "pebble"

// The memtable and block cache are engine.KVMemTable and engine.KVBlockCache (8 and 32 MiB);
// CockroachDB itself uses a 64 MiB memtable and a cache of a quarter of RAM.

// firstTableID is the ID CockroachDB gives the first user table of a fresh cluster (IDs
// below are its system tables): the load table is /Table/104.
const firstTableID = 104

// Index IDs: the primary index is 1 in CockroachDB; the secondary indexes follow, 2, 3, ….
const primaryIndex = 1

// ErrNoApp is returned by the app workload's calls: the pebble engine loads the table
// workload only.
var ErrNoApp = errors.New("dbbench: pebble: the app workload is not available on this engine (use --workload table)")

// Report is the report dialect of Pebble.
func Report() engine.ReportText {
	return engine.KVText{
		Title:      "Pebble (CockroachDB's storage engine)",
		MemTable:   "pebble memtable",
		BlockCache: "pebble block cache",
		Options:    "pebble options",
		BulkUnit:   "Pebble batch",
		TextKeys:   "Text keys are STRING columns, key-encoded as CockroachDB's EncodeStringAscending (marker, bytes, terminator), compared as bytes.",
		LSM: engine.LSMText{
			Engine: "Pebble",
			Layout: "laid out as CockroachDB lays out `(id PRIMARY KEY, payload INT8)`: " +
				"each row under `/Table/104/1/<id>/0` with CockroachDB's key encoding of the id and an MVCC version suffix, the row as a `roachpb.Value`",
			IndexLayout: "a secondary index on payload as keys of their own, `/Table/104/2/<payload>/<id>`",
			Counters:    "Pebble's `Metrics`: `WAL.BytesWritten`, each level's `TableBytesFlushed` and `TableBytesCompacted`",
			Events:      "Pebble's event listener and metrics",
			L0Name:      "L0 sublevels max",
			PointRead:   "block-cache lookups (hits and misses) of a prefix seek for a sampled key, as CockroachDB's MVCCGet reads",
			IndexJoin:   "as CockroachDB's index join does",
		},
	}.Report()
}

// table is one table of the open database: its ID, its secondary indexes' IDs by name, and
// the counter of a key the engine makes (a sequence).
type table struct {
	def     engine.TableDef
	id      uint32
	indexes map[string]uint32
	seq     atomic.Int64
}

// pebbleEngine loads tables into a Pebble database of their own, in a temporary directory:
// CreateTables opens it, DropTables closes and removes it (engine.KV), so that each load's
// counters and sizes are its own.
type pebbleEngine struct {
	engine.KV[table]

	db    *pebble.DB
	cache *pebble.Cache

	stalls     atomic.Int64
	stallStart atomic.Int64 // Unix nanoseconds of the open stall, or 0
	stallNanos atomic.Int64
	compOut    [7]atomic.Int64
	compMoved  atomic.Int64
	flushes    atomic.Int64
	maxSub     atomic.Int64
	userBytes  atomic.Int64

	// mark is the state at Marks; settled the metrics after Settle.
	mark struct {
		m                      *pebble.Metrics
		stalls, nanos, flushes int64
		comp                   [7]int64
		moved, userBytes       int64
	}
	settled *pebble.Metrics

	// Figures of the prepared statements' reads since Marks.
	qmu    sync.Mutex
	points readStats
}

// readStats accumulates the block figures of reads.
type readStats struct {
	n                   int
	blocks, bytes, hits int64
}

func (r *readStats) add(blocks int64, st pebble.IteratorStats) {
	r.n++
	r.blocks += blocks
	r.bytes += int64(st.InternalStats.BlockBytes)
	r.hits += int64(st.InternalStats.BlockBytesInCache)
}

// Open makes the engine; each table's database is opened by CreateTables.
func Open(_ context.Context, o engine.Options) (engine.Engine, func() error, error) {
	e := &pebbleEngine{}
	kv, err := engine.NewKV[table](Name, o, ErrNoApp, e.closeDB)
	if err != nil {
		return nil, nil, err
	}
	e.KV = kv
	return e, e.Close, nil
}

// Columns is Pebble's column rule (engine.KVColumns): keys of idkit's generators and the
// engine's own sequence; no collations, server-side generators or MariaDB/MySQL types.
func Columns(r engine.Row) (engine.Row, error) { return engine.KVColumns(Name, r) }

func (e *pebbleEngine) options() *pebble.Options {
	o := &pebble.Options{
		Cache:        e.cache,
		MemTableSize: engine.KVMemTable,
		Comparer:     mvccComparer(),
		Logger:       quietLogger{e.Opts},
		EventListener: &pebble.EventListener{
			WriteStallBegin: func(pebble.WriteStallBeginInfo) {
				e.stalls.Add(1)
				e.stallStart.Store(time.Now().UnixNano())
			},
			WriteStallEnd: func() {
				if t := e.stallStart.Swap(0); t != 0 {
					e.stallNanos.Add(time.Now().UnixNano() - t)
				}
			},
			FlushEnd: func(info pebble.FlushInfo) {
				if info.Err == nil {
					e.flushes.Add(1)
				}
			},
			CompactionEnd: func(info pebble.CompactionInfo) {
				if info.Err != nil || info.Output.Level < 0 || info.Output.Level > 6 {
					return
				}
				e.compOut[info.Output.Level].Add(1)
				if strings.HasPrefix(info.Reason, "move") {
					e.compMoved.Add(1)
				}
			},
		},
	}
	// Bloom filters on every level, as CockroachDB configures them (10 bits per key).
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloomPolicy()
	}
	return o
}

func (e *pebbleEngine) Settings(s *engine.Settings) {
	e.KV.Settings(s)
	s.ServerVersion = "Pebble " + pebbleVersion() + " (github.com/cockroachdb/pebble/v2)"
	s.Statistics = "pebble Metrics and iterator stats"
	s.LSMOptions = "WAL synced at each batch commit, bloom filters 10 bits/key, other options Pebble's defaults (L0 compaction threshold 4, stop writes at 12)"
}

// TableNotes says how the keys are laid out and what the LSM figures mean.
func (e *pebbleEngine) TableNotes(*engine.Report, []engine.Row, []string) []string {
	return []string{"Keys are laid out as CockroachDB lays out a table (/Table/104/1/<key>/0 plus an MVCC version suffix, CockroachDB's ordered encodings), one Pebble database per load, batches committed with the WAL synced."}
}

// ColumnTypeOf names the CockroachDB column type of a row's key and its key encoding.
func (e *pebbleEngine) ColumnTypeOf(r engine.Row) string {
	switch r.Col {
	case engine.ColIdentity:
		return "INT8 (engine sequence)"
	case engine.ColBigint:
		return "INT8"
	case engine.ColUint64:
		return "BYTES(8), big-endian"
	case engine.ColUUID:
		return "UUID"
	default:
		return "STRING"
	}
}

// appendKey appends the key encoding of v, a key of column c: INT8 as EncodeVarintAscending,
// UUID and BYTES as EncodeBytesAscending, STRING as EncodeStringAscending (the same bytes).
func appendKey(b []byte, c engine.Column, v *engine.Value) []byte {
	switch c {
	case engine.ColIdentity, engine.ColBigint:
		return appendVarintAscending(b, v.I64)
	case engine.ColUint64:
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], v.U64)
		return appendBytesAscending(b, k[:])
	case engine.ColUUID:
		return appendBytesAscending(b, v.B16[:])
	default:
		return appendBytesAscending(b, []byte(v.Str))
	}
}

// CreateTables opens a fresh database for the tables (the one open, if any, must have been
// dropped) and gives them IDs from 104 on, their secondary indexes IDs 2, 3, ….
func (e *pebbleEngine) CreateTables(ctx context.Context, ts []engine.TableDef) error {
	return e.CreateDB(ts, func(dir string) error {
		e.cache = pebble.NewCache(engine.KVBlockCache)
		db, err := pebble.Open(dir, e.options())
		if err != nil {
			e.cache.Unref()
			e.cache = nil
			return err
		}
		e.db = db
		return nil
	}, func(i int, t engine.TableDef) *table {
		tb := &table{def: t, id: uint32(firstTableID + i), indexes: map[string]uint32{}}
		for j, ix := range t.Indexes {
			tb.indexes[ix.Name] = uint32(primaryIndex + 1 + j)
		}
		return tb
	})
}

// closeDB closes the database and frees its block cache (engine.KV's DropTables and Close
// call it, then remove its directory).
func (e *pebbleEngine) closeDB() error {
	var err error
	if e.db != nil {
		if cerr := e.db.Close(); cerr != nil {
			err = e.Errorf("close: %w", cerr)
		}
		e.db = nil
	}
	if e.cache != nil {
		e.cache.Unref()
		e.cache = nil
	}
	return err
}

// primaryKey appends /Table/<id>/1/<key>/0, the row's key without its version.
func (t *table) primaryKey(b []byte, v *engine.Value) []byte {
	b = appendIndexPrefix(b, t.id, primaryIndex)
	b = appendKey(b, t.def.Key.Col, v)
	return appendFamily0(b)
}

// FillTable writes n rows into t over Options.Clients goroutines, each a batch of
// BatchSize rows (Options.Mode single: one row) committed with the WAL synced: the row
// under its primary key and, with a secondary index on payload, the index entry
// /Table/<id>/2/<payload>/<key> (a non-unique index's key ends with the primary key).
func (e *pebbleEngine) FillTable(ctx context.Context, td engine.TableDef, src *engine.Source, n int, rec *engine.Recorder) error {
	return e.Fill(ctx, td, src, n, rec, func(t *table) func(context.Context, int64, int64) error {
		var ixID uint32
		for _, id := range t.indexes {
			ixID = id // the load table has at most one, on payload
		}
		var v engine.Value
		var key, val, ix []byte
		return func(ctx context.Context, start, count int64) error {
			b := e.db.NewBatch()
			wall := time.Now().UnixNano()
			var user int64
			for i := int64(0); i < count; i++ {
				if t.def.Key.Col == engine.ColIdentity {
					v.I64 = t.seq.Add(1)
				} else if err := src.NextContext(ctx, &v); err != nil {
					b.Close()
					return err
				}
				payload := start + i + 1
				key = appendMVCCVersion(t.primaryKey(key[:0], &v), wall)
				val = appendRowValue(val[:0], payload)
				if err := b.Set(key, val, nil); err != nil {
					b.Close()
					return err
				}
				user += int64(len(key) + len(val))
				if ixID != 0 {
					ix = appendIndexPrefix(ix[:0], t.id, ixID)
					ix = appendVarintAscending(ix, payload)
					ix = appendKey(ix, t.def.Key.Col, &v)
					ix = appendMVCCVersion(ix, wall)
					val = appendIndexValue(val[:0])
					if err := b.Set(ix, val, nil); err != nil {
						b.Close()
						return err
					}
					user += int64(len(ix) + len(val))
				}
			}
			if err := b.Commit(pebble.Sync); err != nil {
				b.Close()
				return err
			}
			b.Close()
			e.userBytes.Add(user)
			return nil
		}
	})
}

// Marks records Pebble's metrics and the listener's counters, starts sampling the L0
// sublevels every 100 ms, and returns the bytes written to the WAL since (CounterLogBytes).
func (e *pebbleEngine) Marks(ctx context.Context) (func(context.Context) (map[string]int64, error), error) {
	if err := e.CheckOpen(); err != nil {
		return nil, err
	}
	e.mark.m = e.db.Metrics()
	e.mark.stalls, e.mark.nanos, e.mark.flushes = e.stalls.Load(), e.stallNanos.Load(), e.flushes.Load()
	for i := range e.compOut {
		e.mark.comp[i] = e.compOut[i].Load()
	}
	e.mark.moved, e.mark.userBytes = e.compMoved.Load(), e.userBytes.Load()
	e.settled = nil
	e.qmu.Lock()
	e.points = readStats{}
	e.qmu.Unlock()
	e.maxSub.Store(int64(e.mark.m.Levels[0].Sublevels))
	db := e.db
	e.Sample(&e.maxSub, func() int64 { return int64(db.Metrics().Levels[0].Sublevels) })
	before := e.mark.m.WAL.BytesWritten
	return func(ctx context.Context) (map[string]int64, error) {
		if err := e.CheckOpen(); err != nil {
			return nil, err
		}
		return map[string]int64{engine.CounterLogBytes: int64(e.db.Metrics().WAL.BytesWritten - before)}, nil
	}, nil
}

// Settle flushes the memtable and waits (up to two minutes, honouring ctx) until no flush or
// compaction runs, twice in a row 100 ms apart, so that the load's compactions are counted
// and its sstables measured; then it stops the L0 sampler and keeps the metrics for LSM.
func (e *pebbleEngine) Settle(ctx context.Context, _ []engine.TableDef) error {
	if err := e.CheckOpen(); err != nil {
		return err
	}
	if err := e.db.Flush(); err != nil {
		return engine.Fail(ctx, "pebble: flush", err)
	}
	if err := engine.WaitQuiet(ctx, 2*time.Minute, func() bool {
		m := e.db.Metrics()
		return m.Compact.NumInProgress != 0 || m.Flush.NumInProgress != 0
	}); err != nil {
		return engine.Fail(ctx, "pebble: settle", err)
	}
	e.StopSampler()
	e.settled = e.db.Metrics()
	return nil
}

// Structures sizes the table's primary index (which holds the rows: clustered) and each
// secondary index by Pebble's estimate of the sstable bytes of its key span.
func (e *pebbleEngine) Structures(ctx context.Context, ts []engine.TableDef) ([]engine.Structure, error) {
	var out []engine.Structure
	for _, td := range ts {
		t, err := e.Table(td.Name)
		if err != nil {
			return nil, err
		}
		size := func(index uint32) (int64, error) {
			lo := appendIndexPrefix(nil, t.id, index)
			hi := appendIndexPrefix(nil, t.id, index+1)
			n, err := e.db.EstimateDiskUsage(lo, hi)
			return int64(n), err
		}
		n, err := size(primaryIndex)
		if err != nil {
			return nil, engine.Fail(ctx, "pebble: size", err)
		}
		out = append(out, engine.Structure{Name: fmt.Sprintf("/Table/%d/%d", t.id, primaryIndex), Role: td.Role(engine.RoleClustered), Bytes: n})
		for _, ix := range td.Indexes {
			n, err := size(t.indexes[ix.Name])
			if err != nil {
				return nil, engine.Fail(ctx, "pebble: size", err)
			}
			out = append(out, engine.Structure{Name: fmt.Sprintf("/Table/%d/%d (%s)", t.id, t.indexes[ix.Name], ix.Name), Role: ix.Role, Bytes: n})
		}
	}
	return out, nil
}

// span returns the bounds of index of t.
func (t *table) span(index uint32) (lo, hi []byte) {
	return appendIndexPrefix(nil, t.id, index), appendIndexPrefix(nil, t.id, index+1)
}

// rowPrefix strips the MVCC version from a stored key.
func rowPrefix(k []byte) []byte {
	if len(k) < mvccSuffixLen {
		return k
	}
	return k[:len(k)-mvccSuffixLen]
}

// SampleKeys draws about n keys of t's primary index: each row is kept with probability
// n/rows over one scan of the index. A key is its row key without version ([]byte).
func (e *pebbleEngine) SampleKeys(ctx context.Context, td engine.TableDef, n int, rows int64) ([]any, error) {
	t, err := e.Table(td.Name)
	if err != nil {
		return nil, err
	}
	lo, hi := t.span(primaryIndex)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, engine.Fail(ctx, "pebble: sample keys", err)
	}
	defer it.Close()
	p := float64(n) / float64(max(rows, 1))
	var keys []any
	for ok := it.First(); ok; ok = it.Next() {
		if rand.Float64() < p {
			keys = append(keys, bytes.Clone(rowPrefix(it.Key())))
		}
	}
	return keys, engine.Fail(ctx, "pebble: sample keys", it.Error())
}

// ErrStatement is returned (wrapped, with the statement) for SQL the engine does not answer:
// engine.ErrTableStatement.
var ErrStatement = engine.ErrTableStatement

// Prepare returns the point lookup or the range scan of the table workload as reads of the
// primary index; any other statement is ErrStatement.
func (e *pebbleEngine) Prepare(ctx context.Context, q string) (engine.Stmt, error) {
	return e.PrepareRead(q, e.rows)
}

// cacheLookups is the block cache's hits and misses so far: the blocks read since a mark.
func (e *pebbleEngine) cacheLookups() int64 {
	m := e.db.Metrics()
	return m.BlockCache.Hits + m.BlockCache.Misses
}

// rows runs a prepared read of t for key k (a []byte of SampleKeys), a point lookup (next 0)
// or a scan of the next rows after k, and returns the rows it found; a point lookup's blocks
// are added to the engine's point-read figures.
func (e *pebbleEngine) rows(ctx context.Context, t *table, next int, k []byte) (int64, error) {
	lo, hi := t.span(primaryIndex)
	if next == 0 {
		c0 := e.cacheLookups()
		found, st, err := e.pointRead(k)
		if err != nil {
			return 0, err
		}
		blocks := e.cacheLookups() - c0
		e.qmu.Lock()
		e.points.add(blocks, st)
		e.qmu.Unlock()
		if found {
			return 1, nil
		}
		return 0, nil
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n int64
	// id > k: past every version of k's row.
	for ok := it.SeekGE(append(bytes.Clone(k), 0xff)); ok && n < int64(next); ok = it.Next() {
		n++
	}
	return n, it.Error()
}

// pointRead reads the row whose key (without version) is k, as CockroachDB's MVCCGet does: a
// prefix seek, which consults the bloom filters.
func (e *pebbleEngine) pointRead(k []byte) (bool, pebble.IteratorStats, error) {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return false, pebble.IteratorStats{}, err
	}
	found := it.SeekPrefixGE(k) && bytes.Equal(rowPrefix(it.Key()), k)
	if found {
		_ = it.Value()
	}
	st := it.Stats()
	return found, st, errors.Join(it.Error(), it.Close())
}

// QueryInt answers the table workload's row count by scanning the primary index.
func (e *pebbleEngine) QueryInt(ctx context.Context, q string, args ...any) (int64, error) {
	t, err := e.CountTable(q)
	if err != nil {
		return 0, err
	}
	lo, hi := t.span(primaryIndex)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, engine.Fail(ctx, "pebble: count", err)
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, engine.Fail(ctx, "pebble: count", it.Error())
}

// LSM returns the load's figures: Pebble's metrics from Marks to Settle, the listener's
// counters, the point reads' blocks, and windowScans time-window scans through the secondary
// index on payload.
func (e *pebbleEngine) LSM(ctx context.Context, td engine.TableDef, rows int64, rangeN int) (*engine.LSM, error) {
	if e.mark.m == nil || e.settled == nil {
		return nil, errors.New("dbbench: pebble: LSM figures need Marks and Settle first")
	}
	t, err := e.Table(td.Name)
	if err != nil {
		return nil, err
	}
	a, b := e.mark.m, e.settled
	var flush, comp uint64
	for i := range b.Levels {
		flush += b.Levels[i].TableBytesFlushed - a.Levels[i].TableBytesFlushed
		comp += b.Levels[i].TableBytesCompacted - a.Levels[i].TableBytesCompacted
	}
	l := &engine.LSM{
		UserBytes:        e.userBytes.Load() - e.mark.userBytes,
		WALBytes:         int64(b.WAL.BytesWritten - a.WAL.BytesWritten),
		FlushBytes:       int64(flush),
		CompactionBytes:  int64(comp),
		LiveBytes:        int64(b.Table.Local.LiveSize),
		Flushes:          e.flushes.Load() - e.mark.flushes,
		CompactionsMoved: e.compMoved.Load() - e.mark.moved,
		L0SublevelsMax:   int(e.maxSub.Load()),
		ReadAmp:          b.ReadAmp(),
		WriteStalls:      e.stalls.Load() - e.mark.stalls,
		StallSeconds:     float64(e.stallNanos.Load()-e.mark.nanos) / 1e9,
	}
	for i := range e.compOut {
		l.Compactions = append(l.Compactions, e.compOut[i].Load()-e.mark.comp[i])
	}
	l.SetAmplification()
	e.qmu.Lock()
	p := e.points
	e.qmu.Unlock()
	if p.n > 0 {
		l.PointReads = p.n
		l.PointBlocks = float64(p.blocks) / float64(p.n)
		l.PointBlockBytes = float64(p.bytes) / float64(p.n)
		l.PointCachedShare = engine.Share(p.hits, p.bytes)
	}
	var ixID uint32
	for _, id := range t.indexes {
		ixID = id
	}
	if ixID != 0 && rows > int64(rangeN) && rangeN > 0 {
		if err := e.windowScans(ctx, t, ixID, rows, rangeN, l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// windowScansCount is the number of time-window scans LSM times.
const windowScansCount = 100

// windowScans reads windowScansCount windows of rangeN consecutive payloads (rows written
// one after another: a window of time) through the payload index, then reads each row from
// the primary index in key order through one iterator (CockroachDB's index join looks the
// rows up in one batch, in key order), and averages their blocks: a block read again for the
// next row of the same block is not read again.
func (e *pebbleEngine) windowScans(ctx context.Context, t *table, ixID uint32, rows int64, rangeN int, l *engine.LSM) error {
	var rs readStats
	pre := appendIndexPrefix(nil, t.id, ixID)
	plo, phi := t.span(primaryIndex)
	var found int
	for i := 0; i < windowScansCount; i++ {
		if err := ctx.Err(); err != nil {
			return engine.Fail(ctx, "pebble: window scan", err)
		}
		p := 1 + rand.Int64N(rows-int64(rangeN))
		lo := appendVarintAscending(bytes.Clone(pre), p)
		hi := appendVarintAscending(bytes.Clone(pre), p+int64(rangeN))
		c0 := e.cacheLookups()
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return engine.Fail(ctx, "pebble: window scan", err)
		}
		var keys [][]byte
		for ok := it.First(); ok; ok = it.Next() {
			// The index key is prefix, payload, primary key, version: the row's key is
			// what lies between the payload's encoding and the version.
			pay := rowPrefix(it.Key())[len(pre):]
			n, err := varintLen(pay)
			if err != nil {
				it.Close()
				return err
			}
			keys = append(keys, appendFamily0(append(bytes.Clone(plo), pay[n:]...)))
		}
		st := it.Stats()
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return engine.Fail(ctx, "pebble: window scan", err)
		}
		slices.SortFunc(keys, bytes.Compare)
		pit, err := e.db.NewIter(&pebble.IterOptions{LowerBound: plo, UpperBound: phi})
		if err != nil {
			return engine.Fail(ctx, "pebble: window scan", err)
		}
		for _, k := range keys {
			if !pit.SeekGE(k) || !bytes.Equal(rowPrefix(pit.Key()), k) {
				pit.Close()
				return fmt.Errorf("dbbench: pebble: index entry without its row: %x", k)
			}
			_ = pit.Value()
		}
		st.InternalStats.Merge(pit.Stats().InternalStats)
		if err := errors.Join(pit.Error(), pit.Close()); err != nil {
			return engine.Fail(ctx, "pebble: window scan", err)
		}
		rs.add(e.cacheLookups()-c0, st)
		found += len(keys)
	}
	l.WindowScans = rs.n
	l.WindowRows = found / max(rs.n, 1)
	l.WindowBlocks = float64(rs.blocks) / float64(rs.n)
	l.WindowBlockBytes = float64(rs.bytes) / float64(rs.n)
	l.WindowCachedShare = engine.Share(rs.hits, rs.bytes)
	return nil
}

// varintLen is the length of the EncodeVarintAscending value at the start of b.
func varintLen(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errors.New("dbbench: pebble: empty varint")
	}
	switch t := int(b[0]); {
	case t >= intZero && t <= intZero+intSmall:
		return 1, nil
	case t > intZero+intSmall && t <= intMax:
		return 1 + t - (intZero + intSmall), nil
	case t >= intMin && t < intZero:
		return 1 + intZero - t, nil
	}
	return 0, fmt.Errorf("dbbench: pebble: bad varint tag %#x", b[0])
}

// quietLogger drops Pebble's informational lines (it logs every WAL it opens) and passes its
// errors to the run's log; a fatal error stays Pebble's (its default logger exits).
type quietLogger struct{ o engine.Options }

func (quietLogger) Infof(string, ...any) {}
func (l quietLogger) Errorf(format string, args ...any) {
	l.o.Logf("dbbench: pebble: "+format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }
