package dbbench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Files WriteReport writes into its directory.
const (
	ReportMarkdown  = "report.md"
	ReportJSON      = "report.json"
	ReportBenchstat = "benchstat.txt"
)

// WriteReport writes the report into dir (created if missing): report.md
// with its tables and notes, SVG charts drawn with gonum.org/v1/plot
// (throughput against rows inserted, index bytes per row, WAL bytes per row,
// leaf density), report.json and benchstat.txt.
func WriteReport(dir string, rep *Report) error { return writeReport(dir, rep, true) }

// writeReport is WriteReport, leaving report.json alone unless withJSON.
func writeReport(dir string, rep *Report, withJSON bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dbbench: create report directory: %w", err)
	}
	var cs []chart
	if rep.Workload != WorkloadApp {
		var err error
		if cs, err = charts(rep); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if err := os.WriteFile(filepath.Join(dir, c.file), c.svg, 0o644); err != nil {
			return fmt.Errorf("dbbench: write chart: %w", err)
		}
	}
	files := []struct {
		name  string
		write func(io.Writer, *Report) error
	}{
		{ReportMarkdown, func(w io.Writer, r *Report) error {
			if r.Workload == WorkloadApp {
				return writeAppMarkdown(w, r)
			}
			return writeMarkdown(w, r, cs)
		}},
		{ReportJSON, WriteJSON},
		{ReportBenchstat, WriteBenchstat},
	}
	for _, f := range files {
		if f.name == ReportJSON && !withJSON {
			continue
		}
		var b strings.Builder
		if err := f.write(&b, rep); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("dbbench: write %s: %w", f.name, err)
		}
	}
	return nil
}

// WriteMarkdown writes the report as Markdown without charts.
func WriteMarkdown(w io.Writer, rep *Report) error {
	if rep.Workload == WorkloadApp {
		return writeAppMarkdown(w, rep)
	}
	return writeMarkdown(w, rep, nil)
}

// writeRunTail writes what every engine's report puts after its results table: the range-scan
// query (with the engine's placeholder), the harness baseline, the charts and the notes.
func writeRunTail(p func(string, ...any), rep *Report, cs []chart, placeholder, baseline string) {
	s := rep.Settings
	p("\nRange scan: `WHERE id > %s ORDER BY id LIMIT %d` from a sampled key; lookups and scans: %d each, after loading.\n", placeholder, s.RangeN, s.Lookups)
	if bl := rep.Baseline; bl != nil {
		p("\nHarness overhead: a %s into the same table shape ran at %.0f rows/s in the same run", baseline, bl.RowsPerSec)
		if bl.Scheme != "" {
			p("; %s reached %.0f rows/s, **%.2f×** of it", bl.Scheme, bl.RowsPerSec*bl.Ratio, bl.Ratio)
		}
		p(".\n")
	}
	writeStructures(p, rep)
	for _, c := range cs {
		p("\n## %s\n\n![%s](%s)\n", c.title, c.title, c.file)
	}
	if len(rep.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range rep.Notes {
			p("- %s\n", n)
		}
	}
}

// writeStructures lists every database object of the table workload's loads by name and
// role, as the engine reported them; reports written before they were listed have none.
func writeStructures(p func(string, ...any), rep *Report) {
	n := 0
	for _, r := range rep.Results {
		n += len(r.Structures)
	}
	if n == 0 {
		return
	}
	p("\n## Structures\n\nEvery database object of a scheme's loads, as the engine names it in the first measured run (each load numbers its own table), with the median size over the runs.\n\n")
	p("| scheme | structure | role | MB | B/row |\n|---|---|---|--:|--:|\n")
	for _, r := range rep.Results {
		for _, s := range r.Structures {
			p("| %s | %s | %s | %.2f | %.1f |\n", mdEscape(r.Scheme), mdEscape(s.Name), s.Role, mb(s.Bytes), s.BytesPerOp)
		}
	}
}

