package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/dbbench"
)

const scaleHelp = `Usage: idbench scale [--nodes LIST] [--sizes LIST] [flags] --out DIR

Measures how each scheme's database cost grows with the fleet writing a table and with the
table itself, and writes a report (scale.md, scale.json, SVG charts) into --out.

  --nodes 1,16,256,1024   for each K, K simulated application servers write one table of --rows
                          rows: each node has its own generator, node value and clock (offset
                          by a normal draw with sd --clock-skew) and issues --fleet-rate/K IDs/s
                          as a Poisson process in simulated time; rows reach the table in the
                          order of issue. Charts rows/s and leaf density against K.
  --sizes 1000000,10000000
                          for each N, one generator on the real clock loads N rows per scheme.
                          Charts the largest run's throughput against rows on a log axis, with
                          the row count at which each index reaches shared_buffers marked.

Flags:
  --db ENGINE        as idbench db (default: pg-local when server binaries are found)
  --schemes LIST     rows to compare (default "snowflake,ulid,uuidv7")
  --nodes LIST       node counts of the fleet study, 1 to 1024 each
  --sizes LIST       rows per scheme of the table-size study
  --rows N           rows per scheme in the fleet study (default 200000)
  --fleet-rate R     IDs per second across the simulated fleet (default 100000)
  --clock-skew D     standard deviation of the node clock offsets (default 1ms; 0 for none)
  --repeat N         measured loads per scheme and size; the report gives the median (default 1)
  --points N         chunks in each throughput curve (default 20)
  --lookups N        point lookups and range scans after loading (default 100; -1: none)
  --pg-setting K=V   pg-local server setting, repeatable (e.g. shared_buffers=32MB)
  --out DIR          the report directory (required)
  --from FILE        write the report of a saved scale.json into --out instead of running
  -v                 print each load's throughput on stderr

Examples:
  idbench scale --nodes 1,16,256,1024 --rows 200000 --out docs/report-fleet
  idbench scale --sizes 1000000,10000000 --schemes bigserial,snowflake,ulid,uuidv7,uuidv4 --points 100 --out docs/report-size
  idbench scale --from docs/report-fleet/scale.json --out docs/report-fleet
`

// parseCounts reads a comma-separated list of positive integers (thousands separators '_'
// allowed, as in 10_000_000).
func parseCounts(flagName, s string, most int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		n, err := strconv.ParseInt(strings.ReplaceAll(part, "_", ""), 10, 64)
		if err != nil || n < 1 || n > int64(most) {
			return nil, fmt.Errorf("%s: %q: want whole numbers from 1 to %d, separated by commas", flagName, part, most)
		}
		out = append(out, int(n))
	}
	return out, nil
}

// runScale is "idbench scale".
func runScale(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	def := dbbench.DefaultConfig()
	fs := newFlagSet("scale")
	db := fs.String("db", "", "")
	schemes := fs.String("schemes", "snowflake,ulid,uuidv7", "")
	nodes := fs.String("nodes", "", "")
	sizes := fs.String("sizes", "", "")
	rows := fs.Int("rows", def.Rows, "")
	rate := fs.Float64("fleet-rate", dbbench.DefaultFleetRate, "")
	skew := fs.Duration("clock-skew", dbbench.DefaultClockSkew, "")
	repeat := fs.Int("repeat", 1, "")
	points := fs.Int("points", def.Points, "")
	lookups := fs.Int("lookups", 100, "")
	out := fs.String("out", "", "")
	from := fs.String("from", "", "")
	verbose := fs.Bool("v", false, "")
	settings := pgSettingFlag(fs)
	pos, err := parseFlags(fs, "scale", scaleHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("scale", "scale: unexpected argument %q (scale takes only flags)", pos[0])
	}
	if *from != "" {
		return rerenderScale(stderr, *from, *out)
	}
	ks, err := parseCounts("--nodes", *nodes, 1024)
	if err != nil {
		return usagef("scale", "scale: %w", err)
	}
	ns, err := parseCounts("--sizes", *sizes, 1<<40)
	if err != nil {
		return usagef("scale", "scale: %w", err)
	}
	switch {
	case len(ks) == 0 && len(ns) == 0:
		return usagef("scale", "scale: give --nodes, --sizes or both")
	case *out == "":
		return usagef("scale", "scale: --out DIR is required: the report is a directory of files")
	case !(*rate > 0) || *rate > 1e12:
		return usagef("scale", "scale: --fleet-rate %v: want a positive number of IDs per second", *rate)
	case *skew < 0:
		return usagef("scale", "scale: --clock-skew %v: want 0 or more", *skew)
	}
	cfg := def
	cfg.DB = *db
	cfg.Rows = *rows
	cfg.Repeat = *repeat
	cfg.Points = *points
	cfg.Lookups = *lookups
	cfg.Baseline = false
	cfg.WarmupRows = 0 // Config's default: rows/5
	cfg.FleetRate = *rate
	cfg.ClockSkew = *skew
	if *skew == 0 {
		cfg.ClockSkew = -1 // dbbench: negative means clocks in perfect agreement
	}
	if len(settings) > 0 {
		cfg.PGSettings = settings
	}
	if cfg.Schemes, err = splitSchemes(*schemes); err != nil {
		return usagef("scale", "scale: --schemes: %w", err)
	}
	if err := checkDBFlags(cfg); err != nil {
		return usagef("scale", "scale: %w", err)
	}
	cfg.Log = stderr
	if !*verbose {
		cfg.Log = &firstLines{w: stderr}
	}
	cfg.Command = commandLine("idbench scale", args)
	start := time.Now()
	s, err := dbbench.RunScale(ctx, cfg, ks, ns, func(r dbbench.ScaleRun) {
		for _, res := range r.Report.Results {
			fmt.Fprintf(stdout, "nodes %-5d rows %-11d %-24s %10.0f rows/s  index %6.1f B/row  leaf density %s%%\n",
				r.Nodes, r.Rows, res.Scheme, res.RowsPerSec, res.IndexBytesPerRow, optPercent(res.AvgLeafDensity))
		}
	})
	if err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	if err := dbbench.WriteScale(*out, s); err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	fmt.Fprintf(stderr, "idbench: scale report written to %s (took %s)\n", *out, time.Since(start).Round(time.Second))
	return nil
}

// rerenderScale writes the report of a saved scale.json into dir, without running anything.
func rerenderScale(stderr io.Writer, from, dir string) error {
	if dir == "" {
		return usagef("scale", "scale: --from needs --out DIR")
	}
	js, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	var s dbbench.Scale
	if err := json.Unmarshal(js, &s); err != nil {
		return fmt.Errorf("scale: %s: %w", from, err)
	}
	if err := dbbench.WriteScale(dir, &s); err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	fmt.Fprintf(stderr, "idbench: scale report of %s written to %s\n", from, dir)
	return nil
}

func optPercent(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}
