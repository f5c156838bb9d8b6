package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// Sizes every key-value engine pins, for this machine (2 cores and 24 GiB shared by several
// benchmarks at once) and alike, so that their reports compare: a memtable of 8 MiB and a
// block cache of 32 MiB, so that a load of a few million rows is many times both.
const (
	KVMemTable   = 8 << 20
	KVBlockCache = 32 << 20
)

// KV is the half of a key-value engine (packages pebble and rocksdb) that does not depend on
// its storage library: the engine's temporary root directory, the database of the load now
// open (its directory and its tables, of the engine's type T), the L0 sampler, the error
// prefix "dbbench: <name>: ", and the calls of the Engine contract that every such engine
// answers alike. The engine embeds it, made by NewKV, and adds its database and counters.
//
// A database is open from CreateDB to DropTables; each load has one of its own, so that its
// counters and sizes are its own. Like the Engine it serves, a KV is used by one goroutine at
// a time, but for Table and Fill's workers.
type KV[T any] struct {
	NoApp // the app workload: the engine's ErrNoApp
	// Opts is the run's options; the batch size is Opts.BatchFor(false) (BatchSize).
	Opts Options

	name, root, load0 string
	batch             int
	// closeDB closes the engine's database and frees what the engine holds for it; dir and
	// tables are KV's.
	closeDB     func() error
	dir         string
	tables      map[string]*T // nil: no database open
	stopSampler func()
}

// NewKV makes the base of the key-value engine name (its Settings.Engine, and the prefix of
// its errors) with a temporary root directory of its own, idbench-<name>-*, which Close
// removes. The app workload's calls return errNoApp. closeDB is the engine's: it closes the
// database CreateDB opened and frees what the engine holds for it (DropTables and Close call
// it, after stopping the sampler and before removing the database's directory). It returns
// the error of creating the directory.
func NewKV[T any](name string, o Options, errNoApp error, closeDB func() error) (KV[T], error) {
	root, err := os.MkdirTemp("", "idbench-"+name+"-")
	if err != nil {
		return KV[T]{}, fmt.Errorf("dbbench: %s: create temp dir: %w", name, err)
	}
	return KV[T]{NoApp: NoApp{Err: errNoApp}, Opts: o, name: name, root: root, load0: LoadAverage1(),
		batch: o.BatchFor(false), closeDB: closeDB}, nil
}

// Errorf is fmt.Errorf with the engine's prefix, "dbbench: <name>: ".
func (k *KV[T]) Errorf(format string, args ...any) error {
	return fmt.Errorf("dbbench: "+k.name+": "+format, args...)
}

// CheckOpen reports whether a database is open: nil, or an error saying none is.
func (k *KV[T]) CheckOpen() error {
	if k.tables == nil {
		return k.Errorf("no database open")
	}
	return nil
}

// CreateDB opens a fresh database for the tables in a directory of its own under the root:
// open opens it in dir (and on an error frees what it allocated; CreateDB removes dir), and
// table makes the engine's table for ts[i]. The database open, if any, must have been dropped.
func (k *KV[T]) CreateDB(ts []TableDef, open func(dir string) error, table func(i int, t TableDef) *T) error {
	if k.tables != nil {
		return k.Errorf("a database is already open (tables not dropped)")
	}
	dir, err := os.MkdirTemp(k.root, "db-")
	if err != nil {
		return k.Errorf("create dir: %w", err)
	}
	if err := open(dir); err != nil {
		os.RemoveAll(dir)
		return k.Errorf("open %s: %w", dir, err)
	}
	k.dir = dir
	k.tables = make(map[string]*T, len(ts))
	for i, t := range ts {
		k.tables[t.Name] = table(i, t)
	}
	return nil
}

// DropTables closes the database of the tables and removes it: it stops the sampler, calls
// the engine's closeDB and removes the database's directory, and returns their errors.
func (k *KV[T]) DropTables(context.Context, []TableDef) error {
	k.StopSampler()
	err := k.closeDB()
	if k.dir != "" {
		if rerr := os.RemoveAll(k.dir); rerr != nil {
			err = errors.Join(err, k.Errorf("remove %s: %w", k.dir, rerr))
		}
		k.dir = ""
	}
	k.tables = nil
	return err
}

