package dbbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/pg"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/redact"
)

// Run benchmarks every scheme of cfg and returns the report.
//
// Errors: a configuration error naming the bad field; a bad scheme spec;
// "dbbench: bad PostgreSQL connection string" or "dbbench: connect …" (one
// line) when the server cannot be reached; ErrConnLost (wrapped) when the
// connection breaks during the run; ErrInterrupted (wrapped) when ctx ends.
// In every case Run first drops what it created. Under WorkloadApp, when the two answers
// of the time query disagree, Run returns the finished report (the scheme's check says
// MISMATCH, and a note says the run failed) together with an error wrapping
// ErrTimeMismatch; with every other error the report is nil.
//
// Nothing Run writes or returns shows a password: the log, the progress bar, the report
// (Settings.Command, scheme names) and the errors pass through idkit.Redact.
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	defer func() { err = redact.Error(err) }() // last, after the cleanup's errors
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ent := engineNamed(cfg.to.engine)
	if cfg.SecondaryIndex && !ent.secondaryIndex {
		return nil, fmt.Errorf("dbbench: a secondary index on payload is measured on MariaDB/MySQL, Pebble and RocksDB only (--db mariadb-local, mysql://…, pebble or rocksdb)")
	}
	rows := make([]engine.Row, 0, len(cfg.Schemes))
	for _, s := range cfg.Schemes {
		r, err := engine.ResolveRow(ctx, strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		if _, err := engine.NodeSpec(r.Spec, 0, cfg.Nodes); err != nil {
			return nil, err
		}
		// The segment row's spec names its store only once the engine is open (package pg, serverside.go).
		if r.Fleet = cfg.fleet(); r.Fleet.Rate > 0 && !r.Col.ServerMade() && r.StoreStep == 0 {
			var closers []func()
			var durability func() []string
			_, err := engine.FleetMaker(r, cfg.Nodes, &closers, &durability)
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
			if err != nil {
				return nil, err
			}
		}
		// The engine's column rules, before it is opened: a row it cannot store fails here.
		if r, err = ent.columns(r); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}

	start := time.Now()
	if cfg.to.auto {
		logf(cfg, "dbbench: no --db given: using %s", cfg.to.engine)
	}
	eng, cleanup, err := ent.open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		cerr := cleanup()
		if cerr == nil && rep != nil && rep.Settings.Kept != "" {
			rep.Settings.Kept, rep.Settings.Reopen = eng.Kept() // a throwaway server's command to start it again
		}
		if cerr != nil {
			err = errors.Join(err, cerr)
			if rep != nil && err != nil {
				rep = nil
			}
		}
	}()

	rep = &Report{Settings: Settings{
		Command:      idkit.Redact(cfg.Command),
		Fillfactor:   cfg.Fillfactor,
		Rows:         cfg.Rows,
		Mode:         cfg.Mode,
		Clients:      cfg.Clients,
		Nodes:        cfg.Nodes,
		FleetRate:    cfg.fleet().Rate,
		Profile:      cfg.Profile,
		Repeat:       cfg.Repeat,
		WarmupRows:   cfg.WarmupRows,
		Lookups:      cfg.Lookups,
		RangeN:       cfg.RangeN,
		IDsInTx:      cfg.IDsInTx,
		ClientBatch:  manyOrZero(cfg.ClientBatch),
		ClientBlock:  manyOrZero(cfg.ClientBlock),
		IDsPerClient: cfg.IDsPerClient,
		GoVersion:    runtime.Version(),
		GOOS:         runtime.GOOS,
		GOARCH:       runtime.GOARCH,
		NumCPU:       runtime.NumCPU(),
		GOMAXPROCS:   runtime.GOMAXPROCS(0),
		Started:      start.UTC().Truncate(time.Second),
	}}
	loadStart := loadAverage()
	if rep.Settings.FleetRate > 0 {
		rep.Settings.ClockSkew = Duration(cfg.fleet().Skew)
	}
	eng.Settings(&rep.Settings)
	logf(cfg, "dbbench: engine %s (%s)", rep.Settings.Engine, rep.Settings.ServerVersion)
	rows, skipped := eng.TableRows(rows, cfg.Schemes)
	if len(rows) == 0 {
		return nil, fmt.Errorf("dbbench: none of the schemes can run on %s: %s", rep.Settings.ServerVersion, strings.Join(skipped, "; "))
	}

	// A time mismatch (the app workload) fails the run but keeps its finished loads: the
	// report comes back with the error, its check marked.
	werr := workloadNamed(cfg.Workload).run(ctx, cfg, eng, rows, skipped, rep)
	if werr != nil && !errors.Is(werr, ErrTimeMismatch) {
		return nil, werr
	}
	rep.Settings.Duration = Duration(time.Since(start))
	if end := loadAverage(); loadStart != "" && end != "" {
		rep.Settings.LoadAverage = "start " + loadStart + ", end " + end
	}
	return rep, werr
}

