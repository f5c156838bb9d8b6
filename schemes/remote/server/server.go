// Package server is the idkit ID service as a library: named generators (any spec idkit.New
// accepts) served over gRPC, gRPC-Web and the Connect protocol (binary or JSON, from
// connectrpc.com/connect), plain HTTP for shells (GET /v1/next/{generator}?n=N answers text
// lines, GET /v1/decode/{generator}/{id} and GET /v1/bounds/{generator}?from=…&to=… the Decode
// and Bounds RPCs as JSON), the gRPC health and reflection services, /healthz, /readyz and
// Prometheus metrics at /metrics; CORS for browsers when Config.CORSOrigins allows them.
//
// A generator whose spec sets prefix= or mask= answers its IDs' text in the public form
// (idkit.FormatID: "user_01h455vb4pex5vsknk084sn02q", masked), and Decode reads that form;
// Decode of a masked generator is refused unless Config.AllowUnmask. Bounds are always in the
// stored form, the value a database column holds.
//
// Config.Listen serves all of it with net/http and Connect, on every connection whatever came
// first on it, so proxies that pool connections and mix requests (Envoy, nginx grpc_pass)
// work. Config.GRPCListen, when set, adds a second listener served by google.golang.org/grpc's
// own transport, for gRPC clients only: it costs less CPU per request and has a far shorter
// latency tail than net/http's HTTP/2 server (docs/service/report.md has the figures). Both
// share the generators, tokens, limits, metrics, health and shutdown.
//
// cmd/idkitd is this package behind flags; idbench load --spawn and the tests start it in
// process with Start, or mount Handler on an httptest server.
//
// A Server owns its generators: Run and Serve close them (releasing node leases) after the
// listeners have drained, and Close does it for a Server that was never run.
package server

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	reflectv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
)

// Defaults for the zero fields of Config.
const (
	DefaultListen            = "127.0.0.1:7070"
	DefaultMaxCount          = 10_000
	DefaultMaxRequestBytes   = 64 << 10
	DefaultMaxStreams        = 100
	DefaultMaxConnBytes      = 16 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultWriteTimeout      = 30 * time.Second
	DefaultBodyTimeout       = 10 * time.Second
	DefaultShutdownDelay     = 5 * time.Second
	DefaultDrainTimeout      = 10 * time.Second
	DefaultMaxTotalStreams   = 4096
	DefaultMaxTotalBytes     = 64 << 20
	DefaultMaxOpenStreams    = 512
	DefaultMaxOpenWatches    = 128
	DefaultMaxOpenConns      = 64
)

// DefaultMaxConns is MaxConns's default: half the files this process may open (RLIMIT_NOFILE),
// the rest left to the generators' stores, the listeners and the log, and at most 1024, enough
// for a client that opens a connection per parallel request (Node's fetch does) and few enough
// that idle connections hold little (docs/service.md has the figures).
func DefaultMaxConns() int { return maxConnsFor(fdLimit()) }

// maxConnsFor is DefaultMaxConns for a limit of fds open files (0: unknown).
func maxConnsFor(fds uint64) int {
	const ceiling = 1024
	if fds == 0 {
		return ceiling
	}
	return int(max(min(fds/2, ceiling), 1))
}

// ErrConfig reports a Config that New cannot use.
var ErrConfig = errors.New("server: bad config")

// Generator is one named generator of the service.
type Generator struct {
	// Name is what requests call it: letters, digits, '_', '-' and '.'.
	Name string
	// Spec is any spec idkit.NewContext accepts, such as
	// "snowflake:layout=twitter,node=etcd://127.0.0.1:2379/idkit/orders".
	Spec string
}

// ParseGenerator reads NAME=SPEC, the form of idkitd's --gen flag; blanks around both are
// dropped. It checks the form only: New checks the name and the spec.
func ParseGenerator(s string) (Generator, error) {
	name, spec, ok := strings.Cut(s, "=")
	name, spec = strings.TrimSpace(name), strings.TrimSpace(spec)
	if !ok || name == "" || spec == "" {
		return Generator{}, fmt.Errorf("%w: generator %q: want NAME=SPEC, such as orders=snowflake:layout=twitter,node=1", ErrConfig, idkit.Redact(s))
	}
	return Generator{Name: name, Spec: spec}, nil
}