func writeMarkdown(w io.Writer, rep *Report, cs []chart) error {
	if d := dialectOf(rep.Settings.Engine); d.markdown != nil {
		return d.markdown(w, rep, cs)
	}
	s := rep.Settings
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# What each ID scheme costs a %s primary-key B-tree\n\n", dialectOf(s.Engine).Title)
	if s.Command != "" {
		p("Produced by `%s` on %s (took %s).\n\n", s.Command, s.Started.Format("2006-01-02 15:04 MST"), s.Duration)
	} else {
		p("Produced by idbench on %s (took %s).\n\n", s.Started.Format("2006-01-02 15:04 MST"), s.Duration)
	}
	p("Every scheme loads %d rows into its own table `(id PRIMARY KEY, payload bigint)`, in %s mode "+
		"(batch %d, %d client(s)), with IDs from %d generator(s) made while loading. "+
		"Each figure is the median of %d runs after a discarded %d-row warm-up.\n\n",
		s.Rows, s.Mode, s.Batch, s.Clients, s.Nodes, s.Repeat, s.WarmupRows)
	if s.FleetRate > 0 {
		p("The %d generator(s) are a simulated fleet: each node issues %.0f IDs/s as a Poisson process in simulated time "+
			"with its own clock, offset by a normal draw with standard deviation %s, and rows reach the table in the order of issue.\n\n",
			s.Nodes, s.FleetRate/float64(max(s.Nodes, 1)), s.ClockSkew)
	}

	p("## Results\n\n")
	p("| scheme | column | rows/s | index MB | index B/row | table MB | WAL B/row | full-page images | checkpoints | leaf density %% | leaf fragmentation %% | lookup p50 µs | range scan p50 µs |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rep.Results {
		p("| %s | %s | %.0f | %.2f | %.1f | %.2f | %.1f | %s | %s | %s | %s | %s | %s |\n",
			mdEscape(r.Scheme), mdEscape(r.ColumnType), r.RowsPerSec, mb(r.IndexBytes), r.IndexBytesPerRow, mb(r.TableBytes),
			r.WALBytesPerRow, optInt(r.WALFPI), optInt(r.Checkpoints), optFloat(r.AvgLeafDensity), optFloat(r.LeafFragmentation),
			optLatency(r.PointLookup), optLatency(r.RangeScan))
	}
	writeRunTail(p, rep, cs, "$1", "bare pgx `CopyFrom` of ascending int64 keys")

	p("\n## How to read this\n\n")
	p("- **index B/row**: the primary-key index's size on disk divided by the rows in it. Ordered keys fill each leaf page to the fillfactor (%d) and split only the right-most page; random keys split pages in the middle, leaving them about half to three-quarters full.\n", s.Fillfactor)
	p("- **leaf density / fragmentation**: from %s. Density is how full the leaf pages are; fragmentation is the share of leaf pages whose next page in key order lies earlier on disk, which turns range scans into random reads.\n", statsSource(s.Statistics))
	p("- **WAL B/row** and **full-page images**: what the load wrote to the write-ahead log. After a checkpoint, the first change to each page writes the whole page to the WAL; random keys touch many more pages, so they pay this far more often.\n")
	p("- **rows/s per chunk** (chart): when the index outgrows the cache, random keys have to read pages back before changing them and the curve falls; ordered keys keep writing the same right-most pages.\n")

	row := settingsTable(p, s)
	row("statistics", s.Statistics)
	row("left behind", s.LeftBehind)
	row("other idbench sessions", s.OtherRuns)
	if dialectOf(s.Engine).Checkpoints {
		row("checkpoint before each load", s.CheckpointBeforeRun)
	}
	row("profile", s.Profile)
	row("fillfactor", s.Fillfactor)
	row("rows", s.Rows)
	row("insert mode", s.Mode)
	row("batch", s.Batch)
	row("clients", s.Clients)
	row("nodes", s.Nodes)
	if s.FleetRate > 0 {
		row("fleet rate, IDs/s", fmt.Sprintf("%.0f", s.FleetRate))
		row("clock skew (sd)", s.ClockSkew)
	}
	row("repeat", s.Repeat)
	row("warm-up rows", s.WarmupRows)
	row("Go", goSetting(s))
	p("\nMachine-readable: [%s](%s), [%s](%s) (compare runs with `benchstat -col /scheme %s`).\n",
		ReportJSON, ReportJSON, ReportBenchstat, ReportBenchstat, ReportBenchstat)
	_, err := io.WriteString(w, b.String())
	return err
}