// loadAverage returns the machine's load averages over 1, 5 and 15 minutes as
// /proc/loadavg shows them ("2.47 0.91 0.35"), or "" where there is no such file.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return parseLoadAverage(string(b))
}

// parseLoadAverage returns the first three fields of a /proc/loadavg line, or "" when the
// line does not start with three numbers.
func parseLoadAverage(line string) string {
	f := strings.Fields(line)
	if len(f) < 3 {
		return ""
	}
	for _, v := range f[:3] {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return ""
		}
	}
	return strings.Join(f[:3], " ")
}

// baselineRow returns the index of the row the bare-COPY baseline is
// compared with: the first Snowflake row, else the first bigint row, or -1.
func baselineRow(rows []engine.Row) int {
	for i, r := range rows {
		if r.Col == engine.ColBigint && strings.HasPrefix(r.Canon, "snowflake:") {
			return i
		}
	}
	for i, r := range rows {
		if r.Col == engine.ColBigint {
			return i
		}
	}
	return -1
}

func logf(cfg Config, format string, args ...any) {
	if cfg.Log != nil {
		fmt.Fprintln(cfg.Log, idkit.Redact(fmt.Sprintf(format, args...)))
	}
}

// summarize reduces a scheme's measured runs to medians.
func summarize(r engine.Row, colType string, ms []metrics) Result {
	res := Result{Scheme: r.Label, Spec: r.Canon, ColumnType: colType}
	if len(ms) == 0 {
		return res
	}
	res.Durability = ms[len(ms)-1].Durability
	var rate, idx, tbl, wal []float64
	var fpi, ckpt, dens, frag, leaves []float64
	var pointP50, pointP99, rangeP50, rangeP99 []float64
	for _, m := range ms {
		run := Sample{
			RowsPerSec:       float64(m.Rows) / m.Seconds,
			Seconds:          m.Seconds,
			IndexBytesPerRow: perRow(m.IndexBytes, m.Rows),
			WALBytesPerRow:   perRow(m.WALBytes, m.Rows),
			AvgLeafDensity:   m.Density,
		}
		res.Runs = append(res.Runs, run)
		rate = append(rate, run.RowsPerSec)
		idx = append(idx, float64(m.IndexBytes))
		tbl = append(tbl, float64(m.TableBytes))
		wal = append(wal, float64(m.WALBytes))
		if m.FPI != nil {
			fpi = append(fpi, float64(*m.FPI))
		}
		if m.Checkpoints != nil {
			ckpt = append(ckpt, float64(*m.Checkpoints))
		}
		if m.Density != nil {
			dens = append(dens, *m.Density)
			leaves = append(leaves, float64(*m.LeafPages))
		}
		if m.Frag != nil { // InnoDB reports no fragmentation
			frag = append(frag, *m.Frag)
		}
		pointP50 = append(pointP50, m.Lookup.P50Micros)
		pointP99 = append(pointP99, m.Lookup.P99Micros)
		rangeP50 = append(rangeP50, m.RangeScan.P50Micros)
		rangeP99 = append(rangeP99, m.RangeScan.P99Micros)
	}
	res.Rows = ms[0].Rows
	res.RowsPerSec = median(rate)
	res.IndexBytes = int64(median(idx))
	res.IndexBytesPerRow = perRow(res.IndexBytes, res.Rows)
	res.TableBytes = int64(median(tbl))
	res.WALBytes = int64(median(wal))
	res.WALBytesPerRow = perRow(res.WALBytes, res.Rows)
	if len(fpi) == len(ms) {
		res.WALFPI = engine.Ptr(int64(median(fpi)))
	}
	if len(ckpt) == len(ms) {
		res.Checkpoints = engine.Ptr(int64(median(ckpt)))
	}
	if len(dens) == len(ms) {
		res.AvgLeafDensity = engine.Ptr(median(dens))
		res.LeafPages = engine.Ptr(int64(median(leaves)))
	}
	if len(frag) == len(ms) {
		res.LeafFragmentation = engine.Ptr(median(frag))
	}
	res.PointLookup = Latency{Count: ms[0].Lookup.Count, P50Micros: median(pointP50), P99Micros: median(pointP99)}
	res.RangeScan = Latency{Count: ms[0].RangeScan.Count, P50Micros: median(rangeP50), P99Micros: median(rangeP99)}
	summarizeCounters(&res, ms)
	summarizeStructures(&res, ms)
	// The curve (and LSM figures) of the run whose throughput is the median.
	mid := median(rate)
	best := 0
	for i, r := range rate {
		if abs(r-mid) < abs(rate[best]-mid) {
			best = i
		}
	}
	res.Curve = ms[best].Curve
	res.LSM = ms[best].LSM
	res.Contention = ms[len(ms)-1].Arrivals
	return res
}

