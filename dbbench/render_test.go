package dbbench_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
)

// TestCommittedReportsRender: every committed report of idbench db (docs/report*/report.json)
// renders again, by RenderReport (idbench db --render), into exactly the report.md,
// benchstat.txt and charts committed beside it, so no committed report is stale or edited by
// hand. A report that changed is brought up to date with `idbench db --render DIR`.
func TestCommittedReportsRender(t *testing.T) {
	dirs, err := filepath.Glob("../docs/report*/report.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no committed reports found (%v)", err)
	}
	for _, js := range dirs {
		src := filepath.Dir(js)
		t.Run(filepath.Base(src), func(t *testing.T) {
			dst := t.TempDir()
			files, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, dbbench.ReportJSON), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := dbbench.RenderReport(dst); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadDir(dst)
			if len(got) != len(files) {
				t.Errorf("render wrote %d files, %s holds %d", len(got), src, len(files))
			}
			for _, f := range files {
				want, _ := os.ReadFile(filepath.Join(src, f.Name()))
				have, err := os.ReadFile(filepath.Join(dst, f.Name()))
				if err != nil {
					t.Errorf("render did not write %s", f.Name())
					continue
				}
				if !bytes.Equal(want, have) {
					t.Errorf("%s/%s differs from a fresh render of its report.json: run `go run ./cmd/idbench db --render %s` and commit",
						src, f.Name(), strings.TrimPrefix(src, "../"))
				}
			}
		})
	}
}

// TestReadReportErrors: a file that is not a report fails with ErrNotReport, naming the file
// and what is wrong.
func TestReadReportErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"syntax", `{"results": [}`, "invalid JSON at byte 14"},
		{"truncated", `{"results": [`, "JSON ends early"},
		{"nothing", ``, "JSON ends early"},
		{"type", `{"results": 3}`, `field "results"`},
		{"empty", `{}`, "no results"},
		{"two", `{"results":[{}]} {}`, "more than one JSON value"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := dbbench.ReadReport(p)
		if !errors.Is(err, dbbench.ErrNotReport) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want ErrNotReport naming %s and %q", tc.name, err, p, tc.want)
		}
	}
	if _, err := dbbench.ReadReport(filepath.Join(dir, "missing.json")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzReadReport: ReadReport never panics; what it refuses is ErrNotReport, and what it
// accepts has results and renders.
func FuzzReadReport(f *testing.F) {
	for _, s := range []string{`{}`, `{"results":[{}]}`, `{"workload":"app","app":[{}]}`, `{"results": [`, `[1,2]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), dbbench.ReportJSON)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := dbbench.ReadReport(p)
		if err != nil {
			if !errors.Is(err, dbbench.ErrNotReport) {
				t.Fatalf("error %v is not ErrNotReport", err)
			}
			return
		}
		if len(rep.Results) == 0 && len(rep.App) == 0 {
			t.Fatal("accepted a report without results")
		}
		var md bytes.Buffer
		_ = dbbench.WriteMarkdown(&md, rep) // must not panic
	})
}

// TestCommittedSweepsRender: every committed sweep of idbench db --clients
// (docs/report*/sweep.json) renders again, by RenderSweep (idbench db --render), into exactly
// the sweep.md and charts committed beside it.
func TestCommittedSweepsRender(t *testing.T) {
	files, err := filepath.Glob("../docs/report*/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	remedies, err := filepath.Glob("../docs/report-remedies/*/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, remedies...)
	for _, js := range files {
		src := filepath.Dir(js)
		t.Run(filepath.Base(src), func(t *testing.T) {
			dst := t.TempDir()
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, dbbench.SweepJSON), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := dbbench.RenderSweep(dst); err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadDir(src)
			got, _ := os.ReadDir(dst)
			if len(got) != len(want) {
				t.Errorf("render wrote %d files, %s holds %d", len(got), src, len(want))
			}
			for _, f := range want {
				w, _ := os.ReadFile(filepath.Join(src, f.Name()))
				h, err := os.ReadFile(filepath.Join(dst, f.Name()))
				if err != nil || !bytes.Equal(w, h) {
					t.Errorf("%s/%s differs from a fresh render of its sweep.json: run `go run ./cmd/idbench db --render %s` and commit",
						src, f.Name(), strings.TrimPrefix(src, "../"))
				}
			}
		})
	}
}

// TestReadSweepErrors: a file that is not a sweep fails with ErrNotSweep naming the file.
func TestReadSweepErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"syntax", `{"runs": [}`, "invalid character"},
		{"empty", `{}`, "no runs"},
		{"noreport", `{"runs":[{"clients":4}]}`, "run 1 (4 clients) has no results"},
		{"two", `{"runs":[]} {}`, "more than one JSON value"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := dbbench.ReadSweep(p)
		if !errors.Is(err, dbbench.ErrNotSweep) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want ErrNotSweep naming %s and %q", tc.name, err, p, tc.want)
		}
	}
}
