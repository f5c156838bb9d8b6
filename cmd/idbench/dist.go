package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/dist"
)

const distHelp = `Usage: idbench dist [--target T] [--schemes LIST] [--cluster LIST] [--capacity W |
                    --capacity-from FILE] [--nodes K] [--pre-split P] [--buckets B]
                    [--seed S] [--out DIR] [--json] [more model settings]

A MODEL, not a measurement, of a range-partitioned database (CockroachDB, Spanner, TiDB,
YugabyteDB), none of which runs on this machine. It shows what each key scheme does to such a
cluster: whether its inserts spread over the nodes or pile onto the last range.

How the model works:
  - Real keys: each scheme's generator runs on K simulated application nodes (--nodes), each
    with its own clock offset (--skew), as 'idbench db --nodes' does; the database's sequence
    is the row "sequence". Keys are ordered as the target sorts them: 64-bit IDs as INT8 (sign
    bit flipped, big-endian), 128-bit IDs as their 16 bytes (their text sorts the same).
  - Ranges: the table starts as one range (or --pre-split P ranges spread over the key space).
    A range splits at its middle key above the target's size limit, and by load above the
    target's writes/s threshold: it then samples 20 keys for 10 s and splits at one that
    divides the later writes evenly (within 25%), as CockroachDB's split finder does. For
    append-only keys every later write falls right of every sample, so the load split fails,
    as CockroachDB's docs say: that is the hotspot.
  - Nodes: each range's writes go through one leaseholder on one of N nodes; a split's right
    half stays on its node until the rebalancer runs (every --rebalance) and moves ranges,
    busiest first, to the least-loaded node. Each node sustains C writes/s; the cluster
    sustains the rate at which its busiest node saturates.
  - Capacity C per scheme: from an 'idbench db' report (--capacity-from, default
    idbench-report/report.json when it exists), else --capacity. A Pebble report (keys laid
    out as CockroachDB lays them out, on its LSM engine) gives the ratios between schemes (rows
    per byte written), and the target's published per-node write figure the scale; a B-tree report's raw rows/s are
    this machine's, far above what these systems publish per node.
  - Free parameters (fitted to TiDB's test in the calibration tests, default 1, 0, 0):
    --index-share, --scatter-cost, --fixed-tier.

Reported per scheme and N: sustained writes/s and its share of N·C, the hottest node's share
of the writes, mean utilisation, ranges, size and load splits (and failed load splits), the
ranges a query for the last --window of writes touches, the warm-up, and for --buckets the
spans a point read by the ID alone probes. Then the crossover N at which a spreading key
overtakes a time-ordered one. Every assumption is printed. The same --seed gives the same
report. Calibration: go test ./dbbench/dist -run 'Calibration|Fit|Sanity' -v.

Flags:
  --target T          cockroachdb (default), spanner, tidb, yugabyte (HASH-sharded first column)
  --schemes LIST      rows separated by ',' or ';': sequence or idkit specs, whose own settings
                      continue them ("snowflake:node=1,reverse=true,uuidv4" is two rows)
                      (default sequence,snowflake,ulid,uuidv7,uuidv4,snowflake:reverse=true,
                      snowflake:shard_bits=5)
  --cluster LIST      node counts N (default 1,2,3,4,5,6,8,10,12,16,20,24,32,40,48,64)
  --capacity W        writes/s one node sustains, for schemes without a measured figure
                      (default 10000)
  --capacity-from F   an 'idbench db' report.json whose rows/s give each scheme's capacity
                      ("none" to use --capacity for all). From an LSM report (--db pebble, e.g.
                      docs/report-pebble-layouts/report.json) each scheme's rows per byte
                      written (WAL, flushes, compactions) scaled to the target's published
                      per-node writes/s, printed with its source; a B-tree report (PostgreSQL,
                      InnoDB) gives its rows/s as measured
  --capacity-scale S  published (default): scale an LSM report as above; raw: use its rows/s
  --nodes K           application nodes generating keys (default 8)
  --skew D            standard deviation of their clock offsets (default 1ms)
  --pre-split P       start the table as P ranges (default 1)
  --buckets B         hash-shard the ID index into B buckets (CockroachDB USING HASH, TiDB
                      tidb_shard with 256)
  --seconds S         model seconds per run (default 600)
  --samples M         real keys drawn per model second (default 500)
  --row-bytes B       bytes a row adds to its range (default 200)
  --rebalance D       delay between rebalancer runs (default 1m)
  --window D          the time window a query reads (default 1m)
  --index-share H     fraction of a write's work on its ID's range (default 1)
  --scatter-cost O    extra ID-index work of a write away from its generator's last range (default 0)
  --fixed-tier F      per-write work on a tier that does not grow with N (default 0)
  --seed S            seed of offsets, arrivals and random bits (default 1)
  --out DIR           also write DIR/dist.json, DIR/dist.txt and DIR/throughput.svg
  --json              print the report as JSON

Examples:
  idbench dist --target cockroachdb
  idbench dist --target tidb --schemes sequence,uuidv4 --buckets 256 --cluster 3,4
  idbench dist --target spanner --capacity 20000 --out docs/report-dist
`

