package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/layouts"
)

const planHelp = `Usage: idbench plan --rate N --years Y [--nodes K | --datacenters D --nodes K]
                    [--unit D] [--shard-bits S] [--hash-bits H] [--js | --max-bits B | --unsigned]
                    [--epoch DATE] [--target DB [--writers N]] [--json]

Designs 64-bit Snowflake-family layouts for a load: prints every layout that fits as a spec
idkit.New accepts (append node=N, or the named node fields, to start a generator), with what
one node and the whole fleet can issue per second, how many nodes it holds, when its time
field runs out, and its headroom against the requirement. Then it checks the presets against
the same requirement and says why each falls short. When nothing fits it exits with status 1
and says which requirement to relax, and by how much.

Flags:
  --rate N          peak IDs per second one node must issue without waiting (required)
  --years Y         years from --epoch the time field must last (required)
  --nodes K         generators holding distinct node values at once (default 1)
  --datacenters D   split the node into datacenter and worker fields, as Twitter does
  --unit D          time unit (1ms, 10ms, 1s, ...); default: try 1ms, 10ms and 1s
  --shard-bits S    a shard field of S bits above the node, for IDs that carry their shard
  --hash-bits H     a hash field of H bits (1 to 15) on top, above the time: TiDB's AUTO_RANDOM
                    shape (shard_bits= in a spec), which spreads inserts over 2^H shards of a
                    range-partitioned database (CockroachDB, Spanner, TiDB), each time-ordered
  --max-bits B      total width: 53 keeps IDs exact in JavaScript, 63 (default) in a signed
                    64-bit column (PostgreSQL bigint, Java long), 64 uses every bit
  --js              the same as --max-bits 53
  --unsigned        the same as --max-bits 64
  --epoch DATE      the epoch of the designed layouts and the day the life counts from,
                    as 2026-01-01 or RFC 3339 (default: today, UTC)
  --target DB       the database the IDs key: postgres, innodb (one B-tree: keep the time
                    order), cockroachdb, spanner, tidb (range-partitioned: spread the writes
                    with reverse=true, shard_bits=S or uuidv4), yugabyte (hashes the key);
                    adds advice, the pre-split statement and the adapted spec
  --writers N       with --target postgres or innodb: the concurrent writing connections
                    (a pool of N); the advice then says which of its claims, on size and
                    on speed, the committed sweeps (idbench db --clients; InnoDB's past
                    the cache) show to hold for N writers and under which conditions (workload size,
                    data against the cache, commit setting), ranks the keys by bytes and
                    by ops/s at N, and changes where the measurements say it should
  --json            one JSON array of the layouts that fit, designed ones first, then presets;
                    with --target each has target_spec, the spec adapted to the target

Examples:
  idbench plan --rate 100000 --nodes 1024 --years 70 --unit 1ms
  idbench plan --rate 100000 --nodes 10 --years 70 --js
  idbench plan --rate 5000 --datacenters 4 --nodes 256 --shard-bits 6 --years 30 --json
  idbench plan --rate 50000 --nodes 64 --years 50 --hash-bits 4
  idbench plan --rate 100000 --nodes 64 --years 50 --target tidb
  idbench plan --rate 5000 --years 50 --target innodb --writers 16
`

// planRequest is the parsed command line of "idbench plan".
type planRequest struct {
	req    layouts.Requirement
	asJSON bool
	target string // "" or one of planTargets
	// writers is --writers, the concurrent writing connections (0: not given).
	writers int
}

