package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
)

const loadHelp = `Usage: idbench load (--addr HOST:PORT | --spawn) [flags]

Drives an idkitd (cmd/idkitd) with C concurrent clients and reports requests/s, IDs/s and
latency percentiles from an HDR histogram. In the same run it measures the floor: the same
protocol stack answering an empty message (the Ping RPC; GET /healthz for --protocol http),
so that the cost of issuing IDs shows apart from the cost of the stack.

Flags:
  --addr HOST:PORT     a running idkitd
  --spawn              start idkitd in this process on a loopback port (shares the CPU with
                       the load generator)
  --gen NAME=SPEC      a generator for --spawn; repeat for more
                       (default orders=snowflake:layout=twitter,node=1)
  --generator NAME     the generator to ask (default: the first --gen, or "orders")
  --protocol P         grpc (default), connect (binary), json (Connect JSON) or http
                       (GET /v1/next/NAME?n=B, text lines)
  --clients C          concurrent clients (default 4)
  --conns N            connections they share, round robin (default 1; http: one per client)
  --duration D         how long each measurement runs (default 5s)
  --requests N         stop after N requests instead (per measurement)
  --warmup D           unmeasured load before the first measurement (default 500ms)
  --rounds R           split each measurement into R parts, alternating next and floor, so
                       that load from elsewhere on the machine falls on both alike (default 3)
  --batch B            IDs per request (default 1)
  --rate R             target requests/s over all clients, paced (default 0: as fast as
                       answers come back); latency is then also reported from each request's
                       scheduled start, which counts queueing behind a slow answer
  --no-floor           skip the floor measurement
  --token-env VAR      send the bearer token in environment variable VAR
  --json               one JSON object instead of the table
  --markdown           a Markdown section (the command, the machine, the table) for reports

Examples:
  idbench load --spawn --duration 10s
  idbench load --spawn --rate 10000 --clients 8
  idbench load --spawn --batch 1000 --clients 1
  idbench load --addr 127.0.0.1:7070 --generator orders --protocol json --json
`

// loadConfig is idbench load's command line.
type loadConfig struct {
	addr      string
	spawn     bool
	gens      []server.Generator
	generator string
	protocol  string
	clients   int
	conns     int
	duration  time.Duration
	requests  int64
	warmup    time.Duration
	batch     int
	rounds    int
	rate      float64
	floor     bool
	token     string
}

// loadLatency is a latency summary in microseconds.
type loadLatency struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p999_us"`
	Max  float64 `json:"max_us"`
	Mean float64 `json:"mean_us"`
}

// loadResult is one measurement.
type loadResult struct {
	Kind           string       `json:"kind"` // "next" or "floor"
	Requests       int64        `json:"requests"`
	Errors         int64        `json:"errors"`
	FirstError     string       `json:"first_error,omitempty"`
	Seconds        float64      `json:"seconds"`
	RequestsPerSec float64      `json:"requests_per_sec"`
	IDsPerSec      float64      `json:"ids_per_sec"`
	Latency        loadLatency  `json:"latency"`
	Scheduled      *loadLatency `json:"latency_from_schedule,omitempty"`
}

// loadReport is what idbench load prints.
type loadReport struct {
	Command    string       `json:"command"`
	Target     string       `json:"target"`
	Spawned    bool         `json:"spawned"`
	Protocol   string       `json:"protocol"`
	Generator  string       `json:"generator"`
	Spec       string       `json:"spec,omitempty"`
	Clients    int          `json:"clients"`
	Conns      int          `json:"conns"`
	Batch      int          `json:"batch"`
	Rate       float64      `json:"rate,omitempty"`
	CPUs       int          `json:"cpus"`
	GoVersion  string       `json:"go"`
	Results    []loadResult `json:"results"`
	FloorRatio float64      `json:"next_vs_floor,omitempty"` // next req/s ÷ floor req/s
	Notes      []string     `json:"notes,omitempty"`
}

// loadGens collects repeated --gen NAME=SPEC.
type loadGens []server.Generator

func (g *loadGens) String() string { return "" }

