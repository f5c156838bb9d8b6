package pg

import (
	"context"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// maxParams is PostgreSQL's limit on parameters per statement (a 16-bit count).
const maxParams = 65535

// pgRows is the engine.RowWriter of one PostgreSQL connection: COPY … FROM STDIN in binary as
// the bulk path, multi-row and one-row INSERTs (pgx prepares each SQL text once per
// connection and caches it), INSERT … RETURNING id for a key the database makes, and the
// identity sequences' nextval for keys taken ahead of a bulk load (engine.KeyReserver).
type pgRows struct {
	e     *pgEngine
	conn  *pgx.Conn
	inTx  bool
	cells []engine.Cell
	args  []any
	sqls  map[engine.StmtKey]string
}

var (
	_ engine.RowWriter   = (*pgRows)(nil)
	_ engine.KeyReserver = (*pgRows)(nil)
)

// RowWriters returns a writer over each loading connection.
func (e *pgEngine) RowWriters(ctx context.Context) ([]engine.RowWriter, error) {
	conns, err := e.loaderConns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]engine.RowWriter, len(conns))
	for i, c := range conns {
		out[i] = &pgRows{e: e, conn: c}
	}
	return out, nil
}

// pgArg is a key as pgx takes it (pgKey), with the server-made columns' bigint and uuid.
func pgArg(c engine.Column, v *engine.Value) any {
	switch c {
	case engine.ColServerBigint:
		return v.I64
	case engine.ColServerUUID:
		return pgtype.UUID{Bytes: v.B16, Valid: true}
	}
	return pgKey(c, v)
}

// appendArgs appends the pgx arguments of one row's cells (from cells[skip]).
func appendArgs(a []any, t engine.TableDef, cells []engine.Cell, skip int) []any {
	if skip == 0 {
		a = append(a, pgArg(t.Key.Col, cells[0].Key))
	}
	for j := range t.Columns {
		c := &cells[1+j]
		switch t.Columns[j].Kind {
		case engine.KindKey:
			a = append(a, pgArg(t.Key.Col, c.Key))
		case engine.KindTime:
			a = append(a, c.Time)
		default:
			a = append(a, c.Int)
		}
	}
	return a
}

// sql returns the INSERT of rows rows of t, with RETURNING id when returning.
func (w *pgRows) sql(t engine.TableDef, rows int, returning bool) string {
	k := engine.StmtKeyOf(t, rows, returning)
	if q, ok := w.sqls[k]; ok {
		return q
	}
	q := insertSQL(w.e.Qualify(t.Name), t.ColumnNames(), rows)
	if returning {
		q += " RETURNING id"
	}
	if w.sqls == nil {
		w.sqls = map[engine.StmtKey]string{}
	}
	w.sqls[k] = q
	return q
}

// Insert writes n rows of t: one COPY (PathBulk), multi-row INSERTs of up to 65535
// parameters (PathBatch), or one INSERT per row (PathSingle).
func (w *pgRows) Insert(ctx context.Context, t engine.TableDef, p engine.Path, n int, fill engine.RowFunc) error {
	if err := engine.CheckKeyRule(t, false); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	cells, skip := engine.RowCells(t, w.cells)
	w.cells = cells
	per := 1
	switch p {
	case engine.PathBulk:
		i := 0
		_, err := w.conn.CopyFrom(ctx, pgx.Identifier{w.e.schema, t.Name}, t.ColumnNames(), pgx.CopyFromFunc(func() ([]any, error) {
			if i == n {
				return nil, nil
			}
			if err := fill(i, cells); err != nil {
				return nil, err
			}
			i++
			w.args = appendArgs(w.args[:0], t, cells, skip)
			return w.args, nil
		}))
		return err
	case engine.PathBatch:
		per = engine.ChunkRows(n, len(cells)-skip, maxParams)
	}
	for start := 0; start < n; start += per {
		rows := min(per, n-start)
		a := w.args[:0]
		for i := start; i < start+rows; i++ {
			if err := fill(i, cells); err != nil {
				return err
			}
			a = appendArgs(a, t, cells, skip)
		}
		w.args = a
		if _, err := w.conn.Exec(ctx, w.sql(t, rows, false), a...); err != nil {
			return err
		}
	}
	return nil
}

// InsertKey inserts one row of t with INSERT … RETURNING id.
func (w *pgRows) InsertKey(ctx context.Context, t engine.TableDef, fill engine.RowFunc, key *engine.Value) error {
	if err := engine.CheckKeyRule(t, true); err != nil {
		return err
	}
	cells, skip := engine.RowCells(t, w.cells)
	w.cells = cells
	if err := fill(0, cells); err != nil {
		return err
	}
	w.args = appendArgs(w.args[:0], t, cells, skip)
	row := w.conn.QueryRow(ctx, w.sql(t, 1, true), w.args...)
	if t.Key.Col == engine.ColServerUUID {
		var u pgtype.UUID
		err := row.Scan(&u)
		key.B16 = u.Bytes
		return err
	}
	return row.Scan(&key.I64)
}

// InTx runs fn between BEGIN and COMMIT, rolling back when it fails.
func (w *pgRows) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if w.inTx {
		return fn(ctx)
	}
	tx, err := w.conn.Begin(ctx)
	if err != nil {
		return err
	}
	w.inTx = true
	err = fn(ctx)
	w.inTx = false
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// Reserve takes n keys of t from its identity's sequence (nextval), as an application that
// bulk-loads rows whose keys the database makes does: COPY cannot return them.
func (w *pgRows) Reserve(ctx context.Context, t engine.TableDef, n int, key func(i int) *engine.Value) error {
	rows, err := w.conn.Query(ctx, "SELECT nextval(pg_get_serial_sequence($1, 'id')) FROM generate_series(1, $2)", w.e.Qualify(t.Name), n)
	if err != nil {
		return err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		if i == n {
			break
		}
		if err := rows.Scan(&key(i).I64); err != nil {
			return err
		}
		i++
	}
	return rows.Err()
}
