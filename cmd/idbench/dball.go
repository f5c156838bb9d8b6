package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/idkit/idkit/dbbench"
)

// runDBAllLocal is "idbench db --db all-local": the run of cfg on every
// local engine, printed engine after engine (--json: one array), and with
// --out a directory holding each engine's report and a report.md with all
// their summaries.
func runDBAllLocal(ctx context.Context, stdout, stderr io.Writer, cfg dbbench.Config, asJSON, asBench bool, out string) error {
	reps, err := dbbench.RunAll(ctx, cfg)
	if err != nil {
		return fmt.Errorf("db: %w", err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reps); err != nil {
			return fmt.Errorf("db: writing: %w", err)
		}
	} else {
		for i, rep := range reps {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			write := dbbench.WriteTable
			if asBench {
				write = dbbench.WriteBenchstat
			}
			if err := write(stdout, rep); err != nil {
				return fmt.Errorf("db: writing: %w", err)
			}
		}
	}
	if out != "" {
		if err := dbbench.WriteAllReport(out, reps); err != nil {
			return fmt.Errorf("db: %w", err)
		}
		fmt.Fprintf(stderr, "idbench: report written to %s\n", out)
	}
	return nil
}
