// Command idkitd serves idkit's ID generators to clients in any language: gRPC (and gRPC-Web)
// and the Connect protocol (JSON or binary), plus GET /v1/next/{generator}?n=N,
// /v1/decode/{generator}/{id} and /v1/bounds/{generator}?from=…&to=… for shells, /healthz,
// /readyz, the gRPC health and reflection services (grpcurl needs no .proto) and Prometheus
// metrics at /metrics, all on one port (--listen, default 127.0.0.1:7070) served by net/http
// with Connect, whatever a connection carries. gRPC clients have a port of their own beside it
// (--grpc-listen, default 127.0.0.1:7071), served by grpc-go's own server, which gives them
// more requests per second at less CPU per request than the main port, and a shorter latency
// tail (figures in docs/service.md); --grpc-listen off turns it off. Both bind loopback unless
// told otherwise.
//
//	idkitd --gen orders=snowflake:layout=twitter,node=etcd://127.0.0.1:2379/idkit/orders \
//	       --gen sessions=ulid --listen 127.0.0.1:7070 --grpc-listen 127.0.0.1:7071
//	idkitd --config idkitd.toml
//
// A config file is TOML:
//
//	listen = "127.0.0.1:7070"
//	grpc_listen = "127.0.0.1:7071"     # gRPC only, served by grpc-go (the default); "off": none
//	max_count = 10000
//	max_conns = 1024                    # bounds across connections (docs/service.md)
//	max_total_streams = 4096
//	max_addr_streams = 1024             # from one client address (default: a quarter of the above)
//	max_total_bytes = 67108864
//	max_open_streams = 512              # with tokens: requests without one
//	max_open_watches = 128
//	max_open_conns = 64                 # with tokens: connections that showed none
//	tls_cert = "/etc/idkitd/cert.pem"   # with tls_key: serve TLS
//	tls_key = "/etc/idkitd/key.pem"
//	tokens_file = "/etc/idkitd/tokens"  # bearer tokens, one a line
//	metrics_tokens_file = "/etc/idkitd/metrics-tokens"  # scrape tokens for /metrics
//	cors_origins = ["https://app.example.com"]  # browser pages that may call it
//	compress_responses = false          # gzip answers for clients that accept it
//	shutdown_delay = "5s"
//	drain_timeout = "10s"
//	body_timeout = "10s"                # a request's body must have come by then
//	allow_unmask = false                # true: Decode takes masked IDs apart
//	[generators]
//	orders = "snowflake:layout=twitter,node=etcd://127.0.0.1:2379/idkit/orders"
//	sessions = "ulid"
//
// Flags override the file; --gen adds generators to the file's. On SIGTERM or Ctrl-C it reports
// not ready for --shutdown-delay while it still serves, then stops accepting, drains in-flight
// requests and releases node leases; a second signal ends it at once, killed by that signal
// (exit status 143 for SIGTERM as a shell reports it, 130 for Ctrl-C). Every spec idkit.New
// accepts works, with the stores idkitd links: lease stores (node=etcd://…, node=postgres://…),
// segment stores (segment:store=pg://…, mysql://…, redis://…) and remote (an idkitd in front of
// another). A generator whose spec sets prefix= or mask= answers its IDs' text in the public
// form; Decode of a masked generator needs --allow-unmask.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/idkit/idkit"
	_ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // node=etcd://…
	_ "github.com/idkit/idkit/schemes/nodeid/pglease"   // node=postgres://…
	_ "github.com/idkit/idkit/schemes/remote"           // remote:addr=…
	"github.com/idkit/idkit/schemes/remote/server"
	_ "github.com/idkit/idkit/schemes/segment/mysqlstore" // segment:store=mysql://…
	_ "github.com/idkit/idkit/schemes/segment/pgstore"    // segment:store=pg://…
	_ "github.com/idkit/idkit/schemes/segment/redisstore" // segment:store=redis://…
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one ends the process at once (Go's default): killed by
	// the signal, exit status 143 for SIGTERM and 130 for SIGINT as a shell reports it (the
	// --help text and docs/service.md say so).
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Stderr, os.Args[1:])
	stop()
	os.Exit(report(os.Stderr, err))
}

