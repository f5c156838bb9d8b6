package dbbench

import (
	"context"
	"fmt"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/schollz/progressbar/v3"
)

// One runner carries out every workload on any engine. A workload is a description
// (workload) of what one load of a scheme does and what it measures; the runner decides the
// loads and their order (loadPlan), runs them, draws the progress bar, logs each measured
// load, turns a load error the engine calls a finding into the report's finding for that
// scheme, and hands back the figures (loadRuns) for the workload to summarize. The table
// workload (table.go) and the app workload (app.go) are two such descriptions; fleets are a
// key source of the rows (engine.Row.Fleet), and scale (scale.go) and RunAll (all.go) call
// Run, so they drive the same runner.

// job is one load of a run.
type job struct {
	ri       int  // index in rows, -1 for the baseline
	n        int  // rows (table workload) or operations (app workload)
	measured bool // false for a warm-up, whose figures are thrown away
	last     bool // the scheme's last measured load, after which its queries and checks run
}

// loadPlan returns the loads of a run, in order: rounds of all schemes, so that slow drifts
// of a noisy machine spread over all of them instead of hitting one; each round starts with
// the baseline when there is one; the first round gives each its warm-up (warmup rows, none
// when 0) just before its first measured load.
func loadPlan(schemes, repeat, n, warmup int, baseline bool) []job {
	var jobs []job
	for round := 0; round < repeat; round++ {
		first := -1
		if !baseline {
			first = 0
		}
		for ri := first; ri < schemes; ri++ {
			if round == 0 && warmup > 0 {
				jobs = append(jobs, job{ri: ri, n: warmup})
			}
			jobs = append(jobs, job{ri: ri, n: n, measured: true, last: round == repeat-1})
		}
	}
	return jobs
}

// workload describes a workload to the runner; M is the figures of one load.
type workload[M any] struct {
	// unit names a load's rate in the log: "rows/s", "ops/s".
	unit string
	// load carries out job j on the engine and returns its figures; progress, when not nil,
	// takes the rows done so far in the load.
	load func(ctx context.Context, j job, progress func(int64)) (M, error)
	// rate is a load's throughput in unit, for the log.
	rate func(m M) float64
	// findings: a load error the engine calls a finding about the row (Engine.Finding) ends
	// that row's loads and becomes the report's finding, instead of failing the run.
	findings bool
}

// loadRuns is what the runner measured: each row's measured loads in order, the baseline's,
// and the finding that ended a row's loads ("" for none).
type loadRuns[M any] struct {
	rows   [][]M
	base   []M
	failed []string
}

// runLoads carries out jobs on eng for rows, as w describes them. Errors are the loads'
// errors with the scheme (or baseline) they came from.
func runLoads[M any](ctx context.Context, cfg Config, eng engine.Engine, rows []engine.Row, jobs []job, w workload[M]) (loadRuns[M], error) {
	out := loadRuns[M]{rows: make([][]M, len(rows)), failed: make([]string, len(rows))}
	var total int64
	for _, j := range jobs {
		total += int64(j.n)
	}
	var bar *progressbar.ProgressBar
	if cfg.Progress != nil {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription("loading"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("rows"),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30),
		)
		defer bar.Finish()
	}
	var done int64
	for _, j := range jobs {
		if j.ri >= 0 && out.failed[j.ri] != "" {
			done += int64(j.n)
			continue
		}
		label := "baseline"
		if j.ri >= 0 {
			label = rows[j.ri].Label
		}
		var progress func(int64)
		if bar != nil {
			offset := done
			bar.Describe(label)
			progress = func(n int64) { _ = bar.Set64(offset + n) }
		}
		m, err := w.load(ctx, j, progress)
		if err != nil && w.findings && j.ri >= 0 {
			if f, ok := eng.Finding(err, rows[j.ri]); ok {
				out.failed[j.ri] = f
				logf(cfg, "dbbench: %s", f)
				done += int64(j.n)
				continue
			}
		}
		if err != nil {
			if j.ri < 0 {
				return out, fmt.Errorf("%w (baseline)", err)
			}
			return out, fmt.Errorf("%w (scheme %s)", err, label)
		}
		done += int64(j.n)
		if bar != nil {
			_ = bar.Set64(done)
		}
		if !j.measured {
			logf(cfg, "dbbench: %-22s %10.0f %s (discarded warm-up of %d)", label, w.rate(m), w.unit, j.n)
			continue
		}
		if j.ri < 0 {
			out.base = append(out.base, m)
		} else {
			out.rows[j.ri] = append(out.rows[j.ri], m)
		}
		logf(cfg, "dbbench: %-22s %10.0f %s", label, w.rate(m), w.unit)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	return out, nil
}
