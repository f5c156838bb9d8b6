package dbbench_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/mysqltest"
)

// mysqlURL returns the test server as a mysql:// URL for Config.DB and the
// driver DSN for the test's own connections.
func mysqlURL(t *testing.T) (url, dsn string) {
	t.Helper()
	dsn = mysqltest.DSN(t)
	url, err := mysqltest.URL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return url, dsn
}

// mysqlState is what a run must leave as it found it: idbench databases and
// the INNODB_METRICS counters' on/off states.
func mysqlState(t *testing.T, dsn string) (databases int, monitors string) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'idbench\_%'`).Scan(&databases); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SELECT GROUP_CONCAT(CONCAT(NAME, '=', ENABLED) ORDER BY NAME) FROM information_schema.INNODB_METRICS
		WHERE NAME LIKE 'index_page%'`).Scan(&monitors); err != nil {
		t.Fatal(err)
	}
	return databases, monitors
}

func TestMySQLSchemes(t *testing.T) {
	url, dsn := mysqlURL(t)
	dbsBefore, monBefore := mysqlState(t, dsn)
	schemes := append(dbbench.InnoDBSchemes(), "snowflake:layout=discord")
	cfg := small(url, schemes...)
	// Enough rows that every index outgrows the few pages for which
	// innodb_index_stats miscounts leaf pages.
	cfg.Rows = 20000
	cfg.Baseline = true
	cfg.SecondaryIndex = true
	cfg.Command = "idbench db --db " + strings.Replace(url, "root@", "root:hunter2@", 1)
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"auto-increment": "BIGINT AUTO_INCREMENT", "snowflake": "BIGINT", "sonyflake": "BIGINT",
		"ulid": "BINARY(16)", "uuidv7": "BINARY(16)", "uuidv4": "BINARY(16)",
		"uuidv7-native": "UUID", "uuidv4-native": "UUID",
		"ulid-text": "CHAR(26) COLLATE utf8mb4_bin", "ulid-text-default": "CHAR(26) COLLATE " + rep.Settings.Collation,
		"uuidv7-text": "CHAR(36) COLLATE utf8mb4_bin", "uuidv7-text-default": "CHAR(36) COLLATE " + rep.Settings.Collation,
		"typeid": "BINARY(16)", "typeid-text": "VARBINARY(31)",
		"snowflake:layout=discord": "BIGINT UNSIGNED",
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(want))
	}
	for _, r := range rep.Results {
		if r.ColumnType != want[r.Scheme] {
			t.Errorf("%s: column type %q, want %q", r.Scheme, r.ColumnType, want[r.Scheme])
		}
		checkInnoDBResult(t, r, 20000)
	}
	if rep.Baseline == nil || rep.Baseline.RowsPerSec <= 0 || rep.Baseline.Scheme != "snowflake" || rep.Baseline.Ratio <= 0 {
		t.Errorf("baseline = %+v, want one compared with snowflake", rep.Baseline)
	}
	s := rep.Settings
	if s.ServerVersion == "" || s.InnoDBBufferPoolSize == "" || s.InnoDBPageSize != 16384 || s.Statistics != "mysql.innodb_index_stats" || !s.SecondaryIndex {
		t.Errorf("settings incomplete: %+v", s)
	}
	if strings.Contains(s.Command, "hunter2") || !strings.Contains(s.Command, "root:xxxxx@") {
		t.Errorf("command in the report does not hide the password: %q", s.Command)
	}
	dbsAfter, monAfter := mysqlState(t, dsn)
	if dbsAfter != dbsBefore || monAfter != monBefore {
		t.Errorf("run left the server changed: idbench databases %d→%d, counters %s→%s", dbsBefore, dbsAfter, monBefore, monAfter)
	}
	var out bytes.Buffer
	for _, w := range []func(*bytes.Buffer, *dbbench.Report) error{
		func(b *bytes.Buffer, r *dbbench.Report) error { return dbbench.WriteTable(b, r) },
		func(b *bytes.Buffer, r *dbbench.Report) error { return dbbench.WriteMarkdown(b, r) },
		func(b *bytes.Buffer, r *dbbench.Report) error { return dbbench.WriteSummary(b, r) },
	} {
		out.Reset()
		if err := w(&out, rep); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []string{"uuidv4-native", "LOAD DATA LOCAL INFILE", "secondary"} {
			if !strings.Contains(out.String(), sub) {
				t.Errorf("output lacks %q:\n%s", sub, out.String())
			}
		}
		if strings.Contains(out.String(), "pgx") || strings.Contains(out.String(), "hunter2") {
			t.Errorf("InnoDB output mentions pgx or the password:\n%s", out.String())
		}
	}
}

