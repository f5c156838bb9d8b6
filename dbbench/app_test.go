package dbbench_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/jackc/pgx/v5"
)

// smallApp is an app-workload configuration that runs in a few seconds per scheme.
func smallApp(db string, schemes ...string) dbbench.Config {
	return dbbench.Config{
		DB:       db,
		Schemes:  schemes,
		Workload: dbbench.WorkloadApp,
		Rows:     400,
		Repeat:   1,
		// No warm-up: these tests check what a load measures, not its speed.
		WarmupRows: -1,
		Lookups:    20,
		Baseline:   true,
	}
}

// checkApp checks the figures every app result must have.
func checkApp(t *testing.T, rep *dbbench.Report, ops int64) {
	t.Helper()
	if rep.Workload != dbbench.WorkloadApp || len(rep.Results) != 0 {
		t.Fatalf("workload %q with %d table results", rep.Workload, len(rep.Results))
	}
	for _, r := range rep.App {
		if r.Operations != ops || r.OpsPerSec <= 0 || r.WALBytesPerOp <= 0 || r.BytesPerOp <= 0 {
			t.Errorf("%s: %d ops at %.0f/s, %.1f WAL B/op, %.1f B/op", r.Scheme, r.Operations, r.OpsPerSec, r.WALBytesPerOp, r.BytesPerOp)
		}
		roles := map[string]bool{}
		for _, s := range r.Structures {
			roles[s.Role] = true
			if s.Bytes <= 0 || !strings.Contains(s.Name, r.Label+"_") {
				t.Errorf("%s: structure %+v", r.Scheme, s)
			}
		}
		if !roles["child foreign-key index"] || roles["parent created_at index"] != r.CreatedAtIndex {
			t.Errorf("%s: structures %+v (created_at index %v)", r.Scheme, r.Structures, r.CreatedAtIndex)
		}
		if r.TimeQuery == nil || r.TimeQuery.Latency.Count == 0 || r.TimeQuery.Plan == "" {
			t.Errorf("%s: time query %+v", r.Scheme, r.TimeQuery)
		} else if want := map[bool]string{true: "key bounds", false: "created_at index"}[r.TimeOrdered]; r.TimeQuery.Via != want {
			t.Errorf("%s: time query via %q, want %q", r.Scheme, r.TimeQuery.Via, want)
		}
		if r.ParentWithChildren.Count == 0 {
			t.Errorf("%s: no parent-with-children queries", r.Scheme)
		}
		if r.TimeOrdered != (r.Check != nil) {
			t.Errorf("%s: time ordered %v, check %+v", r.Scheme, r.TimeOrdered, r.Check)
		}
		if c := r.Check; c != nil && (c.Windows == 0 || c.Rows == 0 || c.Mismatches != 0) {
			t.Errorf("%s: check %+v", r.Scheme, *c)
		}
	}
	if b := rep.AppBaseline; b == nil || b.OpsPerSec <= 0 || b.Ratio <= 0 {
		t.Errorf("baseline %+v", rep.AppBaseline)
	}
}

func TestPostgresApp(t *testing.T) {
	dsn := pgtest.DSN(t)
	schemasBefore, _, _ := objects(t, dsn)
	for _, mode := range []string{dbbench.ModeTx, dbbench.ModeCopy} {
		t.Run(mode, func(t *testing.T) {
			schemes := []string{"bigserial", "snowflake", "ulid", "uuidv7", "uuidv4", "ulid-text"}
			cfg := smallApp(dsn, schemes...)
			cfg.Mode = mode
			cfg.Clients = 2
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.App) != len(schemes) {
				t.Fatalf("%d results, want %d", len(rep.App), len(schemes))
			}
			checkApp(t, rep, 400)
			if schemas, _, _ := objects(t, dsn); schemas != schemasBefore {
				t.Errorf("%d idbench schemas after the run, %d before", schemas, schemasBefore)
			}
		})
	}
}

