package dbbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files WriteScale writes into its directory.
const (
	ScaleMarkdown = "scale.md"
	ScaleJSON     = "scale.json"
)

// Scale is the outcome of RunScale: one run per fleet size and one per table size.
type Scale struct {
	Command string     `json:"command,omitempty"`
	Fleet   []ScaleRun `json:"fleet,omitempty"` // by number of nodes, in the order asked for
	Sizes   []ScaleRun `json:"sizes,omitempty"` // by rows per scheme, in the order asked for
}

// ScaleRun is one Run inside a Scale.
type ScaleRun struct {
	Nodes int `json:"nodes"`
	Rows  int `json:"rows"`
	// MaxRSSBytes is the largest resident set of this process so far when the run ended
	// (getrusage's ru_maxrss), so it only grows along a Scale; zero where unknown. It
	// covers the harness only, not the database server.
	MaxRSSBytes int64   `json:"max_rss_bytes,omitempty"`
	Report      *Report `json:"report"`
}

// RunScale runs base once per node count in nodes (a simulated fleet, each node issuing
// base.FleetRate/K IDs per second, DefaultFleetRate when zero, one node included) and once
// per row count in sizes (one generator on the real clock, as a plain Run). Each run takes
// every other field from base. done, when non-nil, is called after each run.
func RunScale(ctx context.Context, base Config, nodes, sizes []int, done func(ScaleRun)) (*Scale, error) {
	if len(nodes) == 0 && len(sizes) == 0 {
		return nil, fmt.Errorf("dbbench: scale: no node counts and no table sizes to run")
	}
	s := &Scale{Command: base.Command}
	run := func(cfg Config) (ScaleRun, error) {
		rep, err := Run(ctx, cfg)
		if err != nil {
			return ScaleRun{}, fmt.Errorf("dbbench: scale run with %d node(s), %d rows: %w", cfg.Nodes, cfg.Rows, err)
		}
		r := ScaleRun{Nodes: rep.Settings.Nodes, Rows: rep.Settings.Rows, MaxRSSBytes: maxRSS(), Report: rep}
		if done != nil {
			done(r)
		}
		return r, nil
	}
	for _, k := range nodes {
		cfg := base
		cfg.Nodes = k
		if cfg.FleetRate == 0 {
			cfg.FleetRate = DefaultFleetRate
		}
		r, err := run(cfg)
		if err != nil {
			return nil, err
		}
		s.Fleet = append(s.Fleet, r)
	}
	for _, n := range sizes {
		cfg := base
		cfg.Rows, cfg.Nodes, cfg.FleetRate = n, 1, 0
		if base.WarmupRows == 0 {
			// A warm-up warms caches and connections; a fifth of a 50M-row load would
			// add 10M rows per scheme for nothing.
			cfg.WarmupRows = max(1, min(n/5, 100000))
		}
		r, err := run(cfg)
		if err != nil {
			return nil, err
		}
		s.Sizes = append(s.Sizes, r)
	}
	return s, nil
}

// WriteScale writes s into dir (created if missing): scale.md with tables, the charts (rows/s
// and leaf density against the number of nodes; throughput against rows inserted on a log
// axis, with the row count at which each scheme's index reaches shared_buffers marked) and
// scale.json.
func WriteScale(dir string, s *Scale) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dbbench: create scale directory: %w", err)
	}
	cs, err := scaleCharts(s)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := os.WriteFile(filepath.Join(dir, c.file), c.svg, 0o644); err != nil {
			return fmt.Errorf("dbbench: write chart: %w", err)
		}
	}
	var md, js strings.Builder
	if err := writeScaleMarkdown(&md, s, cs); err != nil {
		return err
	}
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("dbbench: encode scale: %w", err)
	}
	for name, text := range map[string]string{ScaleMarkdown: md.String(), ScaleJSON: js.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("dbbench: write %s: %w", name, err)
		}
	}
	return nil
}

// schemeNames returns the schemes of the runs in order of first appearance.
func schemeNames(runs []ScaleRun) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, res := range r.Report.Results {
			if !seen[res.Scheme] {
				seen[res.Scheme] = true
				names = append(names, res.Scheme)
			}
		}
	}
	return names
}

// result returns the result of scheme in rep.
func result(rep *Report, scheme string) (Result, bool) {
	for _, r := range rep.Results {
		if r.Scheme == scheme {
			return r, true
		}
	}
	return Result{}, false
}

// parsePGSize reads a PostgreSQL memory setting as SHOW prints it ("128MB", "16384kB",
// "1GB", "8kB") into bytes; false when it cannot.
func parsePGSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 || n > math.MaxInt64/u.mult {
				return 0, false
			}
			return n * u.mult, true
		}
	}
	return 0, false
}