func (g *loadGens) Set(v string) error {
	gen, err := server.ParseGenerator(v)
	if err != nil {
		return err
	}
	*g = append(*g, gen)
	return nil
}

func runLoad(ctx context.Context, stdout, _ io.Writer, args []string) error {
	fs := newFlagSet("load")
	var gens loadGens
	c := loadConfig{}
	fs.StringVar(&c.addr, "addr", "", "")
	fs.BoolVar(&c.spawn, "spawn", false, "")
	fs.Var(&gens, "gen", "")
	fs.StringVar(&c.generator, "generator", "", "")
	fs.StringVar(&c.protocol, "protocol", "grpc", "")
	fs.IntVar(&c.clients, "clients", 4, "")
	fs.IntVar(&c.conns, "conns", 1, "")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "")
	fs.Int64Var(&c.requests, "requests", 0, "")
	fs.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "")
	fs.IntVar(&c.batch, "batch", 1, "")
	fs.IntVar(&c.rounds, "rounds", 3, "")
	fs.Float64Var(&c.rate, "rate", 0, "")
	noFloor := fs.Bool("no-floor", false, "")
	tokenEnv := fs.String("token-env", "", "")
	asJSON := fs.Bool("json", false, "")
	asMD := fs.Bool("markdown", false, "")
	pos, err := parseFlags(fs, "load", loadHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("load", "load: unexpected argument %q", pos[0])
	}
	c.gens, c.floor = gens, !*noFloor
	switch {
	case c.spawn == (c.addr != ""):
		return usagef("load", "load: give either --addr HOST:PORT or --spawn")
	case !c.spawn && len(c.gens) > 0:
		return usagef("load", "load: --gen needs --spawn (a running idkitd has its own generators)")
	case c.protocol != "grpc" && c.protocol != "connect" && c.protocol != "json" && c.protocol != "http":
		return usagef("load", "load: --protocol %q: want grpc, connect, json or http", c.protocol)
	case c.clients < 1 || c.conns < 1 || c.batch < 1 || c.rounds < 1:
		return usagef("load", "load: --clients, --conns, --batch and --rounds must be at least 1")
	case c.duration <= 0 && c.requests <= 0:
		return usagef("load", "load: give a positive --duration or --requests")
	case c.rate < 0 || c.warmup < 0:
		return usagef("load", "load: --rate and --warmup cannot be negative")
	case *asJSON && *asMD:
		return usagef("load", "load: choose --json or --markdown")
	}
	if *tokenEnv != "" {
		if c.token = os.Getenv(*tokenEnv); c.token == "" {
			return usagef("load", "load: --token-env %s: the variable is not set", *tokenEnv)
		}
	}
	if c.spawn && len(c.gens) == 0 {
		c.gens = []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,node=1"}}
	}
	if c.generator == "" {
		c.generator = "orders"
		if len(c.gens) > 0 {
			c.generator = c.gens[0].Name
		}
	}
	rep, err := load(ctx, c)
	if err != nil {
		return err
	}
	rep.Command = "idbench " + shellJoin(append([]string{"load"}, args...))
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case *asMD:
		return writeLoadMarkdown(stdout, rep)
	}
	return writeLoadTable(stdout, rep)
}

// shellJoin quotes arguments that a shell would split or expand.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$&;|<>*?()[]{}\\`!#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = idkit.Redact(a)
	}
	return strings.Join(out, " ")
}

