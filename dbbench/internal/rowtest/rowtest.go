// Package rowtest is the one check of an engine's row writers (engine.RowWriter) that every
// engine package's tests run: rows of two made-up tables written by every path, inside and
// outside a transaction, with keys the application makes and keys the database makes, read
// back through the engine's own queries.
package rowtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// Owners and items per case; each item refers to owner i/itemsPerOwner.
const (
	owners        = 3
	itemsPerOwner = 2
)

// tables is the case's schema as data: an owner (id, at, n) and an item (id, owner
// REFERENCES owner(id), at, n) with an index on owner, their keys of row r.
func tables(name string, r engine.Row) (owner, item engine.TableDef) {
	owner = engine.TableDef{Name: name + "_owner", Who: "owner", Key: r, Columns: []engine.ColumnDef{
		{Name: "at", Kind: engine.KindTime}, {Name: "n", Kind: engine.KindInt}}}
	item = engine.TableDef{Name: name + "_item", Who: "item", Key: r, Columns: []engine.ColumnDef{
		{Name: "owner", Kind: engine.KindKey, References: owner.Name, FK: name + "_item_owner_fk"},
		{Name: "at", Kind: engine.KindTime}, {Name: "n", Kind: engine.KindInt}},
		Indexes: []engine.IndexDef{{Name: name + "_item_owner", Column: "owner", Role: "item owner index"}}}
	return owner, item
}

// key is the application's i-th key of a column of type c.
func key(c engine.Column, i int) engine.Value {
	switch c {
	case engine.ColUUID:
		var b [16]byte
		b[0], b[6], b[15] = byte(i), 0x70, byte(255-i)
		return engine.Value{B16: b}
	case engine.ColText:
		return engine.Value{Str: fmt.Sprintf("k%025d", 7919*i+1)}
	}
	return engine.Value{I64: 1_000_000_000_000_000_000 + 7919*int64(i)}
}

// at is the time of row i of a table, whole microseconds (what every engine keeps).
func at(i int) time.Time {
	return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i)*time.Millisecond + time.Duration(i)*time.Microsecond)
}

var errAbort = errors.New("rowtest: abort the transaction")