func TestMySQLApp(t *testing.T) {
	url, dsn := mysqlURL(t)
	dbsBefore, _ := mysqlState(t, dsn)
	bulk := smallApp(url, "auto-increment")
	bulk.Mode = dbbench.ModeCopy
	if _, err := dbbench.Run(context.Background(), bulk); err == nil || !strings.Contains(err.Error(), "LOAD DATA cannot return the keys") {
		t.Errorf("auto-increment in copy mode: err %v", err)
	}
	for _, mode := range []string{dbbench.ModeTx, dbbench.ModeCopy} {
		t.Run(mode, func(t *testing.T) {
			schemes := []string{"auto-increment", "snowflake", "ulid", "uuidv7", "uuidv4", "ulid-text"}
			if mode == dbbench.ModeCopy {
				schemes = schemes[1:]
			}
			cfg := smallApp(url, schemes...)
			cfg.Mode = mode
			cfg.Clients = 2
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.App) != len(schemes) {
				t.Fatalf("%d results, want %d", len(rep.App), len(schemes))
			}
			checkApp(t, rep, 400)
			if dbs, _ := mysqlState(t, dsn); dbs != dbsBefore {
				t.Errorf("%d idbench databases after the run, %d before", dbs, dbsBefore)
			}
		})
	}
}

// TestAppKeep checks that --keep leaves the schema (PostgreSQL) or database (MariaDB/MySQL)
// with the last run's tables and names it, and that the command to open it names no
// password; TestPostgresApp and TestMySQLApp check that without it nothing is left.
func TestAppKeep(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		cfg := smallApp(dsn, "snowflake", "uuidv4")
		cfg.Keep, cfg.Repeat = true, 2
		rep, err := dbbench.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		schema := strings.TrimPrefix(rep.Settings.Kept, "schema ")
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		defer func() {
			if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
				t.Error(err)
			}
		}()
		var tables []string
		rows, err := conn.Query(context.Background(), "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY relname", schema)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, s)
		}
		want := "[baseline_child baseline_parent snowflake_child snowflake_parent uuidv4_child uuidv4_parent]"
		if fmt.Sprint(tables) != want {
			t.Fatalf("kept %q (%s) holds %v, want %s", schema, rep.Settings.Kept, tables, want)
		}
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema, "uuidv4_child"}.Sanitize()).Scan(&n); err != nil || n != 1600 {
			t.Errorf("uuidv4_child holds %d rows (%v), want 1600", n, err)
		}
		if !strings.Contains(rep.Settings.Reopen, "search_path="+schema) {
			t.Errorf("reopen command %q", rep.Settings.Reopen)
		}
		var out strings.Builder
		if err := dbbench.WriteTable(&out, rep); err != nil || !strings.Contains(out.String(), rep.Settings.Reopen) {
			t.Errorf("table lacks the reopen command (%v):\n%s", err, out.String())
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		cfg := smallApp(dbbench.EngineSQLite, "uuidv7")
		cfg.Keep = true
		rep, err := dbbench.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(rep.Settings.Kept, "database file ")
		defer os.RemoveAll(filepath.Dir(path))
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM uuidv7_child").Scan(&n); err != nil || n != 1600 {
			t.Errorf("kept %q: uuidv7_child holds %d rows (%v), want 1600", path, n, err)
		}
		if rep.Settings.Reopen != "sqlite3 "+path {
			t.Errorf("reopen command %q", rep.Settings.Reopen)
		}
	})
	t.Run("mysql", func(t *testing.T) {
		url, dsn := mysqlURL(t)
		cfg := smallApp(url, "snowflake")
		cfg.Keep = true
		rep, err := dbbench.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(rep.Settings.Kept, "database ")
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		defer func() {
			if _, err := db.Exec("DROP DATABASE `" + name + "`"); err != nil {
				t.Error(err)
			}
		}()
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM `" + name + "`.snowflake_child").Scan(&n); err != nil || n != 1600 {
			t.Errorf("kept %q: snowflake_child holds %d rows (%v), want 1600", name, n, err)
		}
		if !strings.HasSuffix(rep.Settings.Reopen, " "+name) {
			t.Errorf("reopen command %q", rep.Settings.Reopen)
		}
	})
}

// TestAppOutputs writes an app report in every format, with and without queries.
func TestAppOutputs(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, lookups := range []int{-1, 5} {
		cfg := smallApp(dsn, "snowflake", "uuidv4")
		cfg.Lookups, cfg.Rows, cfg.Children = lookups, 100, 2
		rep, err := dbbench.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var table, md, bench, sum strings.Builder
		for _, w := range []error{dbbench.WriteTable(&table, rep), dbbench.WriteMarkdown(&md, rep), dbbench.WriteBenchstat(&bench, rep), dbbench.WriteAppSummary(&sum, rep)} {
			if w != nil {
				t.Fatal(w)
			}
		}
		for name, out := range map[string]string{"table": table.String(), "markdown": md.String(), "summary": sum.String()} {
			if !strings.Contains(out, "uuidv4_child_parent_id") && name != "summary" || !strings.Contains(out, "snowflake") {
				t.Errorf("lookups %d: %s output:\n%s", lookups, name, out)
			}
		}
		if n := strings.Count(bench.String(), "BenchmarkApp/"); n != 3 {
			t.Errorf("lookups %d: %d benchmark lines, want 3:\n%s", lookups, n, bench.String())
		}
		if rep.Settings.MaxRSSBytes <= 0 || rep.Settings.Children != 2 {
			t.Errorf("settings %+v", rep.Settings)
		}
	}
}