// parsePlan reads the flags of "idbench plan". It returns flag.ErrHelp after writing the help.
func parsePlan(stdout io.Writer, args []string, today time.Time) (planRequest, error) {
	fs := newFlagSet("plan")
	rate := fs.Float64("rate", -1, "")
	years := fs.Float64("years", 0, "")
	nodes := fs.Uint64("nodes", 1, "")
	dcs := fs.Uint64("datacenters", 0, "")
	unit := fs.Duration("unit", 0, "")
	shard := fs.Uint("shard-bits", 0, "")
	hash := fs.Uint("hash-bits", 0, "")
	maxBits := fs.Uint("max-bits", 0, "")
	js := fs.Bool("js", false, "")
	unsigned := fs.Bool("unsigned", false, "")
	epoch := fs.String("epoch", "", "")
	asJSON := fs.Bool("json", false, "")
	target := fs.String("target", "", "")
	writers := fs.Int("writers", 0, "")
	pos, err := parseFlags(fs, "plan", planHelp, stdout, args)
	if err != nil {
		return planRequest{}, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case len(pos) > 0:
		return planRequest{}, usagef("plan", "plan: unexpected argument %q (plan takes only flags)", pos[0])
	case !set["rate"]:
		return planRequest{}, usagef("plan", "plan: --rate is required: the peak IDs per second one node issues")
	case !set["years"]:
		return planRequest{}, usagef("plan", "plan: --years is required: how long the IDs must last")
	case math.IsNaN(*rate) || math.IsInf(*rate, 0) || *rate < 0:
		return planRequest{}, usagef("plan", "plan: --rate %v: want a number of IDs per second, 0 or more", *rate)
	case math.IsNaN(*years) || math.IsInf(*years, 0) || *years <= 0 || *years > 100000:
		return planRequest{}, usagef("plan", "plan: --years %v: want a number above 0 and at most 100000", *years)
	case *nodes == 0:
		return planRequest{}, usagef("plan", "plan: --nodes 0: want at least 1")
	case *dcs > *nodes:
		return planRequest{}, usagef("plan", "plan: --datacenters %d is more than --nodes %d", *dcs, *nodes)
	case set["unit"] && (*unit <= 0 || *unit > layouts.MaxUnit):
		return planRequest{}, usagef("plan", "plan: --unit %v: want a positive duration of at most %v, such as 1ms, 10ms or 1s", *unit, layouts.MaxUnit)
	case set["target"] && !slices.Contains(planTargets, *target):
		return planRequest{}, usagef("plan", "plan: --target %q: want one of %s", *target, strings.Join(planTargets, ", "))
	case set["writers"] && (*writers < 1 || *writers > 100000):
		return planRequest{}, usagef("plan", "plan: --writers %d: want 1 to 100000 concurrent writing connections", *writers)
	case set["writers"] && *target != "postgres" && *target != "innodb":
		return planRequest{}, usagef("plan", "plan: --writers: for --target postgres or innodb (one server), not %q", *target)
	case *shard > 62:
		return planRequest{}, usagef("plan", "plan: --shard-bits %d: want 0 to 62", *shard)
	case *hash > layouts.MaxShardBits:
		return planRequest{}, usagef("plan", "plan: --hash-bits %d: want 0 to %d (as TiDB's AUTO_RANDOM)", *hash, layouts.MaxShardBits)
	case set["max-bits"] && (*maxBits < 3 || *maxBits > 64):
		return planRequest{}, usagef("plan", "plan: --max-bits %d: want 3 to 64 (53 for JavaScript, 63 for signed columns)", *maxBits)
	}
	limits := 0
	for _, name := range []string{"max-bits", "js", "unsigned"} {
		if set[name] {
			limits++
		}
	}
	if limits > 1 {
		return planRequest{}, usagef("plan", "plan: give only one of --max-bits, --js and --unsigned")
	}
	mb := uint(63)
	switch {
	case set["max-bits"]:
		mb = *maxBits
	case *js:
		mb = 53
	case *unsigned:
		mb = 64
	}
	start := today.UTC().Truncate(24 * time.Hour)
	if *epoch != "" {
		t, err := parsePlanEpoch(*epoch)
		if err != nil {
			return planRequest{}, err
		}
		start = t
	}
	return planRequest{
		req: layouts.Requirement{
			IDsPerSecond: *rate,
			Nodes:        *nodes,
			Datacenters:  *dcs,
			ShardBits:    *shard,
			HashBits:     *hash,
			Years:        *years,
			Unit:         *unit,
			Epoch:        start,
			MaxBits:      mb,
		},
		asJSON:  *asJSON,
		target:  *target,
		writers: *writers,
	}, nil
}

