//go:build rocksdb

package rocksdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linxGnu/grocksdb"

	"github.com/idkit/idkit/dbbench/engine"
)

// Built reports whether this binary has the RocksDB engine (the rocksdb build tag).
const Built = true

// Perf context metric IDs (rocksdb/c.h's enum, in grocksdb's perf_context.go).
const (
	perfBlockCacheHit = 1 // rocksdb_block_cache_hit_count
	perfBlockRead     = 2 // rocksdb_block_read_count
	perfBlockReadByte = 3 // rocksdb_block_read_byte
)

// table is one table of the open database: its ID, its secondary index's ID (0: none), the
// counter of a key the engine makes (a sequence), and its key column.
type table struct {
	def   engine.TableDef
	id    int64
	index int64
	seq   atomic.Int64
}

// counters is what Marks and Settle read from RocksDB: its tickers and the cfstats
// property's compactions by level and stalls.
type counters struct {
	wal, flush, comp, stallMicros int64
	levels                        [7]int64 // Comp(cnt) by level; L0's is the flushes
	stalls                        int64
}

// rocksEngine loads tables into a RocksDB database of their own, in a temporary directory:
// CreateTables opens it, DropTables closes and removes it (engine.KV), so that each load's
// counters and sizes are its own.
type rocksEngine struct {
	engine.KV[table]
	// version is the library's version from the first database's OPTIONS file.
	version string

	db    *grocksdb.DB
	opts  *grocksdb.Options
	bbto  *grocksdb.BlockBasedTableOptions
	cache *grocksdb.Cache
	wo    *grocksdb.WriteOptions
	ro    *grocksdb.ReadOptions

	userBytes atomic.Int64
	maxL0     atomic.Int64
	tso       atomic.Uint64

	mark struct {
		c         counters
		userBytes int64
		ok        bool
	}
	settled *counters

	qmu    sync.Mutex
	points readStats
}

// readStats accumulates the block figures of reads.
type readStats struct {
	n                  int
	blocks, hits, read int64
}

// Open makes the engine; each table's database is opened by CreateTables.
func Open(_ context.Context, o engine.Options) (engine.Engine, func() error, error) {
	e := &rocksEngine{version: "(version unknown)"}
	kv, err := engine.NewKV[table](Name, o, ErrNoApp, e.closeDB)
	if err != nil {
		return nil, nil, err
	}
	e.KV = kv
	// An empty database opened once names the library's version for the report.
	if err := e.CreateTables(context.Background(), nil); err != nil {
		return nil, nil, errors.Join(err, e.Close())
	}
	if err := e.DropTables(context.Background(), nil); err != nil {
		return nil, nil, errors.Join(err, e.Close())
	}
	return e, e.Close, nil
}

// options are the database's options: RocksDB's defaults but for the sizes, statistics on,
// bloom filters of 10 bits per key, index and filter blocks in the block cache, and levels
// sized from the bottom (TiKV's settings for the last three).
func (e *rocksEngine) options() {
	e.cache = grocksdb.NewLRUCache(engine.KVBlockCache)
	e.bbto = grocksdb.NewDefaultBlockBasedTableOptions()
	e.bbto.SetBlockCache(e.cache)
	e.bbto.SetFilterPolicy(grocksdb.NewBloomFilterFull(bloomBits))
	e.bbto.SetCacheIndexAndFilterBlocks(true)
	e.opts = grocksdb.NewDefaultOptions()
	e.opts.SetCreateIfMissing(true)
	e.opts.SetWriteBufferSize(engine.KVMemTable)
	e.opts.SetLevelCompactionDynamicLevelBytes(true)
	e.opts.SetBlockBasedTableFactory(e.bbto)
	e.opts.EnableStatistics()
	e.opts.SetStatsDumpPeriodSec(0)
	e.opts.SetInfoLogLevel(grocksdb.WarnInfoLogLevel)
	e.wo = grocksdb.NewDefaultWriteOptions()
	e.wo.SetSync(true)
	e.ro = grocksdb.NewDefaultReadOptions()
}