// Config says what a Server serves and how. Zero fields take the defaults above.
type Config struct {
	// Listen is the address Run listens on for every protocol; the default is loopback only.
	Listen string
	// GRPCListen, when set, is a second address, served by grpc-go's own transport, for gRPC
	// clients alone: cheaper per request than Listen's net/http. Empty means none; idkitd sets
	// DefaultGRPCListen unless told otherwise.
	GRPCListen string
	// Generators are the named generators; at least one is required.
	Generators []Generator
	// MaxCount bounds the IDs one request may ask for.
	MaxCount int
	// MaxRequestBytes bounds a request body (and a message, once decompressed).
	MaxRequestBytes int
	// MaxStreams bounds the requests one HTTP/2 connection may have in flight.
	MaxStreams int
	// MaxConnBytes bounds the bytes of answers one connection may have waiting to be sent;
	// its further requests wait until the client reads (see conn.go).
	MaxConnBytes int
	// MaxConns bounds the connections open at a time on both listeners together; one more is
	// closed as soon as it is accepted. The default is DefaultMaxConns of the process's limit
	// on open files.
	MaxConns int
	// MaxTotalStreams bounds the requests in flight on all connections together, and
	// MaxTotalBytes their answers not yet sent (each connection's MaxConnBytes draws on it);
	// a request over MaxTotalStreams is refused with UNAVAILABLE (HTTP 503), a Next answer
	// over MaxTotalBytes waits. See limits.go.
	MaxTotalStreams, MaxTotalBytes int
	// MaxAddrStreams bounds the requests in flight from one client address (an IPv4 address,
	// an IPv6 /64) on all its connections together, so that one client cannot hold all of
	// MaxTotalStreams; one more is refused as one over MaxTotalStreams is. The default is a
	// quarter of MaxTotalStreams. Behind a proxy that is the only client address, raise it to
	// MaxTotalStreams.
	MaxAddrStreams int
	// MaxOpenStreams bounds the requests in flight from callers without a token on a server
	// with Tokens (the open health, reflection and probe paths, and the refusals), and
	// MaxOpenWatches those of them that may stay open (health Watch, reflection).
	// MaxOpenConns bounds the connections on which no token has been shown yet (counted from
	// their accept): one more closes the oldest of them.
	MaxOpenStreams, MaxOpenWatches, MaxOpenConns int
	// TLSCert and TLSKey, both set, make Run and Serve speak TLS (HTTP/2 by ALPN) on both
	// listeners; otherwise they speak cleartext HTTP/1.1 and HTTP/2 (h2c).
	TLSCert, TLSKey string
	// AllowUnmask lets Decode take apart the IDs of generators whose spec masks them (mask=):
	// off by default, since decoding a masked ID reveals the time, node and counts the mask
	// hides from the clients that see its public text.
	AllowUnmask bool
	// Tokens, when not empty, are the bearer tokens a request must carry in its
	// Authorization header. /healthz, /readyz and the gRPC health service stay open for
	// probes (saying why the server is not ready only to a caller with a token), and so does
	// gRPC reflection, which only describes the public protos, so that grpcurl and ghz can
	// resolve methods without one.
	Tokens []string
	// MetricsTokens, when not empty, are the bearer tokens a scrape of /metrics must carry
	// instead of one of Tokens, so that a scraper's credential cannot issue IDs; otherwise
	// /metrics takes Tokens like every other path.
	MetricsTokens []string
	// ReadHeaderTimeout bounds reading a request's headers (and the TLS handshake),
	// IdleTimeout an idle connection, and WriteTimeout a write to a connection that makes no
	// progress (a client that stopped reading), after which the connection is closed.
	ReadHeaderTimeout, IdleTimeout, WriteTimeout time.Duration
	// BodyTimeout bounds the time from a request's headers until its body has all come: past
	// it, reading the body fails and the request ends, which gives back its slot under the
	// stream bounds. Bidirectional streams (reflection) send their requests as they go and so
	// last at most this long; reflection clients open another.
	BodyTimeout time.Duration
	// ShutdownDelay is how long Serve goes on serving after its context ends while it reports
	// not ready (/readyz 503, gRPC health NOT_SERVING), so that load balancers and clients
	// that check health move away before it stops accepting; a negative value means none.
	ShutdownDelay time.Duration
	// DrainTimeout bounds the wait for in-flight requests once it stops accepting.
	DrainTimeout time.Duration
	// CORSOrigins are the origins (https://app.example.com, https://*.example.com, or "*")
	// whose pages may call the service from a browser with gRPC-Web, Connect or fetch(); the
	// server answers their CORS preflights. Empty, the default, allows none.
	CORSOrigins []string
	// CompressResponses compresses answers with gzip for clients that accept it (gRPC's
	// grpc-accept-encoding, Connect's Accept-Encoding). Off, answers go uncompressed whatever
	// the client advertises; compressed requests are accepted either way.
	CompressResponses bool
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Server is the ID service. Its methods are safe for concurrent use.
type Server struct {
	cfg      Config
	log      *slog.Logger
	gens     map[string]*generator
	order    []*generator
	reg      *prometheus.Registry
	m        *metrics
	handler  http.Handler
	lim      *limits
	draining atomic.Bool
	closeMu  sync.Mutex
	closed   atomic.Bool

	stopWatch, watchDone chan struct{} // the fence watcher

	readyMu      sync.Mutex
	readyChanged chan struct{} // closed when readiness may have changed; nil until asked for
	endWatches   chan struct{} // closed when Serve stops accepting: health Watch streams end
	endOnce      sync.Once
}

// New is NewContext with a background context.
func New(cfg Config) (*Server, error) { return NewContext(context.Background(), cfg) }

// NewContext builds a Server and its generators; ctx bounds the network work the specs ask for,
// such as claiming node leases. Errors wrap ErrConfig for a bad Config, and otherwise come from
// idkit.NewContext (wrapping idkit.ErrSpec for a bad spec); generators already built are closed
// again.
func NewContext(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, gens: map[string]*generator{}, reg: prometheus.NewRegistry(), endWatches: make(chan struct{})}
	s.m = newMetrics(s.reg)
	s.lim = newLimits(&cfg, s.reg, cfg.Logger)
	for _, gc := range cfg.Generators {
		if !validName(gc.Name) {
			s.Close()
			return nil, fmt.Errorf("%w: generator name %q: want letters, digits, '_', '-' and '.' (not \".\" or \"..\")", ErrConfig, gc.Name)
		}
		if _, dup := s.gens[gc.Name]; dup {
			s.Close()
			return nil, fmt.Errorf("%w: generator %q is configured twice", ErrConfig, gc.Name)
		}
		sch, err := idkit.NewContext(ctx, gc.Spec)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("server: generator %q: %w", gc.Name, err)
		}
		g := newGenerator(gc.Name, gc.Spec, sch, s.m)
		s.gens[gc.Name] = g
		s.order = append(s.order, g)
		s.log.Info("generator ready", "generator", gc.Name, "spec", idkit.Redact(gc.Spec), "scheme", sch.Name())
	}
	s.m.watch(s)
	s.handler = s.routes()
	s.stopWatch = make(chan struct{})
	s.watchDone = make(chan struct{})
	go s.watchFences(fenceCheckInterval)
	return s, nil
}

