package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/idkit/idkit/dbbench"
)

const allHelp = `Usage: idbench [--out DIR] [--benchtime D] [--count N] [--db ENGINE] [--rows N]

With no subcommand, idbench runs the whole comparison and writes a report a team can read:
  1. generation speed of every default scheme beside its wrapped library ('idbench speed');
  2. the database benchmark's default run ('idbench db'): the primary-key B-tree cost of
     bigserial, snowflake, sonyflake, ulid, uuidv7, uuidv4, ulid-text, and typeid stored as
     uuid and as its prefixed text (typeid-text), on a private throwaway PostgreSQL when
     its server binaries are installed, else on embedded SQLite.
Both tables go to stdout, progress to stderr.

Flags:
  --out DIR        where the report goes (default "idbench-report"); created if missing,
                   files of the same name are replaced
  --benchtime D    time per speed measurement, or Nx for N IDs (default 300ms)
  --count N        speed rounds; each speed figure is the median of N (default 3)
  --db ENGINE      database for step 2: pg-local, sqlite, pg (libpq environment variables),
                   a postgres:// connection string, or none to skip it (default: pg-local
                   when found, else sqlite)
  --rows N         rows per scheme in step 2 (default: the db benchmark's default run)

Files written to DIR:
  README.md                      what was run, the speed table, where the rest is
  speed.txt, speed.json          the speed results as a table and as JSON
  speed.bench                    the same as Go benchmark lines, for benchstat
  report.md, report.json, *.svg  the database report and its charts ('idbench db --out')
  benchstat.txt                  the database results as benchmark lines

Examples:
  idbench
  idbench --out /tmp/report --benchtime 500ms
  idbench --db none
`

// allConfig is one whole-comparison run.
type allConfig struct {
	out       string
	benchtime string
	count     int
	db        string
	rows      int
}

// runAll is idbench without a subcommand.
func runAll(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("idbench")
	cfg := allConfig{}
	fs.StringVar(&cfg.out, "out", "idbench-report", "")
	fs.StringVar(&cfg.benchtime, "benchtime", defaultSpeedBenchtime, "")
	fs.IntVar(&cfg.count, "count", defaultSpeedCount, "")
	fs.StringVar(&cfg.db, "db", "", "")
	fs.IntVar(&cfg.rows, "rows", 0, "")
	pos, err := parseFlags(fs, "", allHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("", "unexpected argument %q (subcommands: %s)", pos[0], strings.Join(commandNames(), ", "))
	}
	if cfg.rows < 0 {
		return usagef("", "--rows %d: want a positive count, or 0 for the default", cfg.rows)
	}
	if cfg.count < 1 {
		return usagef("", "--count %d: want 1 or more rounds", cfg.count)
	}
	if cfg.out == "" {
		return usagef("", "--out: want a directory")
	}
	return runAllWith(ctx, stdout, stderr, cfg, commandLine("idbench", args))
}

func runAllWith(ctx context.Context, stdout, stderr io.Writer, cfg allConfig, command string) error {
	speed, err := measureSpeed(ctx, stderr, speedConfig{schemes: defaultSpeedSchemes(), benchtime: cfg.benchtime, count: cfg.count, libs: true})
	if err != nil {
		return err
	}
	if err := speed.writeTable(stdout); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"speed.txt", speed.writeTable},
		{"speed.json", speed.writeJSON},
		{"speed.bench", speed.writeBenchstat},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(cfg.out, f.name), f.write); err != nil {
			return err
		}
	}

	var db *dbbench.Report
	if cfg.db != "none" {
		dc := dbbench.DefaultConfig()
		dc.DB = cfg.db
		if cfg.rows > 0 {
			dc.Rows = cfg.rows
			dc.WarmupRows = 0 // the default: a fifth of the rows
		}
		dc.Log = stderr
		if dbbench.IsTerminal(stderr) {
			dc.Progress = stderr
		}
		dc.Command = command
		fmt.Fprintln(stdout)
		if db, err = dbbench.Run(ctx, dc); err != nil {
			return fmt.Errorf("db: %w", err)
		}
		if err := dbbench.WriteTable(stdout, db); err != nil {
			return fmt.Errorf("writing: %w", err)
		}
		if err := dbbench.WriteReport(cfg.out, db); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := writeFile(filepath.Join(cfg.out, "README.md"), func(w io.Writer) error {
		return writeIndex(w, command, speed, db)
	}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "idbench: report written to %s\n", cfg.out)
	return nil
}

// writeFile writes what write produces to path, whole or not at all on a write error.
func writeFile(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return fmt.Errorf("report: %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// writeIndex writes the report's README.md.
func writeIndex(w io.Writer, command string, speed *speedReport, db *dbbench.Report) error {
	ew := &errWriter{w: w}
	ew.printf("# idbench report\n\nProduced by `%s` (%s %s/%s, GOMAXPROCS=%d).\n\n", command, speed.Go, speed.GOOS, speed.GOARCH, speed.GOMAXPROCS)
	ew.printf("## Generation speed\n\nOne ID's cost per scheme, each adapter beside the library it wraps ")
	ew.printf("(`idbench speed`; also in [speed.json](speed.json) and, for benchstat, [speed.bench](speed.bench)).\n\n```\n")
	if ew.err == nil {
		ew.err = speed.writeTable(w)
	}
	ew.printf("```\n\n## Database B-tree cost\n\n")
	if db == nil {
		ew.printf("Not run (`--db none`).\n")
	} else {
		ew.printf("Engine %s, %s: see [report.md](report.md) for tables, charts and notes, ", db.Settings.Engine, db.Settings.ServerVersion)
		ew.printf("[report.json](report.json), and [benchstat.txt](benchstat.txt).\n")
	}
	return ew.err
}
