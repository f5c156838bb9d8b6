package dbbench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the report as an aligned text table, with the settings
// above it and the notes below it.
func WriteTable(w io.Writer, rep *Report) error {
	if rep.Workload == WorkloadApp {
		return writeAppTable(w, rep)
	}
	d := dialectOf(rep.Settings.Engine)
	if d.table != nil {
		return d.table(w, rep)
	}
	s := rep.Settings
	var b strings.Builder
	fmt.Fprintf(&b, "engine %s, %s\n", s.Engine, s.ServerVersion)
	fmt.Fprintf(&b, "%s\n", d.SettingsLine(s))
	fmt.Fprintf(&b, "rows %d, mode %s, batch %d, clients %d, nodes %d, profile %s, fillfactor %d, median of %d runs (+%d-row warm-up)\n\n",
		s.Rows, s.Mode, s.Batch, s.Clients, s.Nodes, s.Profile, s.Fillfactor, s.Repeat, s.WarmupRows)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scheme\tcolumn\trows/s\tindex MB\tindex B/row\ttable MB\tWAL B/row\tFPI\tckpt\tleaf density %\tleaf frag %\tlookup p50 µs\trange p50 µs\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f\t%.1f\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			r.Scheme, r.ColumnType, r.RowsPerSec, mb(r.IndexBytes), r.IndexBytesPerRow, mb(r.TableBytes),
			r.WALBytesPerRow, optInt(r.WALFPI), optInt(r.Checkpoints), optFloat(r.AvgLeafDensity), optFloat(r.LeafFragmentation),
			optLatency(r.PointLookup), optLatency(r.RangeScan))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bl := rep.Baseline; bl != nil {
		fmt.Fprintf(&b, "\nbaseline: bare pgx CopyFrom of ascending int64 keys: %.0f rows/s", bl.RowsPerSec)
		if bl.Scheme != "" {
			fmt.Fprintf(&b, "; %s reaches %.2f× of it", bl.Scheme, bl.Ratio)
		}
		b.WriteByte('\n')
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func optInt(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

func optFloat(p *float64) string {
	if p == nil {
		return "unavailable"
	}
	return fmt.Sprintf("%.1f", *p)
}

// WriteJSON writes the report as indented JSON: an object with "settings",
// "results" (one object per scheme), "baseline" and "notes".
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteBenchstat writes one line per measured run in the Go benchmark
// format, so that golang.org/x/perf/cmd/benchstat can compare reports:
//
//	benchstat -col /scheme report.txt
func WriteBenchstat(w io.Writer, rep *Report) error {
	if rep.Workload == WorkloadApp {
		return writeAppBenchstat(w, rep)
	}
	s := rep.Settings
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/idkit/idkit/dbbench\n", s.GOOS, s.GOARCH)
	fmt.Fprintf(&b, "engine: %s\nserver: %s\nprofile: %s\nmode: %s\n", s.Engine, s.ServerVersion, s.Profile, s.Mode)
	if s.SharedBuffers != "" {
		fmt.Fprintf(&b, "shared_buffers: %s\n", s.SharedBuffers)
	}
	line := func(name string, rows int64, sm Sample) {
		fmt.Fprintf(&b, "BenchmarkInsert/%s/rows=%d/clients=%d/nodes=%d \t%d\t%.1f ns/row\t%.0f rows/s\t%.2f index-B/row\t%.2f WAL-B/row",
			name, s.Rows, s.Clients, s.Nodes, rows, 1e9/sm.RowsPerSec, sm.RowsPerSec, sm.IndexBytesPerRow, sm.WALBytesPerRow)
		if sm.AvgLeafDensity != nil {
			fmt.Fprintf(&b, "\t%.2f leaf-density-%%", *sm.AvgLeafDensity)
		}
		b.WriteByte('\n')
	}
	for _, r := range rep.Results {
		for _, sm := range r.Runs {
			line("scheme="+benchName(r.Scheme), r.Rows, sm)
		}
	}
	if bl := rep.Baseline; bl != nil {
		for _, sm := range bl.Runs {
			line("scheme=baseline-copy", bl.Rows, sm)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName makes a scheme label safe inside a benchmark name: no spaces or
// slashes.
func benchName(s string) string {
	return strings.NewReplacer(" ", "_", "/", "_", "\t", "_").Replace(s)
}

// optLatency formats a median latency in microseconds, or "n/a" when no
// queries were measured.
func optLatency(l Latency) string {
	if l.Count == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", l.P50Micros)
}