// fenceCheckInterval is how often the server looks at its generators' fences to log changes.
const fenceCheckInterval = 250 * time.Millisecond

// watchFences logs when a generator loses the right to issue IDs (its node lease), why, while
// the reason changes (at most every fenceLogInterval: a scheme retrying a claim says so), and
// when it gets it back, with the scheme it now is (a new node after a lost lease), until Close.
func (s *Server) watchFences(every time.Duration) {
	defer close(s.watchDone)
	type state struct {
		fenced bool
		msg    string
		logged time.Time
	}
	st := make([]state, len(s.order))
	dw := newDurabilityWatch(s)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopWatch:
			return
		case <-t.C:
		}
		dw.check(false)
		for i, g := range s.order {
			err := g.err()
			switch {
			case err != nil && !st[i].fenced:
				st[i].msg, st[i].logged = idkit.Redact(err.Error()), time.Now()
				s.log.Warn("generator fenced: not issuing IDs, not ready", "generator", g.name, "err", st[i].msg)
			case err != nil && time.Since(st[i].logged) >= fenceLogInterval:
				if msg := idkit.Redact(err.Error()); msg != st[i].msg {
					st[i].msg, st[i].logged = msg, time.Now()
					s.log.Warn("generator still fenced: not issuing IDs, not ready", "generator", g.name, "err", msg)
				}
			case err == nil && st[i].fenced:
				s.log.Info("generator holds its node again", "generator", g.name, "scheme", idkit.Redact(g.s.Name()))
			}
			if st[i].fenced != (err != nil) {
				s.notifyReady() // health Watch streams send the change
			}
			st[i].fenced = err != nil
		}
	}
}

// fenceLogInterval bounds how often a fenced generator's changing reason is logged.
// DefaultGRPCListen is idkitd's default for Config.GRPCListen, the port beside DefaultListen:
// gRPC clients reach grpc-go's own transport there unless told otherwise. Config itself reads an
// empty GRPCListen as "no second port".
const DefaultGRPCListen = "127.0.0.1:7071"

const fenceLogInterval = 10 * time.Second

