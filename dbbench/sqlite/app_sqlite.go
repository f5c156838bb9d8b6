package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/idkit/idkit/dbbench/engine"
	"regexp"
	"strings"
	"time"
)

var _ engine.Engine = (*sqliteEngine)(nil)

// ReservesKeys: the bulk path is a transaction of prepared INSERTs, inside which InsertKey
// returns each parent's rowid.
func (e *sqliteEngine) ReservesKeys() bool { return true }

// KeyType is the SQL type of a row's key columns on SQLite. A row whose keys the database
// makes uses INTEGER PRIMARY KEY, the rowid itself, as an application would; the others are
// rowid tables with a separate primary-key index, as in the table workload.
func (e *sqliteEngine) KeyType(r engine.Row) string {
	if r.Col == engine.ColIdentity {
		return "INTEGER PRIMARY KEY (rowid)"
	}
	return e.sqlType(r)
}

func (e *sqliteEngine) Qualify(name string) string { return `"` + name + `"` }

// sqlType is the SQL type of a row's key columns. An ID with bit 63 set does not fit
// SQLite's signed INTEGER, and its decimal text would become a lossy REAL in a BIGINT column:
// it goes in as 8 big-endian bytes, whose BLOB order is the IDs' order.
func (e *sqliteEngine) sqlType(r engine.Row) string {
	switch r.Col {
	case engine.ColIdentity, engine.ColBigint:
		return "BIGINT"
	case engine.ColUint64, engine.ColUUID:
		return "BLOB"
	}
	return "TEXT"
}

// plainName matches a name SQLite takes without quotes: every name the workloads make ends
// in a digit or a suffix (t1, uuidv4_parent), so none is a keyword.
var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// ddlName is name in DDL, quoted only when it is not a plain name.
func (e *sqliteEngine) ddlName(name string) string {
	if plainName.MatchString(name) {
		return name
	}
	return e.Qualify(name)
}

// CreateTables creates ts: a key the database makes is INTEGER PRIMARY KEY, the rowid itself,
// unless the table asks for its key as a B-tree of its own (engine.TableDef.SeparateKey: a
// BIGINT key, not INTEGER, which would make it the rowid and leave no separate index to
// measure); any other is a rowid table with a separate primary-key index.
func (e *sqliteEngine) CreateTables(ctx context.Context, ts []engine.TableDef) error {
	for _, t := range ts {
		id, key := "id "+e.sqlType(t.Key)+" NOT NULL PRIMARY KEY", e.sqlType(t.Key)
		if t.Key.Col == engine.ColIdentity && !t.SeparateKey {
			id, key = "id INTEGER PRIMARY KEY", "INTEGER"
		}
		cols := []string{id}
		for _, c := range t.Columns {
			col := c.Name + " " + map[engine.ColKind]string{engine.KindKey: key, engine.KindTime: "INTEGER", engine.KindInt: "INTEGER"}[c.Kind] + " NOT NULL"
			if c.References != "" {
				col += " REFERENCES " + e.ddlName(c.References) + " (id)"
			}
			cols = append(cols, col)
		}
		ddl := []string{fmt.Sprintf("CREATE TABLE %s (%s)", e.ddlName(t.Name), strings.Join(cols, ", "))}
		for _, ix := range t.Indexes {
			ddl = append(ddl, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", e.ddlName(ix.Name), e.ddlName(t.Name), ix.Column))
		}
		for _, d := range ddl {
			if _, err := e.db.ExecContext(ctx, d); err != nil {
				return engine.Fail(ctx, "sqlite: create table "+t.Name, err)
			}
		}
	}
	return nil
}

func (e *sqliteEngine) DropTables(ctx context.Context, ts []engine.TableDef) error {
	for _, t := range engine.Reversed(ts) {
		if _, err := e.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+e.Qualify(t.Name)); err != nil {
			return engine.Fail(ctx, "sqlite: drop table "+t.Name, err)
		}
	}
	_, err := e.walBytes(ctx, e.db)
	return engine.Fail(ctx, "sqlite: checkpoint", err)
}

func (e *sqliteEngine) BeforeLoad(context.Context) error { return nil }

