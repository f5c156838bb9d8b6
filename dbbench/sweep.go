package dbbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Files WriteSweep writes into its directory.
const (
	SweepMarkdown = "sweep.md"
	SweepJSON     = "sweep.json"
)

// ErrNotSweep is returned (wrapped) by ReadSweep for a file that is not a sweep of idbench db
// --clients: not JSON, or JSON without runs.
var ErrNotSweep = errors.New("dbbench: not an idbench db --clients sweep")

// Sweep is the outcome of RunSweep: one Run per number of concurrent clients, every other
// setting the same.
type Sweep struct {
	Command string     `json:"command,omitempty"`
	Runs    []SweepRun `json:"runs"`
}

// SweepRun is one Run inside a Sweep.
type SweepRun struct {
	Clients int `json:"clients"`
	// LoadStart and LoadEnd are the machine's 1-minute load average (/proc/loadavg) when the
	// run started and ended: other work on the machine shares its CPUs with the run; absent
	// where the system does not say.
	LoadStart *float64 `json:"load_start,omitempty"`
	LoadEnd   *float64 `json:"load_end,omitempty"`
	Report    *Report  `json:"report"`
}

// loadAvg reads the 1-minute load average, nil where /proc/loadavg is missing.
func loadAvg() *float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil
	}
	return &v
}

// RunSweep runs base once per client count in clients, in that order, each run taking every
// other field from base. done, when non-nil, is called after each run. On error the runs that
// finished are returned with it.
func RunSweep(ctx context.Context, base Config, clients []int, done func(SweepRun)) (*Sweep, error) {
	if len(clients) == 0 {
		return nil, errors.New("dbbench: sweep: no client counts to run")
	}
	s := &Sweep{Command: base.Command}
	for _, n := range clients {
		cfg := base
		cfg.Clients = n
		logf(cfg, "dbbench: sweep: %d client(s)", n)
		r := SweepRun{Clients: n, LoadStart: loadAvg()}
		rep, err := Run(ctx, cfg)
		r.LoadEnd, r.Report = loadAvg(), rep
		if rep != nil {
			s.Runs = append(s.Runs, r)
		}
		if err != nil {
			return s, fmt.Errorf("dbbench: sweep run with %d client(s): %w", n, err)
		}
		if done != nil {
			done(r)
		}
	}
	return s, nil
}

// ReadSweep reads a sweep.json written by WriteSweep. Errors name the file.
func ReadSweep(path string) (*Sweep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dbbench: read sweep: %w", err)
	}
	s := new(Sweep)
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotSweep, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: more than one JSON value", ErrNotSweep, path)
	}
	if len(s.Runs) == 0 {
		return nil, fmt.Errorf("%w: %s: no runs", ErrNotSweep, path)
	}
	for i, r := range s.Runs {
		if r.Report == nil || (len(r.Report.Results) == 0 && len(r.Report.App) == 0) {
			return nil, fmt.Errorf("%w: %s: run %d (%d clients) has no results", ErrNotSweep, path, i+1, r.Clients)
		}
	}
	return s, nil
}

// WriteSweep writes s into dir (created if missing): sweep.md with its tables, the charts of
// bytes per operation (row) and operations (rows) per second against clients, one line per
// scheme, and sweep.json.
func WriteSweep(dir string, s *Sweep) error { return writeSweep(dir, s, true) }

// RenderSweep writes sweep.md and the charts of dir again from its sweep.json, measuring
// nothing and leaving sweep.json as it is (idbench db --render).
func RenderSweep(dir string) error {
	s, err := ReadSweep(filepath.Join(dir, SweepJSON))
	if err != nil {
		return err
	}
	return writeSweep(dir, s, false)
}

func writeSweep(dir string, s *Sweep, withJSON bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dbbench: create sweep directory: %w", err)
	}
	cs, err := sweepCharts(s)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := os.WriteFile(filepath.Join(dir, c.file), c.svg, 0o644); err != nil {
			return fmt.Errorf("dbbench: write chart: %w", err)
		}
	}
	var md bytes.Buffer
	if err := writeSweepMarkdown(&md, s, cs); err != nil {
		return err
	}
	files := map[string][]byte{SweepMarkdown: md.Bytes()}
	if withJSON {
		var js bytes.Buffer
		enc := json.NewEncoder(&js)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("dbbench: encode sweep: %w", err)
		}
		files[SweepJSON] = js.Bytes()
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("dbbench: write %s: %w", name, err)
		}
	}
	return nil
}

