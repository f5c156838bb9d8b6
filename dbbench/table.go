package dbbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// runTable carries out the table workload on eng: each row's table (id PRIMARY KEY, payload;
// engine.LoadTable describes it) created, loaded with cfg.Rows keys, measured and dropped as
// tableLoad describes it, in rounds with a warm-up and the engine's bare baseline; then the
// medians, the baseline and the notes go into rep. A duplicate key ends a row's loads as a
// finding (Engine.Finding).
func runTable(ctx context.Context, cfg Config, eng engine.Engine, rows []engine.Row, skipped []string, rep *Report) error {
	withBaseline := cfg.Baseline && eng.HasBaseline() && baselineRow(rows) >= 0
	jobs := loadPlan(len(rows), cfg.Repeat, cfg.Rows, cfg.WarmupRows, withBaseline)
	tables := 0 // each load's table is the next t<N>
	runs, err := runLoads(ctx, cfg, eng, rows, jobs, workload[metrics]{
		unit:     "rows/s",
		findings: true,
		rate:     func(m metrics) float64 { return float64(m.Rows) / m.Seconds },
		load: func(ctx context.Context, j job, progress func(int64)) (metrics, error) {
			rec := engine.NewRecorder(j.n, cfg.Points, eng.BatchSize(), progress)
			tables++
			name := "t" + strconv.Itoa(tables)
			if j.ri < 0 {
				return tableLoad(ctx, cfg, eng, engine.LoadTable(name, engine.Row{Col: engine.ColBigint}, cfg.SecondaryIndex), j.n, false, true, rec)
			}
			return tableLoad(ctx, cfg, eng, engine.LoadTable(name, rows[j.ri], cfg.SecondaryIndex), j.n, j.measured, false, rec)
		},
	})
	if err != nil {
		return err
	}
	for i, r := range rows {
		res := summarize(r, eng.ColumnTypeOf(r), runs.rows[i])
		res.Failure = runs.failed[i]
		rep.Results = append(rep.Results, res)
	}
	if rep.Settings.FleetRate > 0 {
		rep.Settings.ClockSkew = Duration(cfg.fleet().Skew)
	}
	eng.Settings(&rep.Settings) // statistics may have become unavailable
	if base := runs.base; len(base) > 0 {
		b := &Baseline{Rows: base[0].Rows}
		var rates []float64
		for _, m := range base {
			run := Sample{RowsPerSec: float64(m.Rows) / m.Seconds, Seconds: m.Seconds,
				IndexBytesPerRow: perRow(m.IndexBytes, m.Rows), WALBytesPerRow: perRow(m.WALBytes, m.Rows)}
			b.Runs = append(b.Runs, run)
			rates = append(rates, run.RowsPerSec)
		}
		b.RowsPerSec = median(rates)
		if i := baselineRow(rows); i >= 0 && b.RowsPerSec > 0 {
			b.Scheme = rows[i].Label
			b.Ratio = rep.Results[i].RowsPerSec / b.RowsPerSec
		}
		rep.Baseline = b
	}
	rep.Notes = notes(rep, rows)
	for _, f := range runs.failed {
		if f != "" {
			rep.Notes = append(rep.Notes, f)
		}
	}
	rep.Notes = append(rep.Notes, eng.TableNotes(rep, rows, skipped)...)
	return nil
}

// metrics are the figures of one load of the table workload: the engine's named counters
// (Measurer.Marks) and structures (AppDialect.Structures) as they came, and the figures of the
// report taken from them (figures).
type metrics struct {
	Rows    int64
	Seconds float64
	Curve   []engine.Chunk
	// Durability is the class of each store the generators rest on (a segment row's store,
	// a leased node's), read after the load; nil for other rows.
	Durability []string

	// Counters are the engine's counters of the load by name, with the secondary index's
	// size and leaf pages; counterFigures says which the report shows.
	Counters map[string]int64
	// Structures are the database objects the load made, each with its size (Bytes; the
	// per-row figure is left to summarize).
	Structures []engine.Structure

	// Figures taken from Counters and Structures (figures) and from the primary key's
	// leaves (engine.LeafStats); nil where the engine does not measure them.
	IndexBytes  int64 // the primary key: a B-tree of its own, or the clustered index
	TableBytes  int64 // the table: the heap, or the clustered and secondary indexes
	WALBytes    int64
	FPI         *int64
	Checkpoints *int64
	Density     *float64
	Frag        *float64
	// Arrivals is the order in which the load's keys reached the table (only the arrival
	// fields of Contention), for keys made client-side in a measured load; nil otherwise.
	Arrivals  *Contention
	LeafPages *int64
	Lookup    Latency
	RangeScan Latency
	// LSM is the LSM-tree figures of an engine that has them (engine.LSMEngine), else nil.
	LSM *engine.LSM
}