// report prints err for a user, every credential in it redacted, and returns the exit status:
// 0 for nil or a help request, 2 for a usage error, 1 for anything else.
func report(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "idkitd: %s\n", idkit.Redact(err.Error()))
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "Run 'idkitd --help' for usage.")
		return 2
	}
	return 1
}

// usageError is a mistake in the command line or config file; main exits with status 2 for it.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// fileConfig is the TOML config file.
type fileConfig struct {
	Listen        string            `toml:"listen"`
	GRPCListen    string            `toml:"grpc_listen"`
	MaxCount      int               `toml:"max_count"`
	MaxStreams    int               `toml:"max_streams"`
	MaxConnBytes  int               `toml:"max_conn_bytes"`
	MaxConns      int               `toml:"max_conns"`
	MaxTotal      int               `toml:"max_total_streams"`
	MaxAddr       int               `toml:"max_addr_streams"`
	MaxTotalBytes int               `toml:"max_total_bytes"`
	MaxOpen       int               `toml:"max_open_streams"`
	MaxWatches    int               `toml:"max_open_watches"`
	MaxOpenConns  int               `toml:"max_open_conns"`
	TLSCert       string            `toml:"tls_cert"`
	TLSKey        string            `toml:"tls_key"`
	TokensFile    string            `toml:"tokens_file"`
	MetricsTokens string            `toml:"metrics_tokens_file"`
	CORSOrigins   []string          `toml:"cors_origins"`
	Compress      bool              `toml:"compress_responses"`
	ShutdownDelay string            `toml:"shutdown_delay"`
	DrainTimeout  string            `toml:"drain_timeout"`
	WriteTimeout  string            `toml:"write_timeout"`
	BodyTimeout   string            `toml:"body_timeout"`
	LogFormat     string            `toml:"log_format"`
	AllowUnmask   bool              `toml:"allow_unmask"`
	Generators    map[string]string `toml:"generators"`
}

// fileKeys are the config file's keys, for the error that names an unknown one.
const fileKeys = "listen, grpc_listen, max_count, max_streams, max_conn_bytes, max_conns, max_total_streams, max_addr_streams, max_total_bytes, max_open_streams, max_open_watches, max_open_conns, tls_cert, tls_key, tokens_file, metrics_tokens_file, cors_origins, compress_responses, shutdown_delay, drain_timeout, write_timeout, body_timeout, log_format, allow_unmask, [generators]"

// genFlags collects repeated --gen NAME=SPEC.
type genFlags []server.Generator

func (g *genFlags) String() string { return "" }

func (g *genFlags) Set(v string) error {
	gen, err := server.ParseGenerator(v)
	if err != nil {
		return err
	}
	*g = append(*g, gen)
	return nil
}

// originFlags collects repeated --cors-origin ORIGIN, each possibly a comma-separated list.
type originFlags []string

func (o *originFlags) String() string { return strings.Join(*o, ",") }

func (o *originFlags) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*o = append(*o, part)
		}
	}
	return nil
}

