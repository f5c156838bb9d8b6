// Command idkitd serves idkit's ID generators to clients in any language: gRPC (and gRPC-Web)
// and the Connect protocol (JSON or binary) on one port, plus GET /v1/next/{generator}?n=N for
// shells, /healthz, /readyz, the gRPC health service and Prometheus metrics at /metrics.
// Connections from gRPC libraries are answered by grpc-go's own server, the rest by net/http
// with Connect (see docs/service.md).
//
//	idkitd --gen orders=snowflake:layout=twitter,node=etcd://127.0.0.1:2379/idkit/orders \
//	       --gen sessions=ulid --listen 127.0.0.1:7070
//	idkitd --config idkitd.toml
//
// A config file is TOML:
//
//	listen = "127.0.0.1:7070"
//	max_count = 10000
//	tls_cert = "/etc/idkitd/cert.pem"   # with tls_key: serve TLS
//	tls_key = "/etc/idkitd/key.pem"
//	tokens_file = "/etc/idkitd/tokens"  # bearer tokens, one a line
//	drain_timeout = "10s"
//	[generators]
//	orders = "snowflake:layout=twitter,node=etcd://127.0.0.1:2379/idkit/orders"
//	sessions = "ulid"
//
// Flags override the file; --gen adds generators to the file's. SIGTERM or Ctrl-C drains
// in-flight requests, then releases node leases. Every spec idkit.New accepts works, lease
// stores included (etcd://, postgres://).
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
	"github.com/idkit/idkit/schemes/remote/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stderr, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "idkitd: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line or config file; main exits with status 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// fileConfig is the TOML config file.
type fileConfig struct {
	Listen       string            `toml:"listen"`
	MaxCount     int               `toml:"max_count"`
	TLSCert      string            `toml:"tls_cert"`
	TLSKey       string            `toml:"tls_key"`
	TokensFile   string            `toml:"tokens_file"`
	DrainTimeout string            `toml:"drain_timeout"`
	LogFormat    string            `toml:"log_format"`
	Generators   map[string]string `toml:"generators"`
}

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
	return srv.Run(ctx)
}

// parseArgs reads the flags and the config file they name.
func parseArgs(stderr io.Writer, args []string) (server.Config, string, error) {
	fs := flag.NewFlagSet("idkitd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var gens genFlags
	var (
		configPath = fs.String("config", "", "TOML config `file` (flags override it)")
		listen     = fs.String("listen", "", "`host:port` to serve on (default "+server.DefaultListen+", loopback only)")
		maxCount   = fs.Int("max-count", 0, fmt.Sprintf("most IDs one request may ask for (default %d)", server.DefaultMaxCount))
		tlsCert    = fs.String("tls-cert", "", "TLS certificate `file` (with --tls-key)")
		tlsKey     = fs.String("tls-key", "", "TLS key `file`")
		tokens     = fs.String("tokens", "", "`file` of bearer tokens, one a line; requests must carry one")
		drain      = fs.Duration("drain-timeout", 0, "how long SIGTERM waits for in-flight requests (default 10s)")
		logFormat  = fs.String("log-format", "", "text or json (default text)")
	)
	fs.Var(&gens, "gen", "a generator `NAME=SPEC`; repeat for more")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: idkitd [--config FILE] --gen NAME=SPEC... [flags]\n\nServes idkit ID generators over gRPC, Connect/JSON and plain HTTP on one port.\nSchemes: %s.\n\nFlags:\n", strings.Join(idkit.Schemes(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
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
			return server.Config{}, "", usageError{fmt.Errorf("config %s: unknown key %q (known: listen, max_count, tls_cert, tls_key, tokens_file, drain_timeout, log_format, [generators])", *configPath, und[0].String())}
		}
	}
	cfg := server.Config{Listen: fc.Listen, MaxCount: fc.MaxCount, TLSCert: fc.TLSCert, TLSKey: fc.TLSKey}
	names := make([]string, 0, len(fc.Generators))
	for n := range fc.Generators {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		cfg.Generators = append(cfg.Generators, server.Generator{Name: n, Spec: fc.Generators[n]})
	}
	cfg.Generators = append(cfg.Generators, gens...)
	if fc.DrainTimeout != "" {
		d, err := time.ParseDuration(fc.DrainTimeout)
		if err != nil || d <= 0 {
			return server.Config{}, "", usageError{fmt.Errorf("config %s: drain_timeout = %q: want a positive duration such as 10s", *configPath, fc.DrainTimeout)}
		}
		cfg.DrainTimeout = d
	}
	tokensFile, format := fc.TokensFile, fc.LogFormat
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			cfg.Listen = *listen
		case "max-count":
			cfg.MaxCount = *maxCount
		case "tls-cert":
			cfg.TLSCert = *tlsCert
		case "tls-key":
			cfg.TLSKey = *tlsKey
		case "tokens":
			tokensFile = *tokens
		case "drain-timeout":
			cfg.DrainTimeout = *drain
		case "log-format":
			format = *logFormat
		}
	})
	if format != "" && format != "text" && format != "json" {
		return server.Config{}, "", usageError{fmt.Errorf("log format %q: want text or json", format)}
	}
	if cfg.MaxCount < 0 {
		return server.Config{}, "", usageError{fmt.Errorf("max count %d: want a positive number", cfg.MaxCount)}
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
	return cfg, format, nil
}