// defaultCapacityReport is where the whole idbench run leaves its database report.
const defaultCapacityReport = "idbench-report/report.json"

// runDist is "idbench dist".
func runDist(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fset := newFlagSet("dist")
	target := fset.String("target", "cockroachdb", "")
	schemesFlag := fset.String("schemes", "", "")
	clusterFlag := fset.String("cluster", "", "")
	capacity := fset.Float64("capacity", 0, "")
	capFrom := fset.String("capacity-from", "", "")
	capScale := fset.String("capacity-scale", "published", "")
	nodes := fset.Int("nodes", 0, "")
	skew := fset.Duration("skew", 0, "")
	preSplit := fset.Int("pre-split", 0, "")
	buckets := fset.Int("buckets", 0, "")
	seconds := fset.Int("seconds", 0, "")
	samples := fset.Int("samples", 0, "")
	rowBytes := fset.Float64("row-bytes", 0, "")
	rebalance := fset.Duration("rebalance", 0, "")
	window := fset.Duration("window", 0, "")
	indexShare := fset.Float64("index-share", 1, "")
	scatter := fset.Float64("scatter-cost", 0, "")
	fixed := fset.Float64("fixed-tier", 0, "")
	seed := fset.Uint64("seed", 1, "")
	out := fset.String("out", "", "")
	asJSON := fset.Bool("json", false, "")
	pos, err := parseFlags(fset, "dist", distHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("dist", "dist: unexpected argument %q (dist takes only flags)", pos[0])
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	tg, err := dist.LookupTarget(*target)
	if err != nil {
		return usagef("dist", "dist: --target: %w", err)
	}
	c := dist.Config{
		Target: tg, Capacity: *capacity, Generators: *nodes, ClockSkew: *skew, PreSplit: *preSplit,
		Buckets: *buckets, Seconds: *seconds, Samples: *samples, RowBytes: *rowBytes, Rebalance: *rebalance,
		Window: *window, IndexShare: *indexShare, SetIndexShare: true, ScatterCost: *scatter, FixedTier: *fixed, Seed: *seed,
	}
	if *schemesFlag != "" {
		if c.Schemes, err = splitSchemes(*schemesFlag); err != nil {
			return usagef("dist", "dist: --schemes: %w", err)
		}
	}
	if c.Cluster, err = parseCounts("--cluster", *clusterFlag, 4096); err != nil {
		return usagef("dist", "dist: %w", err)
	}
	for name, v := range map[string]int{"nodes": *nodes, "pre-split": *preSplit, "seconds": *seconds, "samples": *samples} {
		if set[name] && v <= 0 {
			return usagef("dist", "dist: --%s %d: want a positive number", name, v)
		}
	}
	if set["capacity"] && !(*capacity > 0) {
		return usagef("dist", "dist: --capacity %v: want a positive number of writes/s", *capacity)
	}
	if *capScale != "published" && *capScale != "raw" {
		return usagef("dist", "dist: --capacity-scale %q: want published or raw", *capScale)
	}
	if err := loadCapacities(&c, *capFrom, *capScale == "published"); err != nil {
		return err
	}
	rep, err := dist.Model(ctx, c)
	if errors.Is(err, dist.ErrConfig) {
		return usagef("dist", "%w", err)
	}
	if err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	rep.Command = "idbench dist " + strings.Join(args, " ")
	if *asJSON {
		err = writeDistJSON(stdout, rep)
	} else {
		err = dist.WriteText(stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("dist: writing: %w", err)
	}
	if *out != "" {
		if err := writeDistDir(*out, rep); err != nil {
			return fmt.Errorf("dist: %w", err)
		}
		fmt.Fprintf(stderr, "idbench: model report written to %s\n", *out)
	}
	return nil
}

// loadCapacities fills c.Capacities from an idbench db report: each row's rows/s, the
// database's own sequence (bigserial, auto-increment) for the row "sequence". An LSM report
// (--db pebble) gives, when scale is set, each scheme's rows per byte the engine wrote,
// scaled to the target's published per-node write figure (dist.ScaleCapacities); a B-tree
// report's rows/s are used as measured.
func loadCapacities(c *dist.Config, from string, scale bool) error {
	explicit := from != ""
	switch from {
	case "none":
		return nil
	case "":
		from = defaultCapacityReport
	}
	js, err := os.ReadFile(from)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if err != nil {
		return usagef("dist", "dist: --capacity-from: %w", err)
	}
	var rep dbbench.Report
	if err := json.Unmarshal(js, &rep); err != nil || len(rep.Results) == 0 {
		return usagef("dist", "dist: --capacity-from %s: not an idbench db report.json", from)
	}
	c.Capacities = map[string]float64{}
	for _, r := range rep.Results {
		name := r.Scheme
		if name == dbbench.RowBigserial || name == dbbench.RowAutoIncrement {
			name = dist.SchemeSequence
		}
		if r.RowsPerSec > 0 {
			c.Capacities[name] = r.RowsPerSec
		}
	}
	c.CapacitySource = fmt.Sprintf("rows/s of %s (idbench db, %s)", from, rep.Settings.Engine)
	if !scale || rep.Results[0].LSM == nil {
		return nil
	}
	// On an LSM tree a node's write capacity is bound by the bytes it writes per row (WAL,
	// flushes, compactions): load-independent, unlike rows/s on a shared machine.
	perByte := map[string]float64{}
	for _, r := range rep.Results {
		name := r.Scheme
		if name == dbbench.RowBigserial || name == dbbench.RowAutoIncrement {
			name = dist.SchemeSequence
		}
		if l := r.LSM; l != nil && r.Rows > 0 {
			if w := l.WALBytes + l.FlushBytes + l.CompactionBytes; w > 0 {
				perByte[name] = float64(r.Rows) / float64(w)
			}
		}
	}
	scaled, how, err := dist.ScaleCapacities(perByte, "rows per byte written (WAL, flushes and compactions) on the LSM engine", c.Target)
	if err != nil {
		return usagef("dist", "dist: --capacity-from %s: %w", from, err)
	}
	c.Capacities = scaled
	c.CapacitySource = fmt.Sprintf("%s (%s, %s; source: %s)", how, from, rep.Settings.Engine, c.Target.NodeWritesSource)
	return nil
}

func writeDistJSON(w io.Writer, rep *dist.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// writeDistDir writes the report's files into dir.
func writeDistDir(dir string, rep *dist.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	svg, err := dist.Chart(rep)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "throughput.svg"), svg, 0o644); err != nil {
		return err
	}
	for name, write := range map[string]func(io.Writer, *dist.Report) error{"dist.json": writeDistJSON, "dist.txt": dist.WriteText} {
		if err := writeFile(filepath.Join(dir, name), func(w io.Writer) error { return write(w, rep) }); err != nil {
			return err
		}
	}
	return nil
}