// parsePlanEpoch reads --epoch as a date or an RFC 3339 time; it must lie between 1970 and
// 9999 so that a spec can carry it.
func parsePlanEpoch(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	if err != nil {
		return time.Time{}, usagef("plan", "plan: --epoch %q: want a date (2026-01-01) or an RFC 3339 time", s)
	}
	if t.Year() < 1970 || t.UTC().Year() > 9999 {
		return time.Time{}, usagef("plan", "plan: --epoch %q: want a time from 1970 to 9999", s)
	}
	return t.UTC(), nil
}

// runPlan is "idbench plan".
func runPlan(_ context.Context, _ io.Reader, stdout, _ io.Writer, args []string) error {
	pr, err := parsePlan(stdout, args, time.Now())
	if err != nil {
		return err
	}
	fits, err := layouts.Plan(pr.req)
	if err != nil {
		var nf *layouts.NoFitError
		if errors.As(err, &nf) {
			return planNoFit(nf)
		}
		return usagef("plan", "plan: %w", err)
	}
	if pr.asJSON {
		err = writePlanJSONFor(stdout, pr.req, fits, pr.target)
	} else {
		err = writePlanText(stdout, pr.req, fits)
		if err == nil && pr.target != "" {
			err = writePlanTarget(stdout, pr.target, pr.req, fits, pr.writers)
		}
	}
	if err != nil {
		return fmt.Errorf("plan: writing: %w", err)
	}
	return nil
}

// planNoFit explains a refusal in the command's own terms: the bits needed at the closest unit
// and, for each flag that alone would make a layout fit, the value to give it.
func planNoFit(nf *layouts.NoFitError) error {
	closest := nf.Closest()
	var b strings.Builder
	fmt.Fprintf(&b, "plan: no layout fits: at %v the requirement needs %d bits (%s) and %d are allowed",
		closest.Unit, closest.Total(), closest, maxBitsOf(nf.Requirement))
	if closest.Time > 62 {
		b.WriteString(", and a time field holds at most 62")
	}
	rs := nf.Relaxations()
	if len(rs) == 0 {
		return &planNoFitError{msg: b.String()}
	}
	b.WriteString("; relax one requirement:")
	for i, x := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		v := strconv.FormatFloat(x.Value, 'f', -1, 64)
		switch x.Name {
		case "max-bits":
			fmt.Fprintf(&b, " --max-bits %s or more", v)
		case "nodes":
			fmt.Fprintf(&b, " --nodes %s or fewer", v)
		case "rate":
			fmt.Fprintf(&b, " --rate %s or less", v)
		case "years":
			fmt.Fprintf(&b, " --years %s or fewer", v)
		case "shard-bits":
			fmt.Fprintf(&b, " --shard-bits %s or fewer", v)
		case "hash-bits":
			fmt.Fprintf(&b, " --hash-bits %s or fewer", v)
		default:
			fmt.Fprintf(&b, " %s %s", x.Name, v)
		}
		if nf.Requirement.Unit == 0 {
			fmt.Fprintf(&b, " at --unit %v", x.Unit)
		}
		if x.Name == "max-bits" && maxBitsOf(nf.Requirement) <= 53 {
			b.WriteString(" (IDs above 2^53 lose precision in JavaScript numbers)")
		}
	}
	return &planNoFitError{msg: b.String()}
}

// planNoFitError is plan's refusal; it matches layouts.ErrNoFit.
type planNoFitError struct{ msg string }

func (e *planNoFitError) Error() string { return e.msg }
func (e *planNoFitError) Unwrap() error { return layouts.ErrNoFit }

