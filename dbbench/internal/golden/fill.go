package golden

import (
	"context"
	"errors"

	"github.com/idkit/idkit/dbbench/engine"
)

// Fill creates table t on e and fills it with n rows as the table workload's load does
// (dbbench's tableLoad: SourceRow, CreateTables, BeforeLoad, FillTable; the bare baseline when
// base), for the engine packages' TestTableDDL, which record the statements it sends; then it
// drops t. progress, when not nil, sees the rows done, while the table exists.
func Fill(ctx context.Context, e engine.Engine, t engine.TableDef, n int, base bool, progress func(int64)) (err error) {
	var src *engine.Source
	if !base {
		r, err := e.SourceRow(t.Key)
		if err != nil {
			return err
		}
		if src, err = engine.NewSource(r, 1); err != nil {
			return err
		}
		defer src.Close()
	}
	ts := []engine.TableDef{t}
	if err := e.CreateTables(ctx, ts); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.DropTables(context.WithoutCancel(ctx), ts)) }()
	if err := e.BeforeLoad(ctx); err != nil {
		return err
	}
	return e.FillTable(ctx, t, src, n, engine.NewRecorder(n, 2, e.BatchSize(), progress))
}
