package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/bearer"
	"github.com/idkit/idkit/internal/redact"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const loadHelp = `Usage: idbench load (--addr HOST:PORT | --spawn) [flags]

Drives an idkitd (cmd/idkitd) with C concurrent clients and reports requests/s, IDs/s and
latency percentiles from an HDR histogram. In the same run it measures the floor: the same
protocol stack answering an empty message (the Ping RPC; GET /healthz for --protocol http),
so that the cost of issuing IDs shows apart from the cost of the stack.

Without --rate the clients run closed loop: each sends its next request when the answer to
the last one is back. With --rate R the load is open loop: one pacer releases requests at
exactly R/s, request i due at start + i/R (1/R rounded to the nanosecond), to a pool of C
workers, whatever the answers do. Each request's latency is then also reported from its due
time, and the send lag (how long after its due time a worker sent it) shows whether the
generator kept its schedule: a pool too small for the rate shows there. On Linux the pacer
waits on a timerfd, which wakes within microseconds; elsewhere on a Go timer, which can be a
millisecond late.

The report counts the garbage collections of the idbench process in each measurement
(gc_cycles; idkitd's too with --spawn).

Flags:
  --addr HOST:PORT     a running idkitd
  --spawn              start idkitd in this process on loopback ports (shares the CPU with
                       the load generator), with both of its listeners
  --stack S            which of the spawned idkitd's listeners to load: grpc-go (its
                       --grpc-listen port, grpc-go's own server, where docs/service.md sends
                       gRPC clients; the default for --protocol grpc) or net-http (its main
                       port: net/http with Connect, every protocol; the default for the
                       other protocols). With --addr the address says which
  --gen NAME=SPEC      a generator for --spawn; repeat for more
                       (default orders=snowflake:layout=twitter,node=1)
  --generator NAME     the generator to ask (default: the first --gen, or "orders")
  --protocol P         grpc (default; the google.golang.org/grpc client), connect (binary)
                       or json (Connect JSON), both with the connectrpc.com/connect client,
                       grpc-connect (gRPC through the connectrpc.com/connect client, which
                       idkitd answers with Connect on net/http rather than with grpc-go: the
                       two gRPC stacks side by side), grpc-web (gRPC-Web, as browsers
                       send it, through the connectrpc.com/connect client), or http
                       (net/http client; GET /v1/next/NAME?n=B, text lines)
  --clients C          concurrent clients (default 4), or with --rate the workers that send
                       the paced requests (default 32)
  --conns N            connections they share, round robin (default 1; http: one per client)
  --duration D         how long each measurement runs (default 5s)
  --requests N         stop after N requests instead (N for next and N for the floor, spread
                       over the rounds)
  --warmup D           unmeasured load before the first measurement (default 500ms)
  --rounds R           split each measurement into R parts, alternating next and floor, so
                       that load from elsewhere on the machine falls on both alike (default 3)
  --batch B            IDs per request (default 1)
  --rate R             target requests/s, paced open loop (default 0: closed loop, as fast as
                       answers come back); latency is then also reported from each request's
                       due time, which counts queueing behind slow answers, beside the send lag
  --no-floor           skip the floor measurement
  --timeline FILE      with --rate: write every measured Next request's due, send and answer
                       times to FILE, one line each, in nanoseconds on CLOCK_MONOTONIC on
                       Linux (the clock of perf record -k mono), to lay the slow ones beside
                       a trace of the same seconds (docs/bench/paced-tail.sh)
  --token-env VAR      send the bearer token in environment variable VAR
  --tls                speak TLS to --addr, trusting the system's roots (an idkitd started
                       with --tls-cert and --tls-key)
  --tls-ca FILE        trust the PEM certificates in FILE instead (implies --tls)
  --json               one JSON object instead of the table
  --markdown           a Markdown section (the command, the machine, the table) for reports

Examples:
  idbench load --spawn --duration 10s                    # gRPC on the gRPC port (grpc-go)
  idbench load --spawn --stack net-http --duration 10s   # gRPC on the main port (Connect)
  idbench load --spawn --rate 10000
  idbench load --spawn --batch 1000 --clients 1
  idbench load --addr 127.0.0.1:7070 --generator orders --protocol json --json
`