func perRow(bytes, rows int64) float64 {
	if rows == 0 {
		return 0
	}
	return float64(bytes) / float64(rows)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// median returns the median of xs (the mean of the middle two for an even
// count), without reordering xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// notes explains figures a reader could misread.
func notes(rep *Report, rows []engine.Row) []string {
	var out []string
	s := rep.Settings
	if strings.HasPrefix(s.Statistics, "unavailable") {
		out = append(out, "Leaf density and fragmentation are "+s.Statistics+"; they are left empty rather than estimated.")
	}
	d := dialectOf(s.Engine)
	if d.Checkpoints && !d.Clustered && s.Profile == ProfileSteady {
		for _, r := range rep.Results {
			if r.Checkpoints != nil && *r.Checkpoints > 0 {
				out = append(out, fmt.Sprintf("%d checkpoint(s) fell inside the measured load of %s although the profile is steady (max_wal_size %s, checkpoint_timeout %s); its WAL includes full-page images they caused.",
					*r.Checkpoints, r.Scheme, s.MaxWALSize, s.CheckpointTimeout))
			}
		}
		if !s.CheckpointBeforeRun {
			out = append(out, "CHECKPOINT is not allowed for this user, so loads did not start from a fresh checkpoint; WAL figures include full-page images of pages first touched after the server's last checkpoint.")
		}
	}
	for i, r := range rows {
		if r.Col == engine.ColUint64 && i < len(rep.Results) {
			out = append(out, fmt.Sprintf("%s makes IDs with bit 63 set, which a signed 64-bit integer column cannot hold, so its column is %s.", r.Label, rep.Results[i].ColumnType))
		}
	}
	for i, r := range rows {
		if r.Col == engine.ColPublicText && i < len(rep.Results) {
			out = append(out, fmt.Sprintf("%s stores %s's public text as the key (idkit.FormatID: the TypeID prefix, '_' and the ID in a fixed-width suffix, %d characters, in ID order) in a %s column, which compares bytes; a row of the same spec without the suffix stores the IDs themselves.",
				r.Label, r.Canon, r.TextLen, rep.Results[i].ColumnType))
		}
	}
	for _, r := range rep.Results {
		for _, d := range r.Durability {
			out = append(out, fmt.Sprintf("%s durability (decided on connect, read again with each take): %s.", r.Scheme, d))
		}
	}
	if s.LeftBehind != "" {
		out = append(out, "This run created the "+s.LeftBehind+" and left it there: an extension is database-wide, so dropping it could break another run or session using it. Remove it when nothing uses it: DROP EXTENSION pgstattuple; DROP SCHEMA "+pg.ExtSchema+".")
	}
	if s.OtherRuns > 0 {
		out = append(out, fmt.Sprintf("Up to %d other idbench session(s) were connected to the server during measured loads: WAL bytes, full-page images and checkpoints are server-wide and include their work, and CHECKPOINTs of one run land in the loads of another. Run one benchmark at a time for figures to compare.", s.OtherRuns))
	}
	if d.SharedServer && !d.Clustered {
		out = append(out, "WAL bytes and full-page images are server-wide counters: other activity on the server during a load is counted too.")
	}
	if s.Profile == ProfileCheckpoints && s.Engine != EnginePGLocal && s.Engine != EngineMariaDBLocal {
		out = append(out, "The checkpoints profile sets a small max_wal_size and a short checkpoint_timeout only on pg-local; this run used the server's own settings.")
	}
	for _, r := range rows {
		if strings.HasPrefix(r.Canon, "sonyflake:") {
			out = append(out, "Sonyflake issues at most 256 IDs per 10 ms per machine (25,600 IDs/s): its insert throughput is capped by the generator, not the database. Use --nodes to add machines.")
			break
		}
	}
	for _, r := range rows {
		if d.TextKeyNote == nil {
			break // the engine's own notes explain its text keys (innodb: TableNotes)
		}
		if n := d.TextKeyNote(r); n != "" {
			out = append(out, n)
			break
		}
	}
	return out
}

// isTerminal reports whether w is a terminal, for deciding whether to draw
// a progress bar.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// IsTerminal reports whether w is a terminal; callers use it to decide
// whether to set Config.Progress.
func IsTerminal(w io.Writer) bool { return isTerminal(w) }

// summarizeStructures gives res the structures of the first run, each sized by the median
// over the runs of the structure with the same role (each load numbers its own table, so the
// names differ between runs, the roles do not).
func summarizeStructures(res *Result, ms []metrics) {
	for _, s := range ms[0].Structures {
		var vs []float64
		for _, m := range ms {
			for _, o := range m.Structures {
				if o.Role == s.Role {
					vs = append(vs, float64(o.Bytes))
					break
				}
			}
		}
		if len(vs) != len(ms) {
			continue // not in every run: no median to give
		}
		s.Bytes = int64(median(vs))
		s.BytesPerOp = perRow(s.Bytes, res.Rows)
		res.Structures = append(res.Structures, s)
	}
}

// counterFigures says which Result field each counter fills, with the median over the runs
// when every run reported it; perRow counters are taken per 1,000 rows of each run first.
var counterFigures = []struct {
	name   string
	per1k  bool
	figure func(res *Result, median float64)
}{
	{engine.CounterSecondaryIndexBytes, false, func(res *Result, v float64) {
		res.SecondaryIndexBytes = int64(v)
		res.SecondaryIndexBytesPerRow = perRow(res.SecondaryIndexBytes, res.Rows)
	}},
	{engine.CounterSecondaryLeafPages, false, func(res *Result, v float64) { res.SecondaryLeafPages = engine.Ptr(int64(v)) }},
	{engine.CounterPageSplits, false, func(res *Result, v float64) { res.PageSplits = engine.Ptr(int64(v)) }},
	{engine.CounterPageMerges, false, func(res *Result, v float64) { res.PageMerges = engine.Ptr(int64(v)) }},
	{engine.CounterPoolReads, true, func(res *Result, v float64) { res.BufferPoolReadsPer1k = engine.Ptr(v) }},
}

// summarizeCounters adds the medians of the engine's named counters to res.
func summarizeCounters(res *Result, ms []metrics) {
	for _, f := range counterFigures {
		var vs []float64
		for _, m := range ms {
			v, ok := m.Counters[f.name]
			if !ok || f.per1k && m.Rows == 0 {
				break
			}
			if f.per1k {
				vs = append(vs, 1000*float64(v)/float64(m.Rows))
			} else {
				vs = append(vs, float64(v))
			}
		}
		if len(ms) > 0 && len(vs) == len(ms) {
			f.figure(res, median(vs))
		}
	}
}

// manyOrZero returns n when it is above 1, else 0: the report's form of a per-client count
// whose 0 and 1 both mean one.
func manyOrZero(n int) int {
	if n > 1 {
		return n
	}
	return 0
}