// load runs the measurements.
func load(ctx context.Context, c loadConfig) (*loadReport, error) {
	rep := &loadReport{Target: c.addr, Spawned: c.spawn, Protocol: c.protocol, Generator: c.generator,
		Clients: c.clients, Conns: c.conns, Batch: c.batch, Rate: c.rate, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if c.spawn {
		srv, err := server.NewContext(ctx, server.Config{Listen: "127.0.0.1:0", Generators: c.gens, MaxCount: max(c.batch, server.DefaultMaxCount)})
		if err != nil {
			return nil, fmt.Errorf("load: --spawn: %w", err)
		}
		sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		addr, wait, err := srv.Start(sctx)
		if err != nil {
			stop()
			return nil, fmt.Errorf("load: --spawn: %w", err)
		}
		defer func() { stop(); wait() }()
		c.addr = addr
		rep.Target = c.addr + " (in process)"
		rep.Notes = append(rep.Notes, "idkitd ran in the load generator's process (--spawn), so both share the CPUs")
	}
	cl := newLoadClients(c)
	defer cl.close()
	if spec, err := cl.describe(ctx); err != nil {
		return nil, err
	} else {
		rep.Spec = spec
	}
	if c.warmup > 0 {
		if _, err := measure(ctx, c, cl.next, c.warmup, 0); err != nil {
			return nil, err
		}
	}
	var next, floor tally
	for range c.rounds {
		t, err := measure(ctx, c, cl.next, c.duration/time.Duration(c.rounds), c.requests/int64(c.rounds))
		if err != nil {
			return nil, err
		}
		next.add(t)
		if c.floor {
			t, err := measure(ctx, c, cl.floor, c.duration/time.Duration(c.rounds), c.requests/int64(c.rounds))
			if err != nil {
				return nil, err
			}
			floor.add(t)
		}
	}
	r, err := next.result("next")
	if err != nil {
		return nil, err
	}
	rep.Results = append(rep.Results, r)
	if c.floor {
		f, err := floor.result("floor")
		if err != nil {
			return nil, err
		}
		rep.Results = append(rep.Results, f)
		if f.RequestsPerSec > 0 {
			rep.FloorRatio = r.RequestsPerSec / f.RequestsPerSec
		}
	}
	if runtime.NumCPU() <= 2 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d CPUs: the load generator and the server compete for them; compare ratios within one run", runtime.NumCPU()))
	}
	return rep, nil
}

// loadClients holds one client per connection and the calls the measurements make.
type loadClients struct {
	c       loadConfig
	rpcs    []idkitv1connect.IDServiceClient
	hcs     []*http.Client
	rr      atomic.Uint64
	nextURL string
}

func newLoadClients(c loadConfig) *loadClients {
	cl := &loadClients{c: c, nextURL: fmt.Sprintf("http://%s/v1/next/%s?n=%d", c.addr, c.generator, c.batch)}
	for range c.conns {
		tr := &http.Transport{Protocols: new(http.Protocols), MaxIdleConnsPerHost: c.clients, DisableCompression: true}
		if c.protocol == "http" {
			tr.Protocols.SetHTTP1(true)
		} else {
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		cl.hcs = append(cl.hcs, hc)
		var opts []connect.ClientOption
		switch c.protocol {
		case "grpc":
			opts = append(opts, connect.WithGRPC())
		case "json":
			opts = append(opts, connect.WithProtoJSON())
		}
		if c.token != "" {
			tok := c.token
			opts = append(opts, connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
				return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
					req.Header().Set("Authorization", "Bearer "+tok)
					return next(ctx, req)
				}
			})))
		}
		cl.rpcs = append(cl.rpcs, idkitv1connect.NewIDServiceClient(hc, "http://"+c.addr, opts...))
	}
	return cl
}

func (cl *loadClients) close() {
	for _, hc := range cl.hcs {
		hc.CloseIdleConnections()
	}
}

// pick returns the next connection's index, round robin.
func (cl *loadClients) pick() int { return int(cl.rr.Add(1) % uint64(len(cl.hcs))) }

// describe checks that the generator exists and returns its scheme.
func (cl *loadClients) describe(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := connect.NewRequest(&v1.GeneratorsRequest{})
	if cl.c.token != "" {
		req.Header().Set("Authorization", "Bearer "+cl.c.token)
	}
	// The Generators call goes over Connect even for --protocol http, which idkitd serves on
	// the same port.
	res, err := idkitv1connect.NewIDServiceClient(cl.hcs[0], "http://"+cl.c.addr).Generators(ctx, req)
	if err != nil {
		return "", fmt.Errorf("load: %s: %w", cl.c.addr, err)
	}
	var names []string
	for _, g := range res.Msg.Generators {
		if g.Name == cl.c.generator {
			return g.Scheme, nil
		}
		names = append(names, g.Name)
	}
	return "", fmt.Errorf("load: %s has no generator %q (it has: %s)", cl.c.addr, cl.c.generator, strings.Join(names, ", "))
}

