package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/sony/sonyflake"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
)

const speedHelp = `Usage: idbench speed [--schemes LIST] [--benchtime D] [--count N] [--json | --benchstat] [--libs=false]

Measures what generating one ID costs, per scheme, with testing.Benchmark:
  - ns/ID on one goroutine (1G) and on GOMAXPROCS goroutines sharing one generator (NG,
    b.RunParallel), and the IDs per second each gives;
  - allocations per ID;
  - for 64-bit layouts, the layout's cap (2^seq IDs per tick, per node) and the share of it
    reached; a generator at 100% waits for the clock, so its ns/ID is the cap's, not its cost;
  - for schemes with a batch method (snowflake), ns/ID through the batch method;
  - for each adapter, the wrapped library called directly, measured right after it in the same
    run, and the ratio of their medians, adapter/library (VS LIB):
      ulid      beside lib:oklog/ulid      ulid.Make()
      uuidv7    beside lib:google/uuid-v7  uuid.NewV7()
      uuidv4    beside lib:google/uuid-v4  uuid.NewRandom()
      sonyflake beside lib:sony/sonyflake  (*sonyflake.Sonyflake).NextID()

Flags:
  --schemes LIST   comma-separated specs and library rows (default: snowflake,
                   snowflake:time_bits=41,node_bits=0,seq_bits=22, sonyflake, ulid, uuidv7,
                   uuidv4). A spec's own key=value settings may follow it after commas, as in
                   the default; ';' also separates rows
  --benchtime D    time per measurement, or Nx for N IDs (default 300ms)
  --count N        rounds over all rows; each figure is the median of its N measurements,
                   and the rounds interleave an adapter with its library (default 3)
  --libs           measure each adapter's library beside it (default true)
  --json           one JSON document instead of the table
  --benchstat      Go benchmark lines, one per round, instead of the table, for benchstat:
                   BenchmarkNext/scheme=ulid-2  1000000  52.1 ns/op  0 B/op  0 allocs/op
                   (Next: one goroutine; NextParallel: GOMAXPROCS; NextBatch: batch method;
                   '/' in a row name becomes '.')

Examples:
  idbench speed
  idbench speed --schemes ulid,uuidv7 --benchtime 200ms
  idbench speed --schemes "snowflake:layout=discord;snowflake:seq_bits=16" --json
  idbench speed --schemes "snowflake:time_bits=41,node_bits=0,seq_bits=22;segment:step=100000"

A segment spec without store= (segment, segment:step=N) gets a private PostgreSQL cluster
started for the run as its store (needs the PostgreSQL server binaries). For a row that rests
on a store (segment, a node held under a lease), the table ends with each store's durability
class (sync, single, async, unknown), why and its epoch, as read with the run's last take.
  idbench speed --benchstat > new.txt && benchstat old.txt new.txt
`

// Library rows: the wrapped libraries called directly.
const (
	libULID      = "lib:oklog/ulid"
	libUUIDv7    = "lib:google/uuid-v7"
	libUUIDv4    = "lib:google/uuid-v4"
	libSonyflake = "lib:sony/sonyflake"
)

// defaultSpeedSchemes are the rows of "idbench speed" without --schemes; each adapter gets
// its library row beside it.
func defaultSpeedSchemes() []string {
	return []string{"snowflake", "snowflake:time_bits=41,node_bits=0,seq_bits=22", "sonyflake", "ulid", "uuidv7", "uuidv4"}
}

// speedConfig is what one speed run measures.
type speedConfig struct {
	schemes   []string
	benchtime string
	count     int // rounds; 0 means defaultSpeedCount
	libs      bool
}

// Defaults of idbench speed: three rounds of 300 ms take about as long as one of a second and
// give a median that one noisy sample cannot.
const (
	defaultSpeedCount     = 3
	defaultSpeedBenchtime = "300ms"
)