// checkInnoDBResult checks the figures of one InnoDB row for consistency.
func checkInnoDBResult(t *testing.T, r dbbench.Result, rows int64) {
	t.Helper()
	const page = 16384
	if r.Rows != rows || r.RowsPerSec <= 0 || len(r.Runs) == 0 {
		t.Errorf("%s: rows %d, rows/s %v, %d runs", r.Scheme, r.Rows, r.RowsPerSec, len(r.Runs))
	}
	if r.IndexBytes <= 0 || r.IndexBytes%page != 0 || r.SecondaryIndexBytes <= 0 || r.SecondaryIndexBytes%page != 0 {
		t.Errorf("%s: clustered %d, secondary %d bytes; want positive multiples of %d", r.Scheme, r.IndexBytes, r.SecondaryIndexBytes, page)
	}
	if r.TableBytes != r.IndexBytes+r.SecondaryIndexBytes {
		t.Errorf("%s: table bytes %d, want clustered + secondary = %d", r.Scheme, r.TableBytes, r.IndexBytes+r.SecondaryIndexBytes)
	}
	if r.LeafPages == nil || *r.LeafPages < 1 || *r.LeafPages*page > r.IndexBytes {
		t.Errorf("%s: leaf pages %v do not fit in %d bytes", r.Scheme, r.LeafPages, r.IndexBytes)
	}
	if r.SecondaryLeafPages == nil || *r.SecondaryLeafPages < 1 {
		t.Errorf("%s: secondary leaf pages %v", r.Scheme, r.SecondaryLeafPages)
	}
	if r.AvgLeafDensity == nil || *r.AvgLeafDensity <= 20 || *r.AvgLeafDensity > 100 {
		t.Errorf("%s: leaf fill %v over %v pages, want a percentage", r.Scheme, deref(r.AvgLeafDensity), deref(r.LeafPages))
	}
	if r.LeafFragmentation != nil {
		t.Errorf("%s: leaf fragmentation %v reported; InnoDB has none to report", r.Scheme, *r.LeafFragmentation)
	}
	if r.PageSplits == nil || r.PageMerges == nil {
		t.Errorf("%s: page splits %v, merges %v; want both counted", r.Scheme, r.PageSplits, r.PageMerges)
	} else if *r.PageSplits < *r.LeafPages-1 {
		// Every leaf page but the first comes from a split.
		t.Errorf("%s: %d page splits for %d leaf pages", r.Scheme, *r.PageSplits, *r.LeafPages)
	}
	if r.WALBytes <= 0 || r.WALBytesPerRow != float64(r.WALBytes)/float64(r.Rows) {
		t.Errorf("%s: redo bytes %d, per row %v", r.Scheme, r.WALBytes, r.WALBytesPerRow)
	}
	checkStructures(t, r, map[string]int64{"clustered index (the table)": r.IndexBytes, "secondary index": r.SecondaryIndexBytes})
	if r.BufferPoolReadsPer1k == nil || *r.BufferPoolReadsPer1k < 0 {
		t.Errorf("%s: buffer-pool reads per 1k rows %v", r.Scheme, r.BufferPoolReadsPer1k)
	}
	if len(r.Curve) == 0 || r.Curve[len(r.Curve)-1].Rows != rows {
		t.Errorf("%s: curve %v does not end at %d rows", r.Scheme, r.Curve, rows)
	}
	if r.PointLookup.Count == 0 || r.RangeScan.Count == 0 {
		t.Errorf("%s: no lookups measured", r.Scheme)
	}
}

