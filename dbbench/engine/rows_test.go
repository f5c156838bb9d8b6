package engine_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// TestKeyRule holds who makes a table's keys to its key column and its KeyBy, and what a
// row of it carries.
func TestKeyRule(t *testing.T) {
	cols := []engine.ColumnDef{{Name: "at", Kind: engine.KindTime}, {Name: "n", Kind: engine.KindInt}}
	for _, c := range []struct {
		col       engine.Column
		by        engine.KeyMaker
		db        bool
		names     []string
		ruleErr   bool // rows of the table cannot be written
		returnErr bool // InsertKey cannot be asked
	}{
		{engine.ColBigint, engine.KeyByColumn, false, []string{"id", "at", "n"}, false, true},
		{engine.ColUUID, engine.KeyByApp, false, []string{"id", "at", "n"}, false, true},
		{engine.ColBigint, engine.KeyByDatabase, true, []string{"at", "n"}, true, true},
		{engine.ColIdentity, engine.KeyByColumn, true, []string{"at", "n"}, false, false},
		{engine.ColServerUUID, engine.KeyByColumn, true, []string{"at", "n"}, false, false},
		{engine.ColIdentity, engine.KeyByApp, false, []string{"id", "at", "n"}, false, true},
	} {
		tbl := engine.TableDef{Name: "t", Key: engine.Row{Col: c.col}, Columns: cols}.WithKeysBy(c.by)
		if got := tbl.KeysByDatabase(); got != c.db {
			t.Errorf("%+v: KeysByDatabase %t, want %t", c, got, c.db)
		}
		if got := tbl.ColumnNames(); !slices.Equal(got, c.names) {
			t.Errorf("%+v: ColumnNames %q, want %q", c, got, c.names)
		}
		if err := engine.CheckKeyRule(tbl, false); (err != nil) != c.ruleErr || (err != nil && !errors.Is(err, engine.ErrKeyRule)) {
			t.Errorf("%+v: CheckKeyRule: %v", c, err)
		}
		if err := engine.CheckKeyRule(tbl, true); (err != nil) != (c.ruleErr || c.returnErr) || (err != nil && !errors.Is(err, engine.ErrKeyRule)) {
			t.Errorf("%+v: CheckKeyRule returning: %v", c, err)
		}
		cells, skip := engine.RowCells(tbl, nil)
		if len(cells) != 3 || (skip == 1) != c.db {
			t.Errorf("%+v: RowCells %d cells, skip %d", c, len(cells), skip)
		}
	}
}

// TestChunkRows holds the rows per multi-row INSERT to the engines' limits on parameters.
func TestChunkRows(t *testing.T) {
	for _, c := range []struct{ n, cols, max, want int }{
		{1000, 4, 65535, 1000},
		{20000, 4, 65535, 16383},
		{20000, 3, 32766, 10922},
		{5, 0, 100, 5},
		{5, 200, 100, 1},
	} {
		if got := engine.ChunkRows(c.n, c.cols, c.max); got != c.want {
			t.Errorf("ChunkRows(%d, %d, %d) = %d, want %d", c.n, c.cols, c.max, got, c.want)
		}
	}
}
