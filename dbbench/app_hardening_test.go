package dbbench_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/pgtest"
)

// testMaskKey is the uuidv47 PostgreSQL extension's test key, set as IDKIT_TEST_MASK_KEY.
const testMaskKey = "0011223344556677:8899aabbccddeeff"

// maskedTextSchemes are the masked text rows of issue 24 item 10: two whose text column holds
// the stored IDs' text (time-ordered) and one whose key is the masked TypeID text (no order).
var maskedTextSchemes = []string{
	"uuidv7:mask=env:IDKIT_TEST_MASK_KEY-text",
	"ulid:mask=env:IDKIT_TEST_MASK_KEY-text",
	"typeid:prefix=user,mask=env:IDKIT_TEST_MASK_KEY-text",
}

// checkMaskedText checks a run of maskedTextSchemes: keys read back in the form written,
// the stored-text rows answer the time query by their keys with no mismatch, the masked TypeID
// text by created_at, and a note says why.
func checkMaskedText(t *testing.T, rep *dbbench.Report) {
	t.Helper()
	checkApp(t, rep, 200)
	if len(rep.App) != len(maskedTextSchemes) {
		t.Fatalf("%d results, want %d", len(rep.App), len(maskedTextSchemes))
	}
	for i, want := range []bool{true, true, false} {
		if r := rep.App[i]; r.TimeOrdered != want || r.CreatedAtIndex == want {
			t.Errorf("%s: time ordered %v, created_at index %v; want %v, %v", r.Scheme, r.TimeOrdered, r.CreatedAtIndex, want, !want)
		}
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "typeid:prefix=user,mask=env:IDKIT_TEST_MASK_KEY-text stores its masked public text as the key") {
		t.Errorf("no note on the masked TypeID text: %q", rep.Notes)
	}
}

// TestAppMaskedTextKeys: masked text keys run through the app workload as they do through the
// table workload (issue 24 item 10; on the old code each run ended in an error after loading).
// SQLite's case is TestAppMaskedTextKeysSQLite.
func TestAppMaskedTextKeys(t *testing.T) { appMaskedTextKeys(t, false) }

// TestAppMaskedTextKeysSQLite is TestAppMaskedTextKeys on SQLite, which `make test` runs
// without the race detector (70 s of a loaded machine under it).
func TestAppMaskedTextKeysSQLite(t *testing.T) {
	skipSQLiteUnderRace(t)
	appMaskedTextKeys(t, true)
}

func appMaskedTextKeys(t *testing.T, sqlite bool) {
	t.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	for _, tt := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return dbbench.EngineSQLite }},
		{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
		{"mysql", func(t *testing.T) string { url, _ := mysqlURL(t); return url }},
	} {
		if sqlite != (tt.name == "sqlite") {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			cfg := smallApp(tt.db(t), maskedTextSchemes...)
			cfg.Rows, cfg.Lookups, cfg.Baseline = 200, 10, false
			rep, err := dbbench.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			rep.AppBaseline = &dbbench.AppBaseline{OpsPerSec: 1, Ratio: 1} // checkApp wants one; none without a bigint row
			checkMaskedText(t, rep)
		})
	}
}

// TestAppWindowShorterThanTick: a window shorter than a scheme's tick is rounded up to one
// tick for that scheme, and the report says so (issue 24 item 11; on the old code the run
// ended after loading with "no tick starts in the time range" and no report).
func TestAppWindowShorterThanTick(t *testing.T) {
	cfg := smallApp(dbbench.EngineSQLite, "snowflake:unit=1s", "sonyflake", "uuidv7")
	cfg.Rows, cfg.Lookups, cfg.Window = 100, 5, 5*time.Millisecond
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rep.Notes, "\n")
	for i, want := range []time.Duration{time.Second, 10 * time.Millisecond, 5 * time.Millisecond} {
		r := rep.App[i]
		// Read through JSON, the form report.json readers see (and so that this test builds
		// on code from before AppResult.Window).
		var got struct{ Window dbbench.Duration }
		if b, err := json.Marshal(r); err != nil || json.Unmarshal(b, &got) != nil || time.Duration(got.Window) != want {
			t.Errorf("%s: window %v, want %v", r.Scheme, time.Duration(got.Window), want)
		}
		if c := r.Check; c == nil || c.Rows == 0 || c.Mismatches != 0 {
			t.Errorf("%s: check %+v", r.Scheme, c)
		}
		if note := r.Scheme + ": the time window is " + want.String() + ", not 5ms"; (want != cfg.Window) != strings.Contains(notes, note) {
			t.Errorf("%s: note %q present %v in:\n%s", r.Scheme, note, !(want != cfg.Window), notes)
		}
	}
}

// TestAppSQLiteReport: the SQLite app report names its own baseline loop (not pgx, not COPY),
// says "1 child" for one child, and lists the server settings (issue 24 items 12 and 13).
func TestAppSQLiteReport(t *testing.T) {
	for _, mode := range []string{dbbench.ModeTx, dbbench.ModeCopy} {
		cfg := smallApp(dbbench.EngineSQLite, "snowflake")
		cfg.Rows, cfg.Lookups, cfg.Children, cfg.Mode = 50, 3, 1, mode
		rep, err := dbbench.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.AppBaseline == nil {
			t.Fatalf("%s: no baseline", mode)
		}
		var table, md, sum strings.Builder
		for _, err := range []error{dbbench.WriteTable(&table, rep), dbbench.WriteMarkdown(&md, rep), dbbench.WriteAppSummary(&sum, rep)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for name, out := range map[string]string{"table": table.String(), "markdown": md.String(), "summary": sum.String()} {
			if strings.Contains(out, "pgx") || strings.Contains(out, "COPY") || strings.Contains(out, "1 children") || strings.Contains(out, "1 child rows") {
				t.Errorf("%s %s output names pgx, COPY or 1 children:\n%s", mode, name, out)
			}
		}
		if !strings.Contains(md.String(), "1 parent and 1 child,") || !strings.Contains(md.String(), "| sqlite page_size |") {
			t.Errorf("%s markdown:\n%s", mode, md.String())
		}
	}
}

// TestAppMarkdownSettings: every app report.md lists the server settings that shape its
// figures, commit flushing included (issue 29 item 1).
func TestAppMarkdownSettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    dbbench.Settings
		want []string
	}{
		{dbbench.Settings{Engine: dbbench.EnginePGLocal, SharedBuffers: "128MB", SynchronousCommit: "off", Fsync: "on", FullPageWrites: "on"},
			[]string{"| synchronous_commit | off |", "| shared_buffers | 128MB |", "| fsync | on |", "| full_page_writes | on |"}},
		{dbbench.Settings{Engine: dbbench.EngineMariaDBLocal, InnoDBBufferPoolSize: "128 MiB", InnoDBFlushLogAtTrxCommit: "2", InnoDBDoublewrite: "ON"},
			[]string{"| innodb_flush_log_at_trx_commit | 2 |", "| innodb_buffer_pool_size | 128 MiB |", "| innodb_doublewrite | ON |"}},
	} {
		s := tt.s
		s.Rows, s.Children, s.Mode, s.Clients, s.Repeat = 10, 4, dbbench.ModeTx, 1, 1
		var md strings.Builder
		if err := dbbench.WriteMarkdown(&md, &dbbench.Report{Workload: dbbench.WorkloadApp, Settings: s}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(md.String(), w) {
				t.Errorf("%s: report.md lacks %q:\n%s", s.Engine, w, md.String())
			}
		}
	}
}
