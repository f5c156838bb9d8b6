package innodb

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/idkit/idkit/dbbench/engine"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var _ engine.Engine = (*mysqlEngine)(nil)

// ReservesKeys: LOAD DATA cannot return the keys the server makes.
func (e *mysqlEngine) ReservesKeys() bool { return false }

func (e *mysqlEngine) KeyType(r engine.Row) string { return e.ColumnTypeOf(r) }

func (e *mysqlEngine) Qualify(name string) string { return "`" + e.dbName + "`.`" + name + "`" }

// plainName matches a name MariaDB/MySQL take without quotes: every name the workloads make
// ends in a digit or a suffix (t1, uuidv4_parent, payload_idx), so none is a keyword.
var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// ddlName is name in DDL, quoted only when it is not a plain name.
func ddlName(name string) string {
	if plainName.MatchString(name) {
		return name
	}
	return "`" + name + "`"
}

// ddlTable is table name in DDL, qualified by the benchmark database.
func (e *mysqlEngine) ddlTable(name string) string { return ddlName(e.dbName) + "." + ddlName(name) }

// CreateTables creates ts as InnoDB tables with persistent statistics, recalculated only by
// Settle's ANALYZE TABLE (after every load of either workload), so that innodb_index_stats
// holds the figures of the finished load. The flags of engine.TableDef ask nothing of InnoDB:
// AUTO_INCREMENT takes no other form, and the clustered primary key is always a B-tree of its
// own.
func (e *mysqlEngine) CreateTables(ctx context.Context, ts []engine.TableDef) error {
	const opts = " ENGINE=InnoDB ROW_FORMAT=DYNAMIC STATS_PERSISTENT=1 STATS_AUTO_RECALC=0"
	for _, t := range ts {
		key := e.ColumnTypeOf(t.Key) + " NOT NULL"
		id := key
		if t.Key.Col == engine.ColIdentity {
			id, key = "BIGINT NOT NULL AUTO_INCREMENT", "BIGINT NOT NULL"
		}
		cols := []string{"id " + id}
		var fks []string
		for _, c := range t.Columns {
			typ := map[engine.ColKind]string{engine.KindKey: key, engine.KindTime: "DATETIME(6) NOT NULL", engine.KindInt: "BIGINT NOT NULL"}[c.Kind]
			cols = append(cols, c.Name+" "+typ)
			if c.References != "" {
				fks = append(fks, fmt.Sprintf("CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s (id)", ddlName(c.FK), c.Name, e.ddlTable(c.References)))
			}
		}
		cols = append(cols, "PRIMARY KEY (id)")
		for _, ix := range t.Indexes {
			cols = append(cols, fmt.Sprintf("KEY %s (%s)", ddlName(ix.Name), ix.Column))
		}
		ddl := fmt.Sprintf("CREATE TABLE %s (%s)%s", e.ddlTable(t.Name), strings.Join(append(cols, fks...), ", "), opts)
		if _, err := e.admin.ExecContext(ctx, ddl); err != nil {
			return fail(ctx, "create table "+t.Name, err)
		}
	}
	return nil
}

func (e *mysqlEngine) DropTables(ctx context.Context, ts []engine.TableDef) error {
	var names []string
	for _, t := range engine.Reversed(ts) {
		names = append(names, e.Qualify(t.Name))
	}
	if _, err := e.admin.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(names, ", ")); err != nil {
		return fail(ctx, "drop tables "+strings.Join(names, ", "), err)
	}
	return nil
}

// BeforeLoad opens the loading connections, so that a load does not time their connecting,
// and flushes the dirty pages of the steady profile (flushDirty).
func (e *mysqlEngine) BeforeLoad(ctx context.Context) error {
	if _, err := e.loaderConns(ctx); err != nil {
		return err
	}
	if e.canFlush {
		return e.flushDirty(ctx)
	}
	return nil
}

func (e *mysqlEngine) Settle(ctx context.Context, ts []engine.TableDef) error {
	if e.mariadb {
		if _, err := e.admin.ExecContext(ctx, "SET SESSION use_stat_tables = 'NEVER'"); err != nil {
			return fail(ctx, "set use_stat_tables", err)
		}
	}
	var names []string
	for _, t := range ts {
		names = append(names, e.Qualify(t.Name))
	}
	rows, err := e.admin.QueryContext(ctx, "ANALYZE TABLE "+strings.Join(names, ", "))
	if err != nil {
		return fail(ctx, "analyze table", err)
	}
	for rows.Next() {
	}
	rows.Close()
	return fail(ctx, "analyze table", rows.Err())
}

