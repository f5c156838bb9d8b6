package dbbench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/mysqltest"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	os.Exit(mysqltest.Around(func() int { return pgtest.Run(m) }))
}

// small is a configuration that runs in well under a second per scheme.
func small(db string, schemes ...string) dbbench.Config {
	return dbbench.Config{
		DB:         db,
		Schemes:    schemes,
		Rows:       3000,
		Repeat:     1,
		WarmupRows: -1,
		Lookups:    20,
		Points:     5,
	}
}

// objects counts what exists in the database outside the system catalogs,
// to check that a run leaves nothing behind but the documented exception:
// pgstattuple in dbbench.ExtSchema, which is not counted.
func objects(t *testing.T, dsn string) (schemas, relations, extensions int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'idbench\_%' AND nspname <> $1),
		(SELECT count(*) FROM pg_class),
		(SELECT count(*) FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
			WHERE NOT (x.extname = 'pgstattuple' AND n.nspname = $1))`, dbbench.ExtSchema).Scan(&schemas, &relations, &extensions)
	if err != nil {
		t.Fatal(err)
	}
	return
}

func checkResult(t *testing.T, rep *dbbench.Report, r dbbench.Result, rows int64, pageSize int64) {
	t.Helper()
	if r.Rows != rows {
		t.Errorf("%s: rows = %d, want %d", r.Scheme, r.Rows, rows)
	}
	if r.RowsPerSec <= 0 || len(r.Runs) == 0 {
		t.Errorf("%s: rows/s = %v with %d runs", r.Scheme, r.RowsPerSec, len(r.Runs))
	}
	if r.IndexBytes <= 0 || r.IndexBytes%pageSize != 0 {
		t.Errorf("%s: index bytes %d, want a positive multiple of the page size %d", r.Scheme, r.IndexBytes, pageSize)
	}
	if got := float64(r.IndexBytes) / float64(r.Rows); got != r.IndexBytesPerRow {
		t.Errorf("%s: index bytes/row %v, want %v", r.Scheme, r.IndexBytesPerRow, got)
	}
	if r.TableBytes <= 0 || r.WALBytes <= 0 {
		t.Errorf("%s: table bytes %d, WAL bytes %d; want both positive", r.Scheme, r.TableBytes, r.WALBytes)
	}
	if r.WALBytesPerRow != float64(r.WALBytes)/float64(r.Rows) {
		t.Errorf("%s: WAL bytes/row %v inconsistent with %d bytes", r.Scheme, r.WALBytesPerRow, r.WALBytes)
	}
	if s := rep.Settings.Statistics; s == "pgstattuple" || s == "dbstat" {
		if r.AvgLeafDensity == nil || *r.AvgLeafDensity <= 0 || *r.AvgLeafDensity > 100 {
			t.Errorf("%s: leaf density %v, want a percentage", r.Scheme, r.AvgLeafDensity)
		} else if r.LeafPages == nil || *r.LeafPages*pageSize > r.IndexBytes {
			t.Errorf("%s: %v leaf pages do not fit in %d index bytes", r.Scheme, r.LeafPages, r.IndexBytes)
		}
	} else if r.AvgLeafDensity != nil {
		t.Errorf("%s: leaf density %v reported although statistics are %q", r.Scheme, *r.AvgLeafDensity, s)
	}
	if len(r.Curve) == 0 || r.Curve[len(r.Curve)-1].Rows != rows {
		t.Errorf("%s: curve %v does not end at %d rows", r.Scheme, r.Curve, rows)
	}
	if r.PointLookup.Count == 0 || r.RangeScan.Count == 0 {
		t.Errorf("%s: no lookups measured", r.Scheme)
	}
	checkStructures(t, r, map[string]int64{"table": r.TableBytes, "primary key": r.IndexBytes})
}

// checkStructures checks that a table-workload result lists exactly the structures of want,
// by role, each named and sized as the result's own figures say.
func checkStructures(t *testing.T, r dbbench.Result, want map[string]int64) {
	t.Helper()
	got := map[string]int64{}
	for _, s := range r.Structures {
		if s.Name == "" || s.BytesPerOp != float64(s.Bytes)/float64(r.Rows) {
			t.Errorf("%s: structure %+v", r.Scheme, s)
		}
		got[s.Role] = s.Bytes
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: structures by role %v, want %v", r.Scheme, got, want)
	}
}

func TestPostgresSchemes(t *testing.T) {
	dsn := pgtest.DSN(t)
	schemasBefore, relsBefore, extBefore := objects(t, dsn)
	cfg := small(dsn, dbbench.DefaultSchemes()...)
	cfg.Baseline = true
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bigserial": "bigint identity", "snowflake": "bigint", "sonyflake": "bigint",
		"ulid": "uuid", "uuidv7": "uuid", "uuidv4": "uuid", "ulid-text": `text COLLATE "C"`,
		"typeid": "uuid", "typeid-text": `text COLLATE "C"`,
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(rep.Results), len(want))
	}
	for _, r := range rep.Results {
		if r.ColumnType != want[r.Scheme] {
			t.Errorf("%s: column type %q, want %q", r.Scheme, r.ColumnType, want[r.Scheme])
		}
		checkResult(t, rep, r, 3000, 8192)
	}
	if rep.Baseline == nil || rep.Baseline.RowsPerSec <= 0 || rep.Baseline.Scheme != "snowflake" || rep.Baseline.Ratio <= 0 {
		t.Errorf("baseline = %+v, want one compared with snowflake", rep.Baseline)
	}
	s := rep.Settings
	if s.ServerVersion == "" || s.SharedBuffers == "" || s.MaxWALSize == "" || s.Rows != 3000 || s.Mode != "copy" {
		t.Errorf("settings incomplete: %+v", s)
	}
	schemasAfter, relsAfter, extAfter := objects(t, dsn)
	if schemasAfter != schemasBefore || relsAfter != relsBefore || extAfter != extBefore {
		t.Errorf("objects left behind: schemas %d→%d, relations %d→%d, extensions %d→%d",
			schemasBefore, schemasAfter, relsBefore, relsAfter, extBefore, extAfter)
	}
}

// TestPostgresICUText: the ICU row loads text keys under the linguistic collation (skipped on
// a server built without ICU), and SQLite refuses it up front.
func TestPostgresICUText(t *testing.T) {
	dsn := pgtest.DSN(t)
	cfg := small(dsn, "ulid-text", "ulid-text-icu")
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil && strings.Contains(err.Error(), "und-x-icu") {
		t.Skipf("server without ICU collations: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[1].ColumnType != `text COLLATE "und-x-icu"` {
		t.Fatalf("results %+v, want ulid-text then ulid-text-icu", rep.Results)
	}
	for _, r := range rep.Results {
		checkResult(t, rep, r, 3000, 8192)
	}
	// Same keys, same order: the two indexes have the same size and density.
	if a, b := rep.Results[0], rep.Results[1]; a.IndexBytes != b.IndexBytes {
		t.Errorf("index bytes differ: C %d, ICU %d", a.IndexBytes, b.IndexBytes)
	}
	if _, err := dbbench.Run(context.Background(), small(dbbench.EngineSQLite, "ulid-text-icu")); err == nil || !strings.Contains(err.Error(), "needs PostgreSQL") {
		t.Errorf("ulid-text-icu on SQLite: error %v, want one saying it needs PostgreSQL", err)
	}
}

func TestPostgresModes(t *testing.T) {
	dsn := pgtest.DSN(t)
	tests := []struct {
		name    string
		mode    string
		clients int
		nodes   int
		batch   int
	}{
		{"copy 2 clients", dbbench.ModeCopy, 2, 1, 500},
		{"batch", dbbench.ModeBatch, 1, 1, 0},
		{"batch 3 nodes", dbbench.ModeBatch, 2, 3, 250},
		{"single 3 clients", dbbench.ModeSingle, 3, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := small(dsn, "bigserial", "snowflake", "uuidv7", "ulid-text", "uuidv4")
			cfg.Rows = 1500
			cfg.Mode, cfg.Clients, cfg.Nodes, cfg.Batch = tt.mode, tt.clients, tt.nodes, tt.batch
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				checkResult(t, rep, r, 1500, 8192)
			}
			checkArrivals(t, rep, 1500, tt.clients == 1 && tt.nodes == 1)
		})
	}
}

// checkArrivals checks the order the table workload saw its keys arrive in: every row of a
// client-made key counted, none for keys the database makes; a random key (uuidv4) mostly
// late; and, with one writer (oneWriter), no time-ordered key late.
func checkArrivals(t *testing.T, rep *dbbench.Report, rows int64, oneWriter bool) {
	t.Helper()
	for _, r := range rep.Results {
		c := r.Contention
		if r.Scheme == dbbench.RowBigserial || r.Scheme == dbbench.RowAutoIncrement {
			if c != nil {
				t.Errorf("%s: arrivals %+v for keys the database makes, want none", r.Scheme, c)
			}
			continue
		}
		if c == nil || c.Parents != rows || c.BehindWindow == 0 {
			t.Errorf("%s: arrivals %+v, want %d rows seen", r.Scheme, c, rows)
			continue
		}
		switch {
		case r.Scheme == "uuidv4" && c.LatePercent < 50:
			t.Errorf("uuidv4: %.1f%% late, want most of its random keys below the largest before them", c.LatePercent)
		case r.Scheme != "uuidv4" && oneWriter && c.Late != 0:
			t.Errorf("%s: %d of %d rows late with one writer, want 0", r.Scheme, c.Late, c.Parents)
		}
	}
}

// TestPostgresConnLost kills idbench's sessions in the middle of a load: Run
// must fail with ErrConnLost and still drop its schema.
func TestPostgresConnLost(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)

	cfg := small(dsn, "uuidv4")
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
		var n int
		err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = 'idbench' AND query LIKE 'INSERT%' AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		killed = n > 0
	}
	err = <-errc
	if !errors.Is(err, dbbench.ErrConnLost) {
		t.Fatalf("Run after a killed session: %v, want ErrConnLost", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans several lines: %q", err)
	}
	if schemas, _, _ := objects(t, dsn); schemas != 0 {
		t.Errorf("%d idbench schemas left after a lost connection", schemas)
	}
}

// TestPostgresCancel cancels Run as Ctrl-C would.
func TestPostgresCancel(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := small(dsn, "uuidv4")
	cfg.Mode, cfg.Rows = dbbench.ModeSingle, 10_000_000
	time.AfterFunc(700*time.Millisecond, cancel)
	_, err := dbbench.Run(ctx, cfg)
	if !errors.Is(err, dbbench.ErrInterrupted) {
		t.Fatalf("Run cancelled: %v, want ErrInterrupted", err)
	}
	if schemas, _, _ := objects(t, dsn); schemas != 0 {
		t.Errorf("%d idbench schemas left after cancel", schemas)
	}
}

func TestSQLite(t *testing.T) {
	skipSQLiteUnderRace(t)
	tests := []struct {
		mode    string
		clients int
		nodes   int
		rows    int
	}{
		{dbbench.ModeCopy, 1, 1, 2000},
		{dbbench.ModeBatch, 1, 4, 2000},
		{dbbench.ModeSingle, 2, 1, 400}, // one transaction per row: slow
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cfg := small(dbbench.EngineSQLite, dbbench.DefaultSchemes()...)
			cfg.Rows = tt.rows
			cfg.Mode, cfg.Clients, cfg.Nodes = tt.mode, tt.clients, tt.nodes
			cfg.Baseline = true // ignored: no baseline on SQLite
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Settings.Engine != "sqlite" || rep.Settings.Statistics != "dbstat" || rep.Baseline != nil {
				t.Errorf("settings %+v, baseline %v", rep.Settings, rep.Baseline)
			}
			for _, r := range rep.Results {
				checkResult(t, rep, r, int64(tt.rows), 4096)
			}
		})
	}
}

func TestSQLiteOrderedVersusRandom(t *testing.T) {
	skipSQLiteUnderRace(t)
	cfg := small(dbbench.EngineSQLite, "snowflake", "uuidv4")
	cfg.Rows = 8000
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	flake, v4 := rep.Results[0], rep.Results[1]
	if *flake.LeafFragmentation != 0 {
		t.Errorf("snowflake leaf fragmentation %v%%, want 0 for ascending keys", *flake.LeafFragmentation)
	}
	if *v4.LeafFragmentation < 10 {
		t.Errorf("uuidv4 leaf fragmentation %v%%, want random keys to scatter leaves", *v4.LeafFragmentation)
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  dbbench.Config
		want string
		is   error
	}{
		{"bad dsn", dbbench.Config{DB: "postgres://a b:x/y"}, "bad PostgreSQL connection string", nil},
		{"unreachable", dbbench.Config{DB: "host=127.0.0.1 port=1 connect_timeout=5"}, "connect to PostgreSQL", nil},
		{"bad scheme", dbbench.Config{DB: "sqlite", Schemes: []string{"nope"}}, `scheme "nope"`, nil},
		{"bad mode", dbbench.Config{DB: "sqlite", Mode: "bulk"}, "unknown insert mode", nil},
		{"bad profile", dbbench.Config{DB: "sqlite", Profile: "busy"}, "unknown profile", nil},
		{"twice", dbbench.Config{DB: "sqlite", Schemes: []string{"ulid", "ulid"}}, "listed twice", nil},
		{"nodes conflict", dbbench.Config{DB: "sqlite", Schemes: []string{"snowflake:node=3"}, Nodes: 2}, "conflicts with --nodes", nil},
		{"negative rows", dbbench.Config{DB: "sqlite", Rows: -1}, "rows must be", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dbbench.Run(context.Background(), tt.cfg)
			if err == nil {
				t.Fatal("Run succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "dbbench: ") {
				t.Errorf("error %q, want it to start with \"dbbench: \" and contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	cfg := small(dbbench.EngineSQLite, "snowflake", "ulid", "ulid-text")
	cfg.Command = "idbench db --db sqlite"
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}

	var js bytes.Buffer
	if err := dbbench.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Settings map[string]any   `json:"settings"`
		Results  []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"engine", "server_version", "rows", "batch", "mode", "clients", "nodes", "fillfactor"} {
		if _, ok := doc.Settings[k]; !ok {
			t.Errorf("settings lack %q", k)
		}
	}
	for _, r := range doc.Results {
		for _, k := range []string{"scheme", "column_type", "rows", "rows_per_sec", "index_bytes", "index_bytes_per_row",
			"table_bytes", "wal_bytes", "wal_bytes_per_row", "avg_leaf_density", "leaf_fragmentation"} {
			if _, ok := r[k]; !ok {
				t.Errorf("result %v lacks %q", r["scheme"], k)
			}
		}
	}

	var tbl, bench bytes.Buffer
	if err := dbbench.WriteTable(&tbl, rep); err != nil {
		t.Fatal(err)
	}
	if err := dbbench.WriteBenchstat(&bench, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"snowflake", "ulid-text", "rows/s"} {
		if !strings.Contains(tbl.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, tbl.String())
		}
	}
	if n := strings.Count(bench.String(), "BenchmarkInsert/scheme="); n != 3 {
		t.Errorf("benchstat output has %d benchmark lines, want 3:\n%s", n, bench.String())
	}

	dir := t.TempDir()
	if err := dbbench.WriteReport(dir, rep); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, dbbench.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "`idbench db --db sqlite`") {
		t.Errorf("report does not state its command")
	}
	// The machine's load average at the start and end of the run, where the system shows it.
	if _, err := os.Stat("/proc/loadavg"); err == nil {
		if !regexp.MustCompile(`^start [0-9.]+ [0-9.]+ [0-9.]+, end [0-9.]+ [0-9.]+ [0-9.]+$`).MatchString(rep.Settings.LoadAverage) {
			t.Errorf("load average %q, want start and end with three figures each", rep.Settings.LoadAverage)
		}
		if _, ok := doc.Settings["load_average"]; !ok {
			t.Errorf("report.json settings lack load_average")
		}
		if !strings.Contains(string(md), "| load average of the machine at start, end (/proc/loadavg) | "+rep.Settings.LoadAverage+" |") {
			t.Errorf("report.md does not give the load average %q", rep.Settings.LoadAverage)
		}
	}
	checkCharts(t, dir, string(md), "throughput.svg", "index-bytes-per-row.svg", "wal-bytes-per-row.svg", "leaf-density.svg")
}

// TestNodesAnyCase runs --nodes with scheme and row names in other cases: every generator must
// get its own node, as with lower-case names (before the fix, SNOWFLAKE ran every node as
// node 0 and failed with a UNIQUE violation).
func TestNodesAnyCaseSQLite(t *testing.T) {
	skipSQLiteUnderRace(t)
	cfg := small(dbbench.EngineSQLite, "SNOWFLAKE", "SonyFlake:start=2024-01-01", "BIGSERIAL", "ULID-Text", "UUIDv7-TEXT")
	cfg.Nodes = 4
	cfg.Rows = 20000
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Rows != int64(cfg.Rows) {
			t.Errorf("row %s: %d rows, want %d", r.Scheme, r.Rows, cfg.Rows)
		}
	}
}

// TestPostgresConcurrentRuns runs two benchmarks at once against one database that has no
// pgstattuple: the runs must not break each other (one used to create the extension inside
// its own schema and drop it, with the schema, under the other), both must report leaf
// statistics for every scheme, exactly one of them creates the extension, and what is left
// afterwards is that extension in dbbench.ExtSchema and nothing else.
func TestPostgresConcurrentRuns(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := context.Background()
	// A session named as idbench's are, open throughout: both runs must count it among the
	// other benchmark sessions whose work lands in the server-wide counters. (Whether the two
	// runs see each other depends on when each takes its snapshots, so the test does not ask.)
	standInCfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	standInCfg.RuntimeParams["application_name"] = "idbench"
	standIn, err := pgx.ConnectConfig(ctx, standInCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer standIn.Close(ctx)
	// The short run ends, and drops its schema, while the long one still measures.
	cfgs := []dbbench.Config{small(dsn, "snowflake"), small(dsn, "uuidv4", "ulid", "uuidv7", "snowflake", "ulid-text")}
	reps := make([]*dbbench.Report, len(cfgs))
	errs := make([]error, len(cfgs))
	done := make(chan int)
	for i := range cfgs {
		go func() {
			reps[i], errs[i] = dbbench.Run(ctx, cfgs[i])
			done <- i
		}()
	}
	for range cfgs {
		<-done
	}
	created := 0
	for i, rep := range reps {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if rep.Settings.Statistics != "pgstattuple" {
			t.Errorf("run %d: statistics %q, want pgstattuple", i, rep.Settings.Statistics)
		}
		for _, r := range rep.Results {
			checkResult(t, rep, r, 3000, 8192)
			if r.AvgLeafDensity == nil || r.LeafFragmentation == nil {
				t.Errorf("run %d, %s: leaf statistics missing", i, r.Scheme)
			}
		}
		if rep.Settings.LeftBehind != "" {
			created++
			if !strings.Contains(strings.Join(rep.Notes, " "), "DROP EXTENSION pgstattuple") {
				t.Errorf("run %d left %q but its notes do not say how to remove it: %q", i, rep.Settings.LeftBehind, rep.Notes)
			}
		}
	}
	for i, rep := range reps {
		if rep.Settings.OtherRuns == 0 {
			t.Errorf("run %d did not count the other idbench session (other_idbench_sessions 0)", i)
		}
	}
	if created != 1 {
		t.Errorf("%d runs say they created pgstattuple, want exactly 1", created)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left []string
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'idbench%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	if left, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != dbbench.ExtSchema {
		t.Errorf("schemas left: %q, want only %s", left, dbbench.ExtSchema)
	}
	var nsp string
	if err := conn.QueryRow(ctx, `SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
		WHERE x.extname = 'pgstattuple'`).Scan(&nsp); err != nil || nsp != dbbench.ExtSchema {
		t.Errorf("pgstattuple in schema %q (%v), want %s", nsp, err, dbbench.ExtSchema)
	}

	// A later run finds the extension and leaves nothing.
	rep, err := dbbench.Run(ctx, small(dsn, "uuidv7"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Settings.Statistics != "pgstattuple" || rep.Settings.LeftBehind != "" {
		t.Errorf("later run: statistics %q, left behind %q; want pgstattuple and nothing", rep.Settings.Statistics, rep.Settings.LeftBehind)
	}
}

// TestBit63Schemes loads a layout whose IDs set bit 63 (Discord's, with an epoch more than
// 2^41 ms ago) on SQLite and PostgreSQL, in every insert mode and from two nodes: it used to fail
// at the first ID ("does not fit a signed bigint column") after the schemes before it had run.
// Such IDs go in a column that holds them exactly and in order (numeric(20,0), an 8-byte
// big-endian BLOB), which the report names, and a note says why.
func TestBit63Schemes(t *testing.T) {
	const spec = "snowflake:layout=discord,epoch=1950-01-01T00:00:00Z"
	engines := []struct {
		db, col  string
		pageSize int64
	}{
		{dbbench.EngineSQLite, "BLOB(8), big-endian", 4096},
		{pgtest.DSN(t), "numeric(20,0)", 8192},
	}
	for _, e := range engines {
		for _, mode := range []string{dbbench.ModeCopy, dbbench.ModeBatch} {
			cfg := small(e.db, "uuidv4", spec)
			cfg.Mode, cfg.Nodes = mode, 2
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s, %s: %v", e.col, mode, err)
			}
			r := rep.Results[1]
			if r.ColumnType != e.col {
				t.Errorf("%s: column %q, want %q", spec, r.ColumnType, e.col)
			}
			checkResult(t, rep, r, 3000, e.pageSize)
			if !strings.Contains(strings.Join(rep.Notes, " "), "bit 63") {
				t.Errorf("%s, %s: no note on bit 63: %q", e.col, mode, rep.Notes)
			}
		}
	}
}

// TestPostgresServerRows loads the rows whose keys the server makes, and the segment row with
// its store in the benchmark database, with two nodes; the run leaves nothing behind.
func TestPostgresServerRows(t *testing.T) {
	dsn := pgtest.DSN(t)
	schemasBefore, relsBefore, _ := objects(t, dsn)
	cfg := small(dsn, dbbench.RowInstagramPLpgSQL, dbbench.RowUUIDv7PLpgSQL, dbbench.RowSegment, "segment:step=100")
	cfg.Nodes = 2
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		dbbench.RowInstagramPLpgSQL: "bigint DEFAULT next_id()", dbbench.RowUUIDv7PLpgSQL: "uuid DEFAULT uuidv7()",
		dbbench.RowSegment: "bigint", "segment:step=100": "bigint",
	}
	for _, r := range rep.Results {
		if r.ColumnType != want[r.Scheme] {
			t.Errorf("%s: column type %q, want %q", r.Scheme, r.ColumnType, want[r.Scheme])
		}
		if r.Failure != "" { // a wrap of next_id() on a fast server: a finding, in the notes
			if !slices.Contains(rep.Notes, r.Failure) {
				t.Errorf("%s failed (%s) but the notes do not say so", r.Scheme, r.Failure)
			}
			continue
		}
		checkResult(t, rep, r, 3000, 8192)
		// The segment rows name their store's durability class, in the result and the notes
		// (the fleet of two nodes shares one store); the server-made rows rest on no store.
		segmentRow := strings.HasPrefix(r.Scheme, dbbench.RowSegment)
		t.Logf("%s: durability %q", r.Scheme, r.Durability)
		if segmentRow && (len(r.Durability) != 1 || !strings.HasPrefix(r.Durability[0], "store 1 ") || !strings.Contains(r.Durability[0], "; epoch ")) {
			t.Errorf("%s: durability %q, want the store's class and epoch", r.Scheme, r.Durability)
		}
		if segmentRow && len(r.Durability) == 1 && !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, r.Durability[0]) }) {
			t.Errorf("%s: the notes do not give its durability %q: %q", r.Scheme, r.Durability[0], rep.Notes)
		}
		if !segmentRow && r.Durability != nil {
			t.Errorf("%s: durability %q for a row without a store", r.Scheme, r.Durability)
		}
	}
	// The segment stores' own connections are not other benchmark runs.
	if rep.Settings.OtherRuns != 0 {
		t.Errorf("the run counted %d other idbench sessions: %q", rep.Settings.OtherRuns, rep.Notes)
	}
	schemasAfter, relsAfter, _ := objects(t, dsn)
	if schemasAfter != schemasBefore || relsAfter != relsBefore {
		t.Errorf("objects left behind: schemas %d→%d, relations %d→%d", schemasBefore, schemasAfter, relsBefore, relsAfter)
	}
	if _, err := dbbench.Run(context.Background(), small(dbbench.EngineSQLite, dbbench.RowSegment)); err == nil || !strings.Contains(err.Error(), "needs PostgreSQL") {
		t.Errorf("SQLite with the segment row: %v", err)
	}
}

// skipSQLiteUnderRace skips a test that loads SQLite when the race detector is on (see
// raceEnabled); `make test` runs it again without the detector.
func skipSQLiteUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("loads SQLite, which the race detector slows tenfold: make test runs it without -race (go test -run SQLite ./dbbench/)")
	}
}
