package dbbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/idkit/idkit/dbbench/mariadblocal"
	"github.com/idkit/idkit/dbbench/pglocal"
)

// EngineAllLocal names, in Config.DB for RunAll, every engine that can run
// on this machine without a server of its own: pg-local and mariadb-local
// when their server binaries are installed, and sqlite.
const EngineAllLocal = "all-local"

var errAllLocal = errors.New("dbbench: all-local runs several engines: use RunAll")

// LocalEngines returns the engines RunAll runs, in order: EnginePGLocal and
// EngineMariaDBLocal when their server binaries are found, then
// EngineSQLite, which is always available.
func LocalEngines() []string {
	var out []string
	if _, err := pglocal.FindBinDir(); err == nil {
		out = append(out, EnginePGLocal)
	}
	if _, err := mariadblocal.FindBinaries(); err == nil {
		out = append(out, EngineMariaDBLocal)
	}
	return append(out, EngineSQLite)
}

// RunAll runs cfg on every engine of LocalEngines, one after the other,
// and returns their reports in that order. With the default scheme list
// each engine compares its own default rows (auto-increment and the UUID
// type on MariaDB, bigserial on PostgreSQL and SQLite); a list given in
// cfg.Schemes must suit every engine. cfg.DB must be EngineAllLocal or
// empty.
//
// Errors are Run's, prefixed with the engine; the reports of the engines
// that finished before are returned with the error.
func RunAll(ctx context.Context, cfg Config) ([]*Report, error) {
	if cfg.DB != "" && cfg.DB != EngineAllLocal {
		return nil, fmt.Errorf("dbbench: RunAll runs the local engines; Config.DB must be %q or empty, not %q", EngineAllLocal, RedactDSN(cfg.DB))
	}
	var reps []*Report
	for _, eng := range LocalEngines() {
		c := cfg
		c.DB = eng
		if eng != EngineMariaDBLocal {
			c.SecondaryIndex = false
		}
		logf(cfg, "dbbench: all-local: %s", eng)
		rep, err := Run(ctx, c)
		if err != nil {
			return reps, fmt.Errorf("%s: %w", eng, err)
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// WriteAllReport writes the reports of RunAll into dir: each engine's full
// report (WriteReport) in dir/<engine>/, and dir/report.md with every
// engine's summary (WriteSummary) and a link to its report.
func WriteAllReport(dir string, reps []*Report) error {
	var b strings.Builder
	b.WriteString("# What each ID scheme costs each local database\n\n")
	b.WriteString("One run of every engine available on this machine, one after the other; each section is that engine's summary, with a link to its full report and charts.\n")
	for _, rep := range reps {
		sub := rep.Settings.Engine
		if err := WriteReport(filepath.Join(dir, sub), rep); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n## %s (%s)\n\n[Full report](%s/%s)\n\n", dialectOf(rep.Settings.Engine).Title, sub, sub, ReportMarkdown)
		if err := WriteSummary(&b, rep); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ReportMarkdown), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("dbbench: write %s: %w", ReportMarkdown, err)
	}
	return nil
}