// fill checks a Config and applies the defaults.
func (c *Config) fill() error {
	if len(c.Generators) == 0 {
		return fmt.Errorf("%w: no generators (want at least one NAME=SPEC)", ErrConfig)
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxCount < 0 || c.MaxRequestBytes < 0 || c.MaxStreams < 0 || c.MaxConnBytes < 0 || c.MaxConns < 0 ||
		c.MaxTotalStreams < 0 || c.MaxTotalBytes < 0 || c.MaxOpenStreams < 0 || c.MaxOpenWatches < 0 || c.MaxOpenConns < 0 ||
		c.MaxAddrStreams < 0 || c.ReadHeaderTimeout < 0 || c.IdleTimeout < 0 || c.WriteTimeout < 0 || c.DrainTimeout < 0 ||
		c.BodyTimeout < 0 {
		return fmt.Errorf("%w: negative limit or timeout", ErrConfig)
	}
	if c.MaxStreams > math.MaxUint32 {
		return fmt.Errorf("%w: MaxStreams %d: want at most %d", ErrConfig, c.MaxStreams, uint32(math.MaxUint32))
	}
	if c.MaxCount == 0 {
		c.MaxCount = DefaultMaxCount
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.MaxConnBytes == 0 {
		c.MaxConnBytes = DefaultMaxConnBytes
	}
	for _, d := range []struct {
		v   *int
		def int
	}{
		{&c.MaxConns, DefaultMaxConns()}, {&c.MaxTotalStreams, DefaultMaxTotalStreams}, {&c.MaxTotalBytes, DefaultMaxTotalBytes},
		{&c.MaxOpenStreams, DefaultMaxOpenStreams}, {&c.MaxOpenWatches, DefaultMaxOpenWatches}, {&c.MaxOpenConns, DefaultMaxOpenConns},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.MaxAddrStreams == 0 {
		c.MaxAddrStreams = max(c.MaxTotalStreams/4, 1)
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	switch {
	case c.ShutdownDelay == 0:
		c.ShutdownDelay = DefaultShutdownDelay
	case c.ShutdownDelay < 0:
		c.ShutdownDelay = 0
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("%w: TLS needs both a certificate and a key", ErrConfig)
	}
	for i, t := range c.Tokens {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("%w: token %d is empty", ErrConfig, i+1)
		}
	}
	for _, o := range c.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			return err
		}
	}
	for i, t := range c.MetricsTokens {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("%w: metrics token %d is empty", ErrConfig, i+1)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// validName reports whether s can name a generator: letters, digits, '_', '-' and '.', but not
// "." or "..", which a URL path cannot carry (GET /v1/next/.. is cleaned to another path).
func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return s != "" && s != "." && s != ".." && len(s) <= 128
}

// Handler returns the service's HTTP handler, for tests and for embedding in another server.
// It serves every protocol, gRPC included (through Connect), but HTTP/2 requests only when the
// http.Server in front of it does (h2c or TLS); gRPC needs HTTP/2.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the server's own Prometheus registry (never the global one), which /metrics
// serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Run listens on Config.Listen (and Config.GRPCListen) and serves until ctx ends, then shuts
// down; see Serve.
func (s *Server) Run(ctx context.Context) error {
	_, wait, err := s.Start(ctx)
	if err != nil {
		return err
	}
	return wait()
}

// Addrs are the addresses a started Server listens on.
type Addrs struct {
	// HTTP is Config.Listen's address: every protocol.
	HTTP string
	// GRPC is Config.GRPCListen's address, served by grpc-go; empty without one.
	GRPC string
}

// Start listens on Config.Listen and, when set, Config.GRPCListen (port 0 picks a free one) and
// serves in the background until ctx ends, then shuts down as Serve does. It returns the
// addresses it listens on and a function that waits for the server to stop and returns Serve's
// result (the same result to every caller). When it cannot listen it closes the server and
// returns the error.
func (s *Server) Start(ctx context.Context) (Addrs, func() error, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Listen)
	if err != nil {
		s.Close()
		return Addrs{}, nil, fmt.Errorf("server: %w", err)
	}
	addrs := Addrs{HTTP: ln.Addr().String()}
	var gln net.Listener
	if s.cfg.GRPCListen != "" {
		if gln, err = lc.Listen(ctx, "tcp", s.cfg.GRPCListen); err != nil {
			ln.Close()
			s.Close()
			return Addrs{}, nil, fmt.Errorf("server: gRPC listener: %w", err)
		}
		addrs.GRPC = gln.Addr().String()
	}
	done := make(chan struct{})
	var serveErr error
	go func() {
		serveErr = s.Serve(ctx, ln, gln)
		close(done)
	}()
	return addrs, func() error { <-done; return serveErr }, nil
}

// Serve serves every protocol on ln with net/http and Connect, and gRPC on grpcLn (nil for
// none) with grpc-go's own transport, until ctx ends. Then it shuts down as rolling updates
// expect: it reports not ready (/readyz 503, gRPC health NOT_SERVING on both listeners) and
// goes on serving for Config.ShutdownDelay, so that load balancers and health-checking clients
// move away; then it stops accepting, tells clients on open HTTP/2 connections to go
// (GOAWAY), waits up to Config.DrainTimeout for in-flight requests, and closes the generators
// (releasing their leases). It returns nil after a clean drain, and otherwise the error that
// ended it, naming the listener that did not drain in time.
func (s *Server) Serve(ctx context.Context, ln, grpcLn net.Listener) error {
	var tlsCfg *tls.Config
	if s.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			ln.Close()
			if grpcLn != nil {
				grpcLn.Close()
			}
			s.Close()
			return fmt.Errorf("server: TLS: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	hs := s.httpServer(tlsCfg)
	var gs *grpc.Server
	if grpcLn != nil {
		gs = s.grpcServer(tlsCfg)
	}
	errc := make(chan error, 2)
	stopStalls := make(chan struct{})
	defer close(stopStalls)
	go s.lim.watchStalls(stopStalls)
	go func() {
		l := stallListener{Listener: ln, timeout: s.cfg.WriteTimeout, l: s.lim, connBytes: int64(s.cfg.MaxConnBytes)}
		var err error
		if tlsCfg != nil {
			err = hs.ServeTLS(l, "", "")
		} else {
			err = hs.Serve(l)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("server: HTTP: %w", err)
		}
	}()
	if gs != nil {
		go func() {
			if err := gs.Serve(stallListener{Listener: grpcLn, timeout: s.cfg.WriteTimeout, l: s.lim, connBytes: int64(s.cfg.MaxConnBytes)}); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				errc <- fmt.Errorf("server: gRPC: %w", err)
			}
		}()
		s.log.Info("serving", "addr", ln.Addr().String(), "grpc_addr", grpcLn.Addr().String(), "tls", tlsCfg != nil, "generators", len(s.order))
	} else {
		s.log.Info("serving", "addr", ln.Addr().String(), "tls", tlsCfg != nil, "generators", len(s.order))
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	s.draining.Store(true)
	s.notifyReady()
	if serveErr == nil && s.cfg.ShutdownDelay > 0 {
		s.log.Info("shutting down: not ready, still serving", "for", s.cfg.ShutdownDelay.String())
		t := time.NewTimer(s.cfg.ShutdownDelay)
		select {
		case <-t.C:
		case serveErr = <-errc:
			t.Stop()
		}
	}
	s.endOnce.Do(func() { close(s.endWatches) })
	s.log.Info("draining", "timeout", s.cfg.DrainTimeout.String())
	if err := s.drain(hs, gs); err != nil && serveErr == nil {
		serveErr = err
	}
	if err := s.Close(); err != nil && serveErr == nil {
		serveErr = err
	}
	s.log.Info("stopped")
	return serveErr
}

// httpServer is the net/http server of Config.Listen.
func (s *Server) httpServer(tlsCfg *tls.Config) *http.Server {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		// HTTP/2: each stream's body must have come within it (a timer per stream; its reads
		// fail past it); HTTP/1.1: the whole request, and admit lifts it for the long-lived
		// streams, whose context it would otherwise end.
		ReadTimeout:    s.cfg.BodyTimeout,
		IdleTimeout:    s.cfg.IdleTimeout,
		MaxHeaderBytes: s.cfg.MaxRequestBytes,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		TLSConfig:      tlsCfg.Clone(), // ServeTLS adds its protocols to it
		Protocols:      new(http.Protocols),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          s.cfg.MaxStreams,
			MaxReceiveBufferPerStream:     recvWindow,
			MaxReceiveBufferPerConnection: recvConnWindow,
		},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if st := stateOf(c); st != nil {
				return context.WithValue(ctx, stateKey{}, st)
			}
			return ctx
		},
	}
	hs.Protocols.SetHTTP1(true)
	if tlsCfg != nil {
		hs.Protocols.SetHTTP2(true)
	} else {
		hs.Protocols.SetUnencryptedHTTP2(true)
	}
	return hs
}

