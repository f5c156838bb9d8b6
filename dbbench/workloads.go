package dbbench

import (
	"context"

	"github.com/idkit/idkit/dbbench/engine"
)

// workloadEntry is one workload Config.Workload can name: the function that carries it out
// on an open engine, through the runner (runner.go), and fills the report. The workloads are
// a table built by workloads(), as the engines are (engines.go).
type workloadEntry struct {
	name string
	// run carries the workload out on eng for rows (skipped: the rows the engine left out,
	// for the notes) and fills rep; an error wrapping ErrTimeMismatch leaves rep finished,
	// and Run returns both.
	run func(ctx context.Context, cfg Config, eng engine.Engine, rows []engine.Row, skipped []string, rep *Report) error
}

// workloads returns the workloads Run can carry out.
func workloads() []workloadEntry {
	return []workloadEntry{
		{name: WorkloadTable, run: runTable},
		{name: WorkloadApp, run: runAppWorkload},
	}
}

// workloadNamed returns the workload called name, which Config.withDefaults has checked:
// the table workload for any other.
func workloadNamed(name string) workloadEntry {
	all := workloads()
	for _, w := range all {
		if w.name == name {
			return w
		}
	}
	return all[0]
}