func TestSQLiteApp(t *testing.T) {
	skipSQLiteUnderRace(t)
	for _, mode := range []string{dbbench.ModeTx, dbbench.ModeCopy} {
		t.Run(mode, func(t *testing.T) {
			schemes := []string{"bigserial", "snowflake", "ulid", "uuidv7", "uuidv4", "ulid-text"}
			cfg := smallApp(dbbench.EngineSQLite, schemes...)
			cfg.Mode = mode
			cfg.Clients = 2
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.App) != len(schemes) {
				t.Fatalf("%d results, want %d", len(rep.App), len(schemes))
			}
			checkApp(t, rep, 400)
		})
	}
}

// TestAppWarmup runs the app workload on SQLite with a warm-up of 10 operations, in both
// modes, and without one (-1, the control). With it, the scheme and the baseline each get one
// discarded 10-operation load just before their first measured load and none in the second
// round (the -v log lists every load in order), and the report says so; without, no warm-up
// load, and the report says "no warm-up". Before the app workload had warm-ups it ignored the
// setting: no warm-up load, and the report said 0.
func TestAppWarmup(t *testing.T) {
	skipSQLiteUnderRace(t)
	const claim = "after a discarded 10-operation warm-up per scheme"
	tests := []struct {
		mode   string
		warmup int
		want   []string // the loads in order: label and kind
	}{
		{dbbench.ModeTx, 10, []string{"baseline warm-up", "baseline measured", "snowflake warm-up", "snowflake measured", "baseline measured", "snowflake measured"}},
		{dbbench.ModeCopy, 10, []string{"baseline warm-up", "baseline measured", "snowflake warm-up", "snowflake measured", "baseline measured", "snowflake measured"}},
		{dbbench.ModeTx, -1, []string{"baseline measured", "snowflake measured", "baseline measured", "snowflake measured"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/warmup=%d", tt.mode, tt.warmup), func(t *testing.T) {
			cfg := smallApp(dbbench.EngineSQLite, "snowflake")
			cfg.Mode, cfg.Rows, cfg.Repeat, cfg.WarmupRows, cfg.Lookups = tt.mode, 40, 2, tt.warmup, 5
			var log strings.Builder
			cfg.Log = &log
			rep, err := dbbench.Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var loads []string
			for _, line := range strings.Split(log.String(), "\n") {
				f := strings.Fields(line)
				if len(f) < 4 || f[0] != "dbbench:" || f[3] != "ops/s" {
					continue
				}
				kind := "measured"
				if strings.HasSuffix(line, "(discarded warm-up of 10)") {
					kind = "warm-up"
				}
				loads = append(loads, f[1]+" "+kind)
			}
			if !slices.Equal(loads, tt.want) {
				t.Errorf("loads %q, want %q; log:\n%s", loads, tt.want, log.String())
			}
			warm := max(tt.warmup, 0)
			if rep.Settings.WarmupRows != warm {
				t.Errorf("report: warm-up of %d operations, want %d", rep.Settings.WarmupRows, warm)
			}
			checkApp(t, rep, 40)
			var table, md strings.Builder
			if err := dbbench.WriteTable(&table, rep); err != nil {
				t.Fatal(err)
			}
			if err := dbbench.WriteMarkdown(&md, rep); err != nil {
				t.Fatal(err)
			}
			says := map[bool][]string{true: {claim, "| warm-up operations | 10 |"}, false: {", no warm-up", "| warm-up operations | none |"}}
			for _, have := range []bool{true, false} {
				for i, phrase := range says[have] {
					want := have == (warm > 0)
					if got := strings.Contains(md.String(), phrase); got != want {
						t.Errorf("report.md has %q: %v, want %v", phrase, got, want)
					}
					if got := strings.Contains(table.String(), phrase); i == 0 && got != want {
						t.Errorf("table has %q: %v, want %v:\n%s", phrase, got, want, table.String())
					}
				}
			}
		})
	}
}