// pageCache names the server's page cache setting as the report shows it and its size in
// bytes: shared_buffers on PostgreSQL, innodb_buffer_pool_size on InnoDB; ok is false when the
// size is unknown.
func pageCache(st Settings) (name, value string, bytes int64, ok bool) {
	if v := st.InnoDBBufferPoolSize; v != "" {
		mult := int64(1)
		num := v
		if n, cut := strings.CutSuffix(v, "G"); cut {
			num, mult = n, 1<<30
		} else if n, cut := strings.CutSuffix(v, "M"); cut {
			num, mult = n, 1<<20
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/mult {
			return "innodb_buffer_pool_size", v, 0, false
		}
		return "innodb_buffer_pool_size", v, n * mult, true
	}
	b, ok := parsePGSize(st.SharedBuffers)
	return "shared_buffers", st.SharedBuffers, b, ok
}

// cacheText is "shared_buffers 128MB" or "innodb_buffer_pool_size 128M".
func cacheText(st Settings) string {
	name, value, _, _ := pageCache(st)
	return name + " " + value
}

// logName names the server's write-ahead log: WAL on PostgreSQL, redo on InnoDB.
func logName(st Settings) string {
	if st.InnoDBBufferPoolSize != "" {
		return "redo"
	}
	return "WAL"
}

// cacheCrossing returns the row count at which r's index reaches cache bytes, taking the
// index to grow at its final bytes per row; false when it never does within r's rows.
func cacheCrossing(r Result, cache int64) (int64, bool) {
	if r.IndexBytesPerRow <= 0 || cache <= 0 {
		return 0, false
	}
	at := int64(float64(cache) / r.IndexBytesPerRow)
	return at, at <= r.Rows
}

func writeScaleMarkdown(w io.Writer, s *Scale, cs []chart) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# How each scheme's cost grows with the fleet and with the table\n\n")
	if s.Command != "" {
		p("Produced by `%s`.\n\n", s.Command)
	}
	if len(s.Fleet) > 0 {
		st := s.Fleet[0].Report.Settings
		p("## Fleet size\n\n")
		p("K simulated application servers write one table, each with its own generator, node value and clock. "+
			"The fleet issues %s IDs/s in all (R/K per node, Poisson arrivals in simulated time); each node's clock reads true time "+
			"plus a fixed offset drawn from a normal distribution with standard deviation %s; rows reach the table in the true order of issue. "+
			"%s rows per scheme, %s mode, median of %d run(s); %s, %s.\n\n",
			roundThousands(st.FleetRate), st.ClockSkew, thousands(int64(st.Rows)), st.Mode, st.Repeat, st.ServerVersion, cacheText(st))
		writeFleetTable(p, s)
		for _, c := range cs {
			if strings.HasPrefix(c.file, "fleet-") {
				p("\n![%s](%s)\n", c.title, c.file)
			}
		}
		p("\n")
	}
	if len(s.Sizes) > 0 {
		st := s.Sizes[len(s.Sizes)-1].Report.Settings
		p("## Table size\n\n")
		p("One generator on the real clock loads each table size into a fresh table; %s, %s, %s mode, median of %d run(s).\n\n",
			st.ServerVersion, cacheText(st), st.Mode, st.Repeat)
		writeSizeTable(p, s)
		for _, c := range cs {
			if strings.HasPrefix(c.file, "size-") {
				p("\n![%s](%s)\n\n", c.title, c.file)
				name, value, _, _ := pageCache(st)
				p("The dotted vertical lines mark, in each scheme's colour, the row count at which its index reaches %s (%s), "+
					"taking the index to grow at the bytes per row it ended with. The OS page cache was not limited: past %s, "+
					"evicted pages are read back from memory, not from disk.\n", name, value, name)
			}
		}
		p("\n")
	}
	p("## Memory of the harness\n\n| run | nodes | rows per scheme | max RSS of idbench, MB |\n|---|--:|--:|--:|\n")
	for _, r := range append(append([]ScaleRun(nil), s.Fleet...), s.Sizes...) {
		kind := "fleet"
		if r.Report.Settings.FleetRate == 0 {
			kind = "size"
		}
		rss := "n/a"
		if r.MaxRSSBytes > 0 {
			rss = fmt.Sprintf("%.1f", mb(r.MaxRSSBytes))
		}
		p("| %s | %d | %s | %s |\n", kind, r.Nodes, thousands(int64(r.Rows)), rss)
	}
	p("\nMax RSS is getrusage's ru_maxrss of the idbench process after each run, so it only grows down the table; keys are streamed, so it should not grow with the rows.\n")
	p("\nMachine-readable: [%s](%s), with every run's full report.\n", ScaleJSON, ScaleJSON)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFleetTable(p func(string, ...any), s *Scale) {
	var st Settings
	if len(s.Fleet) > 0 {
		st = s.Fleet[0].Report.Settings
	}
	p("| scheme | nodes | rows/s | leaf density %% | index B/row | %s B/row | rows/s vs 1 node |\n|---|--:|--:|--:|--:|--:|--:|\n", logName(st))
	for _, name := range schemeNames(s.Fleet) {
		var first float64
		for i, r := range s.Fleet {
			res, ok := result(r.Report, name)
			if !ok {
				continue
			}
			if i == 0 {
				first = res.RowsPerSec
			}
			p("| %s | %d | %s | %s | %.1f | %.1f | %.2f× |\n", mdEscape(name), r.Nodes, roundThousands(res.RowsPerSec),
				optFloat(res.AvgLeafDensity), res.IndexBytesPerRow, res.WALBytesPerRow, ratio(res.RowsPerSec, first))
		}
	}
}

func writeSizeTable(p func(string, ...any), s *Scale) {
	var st Settings
	if len(s.Sizes) > 0 {
		st = s.Sizes[len(s.Sizes)-1].Report.Settings
	}
	name, _, _, _ := pageCache(st)
	p("| scheme | rows | rows/s | index MB | index B/row | %s B/row | leaf density %% | index reaches %s at |\n|---|--:|--:|--:|--:|--:|--:|--:|\n", logName(st), name)
	for _, name := range schemeNames(s.Sizes) {
		for _, r := range s.Sizes {
			res, ok := result(r.Report, name)
			if !ok {
				continue
			}
			cross := "-"
			if _, _, cache, ok := pageCache(r.Report.Settings); ok {
				if at, in := cacheCrossing(res, cache); in {
					cross = thousands(at) + " rows"
				} else {
					cross = "beyond this size"
				}
			}
			p("| %s | %s | %s | %.1f | %.1f | %.1f | %s | %s |\n", mdEscape(name), thousands(res.Rows), roundThousands(res.RowsPerSec),
				mb(res.IndexBytes), res.IndexBytesPerRow, res.WALBytesPerRow, optFloat(res.AvgLeafDensity), cross)
		}
	}
}

// WriteScaleSummary writes the key figures of s as a compact Markdown block for documents
// that quote it: per scheme, rows/s and leaf density at each fleet size, and how rows/s,
// index bytes per row and WAL bytes per row change from the smallest table to the largest.
func WriteScaleSummary(w io.Writer, s *Scale) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if s.Command != "" {
		p("Command: `%s`\n\n", s.Command)
	}
	if len(s.Fleet) > 0 {
		st := s.Fleet[0].Report.Settings
		p("Fleet: %s rows per scheme, %s IDs/s across the fleet, node clocks offset with sd %s; %s; %s.\n\n",
			thousands(int64(st.Rows)), roundThousands(st.FleetRate), st.ClockSkew, st.ServerVersion, st.Started.Format(time.DateOnly))
		writeFleetTable(p, s)
		p("\n")
	}
	if len(s.Sizes) > 1 {
		lo, hi := s.Sizes[0], s.Sizes[len(s.Sizes)-1]
		p("Table size: %s to %s rows per scheme, %s; %s.\n\n", thousands(int64(lo.Rows)), thousands(int64(hi.Rows)),
			cacheText(hi.Report.Settings), hi.Report.Settings.ServerVersion)
		p("| scheme | rows/s at %s | rows/s at %s | change | index B/row | %s B/row |\n|---|--:|--:|--:|--:|--:|\n",
			thousands(int64(lo.Rows)), thousands(int64(hi.Rows)), logName(hi.Report.Settings))
		for _, name := range schemeNames(s.Sizes) {
			a, ok1 := result(lo.Report, name)
			z, ok2 := result(hi.Report, name)
			if !ok1 || !ok2 {
				continue
			}
			p("| %s | %s | %s | %.2f× | %.1f → %.1f | %.1f → %.1f |\n", mdEscape(name), roundThousands(a.RowsPerSec), roundThousands(z.RowsPerSec),
				ratio(z.RowsPerSec, a.RowsPerSec), a.IndexBytesPerRow, z.IndexBytesPerRow, a.WALBytesPerRow, z.WALBytesPerRow)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// roundThousands rounds v to a whole number and writes it with thousands separators.
func roundThousands(v float64) string { return thousands(int64(math.Round(v))) }