// drain stops accepting on both listeners and waits up to Config.DrainTimeout for their
// in-flight requests; past it, it closes what is left. The error names each listener that
// had to be cut off, and only those.
func (s *Server) drain(hs *http.Server, gs *grpc.Server) error {
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	var httpErr, grpcErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hs.Shutdown(dctx); err != nil {
			httpErr = fmt.Errorf("server: draining HTTP: %w", err)
			hs.Close()
		}
	})
	if gs != nil {
		wg.Go(func() {
			done := make(chan struct{})
			go func() { gs.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-dctx.Done():
				select {
				case <-done: // drained as the deadline came: nothing was cut off
				default:
					grpcErr = fmt.Errorf("server: draining gRPC: %w", dctx.Err())
					// Stop closes the connections but then waits for every handler to return,
					// as GracefulStop does; one stuck in its generator is not waited for here,
					// as net/http's Close does not wait either.
					go gs.Stop()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(httpErr, grpcErr)
}

// Close closes the generators, releasing what they hold (node leases); the server answers
// UNAVAILABLE from then on. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed.Load() {
		return nil
	}
	s.closed.Store(true)
	s.draining.Store(true)
	s.notifyReady()
	s.endOnce.Do(func() { close(s.endWatches) }) // health Watch streams of an embedded Handler too
	if s.stopWatch != nil {
		close(s.stopWatch)
		<-s.watchDone
	}
	var errs []error
	for _, g := range s.order {
		if err := g.close(); err != nil {
			errs = append(errs, fmt.Errorf("server: closing generator %q: %w", g.name, err))
		} else {
			s.log.Info("generator closed", "generator", g.name)
		}
	}
	return errors.Join(errs...)
}

// ready returns nil when the server can issue IDs from every generator, and otherwise why not.
func (s *Server) ready() error {
	if s.draining.Load() {
		return errors.New("shutting down")
	}
	for _, g := range s.order {
		if err := g.err(); err != nil {
			return fmt.Errorf("generator %q: %w", g.name, err)
		}
	}
	return nil
}

// readyFor is ready for one generator: nil while the server is up and g can issue IDs.
func (s *Server) readyFor(g *generator) error {
	if s.draining.Load() {
		return errors.New("shutting down")
	}
	if err := g.err(); err != nil {
		return fmt.Errorf("generator %q: %w", g.name, err)
	}
	return nil
}

// readyWait returns a channel that is closed when readiness may have changed: the server began
// shutting down, or a generator lost or regained its node.
func (s *Server) readyWait() <-chan struct{} {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if s.readyChanged == nil {
		s.readyChanged = make(chan struct{})
	}
	return s.readyChanged
}

// notifyReady wakes the readyWait channels.
func (s *Server) notifyReady() {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if s.readyChanged != nil {
		close(s.readyChanged)
		s.readyChanged = nil
	}
}

// routes builds the handler: the Connect service, gRPC health, the plain endpoints.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// Requests may come gzipped (Connect's default compressors); answers go uncompressed unless
	// Config.CompressResponses says otherwise, since compressing a batch of IDs costs more CPU
	// than the bytes it saves on the networks a service like this runs on (it tripled the cost
	// of a batch of 1,000), and most clients advertise gzip on every call.
	common := append(codecOptions(), connect.WithReadMaxBytes(s.cfg.MaxRequestBytes))
	if !s.cfg.CompressResponses {
		common = append(common, connect.WithCompressMinBytes(math.MaxInt))
	}
	opts := append(slices.Clip(common),
		connect.WithInterceptors(s.m.interceptor()), // times each RPC and redacts its error
	)
	// Each RPC at its own path, so that an unknown method falls through to notFound.
	_, h := idkitv1connect.NewIDServiceHandler(&service{s: s}, opts...)
	for _, p := range idServiceProcedures() {
		mux.Handle(p, h)
	}
	for path, h := range newHealthHandlers(s, common...) {
		mux.Handle(path, h)
	}
	for path, h := range newReflectHandlers(common...) {
		mux.Handle(path, h)
	}
	mux.HandleFunc("/", s.notFound)
	for _, p := range []string{"/v1/next/{generator}", "/v1/decode/{generator}/{id}", "/v1/bounds/{generator}", "/healthz", "/readyz", "/metrics"} {
		mux.HandleFunc(p, getOnly) // any other method: 405, not notFound's 404
	}
	mux.HandleFunc("GET /v1/next/{generator}", s.httpNext)
	mux.HandleFunc("GET /v1/decode/{generator}/{id}", s.httpDecode)
	mux.HandleFunc("GET /v1/bounds/{generator}", s.httpBounds)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { textReply(w, http.StatusOK, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.ready(); err != nil {
			if !s.mayKnow(r.Header.Get("Authorization")) {
				textReply(w, http.StatusServiceUnavailable, "not ready (the reason is in the log, and told to callers with a token)")
				return
			}
			readyReply(w, http.StatusServiceUnavailable, "not ready: "+idkit.Redact(err.Error()), s.durabilityLines())
			return
		}
		if !s.mayKnow(r.Header.Get("Authorization")) {
			textReply(w, http.StatusOK, "ready")
			return
		}
		readyReply(w, http.StatusOK, "ready", s.durabilityLines())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg}))
	a := admission{s: s, open: openPaths,
		limit: int64(s.cfg.MaxRequestBytes), tooLarge: fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxRequestBytes)}
	return s.withCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// This frame stays small, and the checks run in a call of their own: everything a
		// request does below here grows the handler goroutine's stack, and growing it costs.
		w, r, f, ok := a.admit(w, r)
		if f == nil {
			return
		}
		defer f.finish(r) // the answer has been written (or the stream is gone)
		if !ok {
			return
		}
		if r.ProtoMajor >= 2 {
			// A goroutine per request: see stack.go (HTTP/1.1 reuses its connection's). Only
			// once admitted: the streams a flood makes net/http start, and the bounds refuse,
			// keep their small stacks.
			growStack(r.ProtoMajor)
		}
		if name, ok := s.plainNextPath(r); ok {
			s.nextOf(w, r, name) // the mux would route it there, with more work
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

// plainNextPath returns the generator's name when r is GET (or HEAD) /v1/next/NAME for a
// generator the server has, with a path the mux would not clean, redirect or unescape.
func (s *Server) plainNextPath(r *http.Request) (string, bool) {
	name, ok := strings.CutPrefix(r.URL.Path, "/v1/next/")
	if !ok || r.Method != http.MethodGet && r.Method != http.MethodHead || r.URL.RawPath != "" {
		return "", false
	}
	_, ok = s.gens[name] // names hold no '/' and are not "." or ".."
	return name, ok
}

// openPaths are served without a token on a server with tokens: the probes (/healthz, /readyz,
// the gRPC health service) and gRPC reflection, which tells only what idkit.proto and the
// public health and reflection protos say (no generator, no state), and without which grpcurl
// and ghz cannot resolve even the open health methods (reflect.go).
var openPaths = map[string]bool{
	"/healthz": true, "/readyz": true, healthPath + "Check": true, healthPath + "Watch": true, healthPath + "List": true,
	reflectv1.ServerReflection_ServerReflectionInfo_FullMethodName:      true,
	reflectv1alpha.ServerReflection_ServerReflectionInfo_FullMethodName: true,
}

// admission is what the handler checks before a request reaches the mux.
type admission struct {
	s        *Server
	open     map[string]bool // paths served without a token
	limit    int64
	tooLarge string
}

// inFlight is what one net/http request holds until its answer has been written: its slots
// under the server-wide bounds, its answer's place among the connection's pending ones, and for
// Next the bytes it reserved.
type inFlight struct {
	t  ticket
	tw trackWriter
	h  held
}

// finish gives back what the request holds once its answer has been handed to the connection.
// HTTP/1.1 handles one request at a time, and stallConn bounds its last write: that is now.
// On HTTP/2, net/http writes the rest of an answer after the handler returns, and a stream the
// client gives no window waits there: the request keeps what it holds, its answer counted as
// pending (watchStalls closes a connection it stays on), until the stream closes, which ends
// the stream's context (its last frame was written, or the stream or connection is gone).
// Waiting for that instead of flushing here lets net/http send a unary answer's headers, data
// and end of stream in one write (docs/bench/http-profile.txt).
func (f *inFlight) finish(r *http.Request) {
	if f.tw.on && r.ProtoMajor >= 2 {
		context.AfterFunc(r.Context(), f.written)
		return
	}
	f.written()
}

// written gives back what the request held.
func (f *inFlight) written() {
	f.tw.end()
	if f.h.b != nil {
		f.h.release()
	}
	f.t.release()
}

// admit answers a request the service refuses (the server full, a query string it cannot read
// whole, a body over the limit, a missing token) and reports false; otherwise it returns the
// writer and request to serve. Unless the server was full, it also returns what the request
// holds, which the handler gives back once the answer is written.
//
//go:noinline
func (a *admission) admit(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, *inFlight, bool) {
	// Nothing the service answers may be stored: a cache in front of it would hand the same
	// IDs to two callers.
	w.Header()["Cache-Control"] = noStore
	toks := a.s.cfg.Tokens
	if r.URL.Path == "/metrics" && len(a.s.cfg.MetricsTokens) > 0 {
		toks = a.s.cfg.MetricsTokens
	}
	authed := len(toks) == 0 || tokenOK(r.Header.Get("Authorization"), toks)
	open := len(a.s.cfg.Tokens) > 0 && !authed // counted apart from the token holders
	st := httpState(r.Context())
	if st != nil && st.gone.Load() {
		return w, r, nil, false // closed by a bound while its requests queued
	}
	if authed {
		a.s.lim.proven(st)
	}
	f := &inFlight{t: ticket{l: a.s.lim}}
	long := longStream(r.URL.Path)
	if !a.s.lim.take(&f.t, st, !open, open && long, probePaths[r.URL.Path]) {
		a.s.lim.refuse(st, open, w, r)
		return w, r, nil, false
	}
	if long && r.ProtoMajor == 1 {
		// HTTP/1.1's read deadline (BodyTimeout) also ends a request's context once its body
		// has been read; a health Watch goes on for as long as the client likes.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	if st != nil {
		f.tw = trackWriter{ResponseWriter: w, st: st, unary: r.ProtoMajor >= 2 && strings.HasPrefix(r.URL.Path, idServicePrefix)}
		w = &f.tw
	}
	if r.URL.RawQuery != "" {
		// url.Query, which net/http and Connect use, silently drops what it cannot read ("n=5;"
		// and "%zz"): refuse it instead of answering another request.
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			reject(w, r, connect.CodeInvalidArgument, http.StatusBadRequest, "bad query string: "+cut(err.Error()))
			return w, r, f, false
		}
	}
	if r.ContentLength > a.limit {
		reject(w, r, connect.CodeResourceExhausted, http.StatusRequestEntityTooLarge, a.tooLarge)
		return w, r, f, false
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, a.limit)
	}
	if isRPCPath(r.URL.Path) && !isGRPC(r.Header.Get("Content-Type")) {
		// A message found too large while Connect reads it (a body of unknown length, or one
		// that inflates past the limit: gzip POST, GET with compression=gzip): Connect answers
		// 429 (resource_exhausted), which clients read as "slow down" and retry; it is 413.
		w = &tooLargeWriter{ResponseWriter: w}
	}
	if !authed && !a.open[r.URL.Path] {
		w.Header().Set("WWW-Authenticate", `Bearer realm="idkitd"`)
		reject(w, r, connect.CodeUnauthenticated, http.StatusUnauthorized, unauthenticatedMsg)
		return w, r, f, false
	}
	if isRPCPath(r.URL.Path) {
		ct := r.Header.Get("Content-Type")
		if r.Method == http.MethodPost && !rpcContentType(ct) {
			badContentType(w, ct)
			return w, r, f, false
		}
		// The usual calls (gRPC, Connect unary) keep w; the rest get reasons with Connect's
		// empty refusals.
		if r.Method != http.MethodPost || r.ProtoMajor < 2 || ct != "application/grpc" && ct != "application/proto" && ct != "application/json" {
			w = &reasonWriter{ResponseWriter: w, r: r}
		}
	}
	if r.URL.Path == idkitv1connect.IDServiceNextProcedure {
		if b := httpBudget(r.Context()); b != nil {
			f.h.b = b
			r = r.WithContext(context.WithValue(r.Context(), heldKey{}, &f.h))
		}
	}
	return w, r, f, true
}