// tableLoad is one load of the table workload, the same on every engine: it creates table t,
// prepares the load (Engine.BeforeLoad: a checkpoint, the loading connections) and marks the
// counters, fills t with n rows of t.Key's keys (the engine's own insert path,
// TableLoader.FillTable; the bare baseline when base), reads the counters, checks the row
// count, settles t and sizes its structures; a measured load then reads the leaves of its
// primary key and secondary indexes and times point lookups and range scans on sampled keys
// (timeQueries). It drops t whatever happens, even after ctx has ended.
func tableLoad(ctx context.Context, cfg Config, eng engine.Engine, t engine.TableDef, n int, measure, base bool, rec *engine.Recorder) (m metrics, err error) {
	var src *engine.Source
	if !base {
		r, err := eng.SourceRow(t.Key)
		if err != nil {
			return m, err
		}
		if src, err = engine.NewSource(r, cfg.Nodes); err != nil {
			return m, err
		}
		defer src.Close()
		defer func() { m.Durability = src.Durability() }() // before close
	}
	ts := []engine.TableDef{t}
	if err := eng.CreateTables(ctx, ts); err != nil {
		return m, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if derr := eng.DropTables(dctx, ts); err == nil {
			err = derr
		}
	}()
	if err := eng.BeforeLoad(ctx); err != nil {
		return m, err
	}
	since, err := eng.Marks(ctx)
	if err != nil {
		return m, err
	}
	var arr *arrivals
	if measure && src != nil {
		arr = newArrivals(behindWindow)
		rec.WatchArrivals(arr.add)
	}
	rec.Start = time.Now()
	if err := eng.FillTable(ctx, t, src, n, rec); err != nil {
		return m, engine.FailLost(ctx, "load rows", err, eng.ConnLost)
	}
	m.Seconds = time.Since(rec.Start).Seconds()
	m.Curve = rec.Curve()
	if arr != nil && arr.n > 0 {
		m.Arrivals = new(Contention)
		arr.fill(m.Arrivals)
	}
	if m.Counters, err = since(ctx); err != nil {
		return m, err
	}
	if m.Rows, err = eng.QueryInt(ctx, "SELECT count(*) FROM "+eng.Qualify(t.Name)); err != nil {
		return m, err
	}
	if m.Rows != int64(n) {
		return m, fmt.Errorf("dbbench: loaded %d rows, table holds %d", n, m.Rows)
	}
	if err := eng.Settle(ctx, ts); err != nil {
		return m, err
	}
	if m.Structures, err = eng.Structures(ctx, ts); err != nil {
		return m, err
	}
	m.figures(t)
	if !measure {
		return m, nil
	}
	leaves, err := eng.LeafStats(ctx, t, "", m.Rows)
	if err != nil {
		return m, err
	}
	m.Density, m.Frag, m.LeafPages = leaves.Density, leaves.Fragmentation, leaves.Pages
	for _, ix := range t.Indexes {
		leaves, err := eng.LeafStats(ctx, t, ix.Name, m.Rows)
		if err != nil {
			return m, err
		}
		if leaves.Pages != nil {
			m.Counters[engine.CounterSecondaryLeafPages] += *leaves.Pages
		}
	}
	if cfg.Lookups > 0 {
		if m.Lookup, m.RangeScan, err = timeQueries(ctx, cfg, eng, t, m.Rows); err != nil {
			return m, err
		}
	}
	if l, ok := eng.(engine.LSMEngine); ok {
		m.LSM, err = l.LSM(ctx, t, m.Rows, cfg.RangeN)
	}
	return m, err
}

// figures takes the report's figures of a load from its counters and structures: the log
// bytes, full-page images and checkpoints the engine counted; the primary key's size (its own
// B-tree, or the clustered index that holds the rows); the table's (its heap, or, clustered,
// every index of it); and the secondary indexes' (every other structure).
func (m *metrics) figures(t engine.TableDef) {
	if m.Counters == nil {
		m.Counters = map[string]int64{}
	}
	m.WALBytes = m.Counters[engine.CounterLogBytes]
	if v, ok := m.Counters[engine.CounterFullPageImages]; ok {
		m.FPI = engine.Ptr(v)
	}
	if v, ok := m.Counters[engine.CounterCheckpoints]; ok {
		m.Checkpoints = engine.Ptr(v)
	}
	var heap bool
	var all, secondary int64
	for _, s := range m.Structures {
		all += s.Bytes
		switch s.Role {
		case t.Role(engine.RoleTable):
			m.TableBytes, heap = s.Bytes, true
		case t.Role(engine.RolePrimary), t.Role(engine.RoleClustered):
			m.IndexBytes = s.Bytes
		default:
			secondary += s.Bytes
		}
	}
	if !heap {
		m.TableBytes = all
	}
	if len(t.Indexes) > 0 || !heap {
		m.Counters[engine.CounterSecondaryIndexBytes] = secondary
	}
}

// timeQueries measures point lookups and "next N after id" range scans (cfg.RangeN rows) on
// up to cfg.Lookups keys sampled from table t, which holds rows rows, in random order, through
// statements prepared on the engine's measuring connection.
func timeQueries(ctx context.Context, cfg Config, eng engine.Engine, t engine.TableDef, rows int64) (point, scan Latency, err error) {
	keys, err := eng.SampleKeys(ctx, t, cfg.Lookups, rows)
	if err != nil {
		return point, scan, err
	}
	rand.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	keys = keys[:min(len(keys), cfg.Lookups)]
	tbl := eng.Qualify(t.Name)
	lookup, err := eng.Prepare(ctx, eng.SQL("SELECT payload FROM "+tbl+" WHERE id = $1"))
	if err != nil {
		return point, scan, err
	}
	defer lookup.Close()
	next, err := eng.Prepare(ctx, eng.SQL("SELECT id, payload FROM "+tbl+" WHERE id > $1 ORDER BY id LIMIT "+strconv.Itoa(cfg.RangeN)))
	if err != nil {
		return point, scan, err
	}
	defer next.Close()
	return engine.TimeQueries(keys, func(k any) error {
		got, err := lookup.Rows(ctx, k)
		if err != nil {
			return engine.FailLost(ctx, "point lookup", err, eng.ConnLost)
		}
		if got != 1 {
			return fmt.Errorf("dbbench: point lookup of a sampled key found %d rows", got)
		}
		return nil
	}, func(k any) error {
		_, err := next.Rows(ctx, k)
		return engine.FailLost(ctx, "range scan", err, eng.ConnLost)
	})
}
