package sqlite

import (
	"context"
	"errors"

	"github.com/idkit/idkit/dbbench/engine"
)

// pkIndex is the index of t's primary key, sqlite_autoindex_<table>_1, or "" for a key that is
// the rowid (CreateTables).
func pkIndex(t engine.TableDef) string {
	if t.Key.Col == engine.ColIdentity && !t.SeparateKey {
		return ""
	}
	return "sqlite_autoindex_" + t.Name + "_1"
}

// Marks checkpoints the WAL (walBytes) and counts the bytes written to it since: every
// checkpoint in between, a load's own included, adds what it found to walSum.
func (e *sqliteEngine) Marks(ctx context.Context) (func(context.Context) (map[string]int64, error), error) {
	if _, err := e.walBytes(ctx, e.db); err != nil {
		return nil, engine.Fail(ctx, "sqlite: checkpoint", err)
	}
	e.walMu.Lock()
	before := e.walSum
	e.walMu.Unlock()
	return func(ctx context.Context) (map[string]int64, error) {
		if _, err := e.walBytes(ctx, e.db); err != nil {
			return nil, engine.Fail(ctx, "sqlite: checkpoint", err)
		}
		e.walMu.Lock()
		defer e.walMu.Unlock()
		return map[string]int64{engine.CounterLogBytes: e.walSum - before}, nil
	}, nil
}

// LeafStats computes leaf density (used bytes of leaf pages) and leaf fragmentation (share of
// leaf pages, in key order, whose successor lies at a lower page number, as pgstatindex
// defines it) from dbstat.
func (e *sqliteEngine) LeafStats(ctx context.Context, t engine.TableDef, index string, _ int64) (engine.LeafStats, error) {
	if index == "" {
		if index = pkIndex(t); index == "" {
			return engine.LeafStats{}, nil // the rowid: the table itself
		}
	}
	rows, err := e.db.QueryContext(ctx, "SELECT pageno, pgsize, unused FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path", index)
	if err != nil {
		return engine.LeafStats{}, engine.Fail(ctx, "sqlite: dbstat", err)
	}
	defer rows.Close()
	var leaves, back, used, size int64
	prev := int64(-1)
	for rows.Next() {
		var pageno, pgsize, unused int64
		if err := rows.Scan(&pageno, &pgsize, &unused); err != nil {
			return engine.LeafStats{}, engine.Fail(ctx, "sqlite: dbstat", err)
		}
		if prev >= 0 && pageno < prev {
			back++
		}
		prev = pageno
		leaves++
		used += pgsize - unused
		size += pgsize
	}
	if err := rows.Err(); err != nil {
		return engine.LeafStats{}, engine.Fail(ctx, "sqlite: dbstat", err)
	}
	if leaves == 0 || size == 0 {
		return engine.LeafStats{}, errors.New("dbbench: sqlite: index has no leaf pages")
	}
	return engine.LeafStats{
		Density:       engine.Ptr(100 * float64(used) / float64(size)),
		Fragmentation: engine.Ptr(100 * float64(back) / float64(leaves)),
		Pages:         engine.Ptr(leaves),
	}, nil
}

// SampleKeys draws n keys with ORDER BY random(), each as the driver returned it.
func (e *sqliteEngine) SampleKeys(ctx context.Context, t engine.TableDef, n int, _ int64) ([]any, error) {
	rows, err := e.db.QueryContext(ctx, "SELECT id FROM "+e.Qualify(t.Name)+" ORDER BY random() LIMIT ?", n)
	if err != nil {
		return nil, engine.Fail(ctx, "sqlite: sample keys", err)
	}
	defer rows.Close()
	var keys []any
	for rows.Next() {
		var k any
		if err := rows.Scan(&k); err != nil {
			return nil, engine.Fail(ctx, "sqlite: sample keys", err)
		}
		keys = append(keys, k)
	}
	return keys, engine.Fail(ctx, "sqlite: sample keys", rows.Err())
}

// Prepare prepares q on a connection of its own, shared by the statements open at the same
// time and closed with the last of them, so that a timed query goes straight to its
// statement rather than through the pool, on a connection that holds no pages of earlier
// loads in its cache.
func (e *sqliteEngine) Prepare(ctx context.Context, q string) (engine.Stmt, error) {
	if e.measure == nil {
		c, err := e.db.Conn(ctx)
		if err != nil {
			return nil, engine.Fail(ctx, "sqlite: connect", err)
		}
		e.measure = c
	}
	st, err := e.measure.PrepareContext(ctx, q)
	if err != nil {
		if e.stmts == 0 {
			e.measure.Close()
			e.measure = nil
		}
		return nil, engine.Fail(ctx, "sqlite: prepare "+q, err)
	}
	e.stmts++
	return sqliteStmt{SQLStmt: engine.SQLStmt{Stmt: st}, e: e}, nil
}

// sqliteStmt is a statement of Prepare, whose Close closes the connection after the last.
type sqliteStmt struct {
	engine.SQLStmt
	e *sqliteEngine
}

func (s sqliteStmt) Close() error {
	err := s.SQLStmt.Close()
	if s.e.stmts--; s.e.stmts == 0 && s.e.measure != nil {
		err = errors.Join(err, s.e.measure.Close())
		s.e.measure = nil
	}
	return err
}

func (e *sqliteEngine) QueryInt(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	if err := e.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, engine.Fail(ctx, "sqlite: query", err)
	}
	return n, nil
}

// SourceRow: keys come from the row's own generators.
func (e *sqliteEngine) SourceRow(r engine.Row) (engine.Row, error) { return r, nil }