func (e *rocksEngine) Settings(s *engine.Settings) {
	e.KV.Settings(s)
	s.ServerVersion = "RocksDB " + e.version + " (librocksdb, github.com/linxGnu/grocksdb " + bindingVersion() + ")"
	s.Statistics = "RocksDB statistics tickers, the rocksdb.cfstats property, per-thread perf context"
	s.LSMOptions = "WAL synced at each batch commit, bloom filters 10 bits/key, index and filter blocks cached, level_compaction_dynamic_level_bytes, other options RocksDB's defaults (4 KiB blocks, L0 compaction trigger 4, slowdown at 20 files, stop at 36)"
}

// TableNotes says how the keys are laid out.
func (e *rocksEngine) TableNotes(*engine.Report, []engine.Row, []string) []string {
	return []string{"Keys are laid out as TiDB lays out a clustered table and TiKV stores it in RocksDB's write column family (z + memcomparable t{104}_r{handle} + !commit_ts; the row in row format v2 inside the write record, as a one-phase commit writes it), one RocksDB database per load, batches committed with the WAL synced."}
}

// ColumnTypeOf names the TiDB column type of a row's key and its handle.
func (e *rocksEngine) ColumnTypeOf(r engine.Row) string { return columnType(r.Col) }

// CreateTables opens a fresh database for the tables (the one open, if any, must have been
// dropped) and gives them IDs from 104 on; a table's secondary index gets ID 1 under an int
// handle and 2 under a common handle (whose clustered primary index is 1).
func (e *rocksEngine) CreateTables(ctx context.Context, ts []engine.TableDef) error {
	return e.CreateDB(ts, func(dir string) error {
		e.options()
		db, err := grocksdb.OpenDb(e.opts, dir)
		if err != nil {
			e.freeOptions()
			return err
		}
		e.db = db
		if e.version == "(version unknown)" {
			e.version = optionsVersion(dir)
		}
		return nil
	}, func(i int, t engine.TableDef) *table {
		tb := &table{def: t, id: int64(firstTableID + i)}
		if len(t.Indexes) > 0 {
			tb.index = 1
			if !intHandle(t.Key.Col) {
				tb.index = 2
			}
		}
		return tb
	})
}

func (e *rocksEngine) freeOptions() {
	for _, f := range []func(){
		func() {
			if e.wo != nil {
				e.wo.Destroy()
			}
		},
		func() {
			if e.ro != nil {
				e.ro.Destroy()
			}
		},
		func() {
			if e.opts != nil {
				e.opts.Destroy()
			}
		},
		func() {
			if e.bbto != nil {
				e.bbto.Destroy()
			}
		},
		func() {
			if e.cache != nil {
				e.cache.Destroy()
			}
		},
	} {
		f()
	}
	e.wo, e.ro, e.opts, e.bbto, e.cache = nil, nil, nil, nil, nil
}

// closeDB closes the database, frees its options and forgets its marks (engine.KV's
// DropTables and Close call it, then remove its directory).
func (e *rocksEngine) closeDB() error {
	if e.db != nil {
		e.db.Close()
		e.db = nil
	}
	e.freeOptions()
	e.settled = nil
	e.mark.ok = false
	return nil
}

// nextTS is a TSO timestamp as PD hands them out: physical milliseconds shifted left 18
// bits, plus a logical counter; strictly increasing within the engine.
func (e *rocksEngine) nextTS() uint64 {
	for {
		old := e.tso.Load()
		ts := max(uint64(time.Now().UnixMilli())<<18, old+1)
		if e.tso.CompareAndSwap(old, ts) {
			return ts
		}
	}
}

