package innodb

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/idkit/idkit/dbbench/engine"
)

// RowWriters returns a writer over each loading connection: the database/sql writer
// (engine.SQLRows) with BEGIN, MySQL's 65535 parameters per statement, and LOAD DATA LOCAL
// INFILE as the bulk path. It closes the statements of the writers it handed out before.
func (e *mysqlEngine) RowWriters(ctx context.Context) ([]engine.RowWriter, error) {
	conns, err := e.loaderConns(ctx)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, w := range e.writers {
		errs = append(errs, w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fail(ctx, "close statements", err)
	}
	e.writers = e.writers[:0]
	out := make([]engine.RowWriter, len(conns))
	for i, c := range conns {
		w := &engine.SQLRows{Conn: c, Qualify: e.Qualify, Begin: "BEGIN", KeyArg: e.KeyArg, TimeArg: e.TimeArg, MaxParams: maxPlaceholders}
		l := &loader{e: e, w: w}
		w.Bulk = l.load
		e.writers = append(e.writers, w)
		out[i] = w
	}
	return out, nil
}

// loader is a writer's bulk path: LOAD DATA LOCAL INFILE of the rows as tab-separated text,
// made line by line as the server reads them (lineReader).
type loader struct {
	e     *mysqlEngine
	w     *engine.SQLRows
	cells []engine.Cell
	cols  map[engine.StmtKey]string
}

// load sends n rows of t in one LOAD DATA.
func (l *loader) load(ctx context.Context, t engine.TableDef, n int, fill engine.RowFunc) error {
	cells, skip := engine.RowCells(t, l.cells)
	l.cells = cells
	key, unsigned := t.Key.Col, t.Key.Unsigned
	if key == engine.ColIdentity {
		key, unsigned = engine.ColBigint, false
	}
	i := 0
	r := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
		if i == n {
			return dst, false, nil
		}
		if err := fill(i, cells); err != nil {
			return dst, false, err
		}
		i++
		if skip == 0 {
			dst = appendKeyText(dst, key, unsigned, cells[0].Key)
		}
		for j := range t.Columns {
			if skip == 0 || j > 0 {
				dst = append(dst, '\t')
			}
			c := &cells[1+j]
			switch t.Columns[j].Kind {
			case engine.KindKey:
				dst = appendKeyText(dst, key, unsigned, c.Key)
			case engine.KindTime:
				dst = c.Time.UTC().AppendFormat(dst, mysqlTime)
			default:
				dst = strconv.AppendInt(dst, c.Int, 10)
			}
		}
		return append(dst, '\n'), true, nil
	}}
	return loadData(ctx, l.w.Conn, l.e.Qualify(t.Name), l.columns(t), r)
}

// columns is LOAD DATA's column list of a row of t: key columns of BINARY(16) arrive as hex
// and are UNHEXed.
func (l *loader) columns(t engine.TableDef) string {
	k := engine.StmtKeyOf(t, 0, false)
	if c, ok := l.cols[k]; ok {
		return c
	}
	names := t.ColumnNames()
	var set []string
	if t.Key.Col == engine.ColUUID {
		for i, name := range names {
			if name == "id" || t.Columns[i-(len(names)-len(t.Columns))].Kind == engine.KindKey {
				names[i] = "@" + name
				set = append(set, name+" = UNHEX(@"+name+")")
			}
		}
	}
	c := "(" + strings.Join(names, ", ") + ")"
	if len(set) > 0 {
		c += " SET " + strings.Join(set, ", ")
	}
	if l.cols == nil {
		l.cols = map[engine.StmtKey]string{}
	}
	l.cols[k] = c
	return c
}
