package sqlite

import (
	"context"
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/table_ddl.golden from this run")

// TestTableDDL holds the table workload's DDL on SQLite to testdata/table_ddl.golden: the
// CREATE statements of every object a load (golden.Fill) made for each column type, read from
// sqlite_master while the table is loaded (SQLite keeps each statement's text as it was sent),
// each run of white space replaced by one space. The table workload's reports compare loads of
// these exact tables, so a refactor of how the DDL is made must not change them (go test -run
// TestTableDDL -update rewrites the file, for a deliberate change).
func TestTableDDL(t *testing.T) {
	ctx := context.Background()
	o := engine.Options{Rows: 20, Mode: engine.ModeBatch, Clients: 1, Nodes: 1, Profile: engine.ProfileSteady, Points: 2}
	e, err := openSQLite(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var got []string
	for i, label := range []string{engine.RowBigserial, "snowflake", "snowflake:layout=discord,epoch=1950-01-01T00:00:00Z",
		"uuidv4", "uuidv7-text", engine.RowTypeIDText} {
		r, err := engine.ResolveRow(ctx, label)
		if err == nil {
			r, err = Columns(r)
		}
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		var (
			mu    sync.Mutex
			stmts []string
			qerr  error
		)
		progress := func(int64) {
			mu.Lock()
			defer mu.Unlock()
			rows, err := e.db.QueryContext(ctx, "SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY rowid")
			if err != nil {
				qerr = err
				return
			}
			defer rows.Close()
			stmts = stmts[:0]
			for rows.Next() {
				var typ, name, sql string
				if qerr = rows.Scan(&typ, &name, &sql); qerr != nil {
					return
				}
				stmts = append(stmts, typ+" "+name+": "+strings.Join(strings.Fields(sql), " "))
			}
			qerr = rows.Err()
		}
		if err := golden.Fill(ctx, e, engine.LoadTable("t"+strconv.Itoa(i+1), r, false), 20, false, progress); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if qerr != nil {
			t.Fatalf("%s: sqlite_master: %v", label, qerr)
		}
		if len(stmts) == 0 {
			t.Fatalf("%s: no schema read while loading", label)
		}
		got = append(got, label+"\n"+strings.Join(stmts, "\n"))
	}
	golden.Check(t, filepath.Join("testdata", "table_ddl.golden"), "table-workload DDL", strings.Join(got, "\n\n")+"\n", *update)
}