// FillTable writes n rows into t over Options.Clients goroutines, each a write batch of
// BatchSize rows committed with the WAL synced, as one transaction's one-phase commit: the
// row under its record key and, with a secondary index on payload, the index entry, both at
// the batch's commit timestamp in the write column family.
func (e *rocksEngine) FillTable(ctx context.Context, td engine.TableDef, src *engine.Source, n int, rec *engine.Recorder) error {
	return e.Fill(ctx, td, src, n, rec, func(t *table) func(context.Context, int64, int64) error {
		col := t.def.Key.Col
		common := !intHandle(col)
		var v engine.Value
		var raw, key, row, val []byte
		return func(ctx context.Context, start, count int64) error {
			b := grocksdb.NewWriteBatch()
			startTS := e.nextTS()
			commitTS := startTS + 1
			var user int64
			for i := int64(0); i < count; i++ {
				if col == engine.ColIdentity {
					v.I64 = t.seq.Add(1)
				} else if err := src.NextContext(ctx, &v); err != nil {
					b.Destroy()
					return err
				}
				payload := start + i + 1
				raw = recordKey(raw[:0], t.id, col, &v)
				key = appendTS(appendDataKey(key[:0], raw), commitTS)
				var id []byte
				if common {
					_, id = handle(col, &v)
				}
				row = appendRowValue(row[:0], id, payload)
				val = appendWriteRecord(val[:0], startTS, row)
				b.Put(key, val)
				user += int64(len(key) + len(val))
				if t.index != 0 {
					raw = indexKey(raw[:0], t.id, t.index, col, &v, payload)
					key = appendTS(appendDataKey(key[:0], raw), commitTS)
					val = appendWriteRecord(val[:0], startTS, appendIndexValue(row[:0], common))
					b.Put(key, val)
					user += int64(len(key) + len(val))
				}
			}
			err := e.db.Write(e.wo, b)
			b.Destroy()
			if err != nil {
				return e.Errorf("write batch: %w", err)
			}
			e.userBytes.Add(user)
			return nil
		}
	})
}

// ticker reads a ticker's count from RocksDB's statistics text ("name COUNT : n").
func ticker(stats, name string) int64 {
	i := strings.Index(stats, name+" COUNT : ")
	if i < 0 {
		return 0
	}
	rest := stats[i+len(name)+len(" COUNT : "):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
	return n
}

// read reads the counters now.
func (e *rocksEngine) read() (counters, error) {
	st := e.opts.GetStatisticsString()
	c := counters{
		wal:         ticker(st, "rocksdb.wal.bytes"),
		flush:       ticker(st, "rocksdb.flush.write.bytes"),
		comp:        ticker(st, "rocksdb.compact.write.bytes"),
		stallMicros: ticker(st, "rocksdb.stall.micros"),
	}
	levels, stalls, err := parseCFStats(e.db.GetProperty("rocksdb.cfstats"))
	if err != nil {
		return c, err
	}
	c.levels, c.stalls = levels, stalls
	return c, nil
}

// intProp reads an integer property of the database (one of RocksDB's int properties).
func (e *rocksEngine) intProp(name string) int64 {
	v, _ := e.db.GetIntProperty(name)
	return int64(v)
}

// filesAt reads the files at a level: rocksdb.num-files-at-level<N> is a string property
// (GetIntProperty does not answer it).
func (e *rocksEngine) filesAt(level int) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(e.db.GetProperty(fmt.Sprintf("rocksdb.num-files-at-level%d", level))), 10, 64)
	return n
}

// Marks records the counters, starts sampling the L0 files every 100 ms, and returns the
// bytes written to the WAL since (CounterLogBytes).
func (e *rocksEngine) Marks(ctx context.Context) (func(context.Context) (map[string]int64, error), error) {
	if err := e.CheckOpen(); err != nil {
		return nil, err
	}
	c, err := e.read()
	if err != nil {
		return nil, err
	}
	e.mark.c, e.mark.userBytes, e.mark.ok = c, e.userBytes.Load(), true
	e.settled = nil
	e.qmu.Lock()
	e.points = readStats{}
	e.qmu.Unlock()
	e.maxL0.Store(e.filesAt(0))
	e.Sample(&e.maxL0, func() int64 { return e.filesAt(0) })
	before := c.wal
	return func(ctx context.Context) (map[string]int64, error) {
		if err := e.CheckOpen(); err != nil {
			return nil, err
		}
		return map[string]int64{engine.CounterLogBytes: ticker(e.opts.GetStatisticsString(), "rocksdb.wal.bytes") - before}, nil
	}, nil
}

