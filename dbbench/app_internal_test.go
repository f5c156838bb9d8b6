package dbbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/mysqltest"
	"github.com/idkit/idkit/dbbench/pgtest"
)

func TestTableLabels(t *testing.T) {
	long := strings.Repeat("snowflake:layout=discord,node=3", 3)
	tests := []struct {
		names    []string
		reserved []string
		want     []string
	}{
		{[]string{"uuidv4", "ulid-text", "snowflake:layout=discord,node=3"}, nil, []string{"uuidv4", "ulid_text", "snowflake_layout_discord_node_3"}},
		{[]string{"ULID", "ulid", "ulid!"}, nil, []string{"ulid", "ulid_2", "ulid_3"}},
		{[]string{"baseline"}, []string{"baseline"}, []string{"baseline_2"}},
		{[]string{"7", "--", ""}, nil, []string{"t7", "s", "s_2"}},
		{[]string{"ulid:monotonic=false", "ulid-monotonic-false"}, nil, []string{"ulid_monotonic_false", "ulid_monotonic_false_2"}},
		{[]string{long, long + "x"}, nil, []string{"snowflake_layout_discord_node_3snowflake", "snowflake_layout_discord_node_3snowfla_2"}},
	}
	for _, tt := range tests {
		got := tableLabels(tt.names, tt.reserved...)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("tableLabels(%q, %q) = %q, want %q", tt.names, tt.reserved, got, tt.want)
		}
		checkLabels(t, tt.names, got, tt.reserved)
	}
}

// checkLabels checks what every label list must hold: [a-z0-9_], a letter first, short enough
// for PostgreSQL's 63 bytes with the longest suffix, no duplicates, no reserved label.
func checkLabels(t *testing.T, names, labels, reserved []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range reserved {
		seen[r] = true
	}
	for i, l := range labels {
		if l == "" || len(l+"_parent_created_at") > 63 || l[0] < 'a' || l[0] > 'z' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Errorf("label %q of %q", l, names[i])
		}
		if seen[l] {
			t.Errorf("label %q of %q collides", l, names[i])
		}
		seen[l] = true
	}
}

func FuzzTableLabels(f *testing.F) {
	for _, s := range []string{"uuidv4", "ulid-text", "ULID", "7", "", "snowflake:layout=discord,node=3", strings.Repeat("é_", 40)} {
		f.Add(s, s+"x", "baseline")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		names := []string{a, b, c, a}
		checkLabels(t, names, tableLabels(names, "baseline"), []string{"baseline"})
	})
}

// openAppEngine opens a real engine for the app workload: PostgreSQL, or MariaDB/MySQL when
// innodb is set.
func openAppEngine(t *testing.T, innodb bool) (engine.Engine, Config) {
	t.Helper()
	db := ""
	if innodb {
		url, err := mysqltest.URL(mysqltest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		db = url
	} else {
		db = pgtest.DSN(t)
	}
	cfg, err := Config{DB: db, Workload: WorkloadApp, Rows: 300, Lookups: 10, Repeat: 1, WarmupRows: -1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	eng, cleanup, err := engineNamed(cfg.to.engine).open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Error(err)
		}
	})
	return eng, cfg
}

