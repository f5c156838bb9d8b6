package dist

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Label heads every output of the model, so that no figure of it passes for a measurement.
const Label = "MODEL of a range-partitioned cluster (not a measurement)"

// Report is the result of Model.
type Report struct {
	Label       string   `json:"label"`
	Command     string   `json:"command,omitempty"`
	Config      Config   `json:"config"`
	Assumptions []string `json:"assumptions"`
	Results     []Result `json:"results"`
	// Crossovers are, for each scheme whose writes spread and each whose writes pile onto
	// one range, the smallest modelled N at which the first sustains more than the second.
	Crossovers []Crossover `json:"crossovers"`
	// FitCrossovers are the same crossovers with the free parameters of the TiDB fit
	// (TiDBFit), which the one measured source gives, beside the defaults' (1, 0, 0) that no
	// source pins down: the range of outcomes. Absent when the run set the free parameters.
	FitCrossovers []Crossover `json:"fit_crossovers,omitempty"`
	// FitGain is, per spreading scheme, its throughput over the sequence's at each modelled N
	// under the defaults and under the TiDB fit (FitGains).
	FitGains []Gain `json:"fit_gains,omitempty"`
}

// Gain is a spreading scheme's throughput over the sequence's at N nodes, under the default
// free parameters and under the TiDB fit.
type Gain struct {
	Scheme  string  `json:"scheme"`
	Nodes   int     `json:"nodes"`
	Default float64 `json:"default"`
	Fit     float64 `json:"fit"`
}

// TiDBFit is the free parameters fitted to TiDB's integer shard index test (see the
// calibration tests): index share 0.31, scatter cost 2.3, fixed tier 0.21.
var TiDBFit = struct{ IndexShare, ScatterCost, FixedTier float64 }{0.31, 2.3, 0.21}

// Result is one scheme over the modelled cluster sizes.
type Result struct {
	Scheme         string  `json:"scheme"`
	Capacity       float64 `json:"capacity"`
	CapacitySource string  `json:"capacity_source"`
	// Hot says the scheme's writes pile onto one range at the largest N (the hottest node
	// takes at least half of them).
	Hot  bool  `json:"hot"`
	Runs []Run `json:"runs"`
}

// Crossover is the N at which the spreading scheme Uniform overtakes the Hot one; N is 0 when
// it does not within the modelled sizes.
type Crossover struct {
	Uniform string `json:"uniform"`
	Hot     string `json:"hot"`
	N       int    `json:"n"`
}

// Model runs every scheme of c on every cluster size. It stops early when ctx ends.
func Model(ctx context.Context, c Config) (*Report, error) {
	c, err := c.Defaults()
	if err != nil {
		return nil, err
	}
	rep := &Report{Label: Label, Config: c, Assumptions: Assumptions(c)}
	if rep.Results, err = modelSchemes(ctx, c); err != nil {
		return nil, err
	}
	rep.Crossovers = crossovers(rep.Results)
	if c.IndexShare == 1 && c.ScatterCost == 0 && c.FixedTier == 0 {
		f := c
		f.IndexShare, f.ScatterCost, f.FixedTier = TiDBFit.IndexShare, TiDBFit.ScatterCost, TiDBFit.FixedTier
		fit, err := modelSchemes(ctx, f)
		if err != nil {
			return nil, err
		}
		rep.FitCrossovers = crossovers(fit)
		rep.FitGains = gains(rep.Results, fit)
	}
	return rep, nil
}

// gains are each non-sequence scheme's throughput over the sequence's at each N, under the
// defaults (def) and the fit.
func gains(def, fit []Result) []Gain {
	seq := -1
	for i, r := range def {
		if r.Scheme == SchemeSequence {
			seq = i
		}
	}
	if seq < 0 {
		return nil
	}
	var out []Gain
	for i, r := range def {
		if i == seq {
			continue
		}
		for j, run := range r.Runs {
			out = append(out, Gain{Scheme: r.Scheme, Nodes: run.Nodes,
				Default: run.Throughput / def[seq].Runs[j].Throughput, Fit: fit[i].Runs[j].Throughput / fit[seq].Runs[j].Throughput})
		}
	}
	return out
}