// runSpeed is "idbench speed".
func runSpeed(ctx context.Context, _ io.Reader, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("speed")
	schemes := fs.String("schemes", "", "")
	benchtime := fs.String("benchtime", defaultSpeedBenchtime, "")
	count := fs.Int("count", defaultSpeedCount, "")
	libs := fs.Bool("libs", true, "")
	asJSON := fs.Bool("json", false, "")
	asBench := fs.Bool("benchstat", false, "")
	pos, err := parseFlags(fs, "speed", speedHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("speed", "speed: unexpected argument %q (list schemes with --schemes)", pos[0])
	}
	if *asJSON && *asBench {
		return usagef("speed", "speed: --json and --benchstat both given; pick one")
	}
	if *count < 1 {
		return usagef("speed", "speed: --count %d: want 1 or more rounds", *count)
	}
	cfg := speedConfig{schemes: defaultSpeedSchemes(), benchtime: *benchtime, count: *count, libs: *libs}
	if *schemes != "" {
		if cfg.schemes, err = splitSchemes(*schemes); err != nil {
			return usagef("speed", "speed: --schemes: %w", err)
		}
	}
	rep, err := measureSpeed(ctx, stderr, cfg)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		err = rep.writeJSON(stdout)
	case *asBench:
		err = rep.writeBenchstat(stdout)
	default:
		err = rep.writeTable(stdout)
	}
	if err != nil {
		return fmt.Errorf("speed: writing: %w", err)
	}
	return nil
}

// splitSchemes splits a --schemes list. Rows are separated by ';' or ','; since specs hold
// commas themselves ("snowflake:time_bits=41,seq_bits=22"), a comma-separated item that is a
// bare key=value setting (no ':' before its '=') continues the spec before it.
func splitSchemes(list string) ([]string, error) {
	var out []string
	for _, group := range strings.Split(list, ";") {
		start := len(out)
		for _, item := range strings.Split(group, ",") {
			item = strings.TrimSpace(item)
			key, _, isSetting := strings.Cut(item, "=")
			if isSetting && !strings.Contains(key, ":") && len(out) > start {
				out[len(out)-1] += "," + item
				continue
			}
			if item == "" {
				return nil, fmt.Errorf("empty item in %q", list)
			}
			out = append(out, item)
		}
	}
	return out, nil
}

// libraryFor returns the library row measured beside the scheme with canonical name, if any.
func libraryFor(name string) string {
	switch {
	case name == "ulid":
		return libULID
	case name == "uuidv7":
		return libUUIDv7
	case name == "uuidv4":
		return libUUIDv4
	case strings.HasPrefix(name, "sonyflake:") && !strings.Contains(name, "start="):
		return libSonyflake
	}
	return ""
}

// speedReport is the outcome of a speed run.
type speedReport struct {
	GOOS       string        `json:"goos"`
	GOARCH     string        `json:"goarch"`
	Go         string        `json:"go"`
	GOMAXPROCS int           `json:"gomaxprocs"`
	Benchtime  string        `json:"benchtime"`
	Count      int           `json:"count"` // rounds; figures are medians over them
	Results    []speedResult `json:"results"`
}

// speedResult is one row: a scheme or a library.
type speedResult struct {
	Name string `json:"name"`
	// Kind is "scheme" (through idkit.Scheme) or "library" (the wrapped library called directly).
	Kind string `json:"kind"`
	// Scheme is the canonical spec of a scheme row.
	Scheme string `json:"scheme,omitempty"`
	// Library is the library row beside a scheme row, or the scheme row beside a library row.
	Library string `json:"library,omitempty"`
	// Cap is the layout's IDs per second per node; nil without a layout.
	Cap      *float64     `json:"cap_ids_per_sec"`
	Serial   measurement  `json:"serial"`
	Parallel measurement  `json:"parallel"`
	Batch    *measurement `json:"batch"`
	// VsLibrary* are this row's ns/ID divided by its library's, for adapter rows.
	VsLibrarySerial   *float64 `json:"vs_library_serial"`
	VsLibraryParallel *float64 `json:"vs_library_parallel"`
	// Durability is the class of each store a segment or leased scheme rests on, as read
	// with its last take of the run (idkit.DurabilityOf).
	Durability []durabilityResult `json:"durability,omitempty"`
}

// durabilityResult is one store's idkit.Durability, credentials redacted.
type durabilityResult struct {
	Store         string `json:"store"`
	Class         string `json:"class"`
	Reason        string `json:"reason,omitempty"`
	Epoch         string `json:"epoch,omitempty"`
	AsyncAccepted bool   `json:"async_accepted,omitempty"`
	Failovers     int    `json:"failovers"`
	Text          string `json:"text"` // the one-line form the table prints
}