// loadConfig is idbench load's command line.
type loadConfig struct {
	addr      string
	spawn     bool
	stack     string // with spawn: net-http or grpc-go
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
	timeline  *timeline // with rate: where measured Next requests are recorded; nil: nowhere
	token     string
	tls       *tls.Config // nil: cleartext
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
	Kind           string      `json:"kind"` // "next" or "floor"
	Requests       int64       `json:"requests"`
	Errors         int64       `json:"errors"`
	FirstError     string      `json:"first_error,omitempty"`
	Seconds        float64     `json:"seconds"`
	RequestsPerSec float64     `json:"requests_per_sec"`
	IDsPerSec      float64     `json:"ids_per_sec"`
	Latency        loadLatency `json:"latency"`
	// Scheduled is the latency from each request's due time (paced runs only).
	Scheduled *loadLatency `json:"latency_from_schedule,omitempty"`
	// SendLag is how long after its due time each request was sent, failed ones included
	// (paced runs only).
	SendLag *loadLatency `json:"send_lag,omitempty"`
	// Sent counts the requests sent in a paced run, failed ones included.
	Sent int64 `json:"sent,omitempty"`
	// Unsent counts the requests of a paced run that came due but were never sent: the
	// workers had not caught up when the measurement's time ran out.
	Unsent int64 `json:"unsent,omitempty"`
	// CPUPerRequest is the CPU time (user and system) the idbench process spent per
	// request, in microseconds: the client's cost, and with --spawn the server's too.
	// Zero where the platform does not report it.
	CPUPerRequest float64 `json:"cpu_us_per_request,omitempty"`
	// GCCycles counts the garbage collections the idbench process completed during the
	// measurement (idkitd's too with --spawn).
	GCCycles int64 `json:"gc_cycles"`
}