// sweepPoint is one scheme's figures in one run of a sweep, whatever the workload.
type sweepPoint struct {
	bytes, rate float64
	contention  *Contention
	splits      *float64 // table workload: page splits per row
	density     *float64 // table workload: primary-key leaf density
	ok          bool
}

// sweepSchemes returns the schemes of s in order of first appearance.
func sweepSchemes(s *Sweep) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, r := range s.Runs {
		for _, a := range r.Report.App {
			add(a.Scheme)
		}
		for _, res := range r.Report.Results {
			add(res.Scheme)
		}
	}
	return names
}

// point returns scheme's figures in rep: bytes per operation and operations per second (app
// workload), or primary-key bytes per row and rows per second (table workload).
func point(rep *Report, scheme string) sweepPoint {
	if rep.Workload == WorkloadApp {
		if a, ok := appResult(rep, scheme); ok {
			return sweepPoint{bytes: a.BytesPerOp, rate: a.OpsPerSec, contention: a.Contention, ok: true}
		}
		return sweepPoint{}
	}
	r, ok := result(rep, scheme)
	if !ok || r.Failure != "" {
		return sweepPoint{}
	}
	pt := sweepPoint{bytes: r.IndexBytesPerRow, rate: r.RowsPerSec, density: r.AvgLeafDensity, contention: r.Contention, ok: true}
	if r.PageSplits != nil && r.Rows > 0 {
		pt.splits = new(float64)
		*pt.splits = float64(*r.PageSplits) / float64(r.Rows)
	}
	return pt
}

// sweepUnits names the sweep's figures: what an operation is and what the bytes count.
func sweepUnits(s *Sweep) (bytesName, rateName, op string) {
	if s.Runs[0].Report.Workload == WorkloadApp {
		return "bytes per operation (all tables and indexes)", "operations per second", "op"
	}
	if dialectOf(s.Runs[0].Report.Settings.Engine).Clustered {
		return "clustered index (the table) bytes per row", "rows per second", "row"
	}
	return "primary-key index bytes per row", "rows per second", "row"
}