// durabilityOf returns a function reading the durability of the stores s rests on, nil for a
// scheme without a store.
func durabilityOf(s idkit.Scheme) func() []durabilityResult {
	if _, ok := idkit.DurabilityOf(s); !ok {
		return nil
	}
	return func() []durabilityResult {
		ds, _ := idkit.DurabilityOf(s)
		out := make([]durabilityResult, len(ds))
		for i, d := range ds {
			out[i] = durabilityResult{Store: idkit.Redact(d.Store), Class: d.Class, Reason: idkit.Redact(d.Reason), Epoch: d.Epoch,
				AsyncAccepted: d.AsyncAccepted, Failovers: d.Failovers, Text: idkit.Redact(d.String())}
		}
		return out
	}
}

// measurement is one testing.Benchmark result, per ID, or the median of several.
type measurement struct {
	N           int      `json:"n"`
	NsPerID     float64  `json:"ns_per_id"`
	IDsPerSec   float64  `json:"ids_per_sec"`
	AllocsPerID float64  `json:"allocs_per_id"`
	BytesPerID  float64  `json:"bytes_per_id"`
	CapPercent  *float64 `json:"cap_percent"`
	// SamplesNs holds each round's ns/ID, in run order, when the figure is a median.
	SamplesNs []float64     `json:"samples_ns_per_id,omitempty"`
	samples   []measurement // each round, for --benchstat
}

// benchMu serializes speed runs: testing.Benchmark reads its duration from the process-wide
// -test.benchtime flag, and two measurements at once would also distort each other.
var benchMu sync.Mutex

// setBenchtime sets testing's -test.benchtime, which testing.Benchmark reads. The caller holds
// benchMu.
func setBenchtime(v string) error {
	testing.Init() // registers the test.* flags; a no-op when already done
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return errors.New("speed: testing registered no test.benchtime flag")
	}
	if err := f.Value.Set(v); err != nil {
		return err
	}
	return nil
}

// checkBenchtime accepts a positive duration or Nx with N > 0.
func checkBenchtime(v string) error {
	if n, ok := strings.CutSuffix(v, "x"); ok {
		if k, err := strconv.ParseUint(n, 10, 63); err == nil && k > 0 {
			return nil
		}
		return fmt.Errorf("%q: want a positive count such as 1000x", v)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want a positive duration such as 1s or 200ms, or a count such as 1000x", v)
	}
	return nil
}

// subject is one row to measure.
type subject struct {
	res      speedResult
	serial   func(*stopper) func(*testing.B)
	parallel func(*stopper) func(*testing.B)
	batch    func(*stopper) func(*testing.B) // nil without a batch method
	close    func()
	// durability reads the stores' durability after the rounds; nil without a store.
	durability func() []durabilityResult
}

// stopper ends a measurement early on cancellation or a generator error. Loops consult it
// every stopEvery IDs so that the check costs nothing measurable.
type stopper struct {
	ctx    context.Context
	failed atomic.Bool
	mu     sync.Mutex
	err    error
}

const stopEvery = 1024

func (s *stopper) stopped() bool { return s.failed.Load() || s.ctx.Err() != nil }

func (s *stopper) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.failed.Store(true)
}

func (s *stopper) result() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return s.ctx.Err()
}

// loops returns the one-goroutine and GOMAXPROCS-goroutine benchmarks of next. Scheme rows and
// library rows both go through it, so each pays the same one indirect call per ID and their
// ratio compares the generators alone.
func loops(next func() error) (serial, parallel func(*stopper) func(*testing.B)) {
	serial = func(st *stopper) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if i%stopEvery == 0 && st.stopped() {
					return
				}
				if err := next(); err != nil {
					st.fail(err)
					return
				}
			}
		}
	}
	parallel = func(st *stopper) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					if i%stopEvery == 0 && st.stopped() {
						continue // drain pb without working
					}
					if err := next(); err != nil {
						st.fail(err)
					}
				}
			})
		}
	}
	return serial, parallel
}