// loadReport is what idbench load prints.
type loadReport struct {
	Command    string       `json:"command"`
	Target     string       `json:"target"`
	Spawned    bool         `json:"spawned"`
	Stack      string       `json:"stack,omitempty"` // with --spawn: the server stack that answered
	TLS        bool         `json:"tls,omitempty"`
	Protocol   string       `json:"protocol"`
	Client     string       `json:"client"` // the Go package that speaks the protocol
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
	fs.StringVar(&c.stack, "stack", "", "")
	fs.Var(&gens, "gen", "")
	fs.StringVar(&c.generator, "generator", "", "")
	fs.StringVar(&c.protocol, "protocol", "grpc", "")
	fs.IntVar(&c.clients, "clients", 0, "")
	fs.IntVar(&c.conns, "conns", 1, "")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "")
	fs.Int64Var(&c.requests, "requests", 0, "")
	fs.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "")
	fs.IntVar(&c.batch, "batch", 1, "")
	fs.IntVar(&c.rounds, "rounds", 3, "")
	fs.Float64Var(&c.rate, "rate", 0, "")
	noFloor := fs.Bool("no-floor", false, "")
	timelinePath := fs.String("timeline", "", "")
	tokenEnv := fs.String("token-env", "", "")
	useTLS := fs.Bool("tls", false, "")
	tlsCA := fs.String("tls-ca", "", "")
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
	clientsSet := false
	fs.Visit(func(f *flag.Flag) { clientsSet = clientsSet || f.Name == "clients" })
	if !clientsSet {
		// A paced worker waits for each answer too, so the pool must cover the rate times
		// the latency with room for slow answers: 32 workers keep up with 10,000 req/s as
		// long as answers take under 3 ms.
		c.clients = 4
		if c.rate > 0 {
			c.clients = 32
		}
	}
	switch {
	case c.spawn == (c.addr != ""):
		return usagef("load", "load: give either --addr HOST:PORT or --spawn")
	case !c.spawn && len(c.gens) > 0:
		return usagef("load", "load: --gen needs --spawn (a running idkitd has its own generators)")
	case !slices.Contains([]string{"grpc", "connect", "json", "grpc-connect", "grpc-web", "http"}, c.protocol):
		return usagef("load", "load: --protocol %q: want grpc, connect, json, grpc-connect, grpc-web or http", c.protocol)
	case c.stack != "" && !c.spawn:
		return usagef("load", "load: --stack needs --spawn (with --addr, give the address of the listener to load)")
	case !slices.Contains([]string{"", "net-http", "grpc-go"}, c.stack):
		return usagef("load", "load: --stack %q: want net-http or grpc-go", c.stack)
	case c.stack == "grpc-go" && c.protocol != "grpc":
		return usagef("load", "load: --stack grpc-go serves gRPC only: --protocol grpc, not %s", c.protocol)
	case c.clients < 1 || c.conns < 1 || c.batch < 1 || c.rounds < 1:
		return usagef("load", "load: --clients, --conns, --batch and --rounds must be at least 1")
	case c.duration <= 0 && c.requests <= 0:
		return usagef("load", "load: give a positive --duration or --requests")
	case c.rate < 0 || c.warmup < 0:
		return usagef("load", "load: --rate and --warmup cannot be negative")
	case c.rate > maxRate:
		return usagef("load", "load: --rate %g: at most %g requests/s", c.rate, float64(maxRate))
	case c.requests > 0 && c.requests < int64(c.rounds):
		return usagef("load", "load: --requests %d: at least one per round (--rounds %d)", c.requests, c.rounds)
	case *timelinePath != "" && c.rate <= 0:
		return usagef("load", "load: --timeline needs --rate (it records paced requests)")
	case *timelinePath != "" && checkTimelineRows(newSchedule(c.rate, c.duration, c.requests).total) != nil:
		return usagef("load", "load: %v", checkTimelineRows(newSchedule(c.rate, c.duration, c.requests).total))
	case *asJSON && *asMD:
		return usagef("load", "load: choose --json or --markdown")
	case c.spawn && (*useTLS || *tlsCA != ""):
		return usagef("load", "load: --tls and --tls-ca need --addr (a spawned idkitd serves cleartext on loopback)")
	}
	if *useTLS || *tlsCA != "" {
		c.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		if *tlsCA != "" {
			pem, err := os.ReadFile(*tlsCA)
			if err != nil {
				return usagef("load", "load: --tls-ca: %v", err)
			}
			c.tls.RootCAs = x509.NewCertPool()
			if !c.tls.RootCAs.AppendCertsFromPEM(pem) {
				return usagef("load", "load: --tls-ca %s: no PEM certificate in it", *tlsCA)
			}
		}
	}
	if *tokenEnv != "" {
		if !redact.EnvName(*tokenEnv) {
			return usagef("load", "load: --token-env wants the name of an environment variable (a letter or '_', then letters, digits and '_'); the %d characters given are not one and are not shown: they may be the token", len(*tokenEnv))
		}
		if c.token = os.Getenv(*tokenEnv); c.token == "" {
			return usagef("load", "load: --token-env %s: the variable is not set", *tokenEnv)
		}
	}
	if c.spawn && len(c.gens) == 0 {
		c.gens = []server.Generator{{Name: "orders", Spec: "snowflake:layout=twitter,node=1"}}
	}
	if c.spawn && c.stack == "" {
		// gRPC clients belong on the gRPC port (docs/service.md), so that is what a gRPC
		// load measures unless told otherwise; the other protocols are served on the main
		// port only.
		c.stack = "net-http"
		if c.protocol == "grpc" {
			c.stack = "grpc-go"
		}
	}
	if c.generator == "" {
		c.generator = "orders"
		if len(c.gens) > 0 {
			c.generator = c.gens[0].Name
		}
	}
	var tlFile *os.File
	if *timelinePath != "" {
		f, err := os.Create(*timelinePath)
		if err != nil {
			return fmt.Errorf("load: --timeline: %w", err)
		}
		defer f.Close()
		tlFile, c.timeline = f, newTimeline()
	}
	rep, err := load(ctx, c)
	if err != nil {
		return err
	}
	if tlFile != nil {
		if err := c.timeline.write(tlFile); err != nil {
			return err
		}
		if err := tlFile.Close(); err != nil {
			return fmt.Errorf("load: --timeline: %w", err)
		}
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
	rep := &loadReport{Target: c.addr, Spawned: c.spawn, Stack: c.stack, TLS: c.tls != nil, Protocol: c.protocol, Client: loadClient(c.protocol), Generator: c.generator,
		Clients: c.clients, Conns: c.conns, Batch: c.batch, Rate: c.rate, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if c.spawn {
		srv, err := server.NewContext(ctx, server.Config{
			Listen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", Generators: c.gens, MaxCount: max(c.batch, server.DefaultMaxCount),
			ShutdownDelay: -1, // nobody to tell: the load is over
		})
		if err != nil {
			return nil, fmt.Errorf("load: --spawn: %w", err)
		}
		sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		addrs, wait, err := srv.Start(sctx)
		if err != nil {
			stop()
			return nil, fmt.Errorf("load: --spawn: %w", err)
		}
		defer func() { stop(); wait() }()
		c.addr = addrs.HTTP
		if c.stack == "grpc-go" {
			c.addr = addrs.GRPC
		}
		rep.Target = c.addr + " (in process, " + c.stack + ")"
		rep.Notes = append(rep.Notes, fmt.Sprintf("idkitd ran in the load generator's process (--spawn), so both share its %s; compare ratios within one run", cpus(runtime.NumCPU())))
	}
	cl, err := newLoadClients(c)
	if err != nil {
		return nil, err
	}
	defer cl.close()
	if spec, err := cl.describe(ctx); err != nil {
		return nil, err
	} else {
		rep.Spec = spec
	}
	if c.warmup > 0 {
		if _, err := measure(ctx, c, cl.next, c.warmup, 0, nil); err != nil {
			return nil, err
		}
	}
	var next, floor tally
	for r := range c.rounds {
		// --requests N is spread over the rounds, the first N mod R rounds taking one more.
		var n int64
		if c.requests > 0 {
			n = c.requests / int64(c.rounds)
			if int64(r) < c.requests%int64(c.rounds) {
				n++
			}
		}
		d := c.duration / time.Duration(c.rounds)
		t, err := measureCPU(ctx, c, cl.next, d, n, c.timeline)
		if err != nil {
			return nil, err
		}
		next.add(t)
		if c.floor {
			t, err := measureCPU(ctx, c, cl.floor, d, n, nil)
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
	if !c.spawn && runtime.NumCPU() <= 2 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the load generator ran on %s; an idkitd on the same machine without CPUs of its own competes with it for them, so compare ratios within one run", cpus(runtime.NumCPU())))
	}
	return rep, nil
}

// cpus says "1 CPU" or "N CPUs": the CPUs this process may run on (its affinity, as
// taskset sets it), which Go counts as runtime.NumCPU.
func cpus(n int) string {
	if n == 1 {
		return "1 CPU"
	}
	return fmt.Sprintf("%d CPUs", n)
}

// loadClient names the Go package that speaks protocol p.
func loadClient(p string) string {
	switch p {
	case "grpc":
		return "google.golang.org/grpc"
	case "http":
		return "net/http"
	}
	return "connectrpc.com/connect"
}

// loadClients holds one client per connection and the calls the measurements make:
// google.golang.org/grpc for --protocol grpc, connect-go over net/http for connect, json and
// grpc-connect, net/http alone for http.
type loadClients struct {
	c       loadConfig
	grpcs   []v1.IDServiceClient
	ccs     []*grpc.ClientConn
	rpcs    []idkitv1connect.IDServiceClient
	hcs     []*http.Client
	rr      atomic.Uint64
	base    string // http:// or https:// and the address
	nextURL string
	nextReq *v1.NextRequest // read only: shared by every call
}

func newLoadClients(c loadConfig) (*loadClients, error) {
	base := "http://" + c.addr
	creds := insecure.NewCredentials()
	if c.tls != nil {
		base = "https://" + c.addr
		creds = credentials.NewTLS(c.tls.Clone())
	}
	cl := &loadClients{c: c, base: base, nextURL: fmt.Sprintf("%s/v1/next/%s?n=%d", base, c.generator, c.batch),
		nextReq: &v1.NextRequest{Generator: c.generator, Count: uint32(c.batch)}}
	if c.protocol == "grpc" {
		opts := []grpc.DialOption{
			grpc.WithTransportCredentials(creds),
			// Big batches make big answers; connect-go's client sets no limit either.
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)),
		}
		if c.token != "" {
			opts = append(opts, grpc.WithPerRPCCredentials(bearer.Credentials(c.token)))
		}
		for range c.conns {
			// Each ClientConn keeps its own HTTP/2 connection.
			cc, err := grpc.NewClient(c.addr, opts...)
			if err != nil {
				cl.close()
				return nil, fmt.Errorf("load: %s: %w", c.addr, err)
			}
			cl.ccs = append(cl.ccs, cc)
			cl.grpcs = append(cl.grpcs, v1.NewIDServiceClient(cc))
		}
		return cl, nil
	}
	for range c.conns {
		tr := &http.Transport{Protocols: new(http.Protocols), MaxIdleConnsPerHost: c.clients, DisableCompression: true}
		switch {
		case c.protocol == "http":
			tr.Protocols.SetHTTP1(true)
		case c.tls != nil:
			tr.Protocols.SetHTTP2(true)
		default:
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		if c.tls != nil {
			tr.TLSClientConfig = c.tls.Clone()
		}
		hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		cl.hcs = append(cl.hcs, hc)
		var opts []connect.ClientOption
		switch c.protocol {
		case "json":
			opts = append(opts, connect.WithProtoJSON())
		case "grpc-connect":
			opts = append(opts, connect.WithGRPC())
		case "grpc-web":
			opts = append(opts, connect.WithGRPCWeb())
		}
		if c.token != "" {
			opts = append(opts, connect.WithInterceptors(bearer.Interceptor(c.token)))
		}
		cl.rpcs = append(cl.rpcs, idkitv1connect.NewIDServiceClient(hc, base, opts...))
	}
	return cl, nil
}

func (cl *loadClients) close() {
	for _, hc := range cl.hcs {
		hc.CloseIdleConnections()
	}
	for _, cc := range cl.ccs {
		cc.Close()
	}
}

// grpcError words a grpc-go error as connect-go words the same status ("unauthenticated:
// missing or unknown bearer token"), so that reports read alike whichever client ran.
func grpcError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return fmt.Errorf("%s: %s", connect.Code(st.Code()), st.Message())
}

