package innodb

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/internal/golden"
	"github.com/idkit/idkit/dbbench/mariadblocal"
	"github.com/idkit/idkit/dbbench/mysqltest"

	"github.com/go-sql-driver/mysql"
)

var update = flag.Bool("update", false, "rewrite testdata/table_ddl.golden from this run")

// TestTableDDL holds the table workload's DDL on MariaDB to testdata/table_ddl.golden: the
// CREATE statements a load (golden.Fill, as dbbench's tableLoad) and the baseline send for
// every column type, with and without the secondary index, as the server's general log recorded
// them, with the random database name replaced by idbench_S and each run of white space by one
// space. The table workload's reports compare loads of these exact tables, so a refactor of how
// the DDL is made must not change them (go test -run TestTableDDL -update rewrites the file,
// for a deliberate change).
func TestTableDDL(t *testing.T) {
	ctx := context.Background()
	// The test switches the server's general log on and empties mysql.general_log: never on a
	// server it did not start. With IDKIT_TEST_MYSQL set it starts one of its own anyway.
	dsn := ""
	if os.Getenv(mysqltest.EnvDSN) == "" {
		dsn = mysqltest.DSN(t) // a private server of this test binary's own
	} else {
		s, err := mariadblocal.Start(ctx, mariadblocal.Options{Settings: mysqltest.Settings()})
		if err != nil {
			t.Skipf("TestTableDDL needs a private MariaDB server (it switches the general log on), not the one in %s: %v", mysqltest.EnvDSN, err)
		}
		t.Cleanup(func() { s.Close() })
		dsn = s.DSN()
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sec := range []bool{false, true} {
		o := engine.Options{Rows: 20, Mode: engine.ModeBatch, Clients: 1, Nodes: 1, Profile: engine.ProfileCheckpoints,
			Points: 2, SecondaryIndex: sec}
		e, err := openMySQL(ctx, o, Server, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SET GLOBAL log_output = 'TABLE'", "SET GLOBAL general_log = ON"} {
			if _, err := e.admin.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		statements := func(what string) {
			t.Helper()
			rows, err := e.admin.QueryContext(ctx, "SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE 'CREATE TABLE%' AND argument LIKE ?",
				"%"+e.dbName+"%")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				got = append(got, what+"\n"+strings.Join(strings.Fields(strings.ReplaceAll(s, e.dbName, "idbench_S")), " "))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.admin.ExecContext(ctx, "TRUNCATE TABLE mysql.general_log"); err != nil {
				t.Fatal(err)
			}
		}
		suffix := " secondary=" + map[bool]string{false: "no", true: "yes"}[sec]
		statements("open" + suffix)
		labels := []string{engine.RowAutoIncrement, "snowflake", "snowflake:layout=discord,epoch=1950-01-01T00:00:00Z",
			"uuidv4", "uuidv7-text", "uuidv7" + engine.SuffixTextDefault, engine.RowTypeIDText}
		if e.uuidType {
			labels = append(labels, "uuidv4-native")
		}
		for i, label := range labels {
			r, err := engine.ResolveRow(ctx, label)
			if err == nil {
				r, err = Columns(r)
			}
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if err := golden.Fill(ctx, e, engine.LoadTable("t"+strconv.Itoa(i+1), r, sec), 20, false, nil); err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			statements(label + suffix)
		}
		if err := golden.Fill(ctx, e, engine.LoadTable("t"+strconv.Itoa(len(labels)+1), engine.Row{Col: engine.ColBigint}, sec), 20, true, nil); err != nil {
			t.Fatal(err)
		}
		statements("baseline" + suffix)
		if _, err := e.admin.ExecContext(ctx, "SET GLOBAL general_log = OFF"); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, filepath.Join("testdata", "table_ddl.golden"), "table-workload DDL", strings.Join(got, "\n\n")+"\n", *update)
}