// next makes one Next request and returns the number of IDs it brought.
func (cl *loadClients) next(ctx context.Context) (int, error) {
	i := cl.pick()
	if cl.c.protocol == "http" {
		return cl.get(ctx, i, cl.nextURL, true)
	}
	res, err := cl.rpcs[i].Next(ctx, connect.NewRequest(&v1.NextRequest{Generator: cl.c.generator, Count: uint32(cl.c.batch)}))
	if err != nil {
		return 0, err
	}
	n := len(res.Msg.Ids64) + len(res.Msg.Ids128)
	if n != cl.c.batch {
		return n, fmt.Errorf("asked for %d IDs, got %d", cl.c.batch, n)
	}
	return n, nil
}

// floor makes one request the stack answers with nothing.
func (cl *loadClients) floor(ctx context.Context) (int, error) {
	i := cl.pick()
	if cl.c.protocol == "http" {
		return cl.get(ctx, i, "http://"+cl.c.addr+"/healthz", false)
	}
	_, err := cl.rpcs[i].Ping(ctx, connect.NewRequest(&v1.PingRequest{}))
	return 0, err
}

func (cl *loadClients) get(ctx context.Context, i int, url string, count bool) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if cl.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+cl.c.token)
	}
	res, err := cl.hcs[i].Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(b)))
	}
	if !count {
		return 0, nil
	}
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n, nil
}

// tally is what one or more measurements counted.
type tally struct {
	hist, sched         *hdrhistogram.Histogram
	requests, errs, ids int64
	seconds             float64
	firstErr            string
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Minute), 3) }

// add merges u into t.
func (t *tally) add(u tally) {
	if t.hist == nil {
		t.hist = newHist()
	}
	t.hist.Merge(u.hist)
	if u.sched != nil {
		if t.sched == nil {
			t.sched = newHist()
		}
		t.sched.Merge(u.sched)
	}
	t.requests += u.requests
	t.errs += u.errs
	t.ids += u.ids
	t.seconds += u.seconds
	if t.firstErr == "" {
		t.firstErr = u.firstErr
	}
}

// result summarizes t.
func (t *tally) result(kind string) (loadResult, error) {
	r := loadResult{Kind: kind, Requests: t.requests, Errors: t.errs, FirstError: idkit.Redact(t.firstErr), Seconds: t.seconds, Latency: summarize(t.hist)}
	if t.seconds > 0 {
		r.RequestsPerSec = float64(t.requests) / t.seconds
		r.IDsPerSec = float64(t.ids) / t.seconds
	}
	if t.sched != nil {
		l := summarize(t.sched)
		r.Scheduled = &l
	}
	if r.Requests == 0 {
		return r, fmt.Errorf("load: no %s request succeeded (%d failed, first: %s)", kind, r.Errors, r.FirstError)
	}
	return r, nil
}