// pick returns the next connection's index, round robin.
func (cl *loadClients) pick() int { return int(cl.rr.Add(1) % uint64(cl.c.conns)) }

// describe checks that the generator exists and returns its scheme.
func (cl *loadClients) describe(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var gens []*v1.Generator
	if cl.c.protocol == "grpc" {
		res, err := cl.grpcs[0].Generators(ctx, &v1.GeneratorsRequest{})
		if err != nil {
			return "", fmt.Errorf("load: %s: %w", cl.c.addr, grpcError(err))
		}
		gens = res.Generators
	} else {
		req := connect.NewRequest(&v1.GeneratorsRequest{})
		if cl.c.token != "" {
			req.Header().Set("Authorization", "Bearer "+cl.c.token)
		}
		// The Generators call goes over Connect even for --protocol http, which idkitd
		// serves on the same port.
		res, err := idkitv1connect.NewIDServiceClient(cl.hcs[0], cl.base).Generators(ctx, req)
		if err != nil {
			return "", fmt.Errorf("load: %s: %w", cl.c.addr, err)
		}
		gens = res.Msg.Generators
	}
	var names []string
	for _, g := range gens {
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
	var n int
	switch cl.c.protocol {
	case "http":
		return cl.get(ctx, i, cl.nextURL, true)
	case "grpc":
		res, err := cl.grpcs[i].Next(ctx, cl.nextReq)
		if err != nil {
			return 0, grpcError(err)
		}
		n = len(res.Ids64) + len(res.Ids128)
	default:
		res, err := cl.rpcs[i].Next(ctx, connect.NewRequest(cl.nextReq))
		if err != nil {
			return 0, err
		}
		n = len(res.Msg.Ids64) + len(res.Msg.Ids128)
	}
	if n != cl.c.batch {
		return n, fmt.Errorf("asked for %d IDs, got %d", cl.c.batch, n)
	}
	return n, nil
}

// floor makes one request the stack answers with nothing.
func (cl *loadClients) floor(ctx context.Context) (int, error) {
	i := cl.pick()
	switch cl.c.protocol {
	case "http":
		return cl.get(ctx, i, cl.base+"/healthz", false)
	case "grpc":
		if _, err := cl.grpcs[i].Ping(ctx, &v1.PingRequest{}); err != nil {
			return 0, grpcError(err)
		}
		return 0, nil
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
	hist, sched, lag    *hdrhistogram.Histogram
	requests, errs, ids int64
	unsent              int64
	seconds             float64
	cpu                 time.Duration // the process's CPU time; 0 where unknown
	gcs                 int64         // garbage collections the process completed
	firstErr            string
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Minute), 3) }

