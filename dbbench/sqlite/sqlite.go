package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/idkit/idkit/dbbench/engine"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Name is the engine's name in Config.DB and in a report's Settings.Engine.
const Name = "sqlite"

// SQLite settings dbbench pins, recorded in the report.
const (
	sqlitePageSize  = 4096
	sqliteCacheSize = "-65536" // 64 MiB; negative means KiB in SQLite
)

// Report is the report dialect of SQLite.
func Report() engine.ReportText {
	return engine.ReportText{
		Title: "SQLite",
		SettingsLine: func(s engine.Settings) string {
			return fmt.Sprintf("page_size %d, cache_size %s", s.SQLitePageSize, s.SQLiteCacheSize)
		},
		ServerSettings: func(row func(k string, v any), s engine.Settings) {
			row("sqlite page_size", s.SQLitePageSize)
			row("sqlite cache_size", s.SQLiteCacheSize)
		},
		AppDriver:   "database/sql (modernc.org/sqlite)",
		AppBulkUnit: "transaction of prepared INSERTs",
		AppBaseline: map[string]string{engine.ModeTx: "one transaction of 2 INSERTs per operation", engine.ModeCopy: "one transaction of prepared INSERTs per batch of operations"},
		TextKeyNote: func(r engine.Row) string {
			if r.Col != engine.ColText {
				return ""
			}
			return "ulid-text stores 26 bytes of text per key against 16 bytes for a BLOB, compared with SQLite's BINARY collation (memcmp). A NOCASE or application collation makes every comparison slower."
		},
	}
}

// sqliteEngine runs the benchmark on an embedded SQLite database in a
// temporary directory that close removes.
type sqliteEngine struct {
	cfg     engine.Options
	dir     string
	path    string
	db      *sql.DB
	batch   int
	version string

	walMu      sync.Mutex
	walCounted int64 // bytes of the current WAL file already counted
	walSum     int64 // bytes counted since the database was opened (Marks)

	loaders []*sql.Conn       // the app workload's connections, one per client
	writers []*engine.SQLRows // the row writers RowWriters handed out last, over loaders
	measure *sql.Conn         // the connection of Prepare's statements while any is open
	stmts   int               // Prepare's statements not closed yet
	keep    bool              // close leaves the file: a successful app run with Config.Keep
}

func openSQLite(ctx context.Context, cfg engine.Options) (*sqliteEngine, error) {
	dir, err := os.MkdirTemp("", "idbench-sqlite-")
	if err != nil {
		return nil, fmt.Errorf("dbbench: sqlite: create temp dir: %w", err)
	}
	e := &sqliteEngine{cfg: cfg, dir: dir, path: filepath.Join(dir, "bench.db"), batch: cfg.BatchFor(true)}
	// wal_autocheckpoint(0): dbbench checkpoints itself, so that it can count
	// the bytes each load writes to the WAL before the WAL is reset.
	dsn := "file:" + e.path + "?_pragma=page_size(" + strconv.Itoa(sqlitePageSize) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(30000)" +
		"&_pragma=cache_size(" + sqliteCacheSize + ")&_pragma=wal_autocheckpoint(0)&_pragma=foreign_keys(1)"
	e.db, err = sql.Open("sqlite", dsn)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("dbbench: sqlite: open: %w", err)
	}
	// One connection a client, one for Prepare's statements, one for the rest.
	e.db.SetMaxOpenConns(cfg.Clients + 2)
	e.db.SetMaxIdleConns(cfg.Clients + 2)
	if err := e.db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&e.version); err != nil {
		e.Close()
		return nil, engine.Fail(ctx, "sqlite: read version", err)
	}
	var n int
	if err := e.db.QueryRowContext(ctx, "SELECT count(*) FROM dbstat").Scan(&n); err != nil {
		e.Close()
		return nil, engine.Fail(ctx, "sqlite: dbstat is not available", err)
	}
	return e, nil
}

func (e *sqliteEngine) Settings(s *engine.Settings) {
	s.Engine = Name
	s.ServerVersion = "SQLite " + e.version + " (modernc.org/sqlite)"
	s.Statistics = "dbstat"
	s.SQLitePageSize = sqlitePageSize
	s.SQLiteCacheSize = sqliteCacheSize + " (KiB)"
	s.Batch = e.batch
}

func (e *sqliteEngine) BatchSize() int { return e.batch }

func (e *sqliteEngine) HasBaseline() bool { return false }

func (e *sqliteEngine) ColumnTypeOf(r engine.Row) string { return e.columnType(r.Col) }

// TableRows: SQLite runs every row Run accepted.
func (e *sqliteEngine) TableRows(rows []engine.Row, _ []string) ([]engine.Row, []string) {
	return rows, nil
}

// TableNotes: run.go's notes cover SQLite.
func (e *sqliteEngine) TableNotes(*engine.Report, []engine.Row, []string) []string { return nil }

func (e *sqliteEngine) columnType(c engine.Column) string {
	switch c {
	case engine.ColIdentity:
		return "BIGINT (sequence)"
	case engine.ColBigint:
		return "BIGINT"
	case engine.ColUint64:
		return "BLOB(8), big-endian"
	case engine.ColUUID:
		return "BLOB(16)"
	default:
		return "TEXT"
	}
}