// Settle flushes the memtable and waits (up to two minutes, honouring ctx) until no flush or
// compaction runs or is pending, twice in a row 100 ms apart; then it stops the L0 sampler
// and keeps the counters for LSM.
func (e *rocksEngine) Settle(ctx context.Context, _ []engine.TableDef) error {
	if err := e.CheckOpen(); err != nil {
		return err
	}
	fo := grocksdb.NewDefaultFlushOptions()
	fo.SetWait(true)
	err := e.db.Flush(fo)
	fo.Destroy()
	if err != nil {
		return engine.Fail(ctx, "rocksdb: flush", err)
	}
	if err := engine.WaitQuiet(ctx, 2*time.Minute, func() bool {
		return e.intProp("rocksdb.num-running-compactions") != 0 || e.intProp("rocksdb.num-running-flushes") != 0 ||
			e.intProp("rocksdb.compaction-pending") != 0 || e.intProp("rocksdb.mem-table-flush-pending") != 0
	}); err != nil {
		return engine.Fail(ctx, "rocksdb: settle", err)
	}
	e.StopSampler()
	c, err := e.read()
	if err != nil {
		return err
	}
	e.settled = &c
	return nil
}

// span returns the bounds, as stored keys, of the raw keys from lo (included) to hi
// (excluded): memcomparable encoding keeps the order of raw keys, and a raw prefix sorts
// before every key it starts.
func span(lo, hi []byte) ([]byte, []byte) {
	return appendDataKey(nil, lo), appendDataKey(nil, hi)
}

// recordSpan is the bounds of t's rows: t{id}_r to t{id}_s.
func (t *table) recordSpan() ([]byte, []byte) {
	lo := appendRecordPrefix(nil, t.id)
	hi := append(bytes.Clone(lo[:len(lo)-1]), 's')
	return span(lo, hi)
}

// indexSpan is the bounds of t's secondary index.
func (t *table) indexSpan() ([]byte, []byte) {
	return span(appendIndexPrefix(nil, t.id, t.index), appendIndexPrefix(nil, t.id, t.index+1))
}

// Structures sizes the table's rows (the clustered primary key) and its secondary index by
// RocksDB's approximate sizes of their key spans.
func (e *rocksEngine) Structures(ctx context.Context, ts []engine.TableDef) ([]engine.Structure, error) {
	var out []engine.Structure
	for _, td := range ts {
		t, err := e.Table(td.Name)
		if err != nil {
			return nil, err
		}
		rlo, rhi := t.recordSpan()
		ranges := []grocksdb.Range{{Start: rlo, Limit: rhi}}
		if t.index != 0 {
			ilo, ihi := t.indexSpan()
			ranges = append(ranges, grocksdb.Range{Start: ilo, Limit: ihi})
		}
		sizes, err := e.db.GetApproximateSizes(ranges)
		if err != nil {
			return nil, engine.Fail(ctx, "rocksdb: size", err)
		}
		out = append(out, engine.Structure{Name: fmt.Sprintf("t%d_r", t.id), Role: td.Role(engine.RoleClustered), Bytes: int64(sizes[0])})
		for _, ix := range td.Indexes {
			out = append(out, engine.Structure{Name: fmt.Sprintf("t%d_i%d (%s)", t.id, t.index, ix.Name), Role: ix.Role, Bytes: int64(sizes[1])})
		}
	}
	return out, nil
}

// iter opens an iterator over [lo, hi).
func (e *rocksEngine) iter(lo, hi []byte) (*grocksdb.Iterator, *grocksdb.ReadOptions) {
	ro := grocksdb.NewDefaultReadOptions()
	ro.SetIterateLowerBound(lo)
	ro.SetIterateUpperBound(hi)
	return e.db.NewIterator(ro), ro
}

// SampleKeys draws about n of t's rows: each is kept with probability n/rows over one scan.
// A key is the row's stored key, version included ([]byte).
func (e *rocksEngine) SampleKeys(ctx context.Context, td engine.TableDef, n int, rows int64) ([]any, error) {
	t, err := e.Table(td.Name)
	if err != nil {
		return nil, err
	}
	it, ro := e.iter(t.recordSpan())
	defer ro.Destroy()
	defer it.Close()
	p := float64(n) / float64(max(rows, 1))
	var keys []any
	for it.SeekToFirst(); it.Valid(); it.Next() {
		if rand.Float64() < p {
			k := it.Key()
			keys = append(keys, bytes.Clone(k.Data()))
			k.Free()
		}
	}
	return keys, engine.Fail(ctx, "rocksdb: sample keys", it.Err())
}