// TestTimeCheckControl loads a time-ordered scheme, checks that both ways of answering the time
// query agree, then moves one row's created_at an hour away and checks that the check finds
// it: the control that the check can fail.
func TestTimeCheckControl(t *testing.T) {
	for _, innodb := range []bool{false, true} {
		for _, scheme := range []string{"snowflake", "uuidv7", "ulid-text"} {
			t.Run(fmt.Sprintf("innodb=%v/%s", innodb, scheme), func(t *testing.T) {
				ctx := context.Background()
				d, cfg := openAppEngine(t, innodb)
				r, err := engine.ResolveRow(ctx, scheme)
				if err != nil {
					t.Fatal(err)
				}
				sc := appScheme{AppSchema: engine.AppSchema{Label: "ctl", Row: r, Children: 2}, tick: time.Millisecond, epoch: time.Unix(0, 0)}
				sc.codec = mustCodec(t, r.Spec)
				run, err := appLoad(ctx, cfg, d, sc, int64(cfg.Rows), false, true, true)
				if err != nil {
					t.Fatal(err)
				}
				whole := [][2]time.Time{{sc.align(run.start), sc.align(run.end).Add(sc.tick)}}
				c, err := checkTime(ctx, d, sc, whole, run.maxLag)
				if err != nil {
					t.Fatal(err)
				}
				if c.Rows != 300 || c.Mismatches != 0 {
					t.Fatalf("control: %+v, want 300 rows and no mismatch", *c)
				}
				move := "UPDATE " + d.Qualify(sc.Parent()) + " SET created_at = created_at + interval '1 hour' WHERE payload = 150"
				if innodb {
					move = "UPDATE " + d.Qualify(sc.Parent()) + " SET created_at = created_at + INTERVAL 1 HOUR WHERE payload = 150"
				}
				if _, err := d.Count(ctx, "SELECT 1 FROM "+d.Qualify(sc.Parent())+" WHERE payload = 150"); err != nil {
					t.Fatal(err)
				}
				if err := execSQL(ctx, d, move); err != nil {
					t.Fatal(err)
				}
				c, err = checkTime(ctx, d, sc, whole, run.maxLag)
				if err != nil {
					t.Fatal(err)
				}
				if c.Mismatches != 1 {
					t.Fatalf("after moving one row's created_at by an hour: %+v, want 1 mismatch", *c)
				}
			})
		}
	}
}

// TestRunKeepsReportOnTimeMismatch runs the app workload through Run and, before the time
// check, moves every parent's created_at an hour later: Run returns ErrTimeMismatch together
// with the finished report, its check marked MISMATCH in report.md. The control run, nothing
// moved, passes with no error. On the old code Run returned a nil report with the error.
func TestRunKeepsReportOnTimeMismatch(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, move := range []bool{false, true} {
		t.Run(fmt.Sprintf("moved=%v", move), func(t *testing.T) {
			cfg := Config{DB: dsn, Schemes: []string{"snowflake"}, Workload: WorkloadApp, Rows: 300, Lookups: 10, Repeat: 1, WarmupRows: -1}
			if move {
				cfg.beforeQueries = func(ctx context.Context, d engine.Engine, sc appScheme) error {
					return execSQL(ctx, d, "UPDATE "+d.Qualify(sc.Parent())+" SET created_at = created_at + interval '1 hour'")
				}
			}
			rep, err := Run(context.Background(), cfg)
			if !move {
				if err != nil || rep == nil || len(rep.App) != 1 || rep.App[0].Check == nil || rep.App[0].Check.Mismatches != 0 {
					t.Fatalf("control: report %v, error %v", rep != nil, err)
				}
				return
			}
			if !errors.Is(err, ErrTimeMismatch) {
				t.Fatalf("error %v, want ErrTimeMismatch", err)
			}
			if rep == nil || len(rep.App) != 1 {
				t.Fatalf("report %+v, want the finished report with the error", rep)
			}
			a := rep.App[0]
			if a.Operations != 300 || a.OpsPerSec <= 0 || a.Check == nil || a.Check.Mismatches == 0 {
				t.Fatalf("result %d ops at %.0f/s, check %+v", a.Operations, a.OpsPerSec, a.Check)
			}
			dir := t.TempDir()
			if err := WriteReport(dir, rep); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "MISMATCH") || !strings.Contains(string(md), "TIME CHECK FAILED") {
				t.Errorf("report.md does not mark the mismatch:\n%s", md)
			}
		})
	}
}

func mustCodec(t *testing.T, spec string) idkit.Codec {
	t.Helper()
	c, err := idkit.NewCodec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// execSQL runs a statement on the engine's admin connection (through Count, which reads
// no rows from it).
func execSQL(ctx context.Context, d engine.Engine, q string) error {
	_, err := d.Count(ctx, q)
	return err
}
