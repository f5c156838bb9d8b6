package dbbench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench"
)

// TestRunScaleSQLite runs a small fleet study and a small size study on SQLite and checks the
// report: one run per node count and size, each with its own settings, a simulated fleet only
// in the fleet study, and every file written.
func TestRunScaleSQLite(t *testing.T) {
	skipSQLiteUnderRace(t)
	cfg := small(dbbench.EngineSQLite, "bigserial", "snowflake", "ulid", "uuidv7")
	cfg.ClockSkew = time.Millisecond
	var done []string
	s, err := dbbench.RunScale(context.Background(), cfg, []int{1, 16}, []int{2000, 4000}, func(r dbbench.ScaleRun) {
		done = append(done, r.Report.Settings.Engine)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fleet) != 2 || len(s.Sizes) != 2 || len(done) != 4 {
		t.Fatalf("%d fleet runs, %d size runs, %d callbacks; want 2, 2, 4", len(s.Fleet), len(s.Sizes), len(done))
	}
	for i, k := range []int{1, 16} {
		st := s.Fleet[i].Report.Settings
		if s.Fleet[i].Nodes != k || st.Nodes != k || st.FleetRate != dbbench.DefaultFleetRate || st.ClockSkew != dbbench.Duration(time.Millisecond) {
			t.Errorf("fleet run %d: nodes %d, settings %+v", i, s.Fleet[i].Nodes, st)
		}
	}
	for i, n := range []int{2000, 4000} {
		r := s.Sizes[i]
		if r.Rows != n || r.Nodes != 1 || r.Report.Settings.FleetRate != 0 {
			t.Errorf("size run %d: %d rows, %d nodes, fleet rate %v", i, r.Rows, r.Nodes, r.Report.Settings.FleetRate)
		}
		for _, res := range r.Report.Results {
			if res.Rows != int64(n) {
				t.Errorf("size run %d, %s: %d rows, want %d", i, res.Scheme, res.Rows, n)
			}
		}
	}
	dir := t.TempDir()
	if err := dbbench.WriteScale(dir, s); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, dbbench.ScaleMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	checkCharts(t, dir, string(md), "fleet-rows-per-sec.svg", "fleet-leaf-density.svg", "size-throughput.svg")
	var back dbbench.Scale
	js, err := os.ReadFile(filepath.Join(dir, dbbench.ScaleJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := dbbench.WriteScaleSummary(&a, s); err != nil {
		t.Fatal(err)
	}
	if err := dbbench.WriteScaleSummary(&b, &back); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("summary differs after a JSON round trip:\n%s\n---\n%s", a.String(), b.String())
	}
	for _, want := range []string{"| snowflake | 16 |", "| uuidv7 | 1 |", "2,000 to 4,000 rows"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, a.String())
		}
	}
}

func TestRunScaleErrors(t *testing.T) {
	t.Parallel()
	cfg := small(dbbench.EngineSQLite, "snowflake:node_bits=3")
	if _, err := dbbench.RunScale(context.Background(), cfg, nil, nil, nil); err == nil {
		t.Error("no node counts and no sizes: no error")
	}
	_, err := dbbench.RunScale(context.Background(), cfg, []int{16}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "holds 8 nodes, fewer than --nodes 16") {
		t.Errorf("16 nodes on 3 node bits: err %v", err)
	}
}

// checkCharts checks that each file in dir is an SVG and that the Markdown md shows it.
func checkCharts(t *testing.T, dir, md string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s is not an SVG", f)
		}
		if !strings.Contains(md, "("+f+")") {
			t.Errorf("the report does not show %s", f)
		}
	}
}
