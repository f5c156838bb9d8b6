// Package server is the idkit ID service as a library: named generators (any spec idkit.New
// accepts) served on one port over gRPC, gRPC-Web and the Connect protocol (binary or JSON,
// from connectrpc.com/connect), a plain GET /v1/next/{generator}?n=N that answers text lines,
// the gRPC health service, /healthz, /readyz and Prometheus metrics at /metrics.
//
// Serve answers the connections of gRPC libraries (grpc-go, grpc-java, the C core, grpc-node,
// grpc-dotnet, tonic …) with google.golang.org/grpc's own server and everything else with
// net/http and Connect, choosing per connection by its first request: grpc-go's transport
// costs less CPU per request and has a far shorter latency tail than net/http's HTTP/2 server
// (docs/service/report.md has the figures).
//
// cmd/idkitd is this package behind flags; idbench load --spawn and the tests start it in
// process with Serve, or mount Handler on an httptest server.
//
// A Server owns its generators: Run and Serve close them (releasing node leases) after the
// listener has drained, and Close does it for a Server that was never run.
package server

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
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
)

// Defaults for the zero fields of Config.
const (
	DefaultListen            = "127.0.0.1:7070"
	DefaultMaxCount          = 10_000
	DefaultMaxRequestBytes   = 64 << 10
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultDrainTimeout      = 10 * time.Second
)

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
	// Listen is the address Run listens on; the default is loopback only.
	Listen string
	// Generators are the named generators; at least one is required.
	Generators []Generator
	// MaxCount bounds the IDs one request may ask for.
	MaxCount int
	// MaxRequestBytes bounds a request body (and a message, once decompressed).
	MaxRequestBytes int
	// TLSCert and TLSKey, both set, make Run and Serve speak TLS (HTTP/2 by ALPN);
	// otherwise they speak cleartext HTTP/1.1 and HTTP/2 (h2c).
	TLSCert, TLSKey string
	// Tokens, when not empty, are the bearer tokens a request must carry in its
	// Authorization header. /healthz, /readyz and the gRPC health service stay open for
	// probes.
	Tokens []string
	// ReadHeaderTimeout, IdleTimeout and DrainTimeout bound reading a request's headers, an
	// idle connection, and the wait for in-flight requests at shutdown.
	ReadHeaderTimeout, IdleTimeout, DrainTimeout time.Duration
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
	draining atomic.Bool
	closeMu  sync.Mutex
	closed   atomic.Bool

	stopWatch, watchDone chan struct{} // the fence watcher
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
	s := &Server{cfg: cfg, log: cfg.Logger, gens: map[string]*generator{}, reg: prometheus.NewRegistry()}
	s.m = newMetrics(s.reg)
	for _, gc := range cfg.Generators {
		if !validName(gc.Name) {
			s.Close()
			return nil, fmt.Errorf("%w: generator name %q: want letters, digits, '_', '-' and '.'", ErrConfig, gc.Name)
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
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopWatch:
			return
		case <-t.C:
		}
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
			st[i].fenced = err != nil
		}
	}
}

// fenceLogInterval bounds how often a fenced generator's changing reason is logged.
const fenceLogInterval = 10 * time.Second

// fill checks a Config and applies the defaults.
func (c *Config) fill() error {
	if len(c.Generators) == 0 {
		return fmt.Errorf("%w: no generators (want at least one NAME=SPEC)", ErrConfig)
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxCount < 0 || c.MaxRequestBytes < 0 || c.ReadHeaderTimeout < 0 || c.IdleTimeout < 0 || c.DrainTimeout < 0 {
		return fmt.Errorf("%w: negative limit or timeout", ErrConfig)
	}
	if c.MaxCount == 0 {
		c.MaxCount = DefaultMaxCount
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
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
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return s != "" && len(s) <= 128
}

// Handler returns the service's HTTP handler, for tests and for embedding in another server.
// It serves every protocol, gRPC included (through Connect), but HTTP/2 requests only when the
// http.Server in front of it does (h2c or TLS); gRPC needs HTTP/2.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the server's own Prometheus registry (never the global one), which /metrics
// serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Run listens on Config.Listen and serves until ctx ends, then drains; see Serve.
func (s *Server) Run(ctx context.Context) error {
	_, wait, err := s.Start(ctx)
	if err != nil {
		return err
	}
	return wait()
}

// Start listens on Config.Listen (port 0 picks a free one) and serves in the background until
// ctx ends, then drains as Serve does. It returns the address it listens on and a function that
// waits for the server to stop and returns Serve's result (the same result to every caller).
// When it cannot listen it closes the server and returns the error.
func (s *Server) Start(ctx context.Context) (addr string, wait func() error, err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Listen)
	if err != nil {
		s.Close()
		return "", nil, fmt.Errorf("server: %w", err)
	}
	done := make(chan struct{})
	var serveErr error
	go func() {
		serveErr = s.Serve(ctx, ln)
		close(done)
	}()
	return ln.Addr().String(), func() error { <-done; return serveErr }, nil
}

// Serve serves on ln until ctx ends. Then it reports not ready, stops accepting, waits up to
// Config.DrainTimeout for in-flight requests, and closes the generators (releasing their
// leases). It returns nil after a clean drain, and otherwise the error that ended it.
//
// Serve answers gRPC clients with grpc-go's own HTTP/2 transport and everything else (HTTP/1.1,
// gRPC-Web, the Connect protocol, the plain endpoints) with Handler behind net/http, choosing
// per connection by its first request (a gRPC content type from a gRPC library's user agent
// goes to grpc-go); both see the same generators, limits, tokens and metrics.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var tlsCfg *tls.Config
	if s.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCert, s.cfg.TLSKey)
		if err != nil {
			ln.Close()
			s.Close()
			return fmt.Errorf("server: TLS: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12}
	}
	sp := newSplitter(ln, tlsCfg, s.cfg.ReadHeaderTimeout, s.cfg.IdleTimeout, s.cfg.MaxRequestBytes+maxFrameLen, s.log)
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxRequestBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		Protocols:         new(http.Protocols),
	}
	// HTTP/2 reaches net/http as h2c even under TLS: the splitter has decrypted it. HTTP/1.1
	// over TLS arrives as the *tls.Conn itself.
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	gs := s.grpcServer()
	errc := make(chan error, 3)
	go func() { errc <- sp.serve() }()
	go func() {
		if err := hs.Serve(sp.http); !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			errc <- err
		}
	}()
	go func() {
		if err := gs.Serve(sp.grpc); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, grpc.ErrServerStopped) {
			errc <- err
		}
	}()
	s.log.Info("serving", "addr", ln.Addr().String(), "tls", tlsCfg != nil, "generators", len(s.order))
	var serveErr error
	select {
	case err := <-errc:
		if err != nil {
			serveErr = fmt.Errorf("server: %w", err)
		}
		ctx = context.Background() // drain at once
	case <-ctx.Done():
	}
	s.draining.Store(true)
	s.log.Info("draining", "timeout", s.cfg.DrainTimeout.String())
	if err := s.drain(ctx, sp, hs, gs); err != nil && serveErr == nil {
		serveErr = err
	}
	if err := s.Close(); err != nil && serveErr == nil {
		serveErr = err
	}
	s.log.Info("stopped")
	return serveErr
}