// Close drops what is open and removes the engine's directory.
func (k *KV[T]) Close() error {
	err := k.DropTables(context.Background(), nil)
	if rerr := os.RemoveAll(k.root); rerr != nil {
		err = errors.Join(err, k.Errorf("remove %s: %w", k.root, rerr))
	}
	return err
}

// Table returns the open database's table name.
func (k *KV[T]) Table(name string) (*T, error) {
	if k.tables == nil {
		return nil, k.Errorf("no database open for table %s", name)
	}
	t, ok := k.tables[name]
	if !ok {
		return nil, k.Errorf("no table %s", name)
	}
	return t, nil
}

// statement parses q, a statement of the table workload, and returns it with its table: a
// row count where count is set, a point lookup or range scan where not. Any other q is
// ErrTableStatement (wrapped, with q); a table not open is Table's error.
func (k *KV[T]) statement(q string, count bool) (TableStatement, *T, error) {
	st, err := ParseTableStatement(q)
	if err != nil || (st.Kind == StmtCount) != count {
		return TableStatement{}, nil, fmt.Errorf("%w: %s", ErrTableStatement, q)
	}
	t, err := k.Table(st.Table)
	if err != nil {
		return TableStatement{}, nil, err
	}
	return st, t, nil
}

// CountTable returns the table of q, the table workload's row count (Measurer.QueryInt), for
// the engine to count its rows. Any other q is ErrTableStatement (wrapped, with q); a table
// not open is Table's error.
func (k *KV[T]) CountTable(q string) (*T, error) {
	_, t, err := k.statement(q, true)
	return t, err
}

// PrepareRead returns q, the table workload's point lookup or range scan (Measurer.Prepare),
// as a statement whose Rows takes one argument, a key as SampleKeys gives it ([]byte), and
// returns what read returns for q's table, the rows a range scan reads (0 for a point lookup)
// and the key. Any other q is ErrTableStatement (wrapped, with q); a table not open is
// Table's error.
func (k *KV[T]) PrepareRead(q string, read func(ctx context.Context, t *T, next int, key []byte) (int64, error)) (Stmt, error) {
	st, t, err := k.statement(q, false)
	if err != nil {
		return nil, err
	}
	return &kvStmt[T]{k: k, t: t, next: st.Next, read: read}, nil
}

// kvStmt is a prepared read of a key-value engine: a point lookup (next 0) or the next rows
// after a key.
type kvStmt[T any] struct {
	k    *KV[T]
	t    *T
	next int
	read func(ctx context.Context, t *T, next int, key []byte) (int64, error)
}

// Rows runs the read for its one argument, a key ([]byte).
func (s *kvStmt[T]) Rows(ctx context.Context, args ...any) (int64, error) {
	if len(args) != 1 {
		return 0, s.k.Errorf("want 1 argument, got %d", len(args))
	}
	key, ok := args[0].([]byte)
	if !ok {
		return 0, s.k.Errorf("key argument is %T, not []byte", args[0])
	}
	return s.read(ctx, s.t, s.next, key)
}

// Close: a prepared read holds nothing.
func (s *kvStmt[T]) Close() error { return nil }

// Fill runs the table workload's load of n rows into td (FillTable): Opts.Clients workers
// claim consecutive ranges of BatchSize rows (payloads start+1 … start+count) until every row
// is claimed; worker is called once per worker with the table and returns what writes one
// range, after which Fill counts the range into rec. The first error ends the load. A nil
// src, the baseline, is ErrNoBaseline.
func (k *KV[T]) Fill(ctx context.Context, td TableDef, src *Source, n int, rec *Recorder,
	worker func(t *T) func(ctx context.Context, start, count int64) error) error {
	if src == nil {
		return ErrNoBaseline
	}
	t, err := k.Table(td.Name)
	if err != nil {
		return err
	}
	cl := &Claimer{Total: int64(n), Batch: int64(k.batch)}
	return Workers(ctx, k.Opts.Clients, func(ctx context.Context, _ int) error {
		write := worker(t)
		for {
			start, count, ok := cl.Claim()
			if !ok {
				return nil
			}
			if err := write(ctx, start, count); err != nil {
				return err
			}
			rec.Add(count)
		}
	})
}

// Sample starts sampling the L0 figure every 100 ms into *max (SampleMax), stopping the
// sampler that ran before, if any.
func (k *KV[T]) Sample(max *atomic.Int64, sample func() int64) {
	k.StopSampler()
	k.stopSampler = SampleMax(max, sample)
}

