package dbbench

import (
	"context"
	"strconv"

	"github.com/idkit/idkit/dbbench/engine"
)

// runTable carries out the table workload on eng: each row's table (id PRIMARY KEY, payload;
// engine.LoadTable describes it) created, loaded with cfg.Rows keys, measured and dropped by
// the engine (Engine.Load), in
// rounds with a warm-up and the engine's bare baseline; then the medians, the baseline and
// the notes go into rep. A duplicate key ends a row's loads as a finding (Engine.Finding).
func runTable(ctx context.Context, cfg Config, eng engine.Engine, rows []engine.Row, skipped []string, rep *Report) error {
	withBaseline := cfg.Baseline && eng.HasBaseline() && baselineRow(rows) >= 0
	jobs := loadPlan(len(rows), cfg.Repeat, cfg.Rows, cfg.WarmupRows, withBaseline)
	tables := 0 // each load's table is the next t<N>
	runs, err := runLoads(ctx, cfg, eng, rows, jobs, workload[engine.Metrics]{
		unit:     "rows/s",
		findings: true,
		rate:     func(m engine.Metrics) float64 { return float64(m.Rows) / m.Seconds },
		load: func(ctx context.Context, j job, progress func(int64)) (engine.Metrics, error) {
			rec := engine.NewRecorder(j.n, cfg.Points, eng.BatchSize(), progress)
			tables++
			name := "t" + strconv.Itoa(tables)
			if j.ri < 0 {
				return eng.Baseline(ctx, engine.LoadTable(name, engine.Row{Col: engine.ColBigint}, cfg.SecondaryIndex), j.n, rec)
			}
			return eng.Load(ctx, engine.LoadTable(name, rows[j.ri], cfg.SecondaryIndex), j.n, j.measured, rec)
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