// TestMySQLOrderedVersusRandom: random keys leave emptier leaves than
// ordered ones and need more of them, as InnoDB's page splits predict.
func TestMySQLOrderedVersusRandom(t *testing.T) {
	url, _ := mysqlURL(t)
	cfg := small(url, "uuidv7", "uuidv4")
	cfg.Rows, cfg.Lookups = 20000, -1
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	v7, v4 := rep.Results[0], rep.Results[1]
	if *v4.AvgLeafDensity >= *v7.AvgLeafDensity-10 || *v4.LeafPages <= *v7.LeafPages {
		t.Errorf("uuidv4 leaf fill %.1f%% over %d pages, uuidv7 %.1f%% over %d pages; want random keys clearly sparser",
			*v4.AvgLeafDensity, *v4.LeafPages, *v7.AvgLeafDensity, *v7.LeafPages)
	}
}

func TestMySQLModes(t *testing.T) {
	url, _ := mysqlURL(t)
	for _, mode := range []string{dbbench.ModeBatch, dbbench.ModeSingle} {
		t.Run(mode, func(t *testing.T) {
			cfg := small(url, dbbench.RowAutoIncrement, "snowflake", "uuidv7", "ulid-text", "uuidv4")
			cfg.Mode, cfg.Clients, cfg.Rows, cfg.Baseline = mode, 2, 600, true
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if r.Rows != 600 {
					t.Errorf("%s: %d rows, want 600", r.Scheme, r.Rows)
				}
			}
			checkArrivals(t, rep, 600, false)
		})
	}
	cfg := small(url, "snowflake")
	cfg.Mode, cfg.Batch, cfg.Rows = dbbench.ModeBatch, 40000, 40000
	if _, err := dbbench.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "placeholders") {
		t.Errorf("batch of 40000 two-column rows: %v, want the placeholder limit named", err)
	}
}