// walBytes counts the bytes written to the WAL since the last call, adds them to walSum, and
// resets the WAL with a TRUNCATE checkpoint. It is safe for concurrent use.
func (e *sqliteEngine) walBytes(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int64, error) {
	e.walMu.Lock()
	defer e.walMu.Unlock()
	var size int64
	if fi, err := os.Stat(e.path + "-wal"); err == nil {
		size = fi.Size()
	}
	n := max(size-e.walCounted, 0)
	e.walCounted = size
	e.walSum += n
	var busy, logFrames, done int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return n, err
	}
	if busy == 0 {
		e.walCounted = 0
	}
	return n, nil
}

// FillTable writes n rows into t over Options.Clients connections of their own, in
// transactions of prepared INSERTs (copy mode), multi-row INSERTs (batch) or autocommitted
// single-row INSERTs, counting and resetting the WAL every 50,000 rows or so (walBytes) so
// that it does not grow without bound. SQLite has no baseline.
func (e *sqliteEngine) FillTable(ctx context.Context, t engine.TableDef, src *engine.Source, n int, rec *engine.Recorder) error {
	if src == nil {
		return engine.ErrNoBaseline
	}
	r, tbl := t.Key, t.Name
	if r.Col == engine.ColTextICU {
		return engine.ErrICUSQLite
	}
	cl := &engine.Claimer{Total: int64(n), Batch: int64(e.batch)}
	return engine.Workers(ctx, e.cfg.Clients, func(ctx context.Context, w int) error {
		conn, err := e.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		var v engine.Value
		args := func(dst []any) ([]any, error) {
			if err := src.NextContext(ctx, &v); err != nil {
				return nil, err
			}
			switch r.Col {
			case engine.ColIdentity, engine.ColBigint:
				return append(dst, v.I64), nil
			case engine.ColUint64:
				return append(dst, binary.BigEndian.AppendUint64(make([]byte, 0, 8), v.U64)), nil
			case engine.ColUUID:
				b := v.B16
				return append(dst, b[:]), nil
			default:
				return append(dst, v.Str), nil
			}
		}
		one := "INSERT INTO " + tbl + " (id, payload) VALUES (?, ?)"
		sinceWAL := 0
		for {
			start, count, ok := cl.Claim()
			if !ok {
				return nil
			}
			switch e.cfg.Mode {
			case engine.ModeCopy:
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				stmt, err := tx.PrepareContext(ctx, one)
				if err != nil {
					tx.Rollback()
					return err
				}
				buf := make([]any, 0, 2)
				for i := int64(0); i < count; i++ {
					if buf, err = args(buf[:0]); err != nil {
						tx.Rollback()
						return err
					}
					if _, err = stmt.ExecContext(ctx, append(buf, start+i+1)...); err != nil {
						tx.Rollback()
						return err
					}
				}
				stmt.Close()
				if err := tx.Commit(); err != nil {
					return err
				}
				rec.Add(count)
			case engine.ModeBatch:
				buf := make([]any, 0, 2*count)
				for i := int64(0); i < count; i++ {
					if buf, err = args(buf); err != nil {
						return err
					}
					buf = append(buf, start+i+1)
				}
				q := "INSERT INTO " + tbl + " (id, payload) VALUES " + strings.TrimSuffix(strings.Repeat("(?,?),", int(count)), ",")
				if _, err := conn.ExecContext(ctx, q, buf...); err != nil {
					return err
				}
				rec.Add(count)
			default:
				buf, err := args(make([]any, 0, 2))
				if err != nil {
					return err
				}
				if _, err := conn.ExecContext(ctx, one, append(buf, start+1)...); err != nil {
					return err
				}
				rec.Add(1)
			}
			// Count and reset the WAL now and then, so it does not grow
			// without bound.
			if sinceWAL += int(count); sinceWAL >= 50000 {
				sinceWAL = 0
				if _, err := e.walBytes(ctx, conn); err != nil {
					return err
				}
			}
		}
	})
}

// Close closes the database and removes its directory.
func (e *sqliteEngine) Close() error {
	var errs []error
	for _, c := range e.loaders {
		c.Close()
	}
	e.loaders = nil
	if e.measure != nil {
		e.measure.Close()
		e.measure = nil
	}
	if e.db != nil {
		if err := e.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("dbbench: sqlite: close: %w", err))
		}
		e.db = nil
	}
	if e.keep {
		return errors.Join(errs...)
	}
	if err := os.RemoveAll(e.dir); err != nil {
		errs = append(errs, fmt.Errorf("dbbench: sqlite: remove %s: %w", e.dir, err))
	}
	return errors.Join(errs...)
}

// Columns is SQLite's column rule: no ICU collations, no server-made keys, no
// MariaDB/MySQL column types, and a layout that may reach bit 63 later stays signed.
func Columns(r engine.Row) (engine.Row, error) {
	switch {
	case r.Col == engine.ColTextICU:
		return r, engine.ErrICUSQLite
	case r.Col == engine.ColServerBigint || r.Col == engine.ColServerUUID || r.StoreStep > 0:
		return r, engine.ErrServerSide(r.Label)
	case r.Col == engine.ColTextDefault || r.Col == engine.ColUUIDNative:
		return r, engine.ErrForInnoDB(r.Label)
	}
	r.Unsigned = false
	return r, nil
}

// Open opens a database in a new temporary directory.
func Open(ctx context.Context, o engine.Options) (engine.Engine, func() error, error) {
	e, err := openSQLite(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	return e, e.Close, nil
}

func (e *sqliteEngine) ConnLost(err error) bool { return engine.ConnLost(err) }

// Finding: no load error of this engine is a finding.
func (e *sqliteEngine) Finding(error, engine.Row) (string, bool) { return "", false }