// planSpec returns the idkit spec of a designed layout, without a node value.
func planSpec(l layouts.Layout) string {
	var b strings.Builder
	b.WriteString("snowflake:")
	nodes := l.NodeFields()
	if len(nodes) == 1 && nodes[0].Name == "node" || len(nodes) == 0 {
		// time_bits, node_bits and seq_bits reshape the default layout into time/node/seq;
		// shard_bits then takes the hash field's bits out of the sequence.
		fmt.Fprintf(&b, "time_bits=%d,node_bits=%d,seq_bits=%d", l.TimeBits(), l.NodeBits(), l.SeqBits()+l.ShardBits())
		if hb := l.ShardBits(); hb > 0 {
			fmt.Fprintf(&b, ",shard_bits=%d", hb)
		}
	} else {
		b.WriteString("fields=" + l.FieldList())
	}
	fmt.Fprintf(&b, ",unit=%v,epoch=%s", l.Unit, planEpoch(l.Epoch))
	return b.String()
}

// planEpoch writes an epoch as a date when it is a UTC midnight, else as RFC 3339.
func planEpoch(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}

// planNodeHint says what to append to a designed spec to start one node.
func planNodeHint(l layouts.Layout) string {
	var parts []string
	for _, f := range l.NodeFields() {
		if f.Name == "node" {
			return "node=N"
		}
		parts = append(parts, f.Name+"=N")
	}
	if len(parts) == 0 {
		return "nothing (one node)"
	}
	return strings.Join(parts, ",")
}

// planLimit names a MaxBits value.
func planLimit(mb uint) string {
	switch mb {
	case 53:
		return "IDs below 2^53 (exact in JavaScript)"
	case 63:
		return "IDs below 2^63 (a signed 64-bit column)"
	case 64:
		return "IDs of up to 64 bits (unsigned)"
	}
	return fmt.Sprintf("IDs below 2^%d", mb)
}

func planRate(v float64) string {
	if v < 10 && v != math.Trunc(v) {
		return formatFloat(v, 2)
	}
	return thousands(uint64(math.Round(v)))
}

func planRatio(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "any"
	case v >= 1e6:
		return fmt.Sprintf("%.3gx", v)
	}
	return formatFloat(v, 2) + "x"
}

func formatYears(v float64) string {
	if v >= 1e6 {
		return fmt.Sprintf("%.3g", v)
	}
	return formatFloat(math.Floor(v*10)/10, 1)
}

// formatYearsShort writes the lifetime of a time field that falls short of a requirement of
// need years: rounded to the nearest tenth (formatYears floors, which would understate it),
// but floored when rounding would reach need, so it never reads as enough.
func formatYearsShort(v, need float64) string {
	if v >= 1e6 {
		return formatYears(v)
	}
	if r := math.Round(v*10) / 10; r < need {
		return formatFloat(r, 1)
	}
	return formatYears(v)
}