// settingsTable writes the heading of a report's Settings table and its first rows (engine,
// server, the server settings), and returns the function that writes a further row, which
// leaves out empty and zero values.
func settingsTable(p func(string, ...any), s Settings) func(k string, v any) {
	p("\n## Settings\n\n| setting | value |\n|---|---|\n")
	row := func(k string, v any) {
		if str := fmt.Sprint(v); str != "" && str != "0" {
			p("| %s | %s |\n", k, mdEscape(str))
		}
	}
	row("engine", s.Engine)
	row("server", s.ServerVersion)
	dialectOf(s.Engine).ServerSettings(row, s)
	row("load average of the machine at start, end (/proc/loadavg)", s.LoadAverage)
	return row
}

// goSetting is the Go row of a Settings table.
func goSetting(s Settings) string {
	return fmt.Sprintf("%s %s/%s, %d CPUs, GOMAXPROCS %d", s.GoVersion, s.GOOS, s.GOARCH, s.NumCPU, s.GOMAXPROCS)
}

func statsSource(s string) string {
	switch s {
	case "pgstattuple":
		return "pgstattuple's `pgstatindex`"
	case "dbstat":
		return "SQLite's `dbstat` (density: used bytes of leaf pages; fragmentation as pgstatindex defines it)"
	}
	return "nowhere in this run (" + s + ")"
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// WriteSummary writes the report's key figures as a compact Markdown block
// for documents that quote a report: the command that produced it, the
// settings that shape it, and per scheme throughput, index size, WAL volume
// and leaf statistics, each also relative to the first scheme. Documents
// embed its output verbatim, so no figure is typed by hand.
func WriteSummary(w io.Writer, rep *Report) error {
	if d := dialectOf(rep.Settings.Engine); d.summary != nil {
		return d.summary(w, rep)
	}
	s := rep.Settings
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if s.Command != "" {
		p("Command: `%s`\n\n", s.Command)
	}
	p("%s; %s rows per scheme, %s mode, %d client(s), %d node(s), %s profile, fillfactor %d", s.ServerVersion, thousands(int64(s.Rows)), s.Mode, s.Clients, s.Nodes, s.Profile, s.Fillfactor)
	if s.SharedBuffers != "" {
		p(", shared_buffers %s, max_wal_size %s", s.SharedBuffers, s.MaxWALSize)
	}
	p("; median of %d runs; %s.\n\n", s.Repeat, s.Started.Format("2006-01-02"))
	if len(rep.Results) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	ref := rep.Results[0]
	p("| scheme | column | rows/s | vs %s | index B/row | vs %s | WAL B/row | full-page images | checkpoints | leaf density %% | leaf fragmentation %% |\n", ref.Scheme, ref.Scheme)
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rep.Results {
		p("| %s | %s | %s | %.2f× | %.1f | %.2f× | %.1f | %s | %s | %s | %s |\n", mdEscape(r.Scheme), mdEscape(r.ColumnType),
			thousands(int64(r.RowsPerSec+0.5)), ratio(r.RowsPerSec, ref.RowsPerSec), r.IndexBytesPerRow,
			ratio(r.IndexBytesPerRow, ref.IndexBytesPerRow), r.WALBytesPerRow, optCount(r.WALFPI), optCount(r.Checkpoints),
			optFloat(r.AvgLeafDensity), optFloat(r.LeafFragmentation))
	}
	if bl := rep.Baseline; bl != nil && bl.Scheme != "" {
		p("\nHarness check: %s reached %.2f× the rows/s of a bare pgx CopyFrom of ascending int64 keys (%s rows/s) in the same run.\n",
			bl.Scheme, bl.Ratio, thousands(int64(bl.RowsPerSec+0.5)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// optCount formats a count the engine may not report ("n/a" then).
func optCount(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return thousands(*v)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// thousands formats n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
