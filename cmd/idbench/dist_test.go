package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/dist"
)

// distSmall is a quick model run: two schemes, two cluster sizes, a short run.
var distSmall = []string{"dist", "--schemes", "sequence,uuidv4", "--cluster", "1,4", "--seconds", "120", "--rebalance", "20s", "--samples", "100", "--capacity-from", "none"}

func TestDistHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"dist", "--help"}, {"help", "dist"}} {
		r := idbench(t, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		golden(t, "help_dist.golden", r.stdout)
	}
}

// TestDistModel checks that the report says it is a model, prints its assumptions, and
// is the same on every run with the same seed.
func TestDistModel(t *testing.T) {
	t.Parallel()
	a := idbench(t, "", distSmall...)
	if a.code != 0 {
		t.Fatalf("exit %d: %s", a.code, a.stderr)
	}
	for _, want := range []string{dist.Label, "Assumptions:", "free parameter index share", "source: kv.range_split.load_qps_threshold 2500",
		"sequence  (capacity C = 10,000", "uuidv4 overtakes sequence at N=4"} {
		if !strings.Contains(a.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, a.stdout)
		}
	}
	if b := idbench(t, "", distSmall...); b.stdout != a.stdout {
		t.Errorf("two runs with the same seed differ:\n%s\n---\n%s", a.stdout, b.stdout)
	}
	if c := idbench(t, "", append(distSmall, "--seed", "2")...); c.stdout == a.stdout {
		t.Errorf("a different seed gave the same report")
	}
}

func TestDistOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := idbench(t, "", append(distSmall, "--json", "--out", dir, "--target", "tidb")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep dist.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if rep.Label != dist.Label || rep.Config.Target.Name != "tidb" || len(rep.Results) != 2 || len(rep.Results[0].Runs) != 2 {
		t.Errorf("--json report: %+v", rep)
	}
	for _, f := range []string{"dist.json", "dist.txt", "throughput.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "throughput.svg" && !strings.Contains(string(b), "MODEL") {
			t.Errorf("the chart is not titled as a model")
		}
	}
}

// TestDistCapacityFrom takes each scheme's capacity from a committed idbench db report.
func TestDistCapacityFrom(t *testing.T) {
	t.Parallel()
	args := append(append([]string{}, distSmall[:len(distSmall)-2]...), "--capacity-from", "../../docs/report/report.json")
	r := idbench(t, "", args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "from rows/s of ../../docs/report/report.json") {
		t.Errorf("capacity not taken from the report:\n%s", r.stdout)
	}
}

func TestDistBadInput(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"dist", "--target", "oracle"}, `unknown target "oracle"`},
		{[]string{"dist", "--cluster", "3,x"}, `--cluster: "x"`},
		{[]string{"dist", "--cluster", "0"}, `--cluster: "0"`},
		{[]string{"dist", "--capacity", "-5"}, "--capacity -5"},
		{[]string{"dist", "--capacity-from", "/nonexistent/report.json"}, "--capacity-from"},
		{[]string{"dist", "--schemes", "bogus", "--cluster", "1", "--seconds", "10"}, "bogus"},
		{[]string{"dist", "--index-share", "1.5"}, "index share 1.5"},
		{[]string{"dist", "extra"}, `unexpected argument "extra"`},
	} {
		r := idbench(t, "", tt.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// TestDistCapacityFromLSM checks that an LSM report's capacities come out at each target's
// published per-node scale, with the source quoted: the best scheme at the published figure,
// every other at or below it, and --capacity-scale raw keeping the measured rows/s.
func TestDistCapacityFromLSM(t *testing.T) {
	t.Parallel()
	const lsm = "../../docs/report-pebble-layouts/report.json"
	for _, tc := range []struct {
		target, best, url string
	}{
		{"spanner", "3,500", "https://cloud.google.com/spanner/docs/performance"},
		{"tidb", "4,281", "https://docs.pingcap.com/tidbcloud/tidb-cloud-performance-reference"},
	} {
		r := idbench(t, "", "dist", "--target", tc.target, "--schemes", "sequence,uuidv4", "--cluster", "1", "--seconds", "10", "--samples", "10", "--capacity-from", lsm)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.target, r.code, r.stderr)
		}
		for _, want := range []string{"sequence  (capacity C = " + tc.best + " writes/s per node", tc.url, "rows per byte written"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.target, want, r.stdout)
			}
		}
	}
	raw := idbench(t, "", "dist", "--schemes", "sequence", "--cluster", "1", "--seconds", "10", "--samples", "10", "--capacity-from", lsm, "--capacity-scale", "raw")
	if raw.code != 0 || !strings.Contains(raw.stdout, "from rows/s of "+lsm) {
		t.Errorf("--capacity-scale raw: exit %d, output:\n%s%s", raw.code, raw.stdout, raw.stderr)
	}
}