// Structures reads each index's allocated pages ("size": both segments, counted after
// Settle's ANALYZE TABLE, not sampled) from mysql.innodb_index_stats, or, without access to it,
// the clustered and secondary sizes of each table from information_schema.TABLES (the same
// statistics, the secondary indexes of a table as one structure).
func (e *mysqlEngine) Structures(ctx context.Context, ts []engine.TableDef) ([]engine.Structure, error) {
	if !e.indexStats {
		var out []engine.Structure
		for _, t := range ts {
			var data, index int64
			if err := e.admin.QueryRowContext(ctx, "SELECT DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
				e.dbName, t.Name).Scan(&data, &index); err != nil {
				return nil, fail(ctx, "read table sizes", err)
			}
			out = append(out, engine.Structure{Name: t.Name + ".PRIMARY", Role: t.Role(engine.RoleClustered), Bytes: data})
			if len(t.Indexes) > 0 {
				out = append(out, engine.Structure{Name: t.Name + ".secondary", Role: t.Role("secondary indexes"), Bytes: index})
			}
		}
		return out, nil
	}
	var out []engine.Structure
	for _, t := range ts {
		out = append(out, engine.Structure{Name: t.Name + ".PRIMARY", Role: t.Role(engine.RoleClustered)})
		for _, ix := range t.Indexes {
			out = append(out, engine.Structure{Name: t.Name + "." + ix.Name, Role: ix.Role})
		}
	}
	for i := range out {
		table, index, _ := strings.Cut(out[i].Name, ".")
		var pages int64
		if err := e.admin.QueryRowContext(ctx, `SELECT stat_value FROM mysql.innodb_index_stats
			WHERE database_name = ? AND table_name = ? AND index_name = ? AND stat_name = 'size'`, e.dbName, table, index).Scan(&pages); err != nil {
			return nil, fail(ctx, "size of "+out[i].Name, err)
		}
		out[i].Bytes = pages * e.pageSize
	}
	return out, nil
}

func (e *mysqlEngine) KeyArg(r engine.Row, v *engine.Value) any {
	if r.Col == engine.ColIdentity {
		return v.I64
	}
	return mysqlKey(r.Col, r.Unsigned, v)
}

// mysqlTime is the layout of a DATETIME(6) value; the columns hold UTC.
const mysqlTime = "2006-01-02 15:04:05.000000"

func (e *mysqlEngine) TimeArg(t time.Time) any { return t.UTC().Format(mysqlTime) }

func (e *mysqlEngine) SQL(q string) string { return engine.Placeholder.ReplaceAllString(q, "?") }

func (e *mysqlEngine) Count(ctx context.Context, q string, args ...any) (int64, error) {
	return engine.CountRows(ctx, e.admin, mysqlConnLost, "query", q, args...)
}

func (e *mysqlEngine) KeyRows(ctx context.Context, r engine.Row, q string, args ...any) ([]engine.KeyRow, error) {
	rows, err := e.admin.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fail(ctx, "query", err)
	}
	defer rows.Close()
	var out []engine.KeyRow
	for rows.Next() {
		var raw sql.RawBytes
		var k engine.KeyRow
		if err := rows.Scan(&raw, &k.Created); err != nil {
			return nil, fail(ctx, "read rows", err)
		}
		switch r.Col {
		case engine.ColIdentity, engine.ColBigint:
			v, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("dbbench: read key %q: %w", raw, err)
			}
			k.Key = v
		case engine.ColUUID:
			var v [16]byte
			if len(raw) != 16 {
				return nil, fmt.Errorf("dbbench: read key: %d bytes, want 16", len(raw))
			}
			copy(v[:], raw)
			k.Key = v
		default:
			k.Key = string(raw)
		}
		out = append(out, k)
	}
	return out, fail(ctx, "query", rows.Err())
}

func (e *mysqlEngine) EpochMicros(col string) string {
	return "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + col + ")"
}

func (e *mysqlEngine) Plan(ctx context.Context, q string, args ...any) (string, error) {
	rows, err := e.admin.QueryContext(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		return "", fail(ctx, "explain", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", fail(ctx, "explain", err)
	}
	var keys []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", fail(ctx, "explain", err)
		}
		for i, c := range cols {
			if strings.EqualFold(c, "key") {
				if vals[i].Valid && vals[i].String != "" {
					keys = append(keys, vals[i].String)
				} else {
					keys = append(keys, "sequential scan")
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return "", fail(ctx, "explain", err)
	}
	if len(keys) == 0 {
		return "unknown", nil
	}
	return strings.Join(keys, ", "), nil
}

// Kept marks the database to be left by close, and names it and the mysql command that
// opens it.
func (e *mysqlEngine) Kept() (string, string) {
	e.keep = true
	if e.keptDir != "" {
		return "database " + e.dbName + " in the stopped mariadb-local server kept at " + e.keptDir, e.reopen
	}
	return "database " + e.dbName, e.reopen
}

// mysqlReopen is the mysql client command that opens database db on the server of c, asking
// for the password (-p) rather than printing it.
func mysqlReopen(addr, network, user string, password bool, db string) string {
	var b strings.Builder
	b.WriteString("mysql")
	if network == "unix" {
		b.WriteString(" --socket=" + engine.ShellQuote(addr))
	} else if host, port, ok := strings.Cut(addr, ":"); ok {
		b.WriteString(" -h " + engine.ShellQuote(host) + " -P " + port)
	} else if addr != "" {
		b.WriteString(" -h " + engine.ShellQuote(addr))
	}
	if user != "" {
		b.WriteString(" -u " + engine.ShellQuote(user))
	}
	if password {
		b.WriteString(" -p")
	}
	return b.String() + " " + db
}
