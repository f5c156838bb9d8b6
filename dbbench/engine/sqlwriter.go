package engine

import (
	"context"
	"database/sql"
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

// SQLWriter writes business operations over one database/sql connection, with statements
// prepared once per table pair: the transactions and the bare loop that MariaDB/MySQL
// (mysqlWriter) and SQLite (sqliteWriter) share; each adds its own bulk path.
type SQLWriter struct {
	Conn    *sql.Conn
	Qualify func(string) string
	Begin   string // the statement that starts a transaction
	TimeArg func(time.Time) any
	KeyArg  func(Row, *Value) any
	args    []any
	stmts   map[string][2]*sql.Stmt // label (+"/identity") → parent INSERT, child INSERT
}

func (w *SQLWriter) statements(ctx context.Context, s AppSchema, identity bool) (*sql.Stmt, *sql.Stmt, error) {
	key := s.Label
	if identity {
		key += "/identity"
	}
	if st, ok := w.stmts[key]; ok {
		return st[0], st[1], nil
	}
	one := "(?,?,?)"
	p := "INSERT INTO " + w.Qualify(s.Parent()) + " (id, created_at, customer, payload) VALUES (?,?,?,?)"
	c := "INSERT INTO " + w.Qualify(s.Child()) + " (id, parent_id, payload) VALUES "
	if identity {
		one = "(?,?)"
		p = "INSERT INTO " + w.Qualify(s.Parent()) + " (created_at, customer, payload) VALUES (?,?,?)"
		c = "INSERT INTO " + w.Qualify(s.Child()) + " (parent_id, payload) VALUES "
	}
	c += strings.TrimSuffix(strings.Repeat(one+",", max(s.Children, 1)), ",")
	ps, err := w.Conn.PrepareContext(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	cs, err := w.Conn.PrepareContext(ctx, c)
	if err != nil {
		ps.Close()
		return nil, nil, err
	}
	if w.stmts == nil {
		w.stmts = map[string][2]*sql.Stmt{}
	}
	w.stmts[key] = [2]*sql.Stmt{ps, cs}
	return ps, cs, nil
}

// InTx runs fn between BEGIN and COMMIT on the writer's connection, rolling back on error.
func (w *SQLWriter) InTx(ctx context.Context, fn func() error) error {
	if _, err := w.Conn.ExecContext(ctx, w.Begin); err != nil {
		return err
	}
	if err := fn(); err != nil {
		_, _ = w.Conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	_, err := w.Conn.ExecContext(ctx, "COMMIT")
	return err
}

// Tx writes op in one transaction.
func (w *SQLWriter) Tx(ctx context.Context, s AppSchema, op *AppOp) error {
	return w.InTx(ctx, func() error { return w.InsertOp(ctx, s, op) })
}

// InsertOp inserts one operation's parent and children, inside the caller's transaction.
func (w *SQLWriter) InsertOp(ctx context.Context, s AppSchema, op *AppOp) error {
	identity := s.Row.Col == ColIdentity
	ps, cs, err := w.statements(ctx, s, identity)
	if err != nil {
		return err
	}
	created := w.TimeArg(op.Created)
	if identity {
		res, err := ps.ExecContext(ctx, created, op.Customer, op.Payload)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		op.ParentArg = id
	} else if _, err := ps.ExecContext(ctx, op.ParentArg, created, op.Customer, op.Payload); err != nil {
		return err
	}
	if len(op.Children) == 0 {
		return nil
	}
	a := w.args[:0]
	for j := range op.Children {
		if !identity {
			a = append(a, w.KeyArg(s.Row, &op.Children[j]))
		}
		a = append(a, op.ParentArg, op.Payload*int64(s.Children+1)+int64(j))
	}
	w.args = a
	_, err = cs.ExecContext(ctx, a...)
	return err
}

// BareOp inserts operation op of the baseline, inside the caller's transaction.
func (w *SQLWriter) BareOp(ctx context.Context, s AppSchema, op int64) error {
	ps, cs, err := w.statements(ctx, s, false)
	if err != nil {
		return err
	}
	k := int64(s.Children)
	id := BareKeyBase + op + 1
	if _, err := ps.ExecContext(ctx, id, w.TimeArg(time.Now()), id%10000, op+1); err != nil {
		return err
	}
	if k == 0 {
		return nil
	}
	a := w.args[:0]
	for j := int64(0); j < k; j++ {
		a = append(a, BareKeyBase+op*k+j+1, id, op*k+j+1)
	}
	w.args = a
	_, err = cs.ExecContext(ctx, a...)
	return err
}

// BareLoop is the bare baseline loop outside the bulk path: one transaction per operation.
func (w *SQLWriter) BareLoop(ctx context.Context, s AppSchema, first, count int64) error {
	for op := first; op < first+count; op++ {
		if err := w.InTx(ctx, func() error { return w.BareOp(ctx, s, op) }); err != nil {
			return err
		}
	}
	return nil
}