func (e *sqliteEngine) Settle(ctx context.Context, _ []engine.TableDef) error {
	_, err := e.db.ExecContext(ctx, "ANALYZE")
	return engine.Fail(ctx, "sqlite: analyze", err)
}

// Structures reads each table's and index's pages from dbstat. A key that is not the rowid
// has its own index (pkIndex).
func (e *sqliteEngine) Structures(ctx context.Context, ts []engine.TableDef) ([]engine.Structure, error) {
	var out []engine.Structure
	for _, t := range ts {
		out = append(out, engine.Structure{Name: t.Name, Role: t.Role(engine.RoleTable)})
		if pk := pkIndex(t); pk != "" {
			out = append(out, engine.Structure{Name: pk, Role: t.Role(engine.RolePrimary)})
		}
		for _, ix := range t.Indexes {
			out = append(out, engine.Structure{Name: ix.Name, Role: ix.Role})
		}
	}
	for i := range out {
		if err := e.db.QueryRowContext(ctx, "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?", out[i].Name).Scan(&out[i].Bytes); err != nil {
			return nil, engine.Fail(ctx, "sqlite: size of "+out[i].Name, err)
		}
	}
	return out, nil
}

// KeyArg: a key with bit 63 set (ColUint64) goes in as 8 big-endian bytes (sqlType).
func (e *sqliteEngine) KeyArg(r engine.Row, v *engine.Value) any {
	switch r.Col {
	case engine.ColIdentity, engine.ColBigint:
		return v.I64
	case engine.ColUint64:
		return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v.U64)
	case engine.ColUUID:
		b := v.B16
		return b[:]
	}
	return v.Str
}

// TimeArg: SQLite has no timestamp type; created_at holds Unix microseconds.
func (e *sqliteEngine) TimeArg(t time.Time) any { return t.UnixMicro() }

func (e *sqliteEngine) SQL(q string) string { return engine.Placeholder.ReplaceAllString(q, "?") }

func (e *sqliteEngine) Count(ctx context.Context, q string, args ...any) (int64, error) {
	return engine.CountRows(ctx, e.db, engine.ConnLost, "sqlite: query", q, args...)
}

func (e *sqliteEngine) KeyRows(ctx context.Context, r engine.Row, q string, args ...any) ([]engine.KeyRow, error) {
	rows, err := e.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, engine.Fail(ctx, "sqlite: query", err)
	}
	defer rows.Close()
	var out []engine.KeyRow
	for rows.Next() {
		var k engine.KeyRow
		switch r.Col {
		case engine.ColIdentity, engine.ColBigint:
			var v int64
			err = rows.Scan(&v, &k.Created)
			k.Key = v
		case engine.ColUUID:
			var b []byte
			var v [16]byte
			err = rows.Scan(&b, &k.Created)
			if err == nil && len(b) != 16 {
				err = fmt.Errorf("dbbench: sqlite: key of %d bytes, want 16", len(b))
			}
			copy(v[:], b)
			k.Key = v
		default:
			var v string
			err = rows.Scan(&v, &k.Created)
			k.Key = v
		}
		if err != nil {
			return nil, engine.Fail(ctx, "sqlite: read rows", err)
		}
		out = append(out, k)
	}
	return out, engine.Fail(ctx, "sqlite: query", rows.Err())
}

func (e *sqliteEngine) EpochMicros(col string) string { return col }

var sqlitePlanIndex = regexp.MustCompile(`USING (?:COVERING )?INDEX (\S+)|USING (INTEGER PRIMARY KEY)|USING (PRIMARY KEY)|^(SCAN)`)

func (e *sqliteEngine) Plan(ctx context.Context, q string, args ...any) (string, error) {
	rows, err := e.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return "", engine.Fail(ctx, "sqlite: explain", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var id, parent, unused int64
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", engine.Fail(ctx, "sqlite: explain", err)
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
		return "", engine.Fail(ctx, "sqlite: explain", err)
	}
	if len(found) == 0 {
		return "unknown", nil
	}
	return strings.Join(found, ", "), nil
}

// Kept marks the database file to be left by close, and names it and the command that opens
// it.
func (e *sqliteEngine) Kept() (string, string) {
	e.keep = true
	return "database file " + e.path, "sqlite3 " + engine.ShellQuote(e.path)
}