// Prepare returns the point lookup or the range scan of the table workload as reads of the
// rows; any other statement is engine.ErrTableStatement.
func (e *rocksEngine) Prepare(ctx context.Context, q string) (engine.Stmt, error) {
	return e.PrepareRead(q, e.rows)
}

// perfRead runs read on this OS thread with RocksDB's perf context counting, and returns the
// blocks it took from the block cache and read from files, and the bytes read.
func perfRead(read func() error) (hits, reads, bytesRead int64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	grocksdb.SetPerfLevel(grocksdb.KEnableCount)
	defer grocksdb.SetPerfLevel(grocksdb.KDisable)
	pc := grocksdb.NewPerfContext()
	defer pc.Destroy()
	pc.Reset()
	err = read()
	return int64(pc.Metric(perfBlockCacheHit)), int64(pc.Metric(perfBlockRead)), int64(pc.Metric(perfBlockReadByte)), err
}

// rows runs a prepared read of t for key k (a stored key of SampleKeys), a point lookup
// (next 0) or a scan of the next rows after k, and returns the rows it found; a point
// lookup's blocks are added to the engine's point-read figures.
func (e *rocksEngine) rows(ctx context.Context, t *table, next int, k []byte) (int64, error) {
	if next == 0 {
		var found bool
		hits, reads, _, err := perfRead(func() error {
			v, err := e.db.Get(e.ro, k)
			if err != nil {
				return err
			}
			found = v.Exists()
			v.Free()
			return nil
		})
		if err != nil {
			return 0, e.Errorf("get: %w", err)
		}
		e.qmu.Lock()
		e.points.n++
		e.points.blocks += hits + reads
		e.points.hits += hits
		e.qmu.Unlock()
		if found {
			return 1, nil
		}
		return 0, nil
	}
	it, ro := e.iter(t.recordSpan())
	defer ro.Destroy()
	defer it.Close()
	var n int64
	it.Seek(k)
	if it.Valid() && bytes.Equal(it.Key().Data(), k) {
		it.Next() // id > k
	}
	for ; it.Valid() && n < int64(next); it.Next() {
		n++
	}
	return n, it.Err()
}

// QueryInt answers the table workload's row count by scanning the rows.
func (e *rocksEngine) QueryInt(ctx context.Context, q string, args ...any) (int64, error) {
	t, err := e.CountTable(q)
	if err != nil {
		return 0, err
	}
	it, ro := e.iter(t.recordSpan())
	defer ro.Destroy()
	defer it.Close()
	var n int64
	for it.SeekToFirst(); it.Valid(); it.Next() {
		n++
	}
	return n, engine.Fail(ctx, "rocksdb: count", it.Err())
}