// measureSpeed runs cfg, printing progress to stderr.
func measureSpeed(ctx context.Context, stderr io.Writer, cfg speedConfig) (*speedReport, error) {
	if err := checkBenchtime(cfg.benchtime); err != nil {
		return nil, usagef("speed", "speed: --benchtime %w", err)
	}
	local := &localStore{}
	defer local.close() // after the schemes that use it are closed
	subs, err := subjects(ctx, cfg, local)
	defer func() {
		for _, s := range subs {
			s.close()
		}
	}()
	if err != nil {
		return nil, err
	}

	benchMu.Lock()
	defer benchMu.Unlock()
	if err := setBenchtime(cfg.benchtime); err != nil {
		return nil, usagef("speed", "speed: --benchtime %q: %w", cfg.benchtime, err)
	}
	rep := &speedReport{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Go: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), Benchtime: cfg.benchtime,
	}
	count := cfg.count
	if count <= 0 {
		count = defaultSpeedCount
	}
	rep.Count = count
	// Rounds go over every row in turn, so an adapter and its library alternate and a burst of
	// load on a shared machine hits both; each row's figure is its median over the rounds.
	serial := make([][]measurement, len(subs))
	parallel := make([][]measurement, len(subs))
	batch := make([][]measurement, len(subs))
	for round := 1; round <= count; round++ {
		for i, s := range subs {
			fmt.Fprintf(stderr, "idbench speed: round %d/%d, %d/%d %s\n", round, count, i+1, len(subs), s.res.Name)
			m, err := bench(ctx, s.serial)
			if err != nil {
				return nil, fmt.Errorf("speed: %s: %w", s.res.Name, err)
			}
			serial[i] = append(serial[i], m)
			if m, err = bench(ctx, s.parallel); err != nil {
				return nil, fmt.Errorf("speed: %s: %w", s.res.Name, err)
			}
			parallel[i] = append(parallel[i], m)
			if s.batch != nil {
				if m, err = bench(ctx, s.batch); err != nil {
					return nil, fmt.Errorf("speed: %s batch: %w", s.res.Name, err)
				}
				batch[i] = append(batch[i], m)
			}
		}
	}
	byName := map[string]int{}
	for i, s := range subs {
		r := s.res
		r.Serial, r.Parallel = median(serial[i]), median(parallel[i])
		if s.durability != nil {
			r.Durability = s.durability()
		}
		if len(batch[i]) > 0 {
			m := median(batch[i])
			r.Batch = &m
		}
		if r.Cap != nil {
			for _, m := range []*measurement{&r.Serial, &r.Parallel, r.Batch} {
				if m != nil {
					m.CapPercent = ptr(100 * m.IDsPerSec / *r.Cap)
				}
			}
		}
		byName[r.Name] = len(rep.Results)
		rep.Results = append(rep.Results, r)
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		j, ok := byName[r.Library]
		if r.Kind != "scheme" || !ok {
			continue
		}
		lib := rep.Results[j]
		r.VsLibrarySerial = ratio(r.Serial.NsPerID, lib.Serial.NsPerID)
		r.VsLibraryParallel = ratio(r.Parallel.NsPerID, lib.Parallel.NsPerID)
	}
	return rep, nil
}

func ptr[T any](v T) *T { return &v }

func ratio(a, b float64) *float64 {
	if b <= 0 {
		return nil
	}
	return ptr(a / b)
}

// bench runs one benchmark function made by mk.
// median returns the measurement with the median ns/ID of ms (the mean of the middle two for an
// even count), keeping every round's figure.
func median(ms []measurement) measurement {
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b measurement) int { return cmp.Compare(a.NsPerID, b.NsPerID) })
	m := sorted[(len(sorted)-1)/2]
	if len(sorted)%2 == 0 {
		m.NsPerID = (sorted[len(sorted)/2-1].NsPerID + sorted[len(sorted)/2].NsPerID) / 2
		if m.NsPerID > 0 {
			m.IDsPerSec = 1e9 / m.NsPerID
		}
	}
	if len(ms) > 1 {
		m.samples = ms
		for _, x := range ms {
			m.SamplesNs = append(m.SamplesNs, x.NsPerID)
		}
	}
	return m
}

func bench(ctx context.Context, mk func(*stopper) func(*testing.B)) (measurement, error) {
	st := &stopper{ctx: ctx}
	runtime.GC()
	r := testing.Benchmark(mk(st))
	if err := st.result(); err != nil {
		return measurement{}, err
	}
	if r.N == 0 {
		return measurement{}, errors.New("the benchmark did not run")
	}
	ns := float64(r.T.Nanoseconds()) / float64(r.N)
	m := measurement{
		N:           r.N,
		NsPerID:     ns,
		AllocsPerID: float64(r.MemAllocs) / float64(r.N),
		BytesPerID:  float64(r.MemBytes) / float64(r.N),
	}
	if ns > 0 {
		m.IDsPerSec = 1e9 / ns
	}
	return m, nil
}