// run is idkitd with its arguments; it returns when ctx ends and the server has drained.
func run(ctx context.Context, stderr io.Writer, args []string) error {
	cfg, logFormat, err := parseArgs(stderr, args)
	if err != nil {
		return err
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if logFormat == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	cfg.Logger = slog.New(h)
	srv, err := server.NewContext(ctx, cfg)
	if err != nil {
		return err
	}
	err = srv.Run(ctx)
	if errors.Is(err, syscall.EADDRINUSE) && strings.Contains(err.Error(), "gRPC listener") {
		// The gRPC port is on by default, so a second idkitd on one host trips on it first.
		err = fmt.Errorf("%w (the gRPC port, --grpc-listen, is on by default at %s: give each idkitd its own, or --grpc-listen off)", err, server.DefaultGRPCListen)
	}
	return err
}

const usageHead = `Usage: idkitd [--config FILE] --gen NAME=SPEC... [flags]

Serves idkit ID generators over gRPC, gRPC-Web, Connect (JSON or binary) and plain HTTP on one
port (--listen, net/http), and gRPC alone on a port of its own served by grpc-go (--grpc-listen,
on by default beside the main one): point gRPC clients there, everything else at --listen.
Schemes: %s.

On SIGTERM it reports not ready (/readyz 503, gRPC health NOT_SERVING) for --shutdown-delay
while it still serves, then stops accepting, drains in-flight requests for up to
--drain-timeout and releases node leases; it then exits 0, or 1 if the drain failed. A second
SIGTERM or Ctrl-C ends it at once, killed by that signal (a shell reports exit status 143
for SIGTERM, 130 for Ctrl-C), without draining or releasing its leases (they lapse after
their time to live).

Flags:
`

// parseArgs reads the flags and the config file they name. The flag package's own messages
// quote the values they refuse, so it prints nothing: the errors come back to report, which
// redacts them.
func parseArgs(stderr io.Writer, args []string) (server.Config, string, error) {
	fs := flag.NewFlagSet("idkitd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var gens genFlags
	var (
		configPath    = fs.String("config", "", "TOML config `file` (flags override it)")
		listen        = fs.String("listen", "", "`host:port` to serve every protocol on (default "+server.DefaultListen+", loopback only)")
		grpcListen    = fs.String("grpc-listen", "", "`host:port` for gRPC clients, served by grpc-go's own server (more requests/s and less CPU per request than the main port); off for none (default "+server.DefaultGRPCListen+", loopback only)")
		maxCount      = fs.Int("max-count", 0, fmt.Sprintf("most IDs one request may ask for (default %d)", server.DefaultMaxCount))
		maxStreams    = fs.Int("max-streams", 0, fmt.Sprintf("most requests one HTTP/2 connection may have in flight (default %d)", server.DefaultMaxStreams))
		maxConnBytes  = fs.Int("max-conn-bytes", 0, fmt.Sprintf("most bytes of answers one connection may leave unread before its requests wait (default %d)", server.DefaultMaxConnBytes))
		maxConns      = fs.Int("max-conns", 0, fmt.Sprintf("most connections open at a time, both listeners together; more are closed at once (default: half the open-file limit, at most 1024; here %d)", server.DefaultMaxConns()))
		maxTotal      = fs.Int("max-total-streams", 0, fmt.Sprintf("most requests in flight on all connections together; more get UNAVAILABLE (503), but for /healthz, /readyz, /metrics and health Check, which keep a reserve of 32 beyond it (default %d)", server.DefaultMaxTotalStreams))
		maxAddr       = fs.Int("max-addr-streams", 0, "most requests in flight from one client address (an IPv6 /64) on all its connections; more get UNAVAILABLE (503); behind a proxy, which is the only client address, raise it to --max-total-streams (default: a quarter of --max-total-streams)")
		maxTotalBytes = fs.Int("max-total-bytes", 0, fmt.Sprintf("most bytes of unsent answers on all connections together; Next requests wait beyond it (default %d)", server.DefaultMaxTotalBytes))
		maxOpen       = fs.Int("max-open-streams", 0, fmt.Sprintf("with --tokens: most requests in flight from callers without a token (health, reflection, probes) (default %d)", server.DefaultMaxOpenStreams))
		maxOpenConns  = fs.Int("max-open-conns", 0, fmt.Sprintf("with --tokens: most connections that have shown no token yet, counted from their accept; one more closes the oldest of the client address that has the most (default %d)", server.DefaultMaxOpenConns))
		maxWatches    = fs.Int("max-open-watches", 0, fmt.Sprintf("with --tokens: most long-lived streams (health Watch, reflection) from callers without a token (default %d)", server.DefaultMaxOpenWatches))
		tlsCert       = fs.String("tls-cert", "", "TLS certificate `file` (with --tls-key)")
		tlsKey        = fs.String("tls-key", "", "TLS key `file`")
		tokens        = fs.String("tokens", "", "`file` of bearer tokens, one a line; requests must carry one")
		metricsTokens = fs.String("metrics-tokens", "", "`file` of bearer tokens for scraping /metrics, one a line; then /metrics takes these and not --tokens")
		compress      = fs.Bool("compress-responses", false, "gzip answers for clients that accept it (gzip requests are accepted either way)")
		shutdownDelay = fs.Duration("shutdown-delay", 0, "how long SIGTERM keeps serving while reporting not ready, for load balancers to move away; 0 turns it off (default 5s)")
		drain         = fs.Duration("drain-timeout", 0, "how long SIGTERM waits for in-flight requests once it stops accepting (default 10s)")
		writeTimeout  = fs.Duration("write-timeout", 0, "how long a write to a client that stopped reading may stall before its connection is closed (default 30s)")
		bodyTimeout   = fs.Duration("body-timeout", 0, fmt.Sprintf("how long a request's body may take to come after its headers; past it the request ends and gives back its slot (reflection streams last at most this long) (default %v)", server.DefaultBodyTimeout))
		logFormat     = fs.String("log-format", "", "text or json (default text)")
		allowUnmask   = fs.Bool("allow-unmask", false, "let Decode take apart the IDs of generators with mask= (it reveals the time, node and counts the mask hides)")
	)
	fs.Var(&gens, "gen", "a generator `NAME=SPEC`; repeat for more")
	var origins originFlags
	fs.Var(&origins, "cors-origin", "let browser pages from `ORIGIN` (https://app.example.com, https://*.example.com or *) call the service; repeat or separate with commas (default: none)")
	fs.Usage = func() {} // on a mistake, report prints the (redacted) error and points to --help
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, usageHead, strings.Join(idkit.Schemes(), ", "))
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return server.Config{}, "", err
		}
		return server.Config{}, "", usageError{err}
	}
	if fs.NArg() > 0 {
		return server.Config{}, "", usageError{fmt.Errorf("unexpected argument %q (generators go in --gen NAME=SPEC)", fs.Arg(0))}
	}
	var fc fileConfig
	if *configPath != "" {
		md, err := toml.DecodeFile(*configPath, &fc)
		if err != nil {
			return server.Config{}, "", usageError{fmt.Errorf("config %s: %w", *configPath, err)}
		}
		if und := md.Undecoded(); len(und) > 0 {
			return server.Config{}, "", usageError{fmt.Errorf("config %s: unknown key %q (known: %s)", *configPath, und[0].String(), fileKeys)}
		}
	}
	cfg := server.Config{Listen: fc.Listen, GRPCListen: fc.GRPCListen, MaxCount: fc.MaxCount, MaxStreams: fc.MaxStreams, MaxConnBytes: fc.MaxConnBytes,
		MaxConns: fc.MaxConns, MaxTotalStreams: fc.MaxTotal, MaxAddrStreams: fc.MaxAddr, MaxTotalBytes: fc.MaxTotalBytes, MaxOpenStreams: fc.MaxOpen, MaxOpenWatches: fc.MaxWatches, MaxOpenConns: fc.MaxOpenConns, TLSCert: fc.TLSCert, TLSKey: fc.TLSKey, AllowUnmask: fc.AllowUnmask,
		CORSOrigins: fc.CORSOrigins, CompressResponses: fc.Compress}
	names := make([]string, 0, len(fc.Generators))
	for n := range fc.Generators {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		cfg.Generators = append(cfg.Generators, server.Generator{Name: n, Spec: fc.Generators[n]})
	}
	cfg.Generators = append(cfg.Generators, gens...)
	for _, d := range []struct {
		key, val string
		dst      *time.Duration
		zero     bool // 0 is allowed: it turns the thing off
	}{
		{"shutdown_delay", fc.ShutdownDelay, &cfg.ShutdownDelay, true},
		{"drain_timeout", fc.DrainTimeout, &cfg.DrainTimeout, false},
		{"write_timeout", fc.WriteTimeout, &cfg.WriteTimeout, false},
		{"body_timeout", fc.BodyTimeout, &cfg.BodyTimeout, false},
	} {
		if d.val == "" {
			continue
		}
		v, err := time.ParseDuration(d.val)
		if err != nil || v < 0 || v == 0 && !d.zero {
			want := "a positive duration such as 10s"
			if d.zero {
				want = "0 (none) or a positive duration such as 5s"
			}
			return server.Config{}, "", usageError{fmt.Errorf("config %s: %s = %q: want %s", *configPath, d.key, d.val, want)}
		}
		*d.dst = v
	}
	grpcSet := fc.GRPCListen != "" // the file named it, possibly "off"
	tokensFile, metricsTokensFile, format := fc.TokensFile, fc.MetricsTokens, fc.LogFormat
	var badFlag error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			cfg.Listen = *listen
		case "grpc-listen":
			cfg.GRPCListen, grpcSet = *grpcListen, true
		case "max-count":
			cfg.MaxCount = *maxCount
		case "max-streams":
			cfg.MaxStreams = *maxStreams
		case "max-conn-bytes":
			cfg.MaxConnBytes = *maxConnBytes
		case "max-conns":
			cfg.MaxConns = *maxConns
		case "max-total-streams":
			cfg.MaxTotalStreams = *maxTotal
		case "max-addr-streams":
			cfg.MaxAddrStreams = *maxAddr
		case "max-total-bytes":
			cfg.MaxTotalBytes = *maxTotalBytes
		case "max-open-streams":
			cfg.MaxOpenStreams = *maxOpen
		case "max-open-watches":
			cfg.MaxOpenWatches = *maxWatches
		case "max-open-conns":
			cfg.MaxOpenConns = *maxOpenConns
		case "tls-cert":
			cfg.TLSCert = *tlsCert
		case "tls-key":
			cfg.TLSKey = *tlsKey
		case "tokens":
			tokensFile = *tokens
		case "metrics-tokens":
			metricsTokensFile = *metricsTokens
		case "compress-responses":
			cfg.CompressResponses = *compress
		case "cors-origin":
			cfg.CORSOrigins = origins // the command line's replace the file's
		case "shutdown-delay":
			cfg.ShutdownDelay = *shutdownDelay
		case "drain-timeout":
			cfg.DrainTimeout = *drain
		case "write-timeout":
			cfg.WriteTimeout = *writeTimeout
		case "body-timeout":
			cfg.BodyTimeout = *bodyTimeout
		case "log-format":
			format = *logFormat
		case "allow-unmask":
			cfg.AllowUnmask = *allowUnmask
		}
		switch {
		case (f.Name == "drain-timeout" || f.Name == "write-timeout" || f.Name == "body-timeout") && f.Value.(flag.Getter).Get().(time.Duration) <= 0:
			badFlag = fmt.Errorf("--%s %s: want a positive duration such as 10s", f.Name, f.Value)
		case f.Name == "shutdown-delay" && *shutdownDelay < 0:
			badFlag = fmt.Errorf("--%s %s: want 0 (none) or a positive duration such as 5s", f.Name, f.Value)
		}
	})
	if badFlag != nil {
		return server.Config{}, "", usageError{badFlag}
	}
	// server.Config reads 0 as "the default" and a negative delay as none; idkitd's
	// --shutdown-delay 0 means none.
	if cfg.ShutdownDelay == 0 && (fc.ShutdownDelay != "" || isSet(fs, "shutdown-delay")) {
		cfg.ShutdownDelay = -1
	}
	// gRPC's own port is on unless turned off: "off" (or an empty flag) means none.
	switch {
	case !grpcSet:
		cfg.GRPCListen = server.DefaultGRPCListen
	case strings.TrimSpace(cfg.GRPCListen) == "off":
		cfg.GRPCListen = ""
	}
	if format != "" && format != "text" && format != "json" {
		return server.Config{}, "", usageError{fmt.Errorf("log format %q: want text or json", format)}
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"max count", cfg.MaxCount}, {"max streams", cfg.MaxStreams}, {"max conn bytes", cfg.MaxConnBytes}, {"max conns", cfg.MaxConns},
		{"max total streams", cfg.MaxTotalStreams}, {"max addr streams", cfg.MaxAddrStreams}, {"max total bytes", cfg.MaxTotalBytes}, {"max open streams", cfg.MaxOpenStreams}, {"max open watches", cfg.MaxOpenWatches}, {"max open conns", cfg.MaxOpenConns}} {
		if v.n < 0 {
			return server.Config{}, "", usageError{fmt.Errorf("%s %d: want a positive number", v.name, v.n)}
		}
	}
	if len(cfg.Generators) == 0 {
		return server.Config{}, "", usageError{errors.New("no generators: give --gen NAME=SPEC (e.g. --gen orders=snowflake:layout=twitter,node=1) or a config file with [generators]")}
	}
	if tokensFile != "" {
		t, err := server.ReadTokens(tokensFile)
		if err != nil {
			return server.Config{}, "", err
		}
		cfg.Tokens = t
	}
	if metricsTokensFile != "" {
		t, err := server.ReadTokens(metricsTokensFile)
		if err != nil {
			return server.Config{}, "", err
		}
		cfg.MetricsTokens = t
	}
	return cfg, format, nil
}

// isSet reports whether the command line set the flag.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