// drain stops accepting and waits up to Config.DrainTimeout for both servers' in-flight
// requests; past it, it closes what is left.
func (s *Server) drain(ctx context.Context, sp *splitter, hs *http.Server, gs *grpc.Server) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.DrainTimeout)
	defer cancel()
	sp.close()
	grpcDone := make(chan struct{})
	go func() { gs.GracefulStop(); close(grpcDone) }()
	var errs []error
	if err := hs.Shutdown(dctx); err != nil {
		errs = append(errs, fmt.Errorf("server: draining: %w", err))
		hs.Close()
	}
	select {
	case <-grpcDone:
	case <-dctx.Done():
		errs = append(errs, fmt.Errorf("server: draining gRPC: %w", dctx.Err()))
		gs.Stop()
		<-grpcDone
	}
	return errors.Join(errs...)
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
		return errors.New("draining")
	}
	for _, g := range s.order {
		if err := g.err(); err != nil {
			return fmt.Errorf("generator %q: %w", g.name, err)
		}
	}
	return nil
}

// routes builds the handler: the Connect service, gRPC health, the plain endpoints.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	opts := []connect.HandlerOption{
		// No gzip: compressing a batch of IDs costs more CPU than the bytes it saves on the
		// networks a service like this runs on (it tripled the cost of a batch of 1,000).
		connect.WithCompression("gzip", nil, nil),
		connect.WithReadMaxBytes(s.cfg.MaxRequestBytes),
		connect.WithInterceptors(s.m.interceptor()),
	}
	path, h := idkitv1connect.NewIDServiceHandler(&service{s: s}, opts...)
	mux.Handle(path, h)
	hpath, hh := newHealthHandler(s, connect.WithReadMaxBytes(s.cfg.MaxRequestBytes))
	mux.Handle(hpath, hh)
	mux.HandleFunc("GET /v1/next/{generator}", s.httpNext)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { textReply(w, http.StatusOK, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.ready(); err != nil {
			textReply(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		textReply(w, http.StatusOK, "ready")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg}))
	open := map[string]bool{"/healthz": true, "/readyz": true, hpath + "Check": true, hpath + "Watch": true}
	limit := int64(s.cfg.MaxRequestBytes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		if len(s.cfg.Tokens) > 0 && !open[r.URL.Path] && !s.authorized(r) {
			unauthenticated(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries one of the configured bearer tokens.
func (s *Server) authorized(r *http.Request) bool { return s.tokenOK(r.Header.Get("Authorization")) }

// tokenOK reports whether an Authorization header value is "Bearer " and one of the configured
// tokens, comparing in constant time.
func (s *Server) tokenOK(auth string) bool {
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return false
	}
	good := 0
	for _, t := range s.cfg.Tokens {
		good |= subtle.ConstantTimeCompare([]byte(tok), []byte(t))
	}
	return good == 1
}

// unauthenticatedMsg is the reason a request without a valid token is refused.
const unauthenticatedMsg = "missing or unknown bearer token"

// unauthenticated answers a request without a valid token in its own protocol: gRPC status 16
// for gRPC, a Connect error for Connect, 401 otherwise.
func unauthenticated(w http.ResponseWriter, r *http.Request) {
	const msg = unauthenticatedMsg
	w.Header().Set("WWW-Authenticate", `Bearer realm="idkitd"`)
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "application/grpc") {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Grpc-Status", "16")
		w.Header().Set("Grpc-Message", msg)
		w.WriteHeader(http.StatusOK)
		return
	}
	if strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/proto") || strings.HasPrefix(ct, "application/connect") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"code":"unauthenticated","message":"`+msg+`"}`)
		return
	}
	textReply(w, http.StatusUnauthorized, msg)
}

// textReply writes a one-line text answer.
func textReply(w http.ResponseWriter, code int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	io.WriteString(w, strings.ReplaceAll(line, "\n", " ")+"\n")
}

// ReadTokens reads bearer tokens from a file, one a line; blank lines and lines starting with
// '#' are skipped. The error names the file, never a token.
func ReadTokens(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server: tokens: %w", err)
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