// modelSchemes runs every scheme of c on every cluster size.
func modelSchemes(ctx context.Context, c Config) ([]Result, error) {
	var out []Result
	for _, scheme := range c.Schemes {
		st, err := drawKeys(c, scheme)
		if err != nil {
			return nil, err
		}
		capa, src := c.capacityOf(scheme)
		res := Result{Scheme: scheme, Capacity: capa, CapacitySource: src}
		for _, n := range c.Cluster {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			res.Runs = append(res.Runs, run(c, st, n, capa))
		}
		res.Hot = res.Runs[len(res.Runs)-1].HotShare >= 0.5 && c.Cluster[len(c.Cluster)-1] > 1
		out = append(out, res)
	}
	return out, nil
}

// crossovers are, for each spreading scheme and each hot one, the smallest N at which the
// first sustains more.
func crossovers(rs []Result) []Crossover {
	out := []Crossover{}
	for _, u := range rs {
		if u.Hot {
			continue
		}
		for _, h := range rs {
			if !h.Hot {
				continue
			}
			x := Crossover{Uniform: u.Scheme, Hot: h.Scheme}
			for i := range u.Runs {
				if u.Runs[i].Throughput > h.Runs[i].Throughput {
					x.N = u.Runs[i].Nodes
					break
				}
			}
			out = append(out, x)
		}
	}
	return out
}

