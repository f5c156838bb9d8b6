package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// querier is what *sql.DB and *sql.Conn share for reading rows.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// CountRows runs q on db and counts the rows it returns; what names the operation in errors,
// lost is the engine's ConnLost.
func CountRows(ctx context.Context, db querier, lost func(error) bool, what, q string, args ...any) (int64, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, FailLost(ctx, what, err, lost)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		n++
	}
	return n, FailLost(ctx, what, rows.Err(), lost)
}

// Placeholder matches a $N placeholder of a query written for PostgreSQL, which the
// database/sql engines rewrite to "?".
var Placeholder = regexp.MustCompile(`\$[0-9]+`)

// ShellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// BareKeyBase is added to the baseline's keys: LOAD DATA sends text, and
// keys from 10^18 up are 19 digits long, as current Snowflake IDs are, so
// the server parses as many bytes per key in the baseline as in the
// snowflake row it is compared with.
const BareKeyBase = 1_000_000_000_000_000_000

// SQLRows is the RowWriter of the database/sql engines (MariaDB/MySQL, SQLite) over one
// connection: prepared multi-row and one-row INSERTs cached per statement (StmtKey),
// transactions begun by Begin, the keys the database made read by LastInsertId. An engine
// gives it its conversions, its limit on parameters and, when it has one, its own bulk path.
type SQLRows struct {
	Conn    *sql.Conn
	Qualify func(string) string
	Begin   string // the statement that starts a transaction
	KeyArg  func(Row, *Value) any
	TimeArg func(time.Time) any
	// MaxParams is the engine's limit on parameters per statement.
	MaxParams int
	// Bulk is the engine's PathBulk (LOAD DATA); nil makes it PathBatch inside one
	// transaction, the caller's or its own.
	Bulk func(ctx context.Context, t TableDef, n int, fill RowFunc) error

	inTx  bool
	cells []Cell
	args  []any
	stmts map[StmtKey]*sql.Stmt
}

var _ RowWriter = (*SQLRows)(nil)

// Insert writes n rows of t by path p (RowWriter).
func (w *SQLRows) Insert(ctx context.Context, t TableDef, p Path, n int, fill RowFunc) error {
	if err := CheckKeyRule(t, false); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	switch p {
	case PathBulk:
		if w.Bulk != nil {
			return w.Bulk(ctx, t, n, fill)
		}
		return w.InTx(ctx, func(ctx context.Context) error { return w.insert(ctx, t, n, n, fill) })
	case PathBatch:
		return w.insert(ctx, t, n, n, fill)
	}
	return w.insert(ctx, t, n, 1, fill)
}

// insert writes n rows of t in INSERTs of at most per rows (fewer where MaxParams says so).
func (w *SQLRows) insert(ctx context.Context, t TableDef, n, per int, fill RowFunc) error {
	cells, skip := RowCells(t, w.cells)
	w.cells = cells
	per = ChunkRows(per, len(cells)-skip, w.MaxParams)
	for start := 0; start < n; start += per {
		rows := min(per, n-start)
		st, err := w.stmt(ctx, t, rows, false)
		if err != nil {
			return err
		}
		a := w.args[:0]
		for i := start; i < start+rows; i++ {
			if err := fill(i, cells); err != nil {
				return err
			}
			a = w.appendArgs(a, t, cells, skip)
		}
		w.args = a
		if _, err := st.ExecContext(ctx, a...); err != nil {
			return err
		}
	}
	return nil
}

// InsertKey inserts one row of t and reads the key the database made with LastInsertId
// (RowWriter): an AUTO_INCREMENT or rowid key, nothing else.
func (w *SQLRows) InsertKey(ctx context.Context, t TableDef, fill RowFunc, key *Value) error {
	if err := CheckKeyRule(t, true); err != nil {
		return err
	}
	if t.Key.Col != ColIdentity {
		return fmt.Errorf("%w: table %s: LastInsertId returns only an identity key", ErrKeyRule, t.Name)
	}
	cells, skip := RowCells(t, w.cells)
	w.cells = cells
	st, err := w.stmt(ctx, t, 1, false)
	if err != nil {
		return err
	}
	if err := fill(0, cells); err != nil {
		return err
	}
	w.args = w.appendArgs(w.args[:0], t, cells, skip)
	res, err := st.ExecContext(ctx, w.args...)
	if err != nil {
		return err
	}
	key.I64, err = res.LastInsertId()
	return err
}

// appendArgs appends the driver's arguments of one row's cells (from cells[skip]).
func (w *SQLRows) appendArgs(a []any, t TableDef, cells []Cell, skip int) []any {
	if skip == 0 {
		a = append(a, w.KeyArg(t.Key, cells[0].Key))
	}
	for j := range t.Columns {
		c := &cells[1+j]
		switch t.Columns[j].Kind {
		case KindKey:
			a = append(a, w.KeyArg(t.Key, c.Key))
		case KindTime:
			a = append(a, w.TimeArg(c.Time))
		default:
			a = append(a, c.Int)
		}
	}
	return a
}

// stmt returns the prepared INSERT of rows rows of t, preparing it on first use.
func (w *SQLRows) stmt(ctx context.Context, t TableDef, rows int, returning bool) (*sql.Stmt, error) {
	k := StmtKeyOf(t, rows, returning)
	if st, ok := w.stmts[k]; ok {
		return st, nil
	}
	cols := t.ColumnNames()
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	q := "INSERT INTO " + w.Qualify(t.Name) + " (" + strings.Join(cols, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
	st, err := w.Conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if w.stmts == nil {
		w.stmts = map[StmtKey]*sql.Stmt{}
	}
	w.stmts[k] = st
	return st, nil
}

// InTx runs fn between Begin and COMMIT on the writer's connection, rolling back when fn
// fails (RowWriter); inside fn, InTx runs its function in the same transaction.
func (w *SQLRows) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if w.inTx {
		return fn(ctx)
	}
	if _, err := w.Conn.ExecContext(ctx, w.Begin); err != nil {
		return err
	}
	w.inTx = true
	err := fn(ctx)
	w.inTx = false
	if err != nil {
		_, _ = w.Conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	_, err = w.Conn.ExecContext(ctx, "COMMIT")
	return err
}

// Close releases the writer's prepared statements.
func (w *SQLRows) Close() error {
	var errs []error
	for k, st := range w.stmts {
		errs = append(errs, st.Close())
		delete(w.stmts, k)
	}
	return errors.Join(errs...)
}