// record adds a duration to h, clamped to h's range so that no value is dropped: a negative
// one can only come from two readings of the same clock nanoseconds apart.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	h.RecordValue(min(max(int64(d), 0), h.HighestTrackableValue()))
}

// add merges u into t.
func (t *tally) add(u tally) {
	if t.hist == nil {
		t.hist = newHist()
	}
	t.hist.Merge(u.hist)
	for _, p := range []struct{ to, from **hdrhistogram.Histogram }{{&t.sched, &u.sched}, {&t.lag, &u.lag}} {
		if *p.from != nil {
			if *p.to == nil {
				*p.to = newHist()
			}
			(*p.to).Merge(*p.from)
		}
	}
	t.requests += u.requests
	t.errs += u.errs
	t.ids += u.ids
	t.unsent += u.unsent
	t.seconds += u.seconds
	t.cpu += u.cpu
	t.gcs += u.gcs
	if t.firstErr == "" {
		t.firstErr = u.firstErr
	}
}

// result summarizes t.
func (t *tally) result(kind string) (loadResult, error) {
	r := loadResult{Kind: kind, Requests: t.requests, Errors: t.errs, FirstError: idkit.Redact(t.firstErr), Seconds: t.seconds,
		Latency: summarize(t.hist), Unsent: t.unsent, GCCycles: t.gcs}
	if t.seconds > 0 {
		r.RequestsPerSec = float64(t.requests) / t.seconds
		r.IDsPerSec = float64(t.ids) / t.seconds
	}
	if t.sched != nil {
		l := summarize(t.sched)
		r.Scheduled = &l
	}
	if sent := max(t.requests+t.errs, 1); t.cpu > 0 {
		r.CPUPerRequest = float64(t.cpu) / 1e3 / float64(sent)
	}
	if t.lag != nil {
		l := summarize(t.lag)
		r.SendLag, r.Sent = &l, t.lag.TotalCount()
	}
	if r.Requests == 0 {
		return r, fmt.Errorf("load: no %s request succeeded (%d failed, first: %s)", kind, r.Errors, r.FirstError)
	}
	return r, nil
}