func TestMySQLConnLost(t *testing.T) {
	url, dsn := mysqlURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	cfg := small(url, "uuidv4")
	cfg.Mode, cfg.Rows = dbbench.ModeSingle, 10_000_000
	errc := make(chan error, 1)
	go func() {
		_, err := dbbench.Run(ctx, cfg)
		errc <- err
	}()
	for killed := false; !killed; {
		select {
		case err := <-errc:
			t.Fatalf("Run ended before its session was killed: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		var id sql.NullInt64
		err := admin.QueryRowContext(ctx, `SELECT MIN(ID) FROM information_schema.PROCESSLIST
			WHERE DB IS NULL AND INFO LIKE 'INSERT INTO idbench\_%' AND ID <> CONNECTION_ID()`).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		if id.Valid {
			if _, err := admin.ExecContext(ctx, "KILL CONNECTION ?", id.Int64); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = <-errc
	if !errors.Is(err, dbbench.ErrConnLost) {
		t.Fatalf("Run after a killed session: %v, want ErrConnLost", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans several lines: %q", err)
	}
	if dbs, _ := mysqlState(t, dsn); dbs != 0 {
		t.Errorf("%d idbench databases left after a lost connection", dbs)
	}
}

// TestMySQLCancel cancels Run as Ctrl-C would.
func TestMySQLCancel(t *testing.T) {
	url, dsn := mysqlURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := small(url, "uuidv4")
	cfg.Mode, cfg.Rows = dbbench.ModeSingle, 10_000_000
	time.AfterFunc(700*time.Millisecond, cancel)
	_, err := dbbench.Run(ctx, cfg)
	if !errors.Is(err, dbbench.ErrInterrupted) {
		t.Fatalf("Run cancelled: %v, want ErrInterrupted", err)
	}
	if dbs, _ := mysqlState(t, dsn); dbs != 0 {
		t.Errorf("%d idbench databases left after cancel", dbs)
	}
}

func TestMySQLRowErrors(t *testing.T) {
	url, _ := mysqlURL(t)
	tests := []struct {
		db, scheme, want string
	}{
		{url, "ulid-native", "not UUIDs"},
		{url, "ulid-text-icu", "ulid-text-default"},
		{url, "snowflake-text", "64-bit"},
		{dbbench.EngineSQLite, "uuidv7-native", "MariaDB/MySQL"},
		{dbbench.EngineSQLite, "ulid-text-default", "MariaDB/MySQL"},
	}

	for _, tt := range tests {
		_, err := dbbench.Run(context.Background(), small(tt.db, tt.scheme))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s on %s: %v, want an error containing %q", tt.scheme, dbbench.RedactDSN(tt.db), err, tt.want)
		}
	}
	cfg := small(dbbench.EngineSQLite, "snowflake")
	cfg.SecondaryIndex = true
	if _, err := dbbench.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "secondary index") {
		t.Errorf("secondary index on SQLite: %v, want it refused", err)
	}
}

// TestCommandRedacted: a password given in --db never reaches the report.
func TestCommandRedacted(t *testing.T) {
	cfg := small(dbbench.EngineSQLite, "snowflake")
	cfg.Command = "idbench db --db 'postgres://app:s3cret@db/x' --schemes snowflake"
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep.Settings.Command, "s3cret") {
		t.Errorf("report command %q holds the password", rep.Settings.Command)
	}
}

func TestRedactDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mysql://root:pw@host:3306/db", "mysql://root:xxxxx@host:3306/db"},
		{"postgres://app:s3cr@t@db/x", "postgres://app:xxxxx@db/x"},
		{"idbench db --db mysql://u:p@h/ --rows 5", "idbench db --db mysql://u:xxxxx@h/ --rows 5"},
		{"host=/tmp password=secret dbname=x", "host=/tmp password=xxxxx dbname=x"},
		{"host=h password='a b' user=u", "host=h password=xxxxx user=u"},
		{"mysql://root@localhost/?socket=/tmp/s", "mysql://root@localhost/?socket=/tmp/s"},
		{"sqlite", "sqlite"},
	}
	for _, tt := range tests {
		if got := dbbench.RedactDSN(tt.in); got != tt.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRunAllLocal runs every local engine into one report directory.
func TestRunAllLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private server per engine")
	}
	cfg := small(dbbench.EngineAllLocal, "snowflake", "uuidv4")
	cfg.Baseline = true
	reps, err := dbbench.RunAll(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	engines := dbbench.LocalEngines()
	if len(reps) != len(engines) {
		t.Fatalf("%d reports for engines %v", len(reps), engines)
	}
	dir := t.TempDir()
	if err := dbbench.WriteAllReport(dir, reps); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, dbbench.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for i, rep := range reps {
		if rep.Settings.Engine != engines[i] || len(rep.Results) != 2 {
			t.Errorf("report %d: engine %s with %d results, want %s with 2", i, rep.Settings.Engine, len(rep.Results), engines[i])
		}
		if _, err := os.Stat(filepath.Join(dir, engines[i], dbbench.ReportJSON)); err != nil {
			t.Errorf("no report for %s: %v", engines[i], err)
		}
		if !strings.Contains(string(index), "("+engines[i]+"/"+dbbench.ReportMarkdown+")") {
			t.Errorf("%s does not link the %s report", dbbench.ReportMarkdown, engines[i])
		}
	}
	if _, err := dbbench.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "RunAll") {
		t.Errorf("Run with all-local: %v, want it pointed at RunAll", err)
	}
}