// Run writes and reads back, on e, one pair of tables per key row, path and transaction
// mode: keys of rows (app-made keys of each column type e takes) by the application, and
// identity keys by the database (InsertKey, or Reserve where a writer is an
// engine.KeyReserver, for the owners; Insert without the id for the items). It also checks
// that a transaction whose function fails leaves nothing, and that a write the table's key
// rule does not allow wraps engine.ErrKeyRule.
func Run(t *testing.T, e engine.Engine, rows []engine.Row) {
	ctx := context.Background()
	ws, err := e.RowWriters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := ws[0]
	_, reserves := w.(engine.KeyReserver)
	rows = append(rows, engine.Row{Label: "identity", Col: engine.ColIdentity})
	n := 0
	for _, r := range rows {
		for _, p := range []engine.Path{engine.PathBulk, engine.PathBatch, engine.PathSingle} {
			for _, tx := range []bool{false, true} {
				n++
				name := "rw" + strconv.Itoa(n)
				t.Run(fmt.Sprintf("%s/%s/tx=%t", r.Label, p, tx), func(t *testing.T) {
					owner, item := tables(name, r)
					ts := []engine.TableDef{owner, item}
					if err := e.CreateTables(ctx, ts); err != nil {
						t.Fatal(err)
					}
					defer func() {
						if err := e.DropTables(ctx, ts); err != nil {
							t.Error(err)
						}
					}()
					keys := make([]engine.Value, owners)
					items := make([]engine.Value, owners*itemsPerOwner)
					db := owner.KeysByDatabase()
					if !db {
						for i := range keys {
							keys[i] = key(r.Col, i)
						}
						for i := range items {
							items[i] = key(r.Col, 100+i)
						}
					}
					fillOwner := func(i int, row []engine.Cell) error {
						row[0].Key, row[1].Time, row[2].Int = &keys[i], at(i), int64(10+i)
						return nil
					}
					fillItem := func(i int, row []engine.Cell) error {
						row[0].Key, row[1].Key, row[2].Time, row[3].Int = &items[i], &keys[i/itemsPerOwner], at(50+i), int64(100+i)
						return nil
					}
					write := func(ctx context.Context) error {
						switch {
						case !db:
							if err := w.Insert(ctx, owner, p, owners, fillOwner); err != nil {
								return err
							}
						case reserves && p != engine.PathSingle:
							if err := w.(engine.KeyReserver).Reserve(ctx, owner, owners, func(i int) *engine.Value { return &keys[i] }); err != nil {
								return err
							}
							if err := w.Insert(ctx, owner.WithKeysBy(engine.KeyByApp), p, owners, fillOwner); err != nil {
								return err
							}
						default:
							for i := range keys {
								if err := w.InsertKey(ctx, owner, func(_ int, row []engine.Cell) error { return fillOwner(i, row) }, &keys[i]); err != nil {
									return err
								}
							}
						}
						return w.Insert(ctx, item, p, len(items), fillItem)
					}
					if tx {
						if err := w.InTx(ctx, func(ctx context.Context) error {
							if err := write(ctx); err != nil {
								return err
							}
							return errAbort
						}); !errors.Is(err, errAbort) {
							t.Fatalf("InTx of a failing function: %v, want %v", err, errAbort)
						}
						count(t, e, 0, "SELECT 1 FROM "+e.Qualify(owner.Name))
						count(t, e, 0, "SELECT 1 FROM "+e.Qualify(item.Name))
						err = w.InTx(ctx, write)
					} else {
						err = write(ctx)
					}
					if err != nil {
						t.Fatal(err)
					}
					count(t, e, owners, "SELECT 1 FROM "+e.Qualify(owner.Name))
					count(t, e, len(items), "SELECT 1 FROM "+e.Qualify(item.Name))
					for i := range keys {
						count(t, e, 1, "SELECT 1 FROM "+e.Qualify(owner.Name)+" WHERE id = $1 AND at = $2 AND n = $3",
							e.KeyArg(r, &keys[i]), e.TimeArg(at(i)), int64(10+i))
					}
					for i := range items {
						q, args := "SELECT 1 FROM "+e.Qualify(item.Name)+" WHERE owner = $1 AND at = $2 AND n = $3",
							[]any{e.KeyArg(r, &keys[i/itemsPerOwner]), e.TimeArg(at(50 + i)), int64(100 + i)}
						if !db {
							q, args = q+" AND id = $4", append(args, e.KeyArg(r, &items[i]))
						}
						count(t, e, 1, q, args...)
					}
				})
			}
		}
	}
	t.Run("key rule", func(t *testing.T) {
		owner, _ := tables("rwrule", engine.Row{Label: "bigint", Col: engine.ColBigint})
		if err := e.CreateTables(ctx, []engine.TableDef{owner}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := e.DropTables(ctx, []engine.TableDef{owner}); err != nil {
				t.Error(err)
			}
		}()
		var k engine.Value
		fill := func(_ int, row []engine.Cell) error {
			row[0].Key, row[1].Time = &k, at(0)
			return nil
		}
		if err := w.InsertKey(ctx, owner, fill, &k); !errors.Is(err, engine.ErrKeyRule) {
			t.Errorf("InsertKey of an application-made key: %v, want %v", err, engine.ErrKeyRule)
		}
		if err := w.Insert(ctx, owner.WithKeysBy(engine.KeyByDatabase), engine.PathSingle, 1, fill); !errors.Is(err, engine.ErrKeyRule) {
			t.Errorf("a bigint key made by the database: %v, want %v", err, engine.ErrKeyRule)
		}
		count(t, e, 0, "SELECT 1 FROM "+e.Qualify(owner.Name))
	})
}

// count fails t unless q, written with $N placeholders, returns want rows on e.
func count(t *testing.T, e engine.Engine, want int, q string, args ...any) {
	t.Helper()
	got, err := e.Count(context.Background(), e.SQL(q), args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if got != int64(want) {
		t.Errorf("%s %v: %d rows, want %d", q, args, got, want)
	}
}
