package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

const allHelp = `Usage: idbench [--out DIR] [--benchtime D]

With no subcommand, idbench runs the whole comparison: the generation speed of every default
scheme beside its wrapped library ('idbench speed'), then the database benchmark's default run
('idbench db'), and writes the report to DIR.

Flags:
  --out DIR        where the report goes (default "idbench-report"); created if missing,
                   files of the same name are replaced
  --benchtime D    time per speed measurement (default 1s)

Files written:
  DIR/speed.txt    the speed table
  DIR/speed.json   the same as JSON
  DIR/speed.bench  the same as Go benchmark lines, for benchstat

Examples:
  idbench
  idbench --out /tmp/report --benchtime 500ms
`

// runAll is idbench without a subcommand.
func runAll(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("idbench")
	out := fs.String("out", "idbench-report", "")
	benchtime := fs.String("benchtime", "1s", "")
	pos, err := parseFlags(fs, "", allHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("", "unexpected argument %q", pos[0])
	}
	cfg := speedConfig{schemes: defaultSpeedSchemes(), benchtime: *benchtime, libs: true}
	rep, err := measureSpeed(ctx, stderr, cfg)
	if err != nil {
		return err
	}
	if err := rep.writeTable(stdout); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"speed.txt", rep.writeTable},
		{"speed.json", rep.writeJSON},
		{"speed.bench", rep.writeBenchstat},
	}
	for _, f := range files {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("report: %s: %w", f.name, err)
		}
		if err := os.WriteFile(filepath.Join(*out, f.name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	fmt.Fprintf(stderr, "idbench: report written to %s\n", *out)
	return nil
}
