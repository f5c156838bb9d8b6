package sqlite

import (
	"context"
	"errors"

	"github.com/idkit/idkit/dbbench/engine"
)

// maxParams is SQLite's limit on parameters per statement (SQLITE_MAX_VARIABLE_NUMBER, 32766
// since SQLite 3.32).
const maxParams = 32766

// RowWriters returns a writer over each of the engine's connections: the database/sql writer
// (engine.SQLRows) with BEGIN IMMEDIATE, whose bulk path is one transaction of prepared
// multi-row INSERTs, and whose keys the database makes are rowids read by LastInsertId. It
// closes the statements of the writers it handed out before.
func (e *sqliteEngine) RowWriters(ctx context.Context) ([]engine.RowWriter, error) {
	for len(e.loaders) < e.cfg.Clients {
		c, err := e.db.Conn(ctx)
		if err != nil {
			return nil, engine.Fail(ctx, "sqlite: open connection", err)
		}
		e.loaders = append(e.loaders, c)
	}
	var errs []error
	for _, w := range e.writers {
		errs = append(errs, w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, engine.Fail(ctx, "sqlite: close statements", err)
	}
	e.writers = e.writers[:0]
	out := make([]engine.RowWriter, len(e.loaders))
	for i, c := range e.loaders {
		w := &engine.SQLRows{Conn: c, Qualify: e.Qualify, Begin: "BEGIN IMMEDIATE", KeyArg: e.KeyArg, TimeArg: e.TimeArg, MaxParams: maxParams}
		e.writers = append(e.writers, w)
		out[i] = w
	}
	return out, nil
}