// LSM returns the load's figures: RocksDB's counters from Marks to Settle, the point reads'
// blocks, and time-window scans through the secondary index on payload.
func (e *rocksEngine) LSM(ctx context.Context, td engine.TableDef, rows int64, rangeN int) (*engine.LSM, error) {
	if !e.mark.ok || e.settled == nil {
		return nil, errors.New("dbbench: rocksdb: LSM figures need Marks and Settle first")
	}
	t, err := e.Table(td.Name)
	if err != nil {
		return nil, err
	}
	a, b := e.mark.c, *e.settled
	l := &engine.LSM{
		UserBytes:       e.userBytes.Load() - e.mark.userBytes,
		WALBytes:        b.wal - a.wal,
		FlushBytes:      b.flush - a.flush,
		CompactionBytes: b.comp - a.comp,
		LiveBytes:       e.intProp("rocksdb.live-sst-files-size"),
		Flushes:         b.levels[0] - a.levels[0],
		L0SublevelsMax:  int(e.maxL0.Load()),
		WriteStalls:     b.stalls - a.stalls,
		StallSeconds:    float64(b.stallMicros-a.stallMicros) / 1e6,
	}
	l.Compactions = append(l.Compactions, 0) // L0's row counts flushes
	for i := 1; i < len(b.levels); i++ {
		l.Compactions = append(l.Compactions, b.levels[i]-a.levels[i])
	}
	l.ReadAmp = int(e.filesAt(0))
	for i := 1; i < 7; i++ {
		if e.filesAt(i) > 0 {
			l.ReadAmp++
		}
	}
	l.SetAmplification()
	e.qmu.Lock()
	p := e.points
	e.qmu.Unlock()
	if p.n > 0 {
		l.PointReads = p.n
		l.PointBlocks = float64(p.blocks) / float64(p.n)
		l.PointCachedShare = engine.Share(p.hits, p.blocks)
	}
	if t.index != 0 && rows > int64(rangeN) && rangeN > 0 {
		if err := e.windowScans(ctx, t, rows, rangeN, l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// windowScansCount is the number of time-window scans LSM reads.
const windowScansCount = 100

// windowScans reads windowScansCount windows of rangeN consecutive payloads (rows written
// one after another) through the payload index, then each row by its record key in key
// order through one iterator (TiDB's IndexLookUp sends the handles in batches, sorted), and
// averages their blocks (cache hits and file reads, from the perf context).
func (e *rocksEngine) windowScans(ctx context.Context, t *table, rows int64, rangeN int, l *engine.LSM) error {
	var rs readStats
	pre := appendIndexPrefix(nil, t.id, t.index)
	rlo, rhi := t.recordSpan()
	var found int
	for i := 0; i < windowScansCount; i++ {
		if err := ctx.Err(); err != nil {
			return engine.Fail(ctx, "rocksdb: window scan", err)
		}
		p := 1 + rand.Int64N(rows-int64(rangeN))
		lo, hi := span(appendEncodeInt(append(bytes.Clone(pre), intFlag), p), appendEncodeInt(append(bytes.Clone(pre), intFlag), p+int64(rangeN)))
		var keys [][]byte
		hits, reads, byts, err := perfRead(func() error {
			it, ro := e.iter(lo, hi)
			for it.SeekToFirst(); it.Valid(); it.Next() {
				k := it.Key()
				raw, _, err := decodeBytes(k.Data()[1:])
				k.Free()
				if err != nil {
					break
				}
				rec, err := recordFromIndex(raw, t.id, t.index)
				if err != nil {
					it.Close()
					ro.Destroy()
					return err
				}
				keys = append(keys, appendDataKey(nil, rec))
			}
			err := it.Err()
			it.Close()
			ro.Destroy()
			if err != nil {
				return err
			}
			slices.SortFunc(keys, bytes.Compare)
			pit, pro := e.iter(rlo, rhi)
			defer pro.Destroy()
			defer pit.Close()
			for _, k := range keys {
				pit.Seek(k)
				if !pit.Valid() {
					return fmt.Errorf("dbbench: rocksdb: index entry without its row: %x", k)
				}
				got := pit.Key()
				ok := bytes.HasPrefix(got.Data(), k) && len(got.Data()) == len(k)+tsLen
				got.Free()
				if !ok {
					return fmt.Errorf("dbbench: rocksdb: index entry without its row: %x", k)
				}
				v := pit.Value()
				v.Free()
			}
			return pit.Err()
		})
		if err != nil {
			return engine.Fail(ctx, "rocksdb: window scan", err)
		}
		rs.n++
		rs.blocks += hits + reads
		rs.hits += hits
		rs.read += byts
		found += len(keys)
	}
	l.WindowScans = rs.n
	l.WindowRows = found / max(rs.n, 1)
	l.WindowBlocks = float64(rs.blocks) / float64(rs.n)
	l.WindowCachedShare = engine.Share(rs.hits, rs.blocks)
	return nil
}

// The app workload's dialect: the rocksdb engine speaks no SQL beyond the table workload's
// statements, so the app workload's writers and queries are ErrNoApp (engine.NoApp).

// KeyType is the TiDB column type of a row's key.
func (e *rocksEngine) KeyType(r engine.Row) string { return columnType(r.Col) }

// KeyArg is a key's raw record key in table 104 (the app workload is not run here).
func (e *rocksEngine) KeyArg(r engine.Row, v *engine.Value) any {
	return recordKey(nil, firstTableID, r.Col, v)
}

var _ engine.Engine = (*rocksEngine)(nil)
var _ engine.LSMEngine = (*rocksEngine)(nil)