func writePlanText(w io.Writer, r layouts.Requirement, fits []layouts.Fit) error {
	ew := &errWriter{w: w}
	nodes := thousands(max(r.Nodes, 1)) + " nodes"
	if r.Datacenters > 0 {
		nodes += fmt.Sprintf(" in %s datacenters", thousands(r.Datacenters))
	}
	if r.ShardBits > 0 {
		nodes += fmt.Sprintf(", %d shard bits", r.ShardBits)
	}
	if r.HashBits > 0 {
		nodes += fmt.Sprintf(", a %d-bit hash field on top (2^%d time-ordered shards)", r.HashBits, r.HashBits)
	}
	ew.printf("Requirement: %s IDs/s per node at peak, %s, %s years from %s, %s.\n\n",
		planRate(r.IDsPerSecond), nodes, formatFloat(r.Years, 2), planEpoch(r.Epoch), planLimit(maxBitsOf(r)))
	ew.printf("Bits needed:\n")
	units := []time.Duration{r.Unit}
	if r.Unit == 0 {
		units = layouts.DefaultPlanUnits
	}
	for _, u := range units {
		n := r.NeedAt(u)
		ew.printf("  at %-5v %s = %d of %d bits", u, n.String(), n.Total(), maxBitsOf(r))
		if spare := int(maxBitsOf(r)) - int(n.Total()); spare >= 0 && n.Time <= 62 {
			ew.printf(", %d spare\n", spare)
		} else {
			ew.printf(": does not fit\n")
		}
		ew.printf("           time: %s years = %s ticks of %v; %d bits last %s years",
			formatFloat(r.Years, 2), formatCount(layouts.TicksFor(r.Years, u), r.Years*float64(layouts.Year)/float64(u)), u, n.Time, formatYears(lifeOf(n.Time, u)))
		if n.Time > 1 {
			ew.printf(", %d only %s", n.Time-1, formatYearsShort(lifeOf(n.Time-1, u), r.Years))
		}
		ew.printf("\n           seq: %s IDs per tick; %d bits hold %s\n", formatCount(layouts.IDsPerTick(r.IDsPerSecond, u), r.IDsPerSecond*u.Seconds()),
			n.Seq, formatBig(math.Ldexp(1, int(n.Seq))))
	}
	ew.printf("\nLayouts that fit (append %s to a spec to start a generator):\n\n", planNodeHint(fits[0].Layout))
	if ew.err != nil {
		return ew.err
	}
	t := newTable(w, "SPARE TO", ">UNIT", "BITS", ">IDS/S/NODE", ">RATE ROOM", ">NODES", ">NODE ROOM", ">IDS/S TOTAL", "RUNS OUT", ">YEARS", "SPEC")
	for _, f := range fits {
		if err := t.row(planRow(f)...); err != nil {
			return err
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	ew.printf("\nRATE ROOM and NODE ROOM are capacity over requirement; YEARS counts from the epoch.\n")
	ew.printf("A node that outruns its tick waits for the next one (or runs ahead with lookahead=N).\n")
	ew.printf("\nPresets against this requirement:\n\n")
	if ew.err != nil {
		return ew.err
	}
	t = newTable(w, "PRESET", "BITS", ">UNIT", "FITS", "SHORT OF THE REQUIREMENT")
	for _, l := range layouts.Presets() {
		short := r.Check(l)
		fits := "yes"
		if len(short) > 0 {
			fits = "no"
		}
		if err := t.row(l.Name, l.Bits(), l.Unit.String(), fits, strings.Join(short, "; ")); err != nil {
			return err
		}
	}
	return t.flush()
}

func maxBitsOf(r layouts.Requirement) uint {
	if r.MaxBits == 0 {
		return 63
	}
	return r.MaxBits
}

// lifeOf returns the years a time field of bits bits of unit lasts.
func lifeOf(bits uint, u time.Duration) float64 {
	return layouts.Lifetime(layouts.Layout{Fields: []layouts.Field{layouts.Time(bits)}, Unit: u})
}

// formatCount writes an exact count (layouts.TicksFor, IDsPerTick) with thousands separators,
// or approx in e-notation when the count is 2^63 or more (they saturate at MaxUint64).
func formatCount(n uint64, approx float64) string {
	if n >= 1<<63 {
		return fmt.Sprintf("%.3g", approx)
	}
	return thousands(n)
}

// formatBig writes a whole number with thousands separators, or in e-notation beyond 2^63.
func formatBig(v float64) string {
	if v >= 1<<63 {
		return fmt.Sprintf("%.3g", v)
	}
	return thousands(uint64(v))
}

func planRow(f layouts.Fit) []string {
	l := f.Layout
	return []string{
		f.Spare.String(),
		l.Unit.String(),
		l.Bits(),
		planRate(l.IDsPerSecond()),
		planRatio(f.Rate),
		thousands(f.Nodes),
		planRatio(f.Fleet),
		formatBig(l.IDsPerSecond() * float64(f.Nodes)),
		formatDate(l.RunsOut()),
		formatYears(f.Life),
		planSpec(l),
	}
}

// planJSON is one layout that fits, in --json output.
type planJSON struct {
	Spec            string      `json:"spec"`
	Preset          string      `json:"preset,omitempty"`
	Spare           string      `json:"spare_to,omitempty"`
	Bits            string      `json:"bits"`
	Fields          []fieldJSON `json:"fields"`
	TotalBits       uint        `json:"total_bits"`
	Unit            string      `json:"unit"`
	Epoch           string      `json:"epoch"`
	IDsPerSecond    float64     `json:"ids_per_sec_per_node"`
	IDsPerSecTotal  float64     `json:"ids_per_sec_total"`
	RateHeadroom    *float64    `json:"rate_headroom,omitempty"`
	Nodes           uint64      `json:"nodes"`
	NodesHeadroom   float64     `json:"nodes_headroom"`
	RunsOut         string      `json:"runs_out"`
	LifeYears       float64     `json:"life_years"`
	Int64Until      string      `json:"int64_until"`
	AppendToStart   string      `json:"append_to_start"`
	Target          string      `json:"target,omitempty"`
	TargetSpec      string      `json:"target_spec,omitempty"`
	RequiredNodes   uint64      `json:"required_nodes"`
	RequiredRate    float64     `json:"required_ids_per_sec_per_node"`
	RequiredYears   float64     `json:"required_years"`
	RequiredMaxBits uint        `json:"required_max_bits"`
}

func writePlanJSON(w io.Writer, r layouts.Requirement, fits []layouts.Fit) error {
	return writePlanJSONFor(w, r, fits, "")
}

// writePlanJSONFor is writePlanJSON with each layout's spec adapted to target ("" for none).
func writePlanJSONFor(w io.Writer, r layouts.Requirement, fits []layouts.Fit, target string) error {
	var out []planJSON
	var adv targetAdvice
	if target != "" {
		adv = adviseTarget(target, layoutSetting("reverse=true"), layoutSetting("shard_bits=5"))
	}
	add := func(l layouts.Layout, spec, preset, spare string, nodes uint64) {
		j := planJSON{
			Spec:            spec,
			Preset:          preset,
			Spare:           spare,
			Bits:            l.Bits(),
			TotalBits:       l.TotalBits(),
			Unit:            l.Unit.String(),
			Epoch:           formatTime(l.Epoch),
			IDsPerSecond:    l.IDsPerSecond(),
			IDsPerSecTotal:  l.IDsPerSecond() * float64(nodes),
			Nodes:           nodes,
			NodesHeadroom:   float64(nodes) / float64(max(r.Nodes, 1)),
			RunsOut:         formatTime(l.RunsOut()),
			LifeYears:       layouts.Lifetime(l),
			Int64Until:      formatTime(l.Int64Until()),
			AppendToStart:   planNodeHint(l),
			RequiredNodes:   max(r.Nodes, 1),
			RequiredRate:    r.IDsPerSecond,
			RequiredYears:   r.Years,
			RequiredMaxBits: maxBitsOf(r),
		}
		if target != "" {
			j.Target, j.TargetSpec = target, adv.adapt(spec, l, r)
		}
		if r.IDsPerSecond > 0 {
			h := l.IDsPerSecond() / r.IDsPerSecond
			j.RateHeadroom = &h
		}
		for _, f := range l.Fields {
			j.Fields = append(j.Fields, fieldJSON{Name: f.Name, Kind: f.Kind.String(), Bits: f.Bits})
		}
		out = append(out, j)
	}
	for _, f := range fits {
		add(f.Layout, planSpec(f.Layout), "", f.Spare.String(), f.Nodes)
	}
	for _, l := range layouts.Presets() {
		if len(r.Check(l)) == 0 {
			add(l, "snowflake:layout="+l.Name, l.Name, "", l.Nodes()>>r.ShardBits)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