// subjects builds the rows of cfg: each scheme, followed by its library when cfg.libs is set.
// On error, the subjects returned so far still need closing.
func subjects(ctx context.Context, cfg speedConfig, local *localStore) ([]subject, error) {
	var subs []subject
	seen := map[string]bool{}
	add := func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		if strings.HasPrefix(name, "lib:") {
			s, err := librarySubject(name)
			if err != nil {
				return err
			}
			subs = append(subs, s)
			return nil
		}
		spec, err := local.specFor(ctx, name)
		if err != nil {
			return err
		}
		s, err := newScheme(ctx, "speed", spec)
		if err != nil {
			return err
		}
		sub := schemeSubject(ctx, name, s)
		subs = append(subs, sub)
		if cfg.libs && sub.res.Library != "" && !seen[sub.res.Library] {
			seen[sub.res.Library] = true
			ls, err := librarySubject(sub.res.Library)
			if err != nil {
				return err
			}
			ls.res.Library = name
			subs = append(subs, ls)
		}
		return nil
	}
	for _, name := range cfg.schemes {
		if err := add(name); err != nil {
			return subs, err
		}
	}
	return subs, nil
}

// schemeSubject measures s through the idkit.Scheme interface, as users call it. A scheme that
// may wait for its clock (idkit.ContextScheme) is called through NextContext with ctx, so a
// signal ends even a wait for a long tick; its fast path costs the same as Next.
func schemeSubject(ctx context.Context, name string, s idkit.Scheme) subject {
	sub := subject{
		res:        speedResult{Name: idkit.Redact(name), Kind: "scheme", Scheme: idkit.Redact(s.Name()), Library: libraryFor(s.Name())},
		close:      func() { closeScheme(s, "speed", io.Discard) },
		durability: durabilityOf(s),
	}
	if l, ok := idkit.As[idkit.Layouter](s); ok {
		sub.res.Cap = ptr(l.Layout().IDsPerSecond())
	}
	next := func() error { _, err := s.Next(); return err }
	if cs, ok := s.(idkit.ContextScheme); ok {
		next = func() error { _, err := cs.NextContext(ctx); return err }
	}
	sub.serial, sub.parallel = loops(next)
	if _, ok := s.(idkit.Batcher); ok {
		sub.batch = func(st *stopper) func(*testing.B) {
			buf := make([]idkit.ID, 1024)
			return func(b *testing.B) {
				b.ReportAllocs()
				for n := b.N; n > 0; {
					if st.stopped() {
						return
					}
					k := min(n, len(buf))
					if err := idkit.NextBatchContext(ctx, s, buf[:k]); err != nil {
						st.fail(err)
						return
					}
					n -= k
				}
			}
		}
	}
	return sub
}

// librarySubject measures a wrapped library called directly, with no idkit code in the loop.
func librarySubject(name string) (subject, error) {
	sub := subject{res: speedResult{Name: name, Kind: "library"}, close: func() {}}
	switch name {
	case libULID:
		sub.serial, sub.parallel = loops(func() error { _ = ulid.Make(); return nil })
	case libUUIDv7:
		sub.serial, sub.parallel = loops(func() error { _, err := uuid.NewV7(); return err })
	case libUUIDv4:
		sub.serial, sub.parallel = loops(func() error { _, err := uuid.NewRandom(); return err })
	case libSonyflake:
		sf, err := sonyflake.New(sonyflake.Settings{MachineID: func() (uint16, error) { return 0, nil }})
		if err != nil {
			return sub, fmt.Errorf("speed: %s: %w", name, err)
		}
		sub.res.Cap = ptr(layouts.Sonyflake.IDsPerSecond())
		sub.serial, sub.parallel = loops(func() error { _, err := sf.NextID(); return err })
	default:
		return sub, usagef("speed", "speed: unknown library row %q (known: %s, %s, %s, %s)", name, libULID, libUUIDv7, libUUIDv4, libSonyflake)
	}
	return sub, nil
}

// gName names the parallel columns after GOMAXPROCS: "2G".
func (r *speedReport) gName() string { return strconv.Itoa(r.GOMAXPROCS) + "G" }

func formatNs(ns float64) string {
	if ns < 10 {
		return formatFixed(ns, 2)
	}
	return formatFixed(ns, 1)
}

func formatFixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

