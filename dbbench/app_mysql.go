package dbbench

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

var _ engine = (*mysqlEngine)(nil)

// reservesKeys: LOAD DATA cannot return the keys the server makes.
func (e *mysqlEngine) reservesKeys() bool { return false }

func (e *mysqlEngine) keyType(r row) string { return e.columnTypeOf(r) }

func (e *mysqlEngine) qualify(name string) string { return "`" + e.dbName + "`.`" + name + "`" }

// createTables creates ts as InnoDB tables with persistent statistics, recalculated only by
// settle's ANALYZE TABLE, so that innodb_index_stats holds the figures of the finished load.
func (e *mysqlEngine) createTables(ctx context.Context, ts []tableDef) error {
	const opts = " ENGINE=InnoDB ROW_FORMAT=DYNAMIC STATS_PERSISTENT=1 STATS_AUTO_RECALC=0"
	for _, t := range ts {
		key := e.columnTypeOf(t.key) + " NOT NULL"
		id := key
		if t.key.col == colIdentity {
			id, key = "BIGINT NOT NULL AUTO_INCREMENT", "BIGINT NOT NULL"
		}
		cols := []string{"id " + id}
		var fks []string
		for _, c := range t.columns {
			typ := map[colKind]string{kindKey: key, kindTime: "DATETIME(6) NOT NULL", kindInt: "BIGINT NOT NULL"}[c.kind]
			cols = append(cols, c.name+" "+typ)
			if c.references != "" {
				fks = append(fks, fmt.Sprintf("CONSTRAINT `%s` FOREIGN KEY (%s) REFERENCES %s (id)", c.fk, c.name, e.qualify(c.references)))
			}
		}
		cols = append(cols, "PRIMARY KEY (id)")
		for _, ix := range t.indexes {
			cols = append(cols, fmt.Sprintf("KEY `%s` (%s)", ix.name, ix.column))
		}
		ddl := fmt.Sprintf("CREATE TABLE %s (%s)%s", e.qualify(t.name), strings.Join(append(cols, fks...), ", "), opts)
		if _, err := e.admin.ExecContext(ctx, ddl); err != nil {
			return mysqlFail(ctx, "create table "+t.name, err)
		}
	}
	return nil
}

func (e *mysqlEngine) dropTables(ctx context.Context, ts []tableDef) error {
	var names []string
	for _, t := range reversed(ts) {
		names = append(names, e.qualify(t.name))
	}
	if _, err := e.admin.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(names, ", ")); err != nil {
		return mysqlFail(ctx, "drop tables "+strings.Join(names, ", "), err)
	}
	return nil
}

func (e *mysqlEngine) appConns(ctx context.Context) ([]appWriter, error) {
	conns, err := e.loaderConns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]appWriter, len(conns))
	for i, c := range conns {
		out[i] = &mysqlWriter{sqlWriter{conn: c, qualify: e.qualify, begin: "BEGIN", timeArg: e.timeArg, keyArg: e.keyArg}}
	}
	return out, nil
}

func (e *mysqlEngine) beforeLoad(ctx context.Context) error {
	if e.canFlush {
		return e.flushDirty(ctx)
	}
	return nil
}

func (e *mysqlEngine) logMark(ctx context.Context) (func(context.Context) (int64, error), error) {
	before, err := e.lsn(ctx)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (int64, error) {
		after, err := e.lsn(ctx)
		return after - before, err
	}, nil
}

func (e *mysqlEngine) settle(ctx context.Context, ts []tableDef) error {
	if e.mariadb {
		if _, err := e.admin.ExecContext(ctx, "SET SESSION use_stat_tables = 'NEVER'"); err != nil {
			return mysqlFail(ctx, "set use_stat_tables", err)
		}
	}
	var names []string
	for _, t := range ts {
		names = append(names, e.qualify(t.name))
	}
	rows, err := e.admin.QueryContext(ctx, "ANALYZE TABLE "+strings.Join(names, ", "))
	if err != nil {
		return mysqlFail(ctx, "analyze table", err)
	}
	for rows.Next() {
	}
	rows.Close()
	return mysqlFail(ctx, "analyze table", rows.Err())
}