// measureCPU is measure that also counts the process's CPU time and garbage collections over
// the measurement.
func measureCPU(ctx context.Context, c loadConfig, call func(context.Context) (int, error), d time.Duration, n int64, tl *timeline) (tally, error) {
	before, gcs := processCPU(), gcCycles()
	t, err := measure(ctx, c, call, d, n, tl)
	t.cpu, t.gcs = processCPU()-before, gcCycles()-gcs
	return t, err
}

// measure runs call for d (or n requests, when n > 0): closed loop from c.clients goroutines,
// or paced at c.rate by measurePaced, which records each request in tl when tl is not nil.
func measure(ctx context.Context, c loadConfig, call func(context.Context) (int, error), d time.Duration, n int64, tl *timeline) (tally, error) {
	if c.rate > 0 {
		return measurePaced(ctx, c, call, d, n, tl)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		issued atomic.Int64
		out    outcomes
		wg     sync.WaitGroup
	)
	hists := make([]*hdrhistogram.Histogram, c.clients)
	start := time.Now()
	end := start.Add(d)
	if n > 0 {
		end = start.Add(24 * time.Hour)
	}
	for w := range c.clients {
		hists[w] = newHist()
		wg.Go(func() {
			for ctx.Err() == nil {
				if n > 0 && issued.Add(1) > n {
					return
				}
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				got, err := call(ctx)
				t1 := time.Now()
				if err != nil {
					if !out.failed(ctx, err) {
						return
					}
					continue
				}
				out.ids.Add(int64(got))
				record(hists[w], t1.Sub(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return tally{}, err
	}
	t := tally{hist: newHist(), seconds: elapsed.Seconds()}
	for _, h := range hists {
		t.hist.Merge(h)
	}
	t.requests = t.hist.TotalCount()
	out.fill(&t)
	return t, nil
}

// outcomes counts what a measurement's workers got back: IDs, failed calls and the first
// failure's message. It is safe for concurrent use.
type outcomes struct {
	ids, errs atomic.Int64
	first     atomic.Pointer[string]
}

// failed counts a failed call and reports true, or reports false without counting it when
// the call failed because the measurement is ending (ctx is done).
func (o *outcomes) failed(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	o.errs.Add(1)
	msg := err.Error()
	o.first.CompareAndSwap(nil, &msg)
	return true
}

// fill copies the counts into t.
func (o *outcomes) fill(t *tally) {
	t.errs, t.ids = o.errs.Load(), o.ids.Load()
	if p := o.first.Load(); p != nil {
		t.firstErr = *p
	}
}

// pacedQueue is how many released requests may wait for a free worker. Past it the pacer
// waits too; either way the wait counts in the send lag.
const pacedQueue = 4096

// measurePaced runs call open loop: a pacer releases requests at c.rate for d (or n of them,
// when n > 0) to c.clients workers, which record latency from the send and from the due
// time, and the send lag between the two. Requests released before the time is up are sent
// even if that takes longer; those still waiting for room in the queue then are counted as
// unsent. When tl is not nil every request sent is also recorded in it.
func measurePaced(ctx context.Context, c loadConfig, call func(context.Context) (int, error), d time.Duration, n int64, tl *timeline) (tally, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		out outcomes
		wg  sync.WaitGroup
	)
	s := newSchedule(c.rate, d, n)
	var rec *timelineRecorder
	if tl != nil {
		rec = tl.recorder(c.clients)
	}
	jobs := make(chan time.Time, pacedQueue)
	hists := make([]*hdrhistogram.Histogram, c.clients)
	sched := make([]*hdrhistogram.Histogram, c.clients)
	lags := make([]*hdrhistogram.Histogram, c.clients)
	for w := range c.clients {
		hists[w], sched[w], lags[w] = newHist(), newHist(), newHist()
		wg.Go(func() {
			for {
				var due time.Time
				select {
				case <-ctx.Done():
					return
				case j, ok := <-jobs:
					if !ok {
						return
					}
					due = j
				}
				t0 := time.Now()
				got, err := call(ctx)
				t1 := time.Now()
				record(lags[w], t0.Sub(due))
				rec.record(w, due, t0, t1, err != nil)
				if err != nil {
					if !out.failed(ctx, err) {
						return
					}
					continue
				}
				out.ids.Add(int64(got))
				record(hists[w], t1.Sub(t0))
				record(sched[w], t1.Sub(due))
			}
		})
	}
	tk, err := newTicker(ctx, s.tick())
	if err != nil {
		close(jobs)
		wg.Wait()
		return tally{}, err
	}
	var end <-chan time.Time
	if n <= 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		end = timer.C
	}
	start := tk.started()
	unsent, perr := s.pace(ctx, tk, jobs, end)
	if perr != nil {
		cancel()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rec.add()
	cerr := tk.close()
	if err := errors.Join(perr, cerr); err != nil {
		return tally{}, err
	}
	if err := ctx.Err(); err != nil {
		return tally{}, err
	}
	t := tally{hist: newHist(), sched: newHist(), lag: newHist(), unsent: unsent, seconds: elapsed.Seconds()}
	for w := range c.clients {
		t.hist.Merge(hists[w])
		t.sched.Merge(sched[w])
		t.lag.Merge(lags[w])
	}
	t.requests = t.hist.TotalCount()
	out.fill(&t)
	return t, nil
}

func summarize(h *hdrhistogram.Histogram) loadLatency {
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return loadLatency{
		P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)), P99: us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max()), Mean: h.Mean() / 1e3,
	}
}

// loadHeader is the report's first line, after the target (table) or the command (Markdown);
// code quotes names and specs.
func loadHeader(rep *loadReport, code func(string) string) string {
	var b strings.Builder
	who := "clients"
	if rep.Rate > 0 {
		who = "workers"
	}
	over := ""
	if rep.TLS {
		over = " over TLS"
	}
	served := ""
	switch rep.Stack {
	case "net-http":
		served = ", served by net/http with Connect"
	case "grpc-go":
		served = ", served by grpc-go"
	}
	fmt.Fprintf(&b, "protocol %s%s (%s client%s), generator %s (%s), %d %s on %d connections, batch %d",
		rep.Protocol, over, code(rep.Client), served, code(rep.Generator), code(rep.Spec), rep.Clients, who, rep.Conns, rep.Batch)
	if rep.Rate > 0 {
		fmt.Fprintf(&b, ", paced open loop at %s req/s", thousands(uint64(rep.Rate)))
	}
	return b.String()
}

func writeLoadTable(w io.Writer, rep *loadReport) error {
	fmt.Fprintf(w, "target %s, %s\n", rep.Target, loadHeader(rep, func(s string) string { return s }))
	t := newTable(w, "measure", ">requests", ">errors", ">req/s", ">IDs/s", ">p50 µs", ">p90 µs", ">p99 µs", ">p99.9 µs", ">max µs")
	for _, r := range rep.Results {
		t.row(loadCells(r, r.Latency)...)
		if r.Scheduled != nil {
			t.row(append([]string{"  from schedule"}, loadCells(r, *r.Scheduled)[1:]...)...)
		}
		if r.SendLag != nil {
			t.row(lagCells("  send lag", r)...)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	if rep.FloorRatio > 0 {
		fmt.Fprintf(w, "next ÷ floor: %.3f of the floor's requests/s\n", rep.FloorRatio)
	}
	if line := cpuLine(rep); line != "" {
		fmt.Fprintln(w, line)
	}
	for _, r := range rep.Results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: %d errors, first: %s\n", r.Kind, r.Errors, r.FirstError)
		}
		if r.Unsent > 0 {
			fmt.Fprintf(w, "%s: %s\n", r.Kind, unsentNote(r, rep))
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	return nil
}

// unsentNote says that a paced run fell short of its schedule.
func unsentNote(r loadResult, rep *loadReport) string {
	return fmt.Sprintf("%s requests came due but were not sent in time: %d workers could not keep up with %s req/s (raise --clients)",
		thousands(uint64(r.Unsent)), rep.Clients, thousands(uint64(rep.Rate)))
}

// cpuLine says what each kind of request cost the idbench process in CPU time, or "" where
// the platform does not report it.
func cpuLine(rep *loadReport) string {
	var parts []string
	for _, r := range rep.Results {
		if r.CPUPerRequest > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f µs", r.Kind, r.CPUPerRequest))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	whose := "the load generator's"
	if rep.Spawned {
		whose = "the load generator's and idkitd's (one process)"
	}
	return fmt.Sprintf("CPU time per request, %s, user and system: %s", whose, strings.Join(parts, ", "))
}

func loadCells(r loadResult, l loadLatency) []string {
	ids := thousands(uint64(r.IDsPerSec))
	if r.Kind == "floor" {
		ids = "-"
	}
	return append([]string{r.Kind, thousands(uint64(r.Requests)), thousands(uint64(r.Errors)), thousands(uint64(r.RequestsPerSec)), ids},
		latencyCells(l)...)
}

// lagCells is the send-lag row: the requests sent, failed ones included, and the lag.
func lagCells(name string, r loadResult) []string {
	return append([]string{name, thousands(uint64(r.Sent)), "-", "-", "-"}, latencyCells(*r.SendLag)...)
}

func latencyCells(l loadLatency) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	return []string{f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max)}
}

func writeLoadMarkdown(w io.Writer, rep *loadReport) error {
	fmt.Fprintf(w, "#### `%s`\n\n", rep.Command)
	fmt.Fprintf(w, "%s; %s, %s.\n\n", loadHeader(rep, func(s string) string { return "`" + s + "`" }), cpus(rep.CPUs), rep.GoVersion)
	fmt.Fprintln(w, "| measure | requests | errors | req/s | IDs/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rep.Results {
		fmt.Fprintf(w, "| %s |\n", strings.Join(loadCells(r, r.Latency), " | "))
		if r.Scheduled != nil {
			fmt.Fprintf(w, "| %s |\n", strings.Join(append([]string{"from schedule"}, loadCells(r, *r.Scheduled)[1:]...), " | "))
		}
		if r.SendLag != nil {
			fmt.Fprintf(w, "| %s |\n", strings.Join(lagCells("send lag", r), " | "))
		}
	}
	fmt.Fprintln(w)
	if rep.FloorRatio > 0 {
		fmt.Fprintf(w, "Next ÷ floor: %.3f of the floor's requests/s.\n\n", rep.FloorRatio)
	}
	if line := cpuLine(rep); line != "" {
		fmt.Fprintf(w, "%s.\n\n", strings.ToUpper(line[:1])+line[1:])
	}
	for _, r := range rep.Results {
		if r.Unsent > 0 {
			fmt.Fprintf(w, "%s: %s.\n\n", strings.ToUpper(r.Kind[:1])+r.Kind[1:], unsentNote(r, rep))
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "Note: %s.\n\n", n)
	}
	return nil
}