// measure runs call from c.clients goroutines for d (or until n requests, when n > 0).
func measure(ctx context.Context, c loadConfig, call func(context.Context) (int, error), d time.Duration, n int64) (tally, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		issued, errs, ids atomic.Int64
		firstErr          atomic.Pointer[string]
		wg                sync.WaitGroup
	)
	hists := make([]*hdrhistogram.Histogram, c.clients)
	sched := make([]*hdrhistogram.Histogram, c.clients)
	start := time.Now()
	end := start.Add(d)
	if n > 0 {
		end = start.Add(24 * time.Hour)
	}
	var interval time.Duration
	if c.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(c.clients) / c.rate)
	}
	for w := range c.clients {
		hists[w] = newHist()
		if interval > 0 {
			sched[w] = newHist()
		}
		wg.Go(func() {
			// Paced clients start spread over one interval so that they do not send in step.
			due := start.Add(interval * time.Duration(w) / time.Duration(c.clients))
			for ctx.Err() == nil {
				if n > 0 && issued.Add(1) > n {
					return
				}
				if interval > 0 {
					if wait := time.Until(due); wait > 0 {
						t := time.NewTimer(wait)
						select {
						case <-ctx.Done():
							t.Stop()
							return
						case <-t.C:
						}
					}
				}
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				got, err := call(ctx)
				t1 := time.Now()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					errs.Add(1)
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
					continue
				}
				ids.Add(int64(got))
				hists[w].RecordValue(int64(t1.Sub(t0)))
				if interval > 0 {
					sched[w].RecordValue(int64(t1.Sub(due)))
					due = due.Add(interval)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return tally{}, err
	}
	t := tally{hist: newHist(), requests: 0, errs: errs.Load(), ids: ids.Load(), seconds: elapsed.Seconds()}
	for _, h := range hists {
		t.hist.Merge(h)
	}
	t.requests = t.hist.TotalCount()
	if interval > 0 {
		t.sched = newHist()
		for _, h := range sched {
			t.sched.Merge(h)
		}
	}
	if p := firstErr.Load(); p != nil {
		t.firstErr = *p
	}
	return t, nil
}

func summarize(h *hdrhistogram.Histogram) loadLatency {
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return loadLatency{
		P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)), P99: us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max()), Mean: h.Mean() / 1e3,
	}
}

func writeLoadTable(w io.Writer, rep *loadReport) error {
	fmt.Fprintf(w, "target %s, protocol %s, generator %s (%s), %d clients on %d connections, batch %d",
		rep.Target, rep.Protocol, rep.Generator, rep.Spec, rep.Clients, rep.Conns, rep.Batch)
	if rep.Rate > 0 {
		fmt.Fprintf(w, ", paced at %s req/s", thousands(uint64(rep.Rate)))
	}
	fmt.Fprintln(w)
	t := newTable(w, "measure", ">requests", ">errors", ">req/s", ">IDs/s", ">p50 µs", ">p90 µs", ">p99 µs", ">p99.9 µs", ">max µs")
	for _, r := range rep.Results {
		t.row(loadCells(r, r.Latency)...)
		if r.Scheduled != nil {
			t.row(append([]string{"  from schedule"}, loadCells(r, *r.Scheduled)[1:]...)...)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	if rep.FloorRatio > 0 {
		fmt.Fprintf(w, "next ÷ floor: %.3f of the floor's requests/s\n", rep.FloorRatio)
	}
	for _, r := range rep.Results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: %d errors, first: %s\n", r.Kind, r.Errors, r.FirstError)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	return nil
}

func loadCells(r loadResult, l loadLatency) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	ids := thousands(uint64(r.IDsPerSec))
	if r.Kind == "floor" {
		ids = "-"
	}
	return []string{r.Kind, thousands(uint64(r.Requests)), thousands(uint64(r.Errors)), thousands(uint64(r.RequestsPerSec)), ids,
		f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max)}
}

func writeLoadMarkdown(w io.Writer, rep *loadReport) error {
	fmt.Fprintf(w, "#### `%s`\n\n", rep.Command)
	fmt.Fprintf(w, "%s, generator `%s` (`%s`), %d clients on %d connections, batch %d", rep.Protocol, rep.Generator, rep.Spec, rep.Clients, rep.Conns, rep.Batch)
	if rep.Rate > 0 {
		fmt.Fprintf(w, ", paced at %s req/s", thousands(uint64(rep.Rate)))
	}
	fmt.Fprintf(w, "; %d CPUs, %s.\n\n", rep.CPUs, rep.GoVersion)
	fmt.Fprintln(w, "| measure | requests | errors | req/s | IDs/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rep.Results {
		fmt.Fprintf(w, "| %s |\n", strings.Join(loadCells(r, r.Latency), " | "))
		if r.Scheduled != nil {
			fmt.Fprintf(w, "| %s |\n", strings.Join(append([]string{"from schedule"}, loadCells(r, *r.Scheduled)[1:]...), " | "))
		}
	}
	fmt.Fprintln(w)
	if rep.FloorRatio > 0 {
		fmt.Fprintf(w, "Next ÷ floor: %.3f of the floor's requests/s.\n\n", rep.FloorRatio)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "Note: %s.\n\n", n)
	}
	return nil
}