// structures reads each index's allocated pages from mysql.innodb_index_stats (see
// mysqlEngine.sizes), or, without access to it, the clustered and secondary sizes of each
// table from information_schema.TABLES.
func (e *mysqlEngine) structures(ctx context.Context, ts []tableDef) ([]Structure, error) {
	if !e.indexStats {
		var out []Structure
		for _, t := range ts {
			var data, index int64
			if err := e.admin.QueryRowContext(ctx, "SELECT DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
				e.dbName, t.name).Scan(&data, &index); err != nil {
				return nil, mysqlFail(ctx, "read table sizes", err)
			}
			out = append(out, Structure{Name: t.name + ".PRIMARY", Role: t.who + " clustered index (the table)", Bytes: data},
				Structure{Name: t.name + ".secondary", Role: t.who + " secondary indexes", Bytes: index})
		}
		return out, nil
	}
	var out []Structure
	for _, t := range ts {
		out = append(out, Structure{Name: t.name + ".PRIMARY", Role: t.who + " clustered index (the table)"})
		for _, ix := range t.indexes {
			out = append(out, Structure{Name: t.name + "." + ix.name, Role: ix.role})
		}
	}
	for i := range out {
		table, index, _ := strings.Cut(out[i].Name, ".")
		var pages int64
		if err := e.admin.QueryRowContext(ctx, `SELECT stat_value FROM mysql.innodb_index_stats
			WHERE database_name = ? AND table_name = ? AND index_name = ? AND stat_name = 'size'`, e.dbName, table, index).Scan(&pages); err != nil {
			return nil, mysqlFail(ctx, "size of "+out[i].Name, err)
		}
		out[i].Bytes = pages * e.pageSize
	}
	return out, nil
}

func (e *mysqlEngine) keyArg(r row, v *value) any {
	if r.col == colIdentity {
		return v.i64
	}
	return mysqlKey(r.col, r.unsigned, v)
}

// mysqlTime is the layout of a DATETIME(6) value; the columns hold UTC.
const mysqlTime = "2006-01-02 15:04:05.000000"

func (e *mysqlEngine) timeArg(t time.Time) any { return t.UTC().Format(mysqlTime) }

func (e *mysqlEngine) sql(q string) string { return placeholder.ReplaceAllString(q, "?") }

func (e *mysqlEngine) count(ctx context.Context, q string, args ...any) (int64, error) {
	return countRows(ctx, e.admin, mysqlConnLost, "query", q, args...)
}

func (e *mysqlEngine) keyRows(ctx context.Context, r row, q string, args ...any) ([]keyRow, error) {
	rows, err := e.admin.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mysqlFail(ctx, "query", err)
	}
	defer rows.Close()
	var out []keyRow
	for rows.Next() {
		var raw sql.RawBytes
		var k keyRow
		if err := rows.Scan(&raw, &k.created); err != nil {
			return nil, mysqlFail(ctx, "read rows", err)
		}
		switch r.col {
		case colIdentity, colBigint:
			v, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("dbbench: read key %q: %w", raw, err)
			}
			k.key = v
		case colUUID:
			var v [16]byte
			if len(raw) != 16 {
				return nil, fmt.Errorf("dbbench: read key: %d bytes, want 16", len(raw))
			}
			copy(v[:], raw)
			k.key = v
		default:
			k.key = string(raw)
		}
		out = append(out, k)
	}
	return out, mysqlFail(ctx, "query", rows.Err())
}

func (e *mysqlEngine) epochMicros(col string) string {
	return "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + col + ")"
}

func (e *mysqlEngine) plan(ctx context.Context, q string, args ...any) (string, error) {
	rows, err := e.admin.QueryContext(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		return "", mysqlFail(ctx, "explain", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", mysqlFail(ctx, "explain", err)
	}
	var keys []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", mysqlFail(ctx, "explain", err)
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
		return "", mysqlFail(ctx, "explain", err)
	}
	if len(keys) == 0 {
		return "unknown", nil
	}
	return strings.Join(keys, ", "), nil
}

// kept marks the database to be left by close, and names it and the mysql command that
// opens it.
func (e *mysqlEngine) kept() (string, string) {
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
		b.WriteString(" --socket=" + shellQuote(addr))
	} else if host, port, ok := strings.Cut(addr, ":"); ok {
		b.WriteString(" -h " + shellQuote(host) + " -P " + port)
	} else if addr != "" {
		b.WriteString(" -h " + shellQuote(addr))
	}
	if user != "" {
		b.WriteString(" -u " + shellQuote(user))
	}
	if password {
		b.WriteString(" -p")
	}
	return b.String() + " " + db
}

