package dbbench

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

var _ engine = (*sqliteEngine)(nil)

// reservesKeys: the bulk path is prepared INSERTs, which return the rowid.
func (e *sqliteEngine) reservesKeys() bool { return true }

// keyType is the SQL type of a row's key columns on SQLite. A row whose keys the database
// makes uses INTEGER PRIMARY KEY, the rowid itself, as an application would; the others are
// rowid tables with a separate primary-key index, as in the table workload.
func (e *sqliteEngine) keyType(r row) string {
	if r.col == colIdentity {
		return "INTEGER PRIMARY KEY (rowid)"
	}
	return e.sqlType(r)
}

func (e *sqliteEngine) qualify(name string) string { return `"` + name + `"` }

func (e *sqliteEngine) sqlType(r row) string {
	switch r.col {
	case colBigint:
		return "BIGINT"
	case colUUID:
		return "BLOB"
	}
	return "TEXT"
}

// createTables creates ts: a key the database makes is INTEGER PRIMARY KEY, the rowid itself;
// any other is a rowid table with a separate primary-key index.
func (e *sqliteEngine) createTables(ctx context.Context, ts []tableDef) error {
	for _, t := range ts {
		id, key := "id "+e.sqlType(t.key)+" NOT NULL PRIMARY KEY", e.sqlType(t.key)
		if t.key.col == colIdentity {
			id, key = "id INTEGER PRIMARY KEY", "INTEGER"
		}
		cols := []string{id}
		for _, c := range t.columns {
			col := c.name + " " + map[colKind]string{kindKey: key, kindTime: "INTEGER", kindInt: "INTEGER"}[c.kind] + " NOT NULL"
			if c.references != "" {
				col += " REFERENCES " + e.qualify(c.references) + " (id)"
			}
			cols = append(cols, col)
		}
		ddl := []string{fmt.Sprintf("CREATE TABLE %s (%s)", e.qualify(t.name), strings.Join(cols, ", "))}
		for _, ix := range t.indexes {
			ddl = append(ddl, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", e.qualify(ix.name), e.qualify(t.name), ix.column))
		}
		for _, d := range ddl {
			if _, err := e.db.ExecContext(ctx, d); err != nil {
				return fail(ctx, "sqlite: create table "+t.name, err)
			}
		}
	}
	return nil
}

func (e *sqliteEngine) dropTables(ctx context.Context, ts []tableDef) error {
	for _, t := range reversed(ts) {
		if _, err := e.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+e.qualify(t.name)); err != nil {
			return fail(ctx, "sqlite: drop table "+t.name, err)
		}
	}
	_, err := e.walBytes(ctx, e.db)
	return fail(ctx, "sqlite: checkpoint", err)
}

func (e *sqliteEngine) appConns(ctx context.Context) ([]appWriter, error) {
	for len(e.loaders) < e.cfg.Clients {
		c, err := e.db.Conn(ctx)
		if err != nil {
			return nil, fail(ctx, "sqlite: open connection", err)
		}
		e.loaders = append(e.loaders, c)
	}
	out := make([]appWriter, len(e.loaders))
	for i, c := range e.loaders {
		out[i] = &sqliteWriter{sqlWriter{conn: c, qualify: e.qualify, begin: "BEGIN IMMEDIATE", timeArg: e.timeArg, keyArg: e.keyArg}}
	}
	return out, nil
}

func (e *sqliteEngine) beforeLoad(context.Context) error { return nil }

func (e *sqliteEngine) logMark(ctx context.Context) (func(context.Context) (int64, error), error) {
	if _, err := e.walBytes(ctx, e.db); err != nil {
		return nil, fail(ctx, "sqlite: checkpoint", err)
	}
	return func(ctx context.Context) (int64, error) {
		n, err := e.walBytes(ctx, e.db)
		return n, fail(ctx, "sqlite: count WAL bytes", err)
	}, nil
}

func (e *sqliteEngine) settle(ctx context.Context, _ []tableDef) error {
	_, err := e.db.ExecContext(ctx, "ANALYZE")
	return fail(ctx, "sqlite: analyze", err)
}