// StopSampler stops the sampler Sample started, if it runs.
func (k *KV[T]) StopSampler() {
	if k.stopSampler != nil {
		k.stopSampler()
		k.stopSampler = nil
	}
}

// Settings fills the settings every key-value engine reports alike: its name, the sizes of
// its memtable and block cache, the load average at open and now, the batch size and whether
// a secondary index is loaded. The engine's Settings adds its version and options.
func (k *KV[T]) Settings(s *Settings) {
	s.Engine = k.name
	s.LSMMemTable = fmt.Sprintf("%d MiB", KVMemTable>>20)
	s.LSMBlockCache = fmt.Sprintf("%d MiB", KVBlockCache>>20)
	s.LoadAverage = "start " + k.load0 + ", end " + LoadAverage1() // run.go writes all three averages where it can
	s.Batch = k.batch
	s.SecondaryIndex = k.Opts.SecondaryIndex
}

// BatchSize is the rows of one write batch.
func (k *KV[T]) BatchSize() int { return k.batch }

// HasBaseline: a key-value engine has no baseline.
func (k *KV[T]) HasBaseline() bool { return false }

// TableRows: the engine runs every row Run accepted.
func (k *KV[T]) TableRows(rows []Row, _ []string) ([]Row, []string) { return rows, nil }

// SourceRow: keys come from the row's own generators.
func (k *KV[T]) SourceRow(r Row) (Row, error) { return r, nil }

// LeafStats: an LSM tree has no B-tree leaves; every figure is absent.
func (k *KV[T]) LeafStats(context.Context, TableDef, string, int64) (LeafStats, error) {
	return LeafStats{}, nil
}

// BeforeLoad: nothing to prepare.
func (k *KV[T]) BeforeLoad(context.Context) error { return nil }

// Kept: the engine keeps nothing (every database is removed when its load ends).
func (k *KV[T]) Kept() (string, string) { return "", "" }

// ConnLost: the engine has no connection to lose.
func (k *KV[T]) ConnLost(error) bool { return false }

// Finding: no load error of a key-value engine is a finding.
func (k *KV[T]) Finding(error, Row) (string, bool) { return "", false }

// SetAmplification sets WriteAmp and SpaceAmp from the bytes (both stay 0 when UserBytes is).
func (l *LSM) SetAmplification() {
	if l.UserBytes > 0 {
		l.WriteAmp = float64(l.WALBytes+l.FlushBytes+l.CompactionBytes) / float64(l.UserBytes)
		l.SpaceAmp = float64(l.LiveBytes) / float64(l.UserBytes)
	}
}

// KVText is what a key-value engine's report says of it and no other key-value engine's
// does; KVText.Report makes its ReportText.
type KVText struct {
	// Title names the engine for people: "Pebble (CockroachDB's storage engine)".
	Title string
	// MemTable, BlockCache and Options name the server-settings rows of Settings'
	// LSMMemTable, LSMBlockCache and LSMOptions: "pebble memtable".
	MemTable, BlockCache, Options string
	// BulkUnit is one write batch: "Pebble batch".
	BulkUnit string
	// TextKeys explains the text keys' column type and encoding.
	TextKeys string
	// LSM is the texts of its LSM figures.
	LSM LSMText
}

// Report returns the report texts of the engine: its table is clustered (the rows live in
// the primary key's keys), its settings line and rows are its memtable, block cache and
// options, it has no app-workload driver, and its text keys are explained by TextKeys.
func (t KVText) Report() ReportText {
	lsm := t.LSM
	return ReportText{
		Title:     t.Title,
		Clustered: true,
		SettingsLine: func(s Settings) string {
			return fmt.Sprintf("memtable %s, block cache %s, %s", s.LSMMemTable, s.LSMBlockCache, s.LSMOptions)
		},
		ServerSettings: func(row func(k string, v any), s Settings) {
			row(t.MemTable, s.LSMMemTable)
			row(t.BlockCache, s.LSMBlockCache)
			row(t.Options, s.LSMOptions)
		},
		AppDriver:   "none",
		AppBulkUnit: t.BulkUnit,
		TextKeyNote: func(r Row) string {
			if r.Col != ColText && r.Col != ColPublicText {
				return ""
			}
			return t.TextKeys
		},
		LSM: &lsm,
	}
}