// loadCols is the LOAD DATA column list of a table whose key columns are keys: BINARY(16)
// keys arrive as hex and are UNHEXed.
func loadCols(c column, cols ...string) string {
	if c != colUUID {
		return "(" + strings.Join(cols, ", ") + ")"
	}
	var list, set []string
	for _, col := range cols {
		if col == "id" || col == "parent_id" {
			list = append(list, "@"+col)
			set = append(set, col+" = UNHEX(@"+col+")")
		} else {
			list = append(list, col)
		}
	}
	return "(" + strings.Join(list, ", ") + ") SET " + strings.Join(set, ", ")
}

func (w *mysqlWriter) bulk(ctx context.Context, s appSchema, ops []appOp) error {
	c := s.r.col
	i := 0
	parents := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
		if i == len(ops) {
			return dst, false, nil
		}
		op := &ops[i]
		i++
		dst = appendKeyText(dst, c, s.r.unsigned, &op.parent)
		dst = append(dst, '\t')
		dst = op.created.UTC().AppendFormat(dst, mysqlTime)
		dst = append(dst, '\t')
		dst = strconv.AppendInt(dst, op.customer, 10)
		dst = append(dst, '\t')
		dst = strconv.AppendInt(dst, op.payload, 10)
		return append(dst, '\n'), true, nil
	}}
	if err := loadData(ctx, w.conn, w.qualify(s.parent()), loadCols(c, "id", "created_at", "customer", "payload"), parents); err != nil {
		return err
	}
	if s.children == 0 {
		return nil
	}
	i = 0
	j := 0
	children := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
		if j == s.children {
			i, j = i+1, 0
		}
		if i == len(ops) {
			return dst, false, nil
		}
		op := &ops[i]
		dst = appendKeyText(dst, c, s.r.unsigned, &op.children[j])
		dst = append(dst, '\t')
		dst = appendKeyText(dst, c, s.r.unsigned, &op.parent)
		dst = append(dst, '\t')
		dst = strconv.AppendInt(dst, op.payload*int64(s.children+1)+int64(j), 10)
		j++
		return append(dst, '\n'), true, nil
	}}
	return loadData(ctx, w.conn, w.qualify(s.child()), loadCols(c, "id", "parent_id", "payload"), children)
}

// bare is the baseline loop: plain database/sql calls with BIGINT keys from the operation
// number (plus bareKeyBase, so that LOAD DATA parses 19 digits a key, as for Snowflake IDs).
func (w *mysqlWriter) bare(ctx context.Context, s appSchema, mode string, first, count int64) error {
	k := int64(s.children)
	if mode == ModeCopy {
		n := int64(0)
		parents := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
			if n == count {
				return dst, false, nil
			}
			id := first + n + 1
			n++
			dst = strconv.AppendInt(dst, bareKeyBase+id, 10)
			dst = append(dst, '\t')
			dst = time.Now().UTC().AppendFormat(dst, mysqlTime)
			dst = append(dst, '\t')
			dst = strconv.AppendInt(dst, id%10000, 10)
			dst = append(dst, '\t')
			dst = strconv.AppendInt(dst, id, 10)
			return append(dst, '\n'), true, nil
		}}
		if err := loadData(ctx, w.conn, w.qualify(s.parent()), "(id, created_at, customer, payload)", parents); err != nil {
			return err
		}
		if k == 0 {
			return nil
		}
		n = 0
		children := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
			if n == count*k {
				return dst, false, nil
			}
			id := first*k + n + 1
			parent := first + n/k + 1
			n++
			dst = strconv.AppendInt(dst, bareKeyBase+id, 10)
			dst = append(dst, '\t')
			dst = strconv.AppendInt(dst, bareKeyBase+parent, 10)
			dst = append(dst, '\t')
			dst = strconv.AppendInt(dst, id, 10)
			return append(dst, '\n'), true, nil
		}}
		return loadData(ctx, w.conn, w.qualify(s.child()), "(id, parent_id, payload)", children)
	}
	return w.bareLoop(ctx, s, first, count)
}

// mysqlWriter is the database/sql writer with LOAD DATA LOCAL INFILE as its bulk path.
type mysqlWriter struct{ sqlWriter }