// structures reads each table's and index's pages from dbstat. A key that is not the rowid
// has its own index, sqlite_autoindex_<table>_1.
func (e *sqliteEngine) structures(ctx context.Context, ts []tableDef) ([]Structure, error) {
	var out []Structure
	for _, t := range ts {
		out = append(out, Structure{Name: t.name, Role: t.who + " table"})
		if t.key.col != colIdentity {
			out = append(out, Structure{Name: "sqlite_autoindex_" + t.name + "_1", Role: t.who + " primary key"})
		}
		for _, ix := range t.indexes {
			out = append(out, Structure{Name: ix.name, Role: ix.role})
		}
	}
	for i := range out {
		if err := e.db.QueryRowContext(ctx, "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?", out[i].Name).Scan(&out[i].Bytes); err != nil {
			return nil, fail(ctx, "sqlite: size of "+out[i].Name, err)
		}
	}
	return out, nil
}

func (e *sqliteEngine) keyArg(r row, v *value) any {
	switch r.col {
	case colIdentity, colBigint:
		return v.i64
	case colUUID:
		b := v.b16
		return b[:]
	}
	return v.str
}

// timeArg: SQLite has no timestamp type; created_at holds Unix microseconds.
func (e *sqliteEngine) timeArg(t time.Time) any { return t.UnixMicro() }

func (e *sqliteEngine) sql(q string) string { return placeholder.ReplaceAllString(q, "?") }

func (e *sqliteEngine) count(ctx context.Context, q string, args ...any) (int64, error) {
	return countRows(ctx, e.db, connLost, "sqlite: query", q, args...)
}

func (e *sqliteEngine) keyRows(ctx context.Context, r row, q string, args ...any) ([]keyRow, error) {
	rows, err := e.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fail(ctx, "sqlite: query", err)
	}
	defer rows.Close()
	var out []keyRow
	for rows.Next() {
		var k keyRow
		switch r.col {
		case colIdentity, colBigint:
			var v int64
			err = rows.Scan(&v, &k.created)
			k.key = v
		case colUUID:
			var b []byte
			var v [16]byte
			err = rows.Scan(&b, &k.created)
			if err == nil && len(b) != 16 {
				err = fmt.Errorf("dbbench: sqlite: key of %d bytes, want 16", len(b))
			}
			copy(v[:], b)
			k.key = v
		default:
			var v string
			err = rows.Scan(&v, &k.created)
			k.key = v
		}
		if err != nil {
			return nil, fail(ctx, "sqlite: read rows", err)
		}
		out = append(out, k)
	}
	return out, fail(ctx, "sqlite: query", rows.Err())
}

func (e *sqliteEngine) epochMicros(col string) string { return col }

var sqlitePlanIndex = regexp.MustCompile(`USING (?:COVERING )?INDEX (\S+)|USING (INTEGER PRIMARY KEY)|USING (PRIMARY KEY)|^(SCAN)`)

func (e *sqliteEngine) plan(ctx context.Context, q string, args ...any) (string, error) {
	rows, err := e.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return "", fail(ctx, "sqlite: explain", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var id, parent, unused int64
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", fail(ctx, "sqlite: explain", err)
		}
		m := sqlitePlanIndex.FindStringSubmatch(detail)
		switch {
		case m == nil:
		case m[1] != "":
			found = append(found, m[1])
		case m[2] != "":
			found = append(found, "rowid")
		case m[3] != "":
			found = append(found, "primary key")
		default:
			found = append(found, "sequential scan")
		}
	}
	if err := rows.Err(); err != nil {
		return "", fail(ctx, "sqlite: explain", err)
	}
	if len(found) == 0 {
		return "unknown", nil
	}
	return strings.Join(found, ", "), nil
}

// kept marks the database file to be left by close, and names it and the command that opens
// it.
func (e *sqliteEngine) kept() (string, string) {
	e.keep = true
	return "database file " + e.path, "sqlite3 " + shellQuote(e.path)
}

// sqliteWriter writes business operations over one SQLite connection: the database/sql writer's
// transactions and bare loop with SQLite's BEGIN IMMEDIATE, created_at in Unix microseconds,
// and, as the bulk path, one transaction of prepared INSERTs per batch.
type sqliteWriter struct{ sqlWriter }

func (w *sqliteWriter) bulk(ctx context.Context, s appSchema, ops []appOp) error {
	return w.inTx(ctx, func() error {
		for i := range ops {
			if err := w.insertOp(ctx, s, &ops[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// bare is the baseline loop; in copy mode, one transaction per batch, as bulk.
func (w *sqliteWriter) bare(ctx context.Context, s appSchema, mode string, first, count int64) error {
	if mode != ModeCopy {
		return w.bareLoop(ctx, s, first, count)
	}
	return w.inTx(ctx, func() error {
		for op := first; op < first+count; op++ {
			if err := w.bareOp(ctx, s, op); err != nil {
				return err
			}
		}
		return nil
	})
}