func writeSweepMarkdown(w io.Writer, s *Sweep, cs []chart) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	first := s.Runs[0].Report
	st := first.Settings
	workload := "one table per scheme (id PRIMARY KEY, payload)"
	if first.Workload == WorkloadApp {
		workload = fmt.Sprintf("the app workload (1 parent + %s per operation, %s mode)", childRows(st.Children), st.Mode)
		if st.IDsInTx {
			workload = fmt.Sprintf("the app workload (1 parent + %s per operation, %s mode, IDs made inside each transaction just before its INSERT)", childRows(st.Children), st.Mode)
		}
		if clientRemedy(st) {
			workload += "; remedy: " + RemedyName(st)
		}
	}
	p("# What concurrent writers do to each key on %s\n\n", dialectOf(st.Engine).Title)
	if s.Command != "" {
		p("Produced by `%s`.\n\n", s.Command)
	}
	warm := "" // a table-workload sweep's warm-up is in each run's report
	if first.Workload == WorkloadApp {
		warm = appWarmup(st)
	}
	p("%s, %s; %s %s per scheme, median of %s%s. One run per number of concurrent client connections, every other setting the same; each run's full report is in %s.\n\n",
		st.ServerVersion, workload, thousands(int64(st.Rows)), map[bool]string{true: "operations", false: "rows"}[first.Workload == WorkloadApp], runsWord(st), warm, SweepJSON)
	p("| clients | started | took | machine load (1 min) at start / end |\n|--:|---|---|---|\n")
	for _, r := range s.Runs {
		p("| %d | %s | %s | %s / %s |\n", r.Clients, r.Report.Settings.Started.Format("2006-01-02 15:04 UTC"), r.Report.Settings.Duration, loadCell(r.LoadStart), loadCell(r.LoadEnd))
	}
	p("\nThe machine has %d CPUs; a load above that means other work competed with the run for them, which lowers and scatters its rates (sizes are not affected).\n", st.NumCPU)
	if line := sweepCacheLine(s); line != "" {
		p("\n%s\n", line)
	}
	bytesName, rateName, _ := sweepUnits(s)
	names := sweepSchemes(s)
	table := func(title string, cell func(sweepPoint) string) {
		p("\n## %s\n\n| scheme |", title)
		for _, r := range s.Runs {
			p(" %d |", r.Clients)
		}
		p("\n|---|")
		for range s.Runs {
			p("--:|")
		}
		p("\n")
		for _, n := range names {
			p("| %s |", mdEscape(n))
			for _, r := range s.Runs {
				pt := point(r.Report, n)
				if !pt.ok {
					p(" – |")
					continue
				}
				p(" %s |", cell(pt))
			}
			p("\n")
		}
	}
	table(upperFirst(bytesName)+", by clients", func(pt sweepPoint) string { return fmt.Sprintf("%.1f", pt.bytes) })
	table(upperFirst(rateName)+", by clients", func(pt sweepPoint) string { return thousands(int64(pt.rate + 0.5)) })
	for _, c := range cs {
		p("\n![%s](%s)\n", c.title, c.file)
	}
	if first.Workload == WorkloadApp {
		writeSweepContention(p, s, names)
	} else {
		table("Page splits per row (INNODB_METRICS) / leaf density %, by clients", func(pt sweepPoint) string {
			return optCell(pt.splits, "%.4f") + " / " + optCell(pt.density, "%.1f")
		})
		if sweepHasArrivals(s) {
			p("\nlate %%: share of rows whose key was below the largest key inserted before it (as the INSERTs committed); behind p50 / p99: for those, how many of the last %d keys were larger, i.e. how far left of the B-tree's right edge they landed. Keys the database makes are not seen by the client (–).\n", behindWindow)
			table("Late % (behind p50 / p99), by clients", func(pt sweepPoint) string {
				if pt.contention == nil {
					return "–"
				}
				return fmt.Sprintf("%.1f (%.0f / %.0f)", pt.contention.LatePercent, pt.contention.BehindP50, pt.contention.BehindP99)
			})
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSweepContention writes the app sweep's mechanism: arrival order, splits, leaf fill,
// latency and waits per scheme and client count.
func writeSweepContention(p func(string, ...any), s *Sweep, names []string) {
	p("\n## What the writers did, by clients\n\n")
	p("late %%: share of parent inserts whose key was below the largest parent key inserted before it (as the INSERTs returned); behind p50/p99: for those, how many of the last %d parent keys were larger, i.e. how far left of the B-tree's right edge they landed. splits/op and merges/op: InnoDB's INNODB_METRICS `index_page_splits` and `index_page_merge_successful` during the load per operation (server-wide). parent/child leaf %%: the average fill of the primary key's leaves after the load (PostgreSQL pgstatindex; InnoDB the fill implied by the leaf pages). op µs: each operation's transaction as the client timed it. Waits: what the loading sessions were doing, sampled every %s.\n\n", behindWindow, waitInterval)
	p("| clients | scheme | late %% | behind p50 / p99 | splits/op | merges/op | parent leaf %% | child leaf %% | op p50 / p99 / p99.9 µs | waits (share of samples) |\n|--:|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, r := range s.Runs {
		for _, n := range names {
			pt := point(r.Report, n)
			c := pt.contention
			if !pt.ok || c == nil {
				continue
			}
			var waits []string
			for i, w := range c.Waits {
				if i == 3 {
					break
				}
				waits = append(waits, fmt.Sprintf("%s %.0f%%", mdEscape(w.Event), w.Percent))
			}
			wcell := strings.Join(waits, ", ")
			if wcell == "" {
				wcell = "–"
			}
			p("| %d | %s | %.1f | %.0f / %.0f | %s | %s | %s | %s | %.0f / %.0f / %.0f | %s |\n", r.Clients, mdEscape(n), c.LatePercent, c.BehindP50, c.BehindP99,
				optCell(c.PageSplitsPerOp, "%.3f"), optCell(c.PageMergesPerOp, "%.3f"), optCell(c.ParentLeafDensity, "%.1f"), optCell(c.ChildLeafDensity, "%.1f"),
				c.OpLatency.P50Micros, c.OpLatency.P99Micros, c.OpLatency.P999Micros, wcell)
		}
	}
}

// sweepDataBytes is what every table and index of scheme took after its last load in rep.
func sweepDataBytes(rep *Report, scheme string) (int64, bool) {
	if rep.Workload == WorkloadApp {
		a, ok := appResult(rep, scheme)
		return totalBytes(a), ok && totalBytes(a) > 0
	}
	r, ok := result(rep, scheme)
	if !ok || r.Failure != "" {
		return 0, false
	}
	var n int64
	for _, st := range r.Structures {
		n += st.Bytes
	}
	if n == 0 {
		n = r.TableBytes
		if !dialectOf(rep.Settings.Engine).Clustered {
			n += r.IndexBytes + r.SecondaryIndexBytes
		}
	}
	return n, n > 0
}

// sweepSized is one scheme's data after one run of a sweep.
type sweepSized struct {
	scheme  string
	clients int
	bytes   int64
}

// sweepCacheSpan returns the server's page cache setting (name, value, bytes) and the smallest
// and largest data any scheme left after a run of s; ok is false when the report names no
// cache or no data was sized.
func sweepCacheSpan(s *Sweep) (name, value string, cache int64, lo, hi sweepSized, ok bool) {
	name, value, cache, ok = pageCache(s.Runs[0].Report.Settings)
	if !ok || cache <= 0 {
		return name, value, cache, lo, hi, false
	}
	for _, r := range s.Runs {
		for _, n := range sweepSchemes(s) {
			b, ok := sweepDataBytes(r.Report, n)
			if !ok {
				continue
			}
			if lo.bytes == 0 || b < lo.bytes {
				lo = sweepSized{n, r.Clients, b}
			}
			if b > hi.bytes {
				hi = sweepSized{n, r.Clients, b}
			}
		}
	}
	return name, value, cache, lo, hi, hi.bytes > 0
}

// cacheVerdict says whether data from lo to hi bytes ran within a cache of cache bytes.
func cacheVerdict(lo, hi, cache int64) string {
	switch {
	case hi <= cache:
		return "every scheme's data fitted in the cache: the loads ran within it"
	case lo <= cache:
		return "some schemes' data fitted in the cache and some did not"
	}
	return "every scheme's data outgrew the cache: the loads ran past it"
}

// commitWords is the run's commit setting and what it means, or "".
func commitWords(st Settings) string {
	c := commitSetting(st)
	if c == "" {
		return ""
	}
	if durable, _ := commitFlushed(st); durable {
		return c + " (a commit waits for its log to reach disk)"
	}
	return c + " (a commit does not wait for its log to reach disk)"
}

// sweepCacheLine says how the sweep's data compares with the server's page cache: the cache
// setting, the smallest and largest data any scheme left after a load (tables and indexes),
// and whether the loads ran within the cache or past it; "" when the report names no cache.
func sweepCacheLine(s *Sweep) string {
	name, value, cache, lo, hi, ok := sweepCacheSpan(s)
	if !ok {
		return ""
	}
	st := s.Runs[0].Report.Settings
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
	line := fmt.Sprintf("Data against the server's page cache (%s %s, %s): each scheme's tables and indexes after its load took from %s (%s, %d client(s), %.2f× the cache) to %s (%s, %d client(s), %.2f× the cache); %s.",
		name, value, mb(cache), mb(lo.bytes), lo.scheme, lo.clients, float64(lo.bytes)/float64(cache), mb(hi.bytes), hi.scheme, hi.clients, float64(hi.bytes)/float64(cache), cacheVerdict(lo.bytes, hi.bytes, cache))
	if c := commitWords(st); c != "" {
		line += " Commits: " + c + "."
	}
	if !dialectOf(st.Engine).Clustered {
		line += " PostgreSQL also reads through the operating system's page cache, which idbench does not limit: past shared_buffers, pages come from that cache or the disk."
	}
	return line
}

// SweepConditions says what a sweep's verdicts hold for: the server, the workload and its
// size, the client counts, the data against the page cache, the commit setting, and the
// machine's load during the runs.
func SweepConditions(s *Sweep) string {
	if s == nil || len(s.Runs) == 0 {
		return ""
	}
	first := s.Runs[0].Report
	st := first.Settings
	what := fmt.Sprintf("one table, %s rows per scheme, %s mode", thousands(int64(st.Rows)), st.Mode)
	if first.Workload == WorkloadApp {
		what = fmt.Sprintf("app workload, %s operations per scheme", thousands(int64(st.Rows)))
		if st.IDsInTx {
			what += ", IDs made inside each transaction"
		}
	}
	var counts []string
	loLoad, hiLoad := -1.0, -1.0
	for _, r := range s.Runs {
		counts = append(counts, fmt.Sprint(r.Clients))
		for _, l := range []*float64{r.LoadStart, r.LoadEnd} {
			if l == nil {
				continue
			}
			if loLoad < 0 || *l < loLoad {
				loLoad = *l
			}
			hiLoad = max(hiLoad, *l)
		}
	}
	out := fmt.Sprintf("%s, %s, %s writer(s), %s each", st.ServerVersion, what, strings.Join(counts, "/"), runsWord(st))
	if s.Runs[0].Report.Workload == WorkloadApp {
		out += appWarmup(st)
	}
	if name, value, cache, lo, hi, ok := sweepCacheSpan(s); ok {
		out += fmt.Sprintf("; data %.2f–%.2f× the page cache (%s %s)", float64(lo.bytes)/float64(cache), float64(hi.bytes)/float64(cache), name, value)
	}
	if c := commitSetting(st); c != "" {
		durable, _ := commitFlushed(st)
		out += "; " + c + map[bool]string{true: " (commits flushed)", false: " (commits not flushed)"}[durable]
	}
	if loLoad >= 0 {
		out += fmt.Sprintf("; machine load %.1f–%.1f on %d CPUs", loLoad, hiLoad, st.NumCPU)
	}
	return out
}

// sweepHasArrivals reports whether any run of a table-workload sweep recorded the order its
// keys arrived in (reports written before idbench measured it have none).
func sweepHasArrivals(s *Sweep) bool {
	for _, r := range s.Runs {
		for _, res := range r.Report.Results {
			if res.Contention != nil {
				return true
			}
		}
	}
	return false
}

func optCell(v *float64, format string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}

func loadCell(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sweepCharts draws bytes per operation and operations per second against clients, one line
// per scheme.
func sweepCharts(s *Sweep) ([]chart, error) {
	bytesName, rateName, _ := sweepUnits(s)
	var out []chart
	const legendWidth = 2.0 * vg.Inch
	for _, f := range []struct {
		file, title, axis string
		value             func(sweepPoint) float64
	}{
		{"clients-bytes.svg", upperFirst(bytesName) + " against concurrent clients", bytesName, func(pt sweepPoint) float64 { return pt.bytes }},
		{"clients-rate.svg", upperFirst(rateName) + " against concurrent clients", rateName, func(pt sweepPoint) float64 { return pt.rate }},
	} {
		p := plot.New()
		p.Title.Text = f.title
		p.X.Label.Text = "concurrent clients (log scale)"
		p.Y.Label.Text = f.axis
		var ticks []plot.Tick
		for _, r := range s.Runs {
			ticks = append(ticks, plot.Tick{Value: float64(r.Clients), Label: strconv.Itoa(r.Clients)})
		}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Tick.Marker = thousandsTicks{}
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		legend := plot.NewLegend()
		legend.Top, legend.Left = true, true
		for i, n := range sweepSchemes(s) {
			var xys plotter.XYs
			for _, r := range s.Runs {
				if pt := point(r.Report, n); pt.ok {
					xys = append(xys, plotter.XY{X: float64(r.Clients), Y: f.value(pt)})
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("dbbench: %s chart: %w", f.title, err)
			}
			styleSeries(l, pts, i)
			p.Add(l, pts)
			legend.Add(n, l, pts)
		}
		if p.X.Min == p.X.Max {
			p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
		}
		c, err := renderChart(f.file, f.title, 8*vg.Inch, 4*vg.Inch, func(dc draw.Canvas) {
			p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
			legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legendWidth+0.15*vg.Inch, 0, 0, -0.4*vg.Inch))
		})
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