// Assumptions lists, in words, everything the model assumes for c: its free parameters and
// the target's thresholds with their sources.
func Assumptions(c Config) []string {
	a := []string{
		fmt.Sprintf("target %s: a range splits at its middle key above %s", c.Target.Name, formatBytes(c.Target.MaxRangeBytes)),
	}
	if c.Target.SplitQPS > 0 {
		a = append(a, fmt.Sprintf("a range above %.0f writes/s samples keys for %v and splits at one that divides the later writes within 25%% (CockroachDB's finder); append-only writes never qualify", c.Target.SplitQPS, c.RecordFor))
	} else {
		a = append(a, "no load-based splitting")
	}
	if c.Target.HashKey {
		a = append(a, fmt.Sprintf("the key is hashed first (16-bit hash code, then the key); a table starts with %d tablet(s) per node", c.Target.TabletsPerNode))
	}
	for _, s := range c.Target.Sources {
		a = append(a, "source: "+s)
	}
	pre := "the table starts as one range"
	if c.PreSplit > 1 {
		pre = fmt.Sprintf("the table is pre-split into %d ranges evenly over the key space, spread over the nodes", c.PreSplit)
	}
	a = append(a, pre,
		"keys are ordered as the target sorts them: 64-bit IDs as INT8 (sign bit flipped, big-endian), 128-bit IDs as their 16 bytes (their canonical text sorts the same)",
		fmt.Sprintf("%d generator nodes, clock offsets normal with standard deviation %v; %d real keys drawn per model second, each standing for throughput/%d writes; %d model seconds from %s",
			c.Generators, c.ClockSkew, c.Samples, c.Samples, c.Seconds, modelStart.Format(time.RFC3339)),
		"every range's writes go through one leaseholder; a split's right half stays on its node until the rebalancer runs",
		fmt.Sprintf("the rebalancer runs every %v and gives the ranges, busiest first, to the least-loaded node (a balance real rebalancers approach over several moves)", c.Rebalance),
		"each node sustains its capacity C in writes/s; the cluster sustains C / (busiest node's work per write + fixed tier): the throughput at which that node saturates",
		fmt.Sprintf("free parameter index share %.2f: the fraction of a write's work on the range of its ID; the rest spreads evenly over the nodes", c.IndexShare),
		fmt.Sprintf("free parameter scatter cost %.2f: extra ID-index work of a write in another range than its generator's previous one", c.ScatterCost),
		fmt.Sprintf("free parameter fixed tier %.2f: work per write, in node-writes, on a tier that does not grow with N", c.FixedTier),
		fmt.Sprintf("row bytes %.0f; throughput, hottest share and utilisation are means over the last quarter of the run; the time-window query reads the last %v of writes", c.RowBytes, c.Window),
		"not modelled: LSM compaction, replication traffic, Raft and 2PC latency, reads other than the point read, range merges, node failures",
	)
	if c.Buckets > 0 {
		a = append(a, fmt.Sprintf("the ID index is hash-sharded into %d buckets (a 2-byte bucket prefix, FNV-1a of the key modulo %d); a point read by the ID alone probes every bucket", c.Buckets, c.Buckets))
	}
	a = append(a, fmt.Sprintf("seed %d: the same seed gives the same report", c.Seed))
	return a
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// WriteText writes the report as plain text: the label, every assumption, one table per
// scheme and the crossovers.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", rep.Label)
	if rep.Command != "" {
		fmt.Fprintf(&b, "command: %s\n", rep.Command)
	}
	b.WriteString("\nAssumptions:\n")
	for _, a := range rep.Assumptions {
		fmt.Fprintf(&b, "  - %s\n", a)
	}
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "\n%s  (capacity C = %s writes/s per node, from %s)\n", r.Scheme, group(r.Capacity), r.CapacitySource)
		fmt.Fprintf(&b, "  %5s %12s %7s %7s %6s %7s %7s %7s %7s %7s %7s\n", "N", "WRITES/S", "OF N·C", "HOTTEST", "UTIL", "RANGES", "SIZE SP", "LOAD SP", "NO SP", "WINDOW", "WARMUP")
		for _, run := range r.Runs {
			fmt.Fprintf(&b, "  %5d %12s %6.0f%% %6.0f%% %5.0f%% %7d %7d %7d %7d %7d %6ds\n", run.Nodes, group(run.Throughput),
				100*run.Throughput/run.Ideal, 100*run.HotShare, 100*run.Utilisation, run.Ranges, run.SizeSplits, run.LoadSplits,
				run.FailedLoadSplits, run.WindowRanges, run.WarmupSeconds)
		}
		if last := r.Runs[len(r.Runs)-1]; last.PointReadSpans > 1 {
			fmt.Fprintf(&b, "  a point read by the ID alone probes %d spans (%d ranges at N=%d)\n", last.PointReadSpans, last.PointReadRanges, last.Nodes)
		}
	}
	b.WriteString(`
Columns: WRITES/S sustained; OF N·C that as a share of N nodes' capacity; HOTTEST the busiest
node's share of the ID-index writes; UTIL the mean node utilisation; RANGES at the end; SIZE SP,
LOAD SP splits made; NO SP load-split sampling periods that found no split point; WINDOW the
ranges a query for the last window of writes touches; WARMUP seconds to 90% of steady throughput.
`)
	if len(rep.Crossovers) > 0 {
		b.WriteString("\nCrossovers (smallest modelled N at which the spreading key sustains more):\n")
		for _, x := range rep.Crossovers {
			if x.N == 0 {
				fmt.Fprintf(&b, "  %s never overtakes %s up to N=%d\n", x.Uniform, x.Hot, rep.Config.Cluster[len(rep.Config.Cluster)-1])
			} else {
				fmt.Fprintf(&b, "  %s overtakes %s at N=%d\n", x.Uniform, x.Hot, x.N)
			}
		}
	}
	writeFitRange(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSummary writes the Markdown block the guide quotes: one row per scheme with its
// throughput at a few cluster sizes, and the crossovers.
func WriteSummary(w io.Writer, rep *Report) error {
	var b strings.Builder
	show := []int{}
	for _, n := range []int{1, 3, 8, 16, 64} {
		for _, m := range rep.Config.Cluster {
			if m == n {
				show = append(show, n)
			}
		}
	}
	if rep.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`\n\n", strings.TrimSpace(rep.Command))
	}
	fmt.Fprintf(&b, "%s; target %s, %d generator nodes, %d model seconds, seed %d; sustained writes/s per cluster size N.\n\n",
		rep.Label, rep.Config.Target.Name, rep.Config.Generators, rep.Config.Seconds, rep.Config.Seed)
	last := rep.Config.Cluster[len(rep.Config.Cluster)-1]
	b.WriteString("| scheme | C (writes/s per node) |")
	for _, n := range show {
		fmt.Fprintf(&b, " N=%d |", n)
	}
	fmt.Fprintf(&b, " hottest node at N=%d | ranges a %v query reads at N=%d |\n|---|---:|", last, rep.Config.Window, last)
	for range show {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|\n")
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "| %s | %s |", r.Scheme, group(r.Capacity))
		for _, n := range show {
			for _, run := range r.Runs {
				if run.Nodes == n {
					fmt.Fprintf(&b, " %s |", group(run.Throughput))
				}
			}
		}
		lr := r.Runs[len(r.Runs)-1]
		fmt.Fprintf(&b, " %.0f%% | %d of %d |\n", 100*lr.HotShare, lr.WindowRanges, lr.Ranges)
	}
	if len(rep.Crossovers) > 0 {
		b.WriteString("\nCrossover N, where the spreading key first sustains more writes than the time-ordered one:")
		for i, x := range rep.Crossovers {
			if i > 0 {
				b.WriteString(";")
			}
			if x.N == 0 {
				fmt.Fprintf(&b, " %s never passes %s", x.Uniform, x.Hot)
			} else {
				fmt.Fprintf(&b, " %s passes %s at N=%d", x.Uniform, x.Hot, x.N)
			}
		}
		b.WriteString(".\n")
	}
	writeFitRange(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFitRange writes the range of outcomes over the free parameters: the crossovers and
// the gains over the sequence at 3 and 16 nodes under the defaults and under the TiDB fit.
func writeFitRange(b *strings.Builder, rep *Report) {
	if len(rep.FitCrossovers) == 0 && len(rep.FitGains) == 0 {
		return
	}
	fmt.Fprintf(b, "\nThe free parameters (index share, scatter cost, fixed tier) are not pinned down by any source for this target: the defaults (1, 0, 0) are the simplest, "+
		"the TiDB fit (%.2f, %.1f, %.2f) is fitted to the one measured source (TiDB's shard-index test). Under the TiDB fit:", TiDBFit.IndexShare, TiDBFit.ScatterCost, TiDBFit.FixedTier)
	for i, x := range rep.FitCrossovers {
		if i > 0 {
			b.WriteString(";")
		}
		if x.N == 0 {
			fmt.Fprintf(b, " %s never passes %s", x.Uniform, x.Hot)
		} else {
			fmt.Fprintf(b, " %s passes %s at N=%d", x.Uniform, x.Hot, x.N)
		}
	}
	b.WriteString(".\n")
	var rows []string
	for _, g := range rep.FitGains {
		if g.Nodes == 3 || g.Nodes == 16 {
			rows = append(rows, fmt.Sprintf("| %s | %d | %.2f× | %.2f× |", g.Scheme, g.Nodes, g.Default, g.Fit))
		}
	}
	if len(rows) > 0 {
		b.WriteString("\n| scheme | N | writes/s over the sequence's, defaults | under the TiDB fit |\n|---|---:|---:|---:|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
}

// group writes v rounded to a whole number with thousands separators.
func group(v float64) string {
	s := fmt.Sprintf("%d", int64(math.Round(v)))
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Chart draws sustained throughput against N for every scheme, as SVG, titled as a model,
// with each crossover N marked.
func Chart(rep *Report) ([]byte, error) {
	p, err := chartPlot(rep)
	if err != nil {
		return nil, err
	}
	c := vgsvg.New(8*vg.Inch, 5*vg.Inch)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("dist: chart: %w", err)
	}
	return buf.Bytes(), nil
}

func chartPlot(rep *Report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("MODEL: sustained writes/s against cluster size (%s)", rep.Config.Target.Name)
	p.X.Label.Text = "nodes N"
	p.Y.Label.Text = "writes per second"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	for i, r := range rep.Results {
		xys := make(plotter.XYs, len(r.Runs))
		for j, run := range r.Runs {
			xys[j] = plotter.XY{X: float64(run.Nodes), Y: run.Throughput}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("dist: chart: %w", err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(r.Scheme, l, pts)
	}
	// Mark each crossover N with a labelled vertical line.
	marked := map[int]bool{}
	for _, x := range rep.Crossovers {
		if x.N == 0 || marked[x.N] {
			continue
		}
		marked[x.N] = true
		lo, hi := math.Inf(1), 0.0
		for _, r := range rep.Results {
			for _, run := range r.Runs {
				lo, hi = math.Min(lo, run.Throughput), math.Max(hi, run.Throughput)
			}
		}
		line, err := plotter.NewLine(plotter.XYs{{X: float64(x.N), Y: lo}, {X: float64(x.N), Y: hi}})
		if err != nil {
			return nil, fmt.Errorf("dist: chart: %w", err)
		}
		line.Color = color.Gray{Y: 0x80}
		line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		lb, err := plotter.NewLabels(plotter.XYLabels{
			XYs:    []plotter.XY{{X: float64(x.N), Y: math.Sqrt(lo * hi)}},
			Labels: []string{" crossover N=" + strconv.Itoa(x.N)},
		})
		if err != nil {
			return nil, fmt.Errorf("dist: chart: %w", err)
		}
		p.Add(line, lb)
	}
	return p, nil
}

// logTicks labels 1, 2 and 5 times each power of ten on a log axis, with thousands
// separators.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(math.Max(lo, 1e-9)))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := p * m; v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v, Label: group(v)})
			}
		}
	}
	return out
}