func formatPtr(v *float64, f func(float64) string) string {
	if v == nil {
		return "-"
	}
	return f(*v)
}

func formatRate(v float64) string { return thousands(uint64(v + 0.5)) }

func formatPercent(v float64) string { return formatFixed(v, 1) + "%" }

func formatRatio(v float64) string { return formatFixed(v, 2) }

// writeTable prints the report as a table with a legend.
func (r *speedReport) writeTable(w io.Writer) error {
	g := r.gName()
	t := newTable(w, "SCHEME", ">1G NS/ID", ">"+g+" NS/ID", ">1G IDS/S", ">"+g+" IDS/S", ">ALLOCS/ID",
		">CAP IDS/S", ">1G %CAP", ">"+g+" %CAP", ">BATCH NS/ID", ">1G VS LIB", ">"+g+" VS LIB")
	for _, x := range r.Results {
		batch := "-"
		if x.Batch != nil {
			batch = formatNs(x.Batch.NsPerID)
		}
		err := t.row(x.Name,
			formatNs(x.Serial.NsPerID), formatNs(x.Parallel.NsPerID),
			formatRate(x.Serial.IDsPerSec), formatRate(x.Parallel.IDsPerSec),
			formatFloat(x.Serial.AllocsPerID, 2),
			formatPtr(x.Cap, formatRate),
			formatPtr(x.Serial.CapPercent, formatPercent), formatPtr(x.Parallel.CapPercent, formatPercent),
			batch,
			formatPtr(x.VsLibrarySerial, formatRatio), formatPtr(x.VsLibraryParallel, formatRatio))
		if err != nil {
			return err
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	ew := &errWriter{w: w}
	ew.printf("\n1G: one goroutine; %s: %d goroutines sharing one generator (b.RunParallel).\n", g, r.GOMAXPROCS)
	ew.printf("CAP: the layout's IDs/s per node (2^seq per tick); %%CAP: share of it reached (a little\n")
	ew.printf("     over 100%% when a measurement starts late in a tick whose IDs were not yet used).\n")
	ew.printf("VS LIB: ns/ID of the adapter divided by that of the library row below it (same run).\n")
	ew.printf("BATCH: ns/ID through the scheme's batch method (NextBatch), one goroutine.\n")
	ew.printf("%s %s/%s, GOMAXPROCS=%d, benchtime %s per measurement, median of %d rounds.\n", r.Go, r.GOOS, r.GOARCH, r.GOMAXPROCS, r.Benchtime, r.Count)
	writeDurability(ew, r.Results)
	return ew.err
}

// writeJSON prints the report as one indented JSON document.
func (r *speedReport) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// benchName turns a row name into a benchmark name part: no blanks, no '/'.
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/':
			return '.'
		case r == ' ' || r == '\t' || r == '\n':
			return '_'
		}
		return r
	}, s)
}

// writeBenchstat prints the report as "go test -bench" output.
func (r *speedReport) writeBenchstat(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("goos: %s\ngoarch: %s\npkg: github.com/idkit/idkit/cmd/idbench\n", r.GOOS, r.GOARCH)
	line := func(bench, name string, m *measurement) {
		if m == nil {
			return
		}
		suffix := ""
		if r.GOMAXPROCS > 1 {
			suffix = "-" + strconv.Itoa(r.GOMAXPROCS)
		}
		samples := m.samples
		if len(samples) == 0 {
			samples = []measurement{*m}
		}
		for _, x := range samples {
			ew.printf("Benchmark%s/scheme=%s%s\t%d\t%s ns/op\t%s B/op\t%s allocs/op\n",
				bench, benchName(name), suffix, x.N, formatFixed(x.NsPerID, 2),
				formatFloat(x.BytesPerID, 2), formatFloat(x.AllocsPerID, 2))
		}
	}
	for _, x := range r.Results {
		line("Next", x.Name, &x.Serial)
		line("NextParallel", x.Name, &x.Parallel)
		line("NextBatch", x.Name, x.Batch)
	}
	return ew.err
}

// writeDurability prints the durability class of each store the rows rest on, if any does.
func writeDurability(ew *errWriter, rows []speedResult) {
	head := false
	for _, x := range rows {
		for _, d := range x.Durability {
			if !head {
				ew.printf("DURABILITY: each store's class, decided on connect and read again with its last take:\n")
				head = true
			}
			ew.printf("  %s: %s\n", x.Name, d.Text)
		}
	}
}
