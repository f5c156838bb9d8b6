package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A workload writes rows of its own tables (TableDef) through a RowWriter, one per
// connection (AppDialect.RowWriters): n rows of any table by one of three paths, inside or
// outside a transaction, with the keys made by the application or by the database as the
// table's rule (TableDef.KeyBy) says. Values are engine-neutral cells (Cell); each engine
// converts them as its KeyArg and TimeArg do. What a workload writes (the app workload's
// business operation: a parent, then its children) is composed from these calls once, in
// package dbbench, for every engine.

// Path is how a RowWriter sends the rows of one Insert.
type Path int

const (
	// PathBulk is the engine's bulk path: COPY … FROM STDIN in binary (PostgreSQL), LOAD DATA
	// LOCAL INFILE from an io.Reader (MariaDB/MySQL), prepared multi-row INSERTs in one
	// transaction (SQLite).
	PathBulk Path = iota
	// PathBatch sends multi-row INSERTs: all rows in one statement, or as many per statement
	// as the engine's limit on parameters lets.
	PathBatch
	// PathSingle sends one single-row INSERT per row.
	PathSingle
)

// String names the path as the report's modes do: copy, batch, single.
func (p Path) String() string {
	switch p {
	case PathBulk:
		return ModeCopy
	case PathBatch:
		return ModeBatch
	case PathSingle:
		return ModeSingle
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// KeyMaker is who makes the keys of a table's rows: TableDef.KeyBy.
type KeyMaker int

const (
	// KeyByColumn leaves it to the key's column: the database for a column it fills
	// (identity, AUTO_INCREMENT, a server-side DEFAULT: Column.ServerMade), the application
	// for any other.
	KeyByColumn KeyMaker = iota
	// KeyByApp: the rows carry their keys, also into a column the database could fill (keys
	// a KeyReserver took from the database ahead of a bulk load).
	KeyByApp
	// KeyByDatabase: the database makes each key on insert, and the rows leave the id out.
	KeyByDatabase
)

// KeysByDatabase reports whether the database makes t's keys when its rows are inserted:
// the rows a RowWriter writes then leave the id out, and InsertKey returns it.
func (t TableDef) KeysByDatabase() bool {
	switch t.KeyBy {
	case KeyByApp:
		return false
	case KeyByDatabase:
		return true
	}
	return t.Key.Col.ServerMade()
}

// WithKeysBy returns a copy of t whose keys m makes, for one write (the keys a KeyReserver
// took, given by the application).
func (t TableDef) WithKeysBy(m KeyMaker) TableDef {
	t.KeyBy = m
	return t
}

// ColumnNames returns the names of the columns a row of t carries: id first unless the
// database makes the keys, then t.Columns in order.
func (t TableDef) ColumnNames() []string {
	out := make([]string, 0, len(t.Columns)+1)
	if !t.KeysByDatabase() {
		out = append(out, "id")
	}
	for _, c := range t.Columns {
		out = append(out, c.Name)
	}
	return out
}

// Cell is one value of a row a RowWriter writes, in the field its column's kind reads: Key
// for the id and for KindKey columns (a key of the table's row, t.Key), Time for KindTime,
// Int for KindInt. A Cell boxes nothing: engines that stream text (LOAD DATA) format it
// directly, the others convert it to their driver's argument as KeyArg and TimeArg do.
type Cell struct {
	Key  *Value
	Time time.Time
	Int  int64
}

// RowFunc fills row with row i (0 ≤ i < n) of an Insert: row[0] is the id, read only when
// the application makes the keys (TableDef.KeysByDatabase is false), and row[1+j] the value
// of t.Columns[j]. The writer owns row and reuses it for the next row; a Key pointer must
// stay valid until Insert returns.
type RowFunc func(i int, row []Cell) error

// RowWriter writes rows of any workload table over one connection. It is used by one
// goroutine at a time. Its errors are the driver's (fail, FailLost and the engine's ConnLost
// read them), or wrap ErrKeyRule.
type RowWriter interface {
	// Insert writes n rows of t by path p, row i as fill sets it, the keys made as t's rule
	// says (TableDef.KeysByDatabase). Outside InTx each statement commits on its own, except
	// where the engine's bulk path is a transaction of its own (SQLite).
	Insert(ctx context.Context, t TableDef, p Path, n int, fill RowFunc) error
	// InsertKey inserts one row of t (fill is called with i = 0), whose key the database
	// makes, and sets *key to that key (RETURNING id, or LastInsertId): I64 for a bigint key,
	// B16 for a uuid one. It returns an error wrapping ErrKeyRule for a table whose keys the
	// application makes.
	InsertKey(ctx context.Context, t TableDef, fill RowFunc, key *Value) error
	// InTx runs fn in one transaction on the writer's connection: committed when fn returns
	// nil, rolled back when it returns an error, which InTx returns. Called inside fn, InTx
	// runs its function in the same transaction.
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// KeyReserver is the optional part of a RowWriter whose database hands out its keys ahead
// of the rows (PostgreSQL: nextval of the identity's sequence), as an application that
// bulk-loads rows whose keys the database makes does when the bulk path cannot return them
// (COPY) and other rows need them: it reserves the keys, then inserts the rows with them
// (t.WithKeysBy(KeyByApp)).
type KeyReserver interface {
	// Reserve takes n keys of t from the database and sets *key(i) to the i-th (I64).
	Reserve(ctx context.Context, t TableDef, n int, key func(i int) *Value) error
}

// ErrKeyRule is returned (wrapped) by a RowWriter asked for a write that the table's key
// rule does not allow: InsertKey into a table whose keys the application makes, or rows
// without keys for a key column no database fills.
var ErrKeyRule = errors.New("dbbench: write does not match the table's key rule")

// CheckKeyRule returns an error wrapping ErrKeyRule when rows of t cannot be written with
// the key rule t has (the database making keys for a column it cannot fill), or when
// returning is set (InsertKey) and the application makes t's keys.
func CheckKeyRule(t TableDef, returning bool) error {
	switch {
	case t.KeysByDatabase() && !t.Key.Col.ServerMade():
		return fmt.Errorf("%w: table %s: the database does not make keys of a %s column", ErrKeyRule, t.Name, t.Key.Label)
	case returning && !t.KeysByDatabase():
		return fmt.Errorf("%w: table %s: InsertKey needs a key the database makes", ErrKeyRule, t.Name)
	}
	return nil
}

// StmtKey names a statement a RowWriter caches: INSERT into table of rows rows, with the id
// or not, returning the key or not. Cols is the table's column count, so that a table
// created again with another shape under the same name is not sent a stale statement.
type StmtKey struct {
	Table     string
	Cols      int
	Rows      int
	Keyed     bool
	Returning bool
}

// StmtKeyOf is the StmtKey of an INSERT of rows rows of t.
func StmtKeyOf(t TableDef, rows int, returning bool) StmtKey {
	return StmtKey{Table: t.Name, Cols: len(t.Columns), Rows: rows, Keyed: !t.KeysByDatabase(), Returning: returning}
}

// RowCells returns the cells of one row of t as a RowFunc sees them (id first, always) and
// the offset of the first cell a row carries: 1 when the database makes the keys (the id
// cell is skipped), else 0.
func RowCells(t TableDef, buf []Cell) ([]Cell, int) {
	n := len(t.Columns) + 1
	if cap(buf) < n {
		buf = make([]Cell, n)
	}
	buf = buf[:n]
	if t.KeysByDatabase() {
		return buf, 1
	}
	return buf, 0
}

// ChunkRows returns how many rows of cols columns go in one multi-row INSERT of at most n
// rows under a limit of maxParams parameters per statement.
func ChunkRows(n, cols, maxParams int) int {
	return max(min(n, maxParams/max(cols, 1)), 1)
}