// redactError returns err, or when its message holds a credential a *connect.Error with the
// same code and the message redacted.
func redactError(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		ce = connect.NewError(codeOf(err), err)
	}
	msg := ce.Message()
	if red := idkit.Redact(msg); red != msg {
		out := connect.NewError(ce.Code(), errors.New(red))
		for k, v := range ce.Meta() { // a retry hint
			out.Meta()[k] = v
		}
		for _, d := range ce.Details() {
			out.AddDetail(d)
		}
		return out
	}
	return err
}

// noStore is the Cache-Control value of every answer.
var noStore = []string{"no-store"}

// tooLargeWriter turns the 429 that Connect answers for a message over the limit into 413.
// The server refuses nothing else with resource_exhausted (a full server answers unavailable,
// 503), so every 429 here is a message too large.
type tooLargeWriter struct {
	http.ResponseWriter
}

func (w *tooLargeWriter) WriteHeader(code int) {
	if code == http.StatusTooManyRequests {
		code = http.StatusRequestEntityTooLarge
	}
	w.ResponseWriter.WriteHeader(code)
}

// Flush and Unwrap keep the writer's optional interfaces reachable.
func (w *tooLargeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *tooLargeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isGRPC reports whether a content type is gRPC's own (application/grpc, application/grpc+proto
// …), whose errors travel in trailers; gRPC-Web's are application/grpc-web….
func isGRPC(ct string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(ct), "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}

// tokenOK reports whether an Authorization header value is "Bearer " (the scheme in any case,
// as RFC 7235 has it) and one of toks, comparing in constant time.
func tokenOK(auth string, toks []string) bool {
	const scheme = "bearer "
	if len(auth) <= len(scheme) || !strings.EqualFold(auth[:len(scheme)], scheme) {
		return false
	}
	tok := strings.TrimLeft(auth[len(scheme):], " ")
	good := 0
	for _, t := range toks {
		good |= subtle.ConstantTimeCompare([]byte(tok), []byte(t))
	}
	return good == 1
}

// unauthenticatedMsg is the reason a request without a valid token is refused.
const unauthenticatedMsg = "missing or unknown bearer token"

// reject answers a request the server refuses before any handler reads it, in the request's
// own protocol: a gRPC status for gRPC and gRPC-Web, a Connect error for the Connect
// protocol (with status), a line of text with status otherwise.
func reject(w http.ResponseWriter, r *http.Request, code connect.Code, status int, msg string) {
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/grpc"):
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Grpc-Status", strconv.Itoa(int(code)))
		w.Header().Set("Grpc-Message", grpcPercentEncode(msg))
		w.WriteHeader(http.StatusOK)
	case strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/proto") ||
		strings.HasPrefix(ct, "application/connect") || r.Method == http.MethodGet && r.URL.Query().Get("connect") == "v1":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		b, _ := json.Marshal(struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}{code.String(), msg})
		w.Write(b)
	default:
		textReply(w, status, msg)
	}
}

// grpcPercentEncode encodes a grpc-message value as the gRPC protocol asks: printable ASCII
// but '%' as is, everything else as %XX.
func grpcPercentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '%' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// textReply writes a one-line text answer.
func textReply(w http.ResponseWriter, code int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	io.WriteString(w, strings.ReplaceAll(line, "\n", " ")+"\n")
}

// ReadTokens reads bearer tokens from a file, one a line; blank lines and lines starting with
// '#' are skipped. An error never holds a token: a path that cannot be read is not echoed
// (the value may be a token pasted in place of its file's path); a file that holds no token
// is named.
func ReadTokens(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		// The path is not echoed: a token pasted where its file's path belongs would be.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("server: tokens file (path of %d characters, not shown in case it is a token pasted in its place): %w",
			len(path), err)
	}
	var toks []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		toks = append(toks, line)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: tokens file %s holds no token", ErrConfig, path)
	}
	return toks, nil
}
