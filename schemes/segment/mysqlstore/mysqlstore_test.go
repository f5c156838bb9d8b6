package mysqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
	"github.com/idkit/idkit/schemes/segment/pgstore"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	removeInstalled()
	os.Exit(code)
}

// open opens a store on dsn as a program does: the private servers run with InnoDB's
// durable defaults, which the store accepts.
func open(t testing.TB, dsn string) *mysqlstore.Store {
	t.Helper()
	return openSettings(t, mysqlstore.Settings{DSN: dsn})
}

func openSettings(t testing.TB, set mysqlstore.Settings) *mysqlstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := mysqlstore.Open(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func sqlExec(t testing.TB, dsn, q string, args ...any) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

func maxID(t testing.TB, dsn, key string) int64 {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow(`SELECT max_id FROM idkit_segments WHERE biz_tag = ?`, key).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTakeConcurrent takes blocks from two connection pools at once.
func TestTakeConcurrent(t *testing.T) {
	dsn, _ := database(t)
	segtest.TakeConcurrent(t, open(t, dsn), open(t, dsn))
}

func TestTakeErrors(t *testing.T) {
	dsn, _ := database(t)
	segtest.TakeErrors(t, open(t, dsn), func(v int64) {
		sqlExec(t, dsn, `UPDATE idkit_segments SET max_id = ? WHERE biz_tag = 'k'`, v)
	})
}

var urlCases = []segtest.URLCase{
	{In: "mysql://u:p@h/db", Want: "u:p@tcp(h:3306)/db | idkit_segments | unsafe false"},
	{In: "MariaDB://u@h:3307/db?table=seg&timeout=2s", Want: "u@tcp(h:3307)/db?timeout=2s | seg | unsafe false"},
	{In: "mysql://root@/db?socket=/tmp/x.sock&unsafe=true", Want: "root@unix(/tmp/x.sock)/db | idkit_segments | unsafe true"},
	{In: "mysql://u@h/db?unsafe=yes", Err: "unsafe=yes"},
	{In: "mysql://u@h/db?table=a;b", Err: "query"},
	{In: "mysql://u@h/db?table=a-b", Err: "table"},
	{In: "mysql://u@/db", Err: "no host"},
	{In: "mysql://u@h/db?timeout=soon", Err: "parameters"},
	{In: "mysql://u:hunter2@h/db?tabel=a", Err: `unknown parameter "tabel"`},
	{In: "mysql://u:hunter2@h/db?table=a&table=b", Err: `"table" given twice`},
	{In: "mysql://u:hunter2@h/db?time_zone=UTC", Err: `unknown parameter "time_zone"`},
	{In: "mysql://u:hunter2@h:x/db", Err: "mysqlstore"},
	{In: "mysql://u@h/db?durability=async", Want: "u@tcp(h:3306)/db | idkit_segments | unsafe false | durability=async"},
	{In: "mysql://u@h/db?durability=sync&unsafe=true", Want: "u@tcp(h:3306)/db | idkit_segments | unsafe true"},
	{In: "mysql://u@h/db?durability=semi", Err: `durability="semi": want sync`},
	{In: "mysql://u@h/db?handover=30s", Want: "u@tcp(h:3306)/db | idkit_segments | unsafe false | handover 30s"},
	{In: "mysql://u@h/db?handover=1s&table=t", Want: "u@tcp(h:3306)/db | t | unsafe false | handover 1s"},
	{In: "mysql://u@h/db?handover=0s", Err: "handover=0s: want between 1s and 1h0m0s"},
	{In: "mysql://u@h/db?handover=999ms", Err: "handover=999ms: want between"},
	{In: "mysql://u@h/db?handover=2h", Err: "handover=2h0m0s: want between"},
	{In: "mysql://u@h/db?handover=-5s", Err: "handover=-5s"},
	{In: "mysql://u@h/db?handover=soon", Err: `handover="soon": want a duration`},
}

func parseURL(in string) (string, error) {
	s, err := mysqlstore.ParseURL(in)
	out := fmt.Sprintf("%s | %s | unsafe %v", s.DSN, s.Table, s.Unsafe)
	if s.AcceptAsync {
		out += " | durability=async"
	}
	if s.Handover != 0 {
		out += " | handover " + s.Handover.String()
	}
	return out, err
}

func TestParseURL(t *testing.T) {
	segtest.ParseURLs(t, parseURL, urlCases)
	segtest.ParseURLs(t, parseURL, segtest.StrictCases("mysql://u:hunter2@h/db"))
}

func FuzzParseURL(f *testing.F) {
	segtest.FuzzURLs(f, parseURL, append(urlCases, segtest.StrictCases("mysql://u:hunter2@h/db")...))
}

func TestSpec(t *testing.T) {
	dsn, _ := database(t)
	segtest.Spec(t, storeURL(t, dsn))
}

// TestFaultRestart restarts MariaDB under load from 3 processes × 4 goroutines.
func TestFaultRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a MariaDB server")
	}
	dsn, srv := database(t)
	if srv == nil {
		t.Skip("restarts the server: needs a private one (unset " + envDSN + ")")
	}
	segtest.RestartUnderLoad(t, func() segment.Store { return open(t, dsn) },
		func() { srv.stop(t) }, func() { srv.start(t) }, func() int64 { return maxID(t, dsn, "k") })
}

// TestFaultMixedStoreDown runs two processes on a MariaDB store (odd IDs) and a PostgreSQL
// store (even IDs) and stops MariaDB: IDs keep coming from PostgreSQL, none repeats.
func TestFaultMixedStoreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a MariaDB server")
	}
	mdsn, srv := database(t)
	if srv == nil {
		t.Skip("stops the server: needs a private one (unset " + envDSN + ")")
	}
	pdsn := pgtest.Schema(t)
	segtest.StoreDown(t, func() []segment.Store {
		pst, err := pgstore.Open(context.Background(), pgstore.Settings{DSN: pdsn, Unsafe: true}) // the shared test cluster runs with fsync off
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pst.Close() })
		return []segment.Store{open(t, mdsn), pst}
	}, func() { srv.stop(t) }, func() int64 { return maxIDPG(t, pdsn) })
	srv.start(t)
}

// maxIDPG reads key k's max_id in a PostgreSQL store.
func maxIDPG(t testing.TB, dsn string) int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int64
	if err := conn.QueryRow(context.Background(), `SELECT max_id FROM idkit_segments WHERE biz_tag = 'k'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFaultBackwards lowers max_id by hand under a running process.
func TestFaultBackwards(t *testing.T) {
	dsn, _ := database(t)
	segtest.Backwards(t, open(t, dsn), func() int64 { return maxID(t, dsn, "k") }, func() {
		sqlExec(t, dsn, `UPDATE idkit_segments SET max_id = 120 WHERE biz_tag = 'k'`)
	})
}
