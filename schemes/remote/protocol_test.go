package remote_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/certtest"
	"github.com/idkit/idkit/schemes/remote"
	"github.com/idkit/idkit/schemes/remote/server"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	tokenEnv    = "IDKIT_TEST_TOKEN"     // the token the services below accept
	badTokenEnv = "IDKIT_TEST_BAD_TOKEN" // one they do not
	tlsAddrEnv  = "IDKIT_TEST_TLS_ADDR"  // set: TestTLS runs as the client of the service there
)

// serveTokens runs an in-process service that wants the token in tokenEnv, on ln, until the
// test ends; cert and key, when set, make it speak TLS.
func serveTokens(t *testing.T, ln net.Listener, cert, key string) {
	t.Helper()
	t.Setenv(tokenEnv, "s3cret")
	t.Setenv(badTokenEnv, "guess")
	srv, err := server.New(server.Config{Generators: gens, Tokens: []string{"s3cret"}, TLSCert: cert, TLSKey: key, ShutdownDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

// draw takes IDs from s one by one and in a batch, checks they are unique and that the first
// parses and decodes, and closes s.
func draw(t *testing.T, s idkit.Scheme) {
	t.Helper()
	defer s.(interface{ Close() error }).Close()
	ids := make([]idkit.ID, 50)
	if err := s.(idkit.Batcher).NextBatch(ids[:40]); err != nil {
		t.Fatal(err)
	}
	for i := 40; i < len(ids); i++ {
		id, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	seen := map[idkit.ID]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate %v", id)
		}
		seen[id] = true
	}
	if back, err := s.Parse(ids[0].String()); err != nil || back != ids[0] {
		t.Fatalf("Parse(%v) = %v, %v", ids[0], back, err)
	}
	if _, err := s.Decode(ids[0]); err != nil {
		t.Fatal(err)
	}
}

// refused checks that a spec with a wrong token fails at once, not after retry_for, with the
// service's reason.
func refused(t *testing.T, spec string) {
	t.Helper()
	s, err := idkit.New(spec + ",token_env=" + badTokenEnv + ",retry_for=10m")
	if err == nil {
		s.(interface{ Close() error }).Close()
		t.Fatal("a wrong token was accepted")
	}
	if errors.Is(err, remote.ErrUnavailable) || !strings.Contains(err.Error(), "missing or unknown bearer token") {
		t.Fatalf("wrong token: %v, want the service's refusal, not retried", err)
	}
}

// TestProtocols runs each protocol, with a bearer token, against a service that wants one, and
// reads the user agent of every connection's first request: protocol=grpc must come from
// grpc-go, the stock client (which can also use the service's grpc-go listener, see
// TestGRPCListener), and not from connect-go's gRPC (user agent grpc-go-connect/…), which is
// what a caller's HTTPClient gets.
func TestProtocols(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ua := &agentListener{Listener: ln}
	serveTokens(t, ua, "", "")
	addr := ln.Addr().String()
	h2c := func() *http.Client {
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		return &http.Client{Transport: tr}
	}
	for _, tc := range []struct {
		name, extra string
		hc          *http.Client // Dial with this client instead of the spec
		agent       string
	}{
		{"grpc (the default)", "", nil, "grpc-go/"},
		{"grpc with prefetch", ",prefetch=100,protocol=grpc", nil, "grpc-go/"},
		{"connect", ",protocol=connect", nil, "connect-go/"},
		{"json", ",protocol=json", nil, "connect-go/"},
		{"grpc over the caller's HTTP client", "", h2c(), "grpc-go-connect/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ua.reset()
			spec := "remote:addr=" + addr + ",generator=sessions" + tc.extra
			if tc.hc != nil {
				s, err := remote.Dial(context.Background(), remote.Config{Addr: addr, Generator: "sessions", Token: "s3cret", HTTPClient: tc.hc})
				if err != nil {
					t.Fatal(err)
				}
				draw(t, s)
				tc.hc.CloseIdleConnections()
			} else {
				draw(t, open(t, spec+",token_env="+tokenEnv))
				refused(t, spec)
			}
			agents := ua.agents()
			if len(agents) == 0 {
				t.Fatal("no connection reached the service")
			}
			for _, a := range agents {
				if !strings.HasPrefix(a, tc.agent) {
					t.Errorf("a connection's first request came from %q, want %s…", a, tc.agent)
				}
			}
		})
	}
}

// TestTLS runs each protocol with tls=true and a token against a service with a self-signed
// certificate. The remote scheme trusts the system roots only, so the test runs itself again
// with SSL_CERT_FILE naming the certificate, as the client.
func TestTLS(t *testing.T) {
	if addr := os.Getenv(tlsAddrEnv); addr != "" {
		for _, extra := range []string{"", ",prefetch=100", ",protocol=connect", ",protocol=json"} {
			t.Run(cmp.Or(strings.TrimPrefix(extra, ","), "default"), func(t *testing.T) {
				spec := "remote:addr=" + addr + ",generator=keys,tls=true" + extra
				draw(t, open(t, spec+",token_env="+tokenEnv))
				refused(t, spec)
			})
		}
		// Without tls=true the client speaks cleartext to a TLS port: refused, and retried
		// until retry_for like any connection failure.
		_, err := idkit.New("remote:addr=" + addr + ",generator=keys,token_env=" + tokenEnv + ",retry_for=200ms")
		if !errors.Is(err, remote.ErrUnavailable) {
			t.Errorf("cleartext to a TLS service: %v, want ErrUnavailable", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	dir := t.TempDir()
	cert, key, _ := certtest.SelfSigned(t, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveTokens(t, ln, cert, key)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTLS$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), tlsAddrEnv+"="+ln.Addr().String(), "SSL_CERT_FILE="+cert, "SSL_CERT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestTLS")) {
		t.Fatalf("client with the certificate trusted: %v\n%s", err, out)
	}
}

// agentListener records the user agent of each cleartext HTTP/2 connection's first request,
// as the service's splitter reads it to route the connection.
type agentListener struct {
	net.Listener
	mu   sync.Mutex
	seen []string
}

func (l *agentListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &agentConn{Conn: c, l: l}, nil
}

func (l *agentListener) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = nil
}

func (l *agentListener) agents() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// agentConn keeps what the server reads until the first request's headers are complete.
type agentConn struct {
	net.Conn
	l    *agentListener
	buf  []byte
	done bool
}

func (c *agentConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.buf = append(c.buf, p[:n]...)
		if ua, ok := firstUserAgent(c.buf); ok || len(c.buf) > 1<<16 {
			c.done, c.buf = true, nil
			c.l.mu.Lock()
			c.l.seen = append(c.l.seen, ua)
			c.l.mu.Unlock()
		}
	}
	return n, err
}

// firstUserAgent reads an HTTP/2 connection's opening and returns its first request's
// user agent, or false while the headers are incomplete.
func firstUserAgent(b []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(http2.ClientPreface))
	if !ok {
		return "not HTTP/2", len(b) >= len(http2.ClientPreface)
	}
	fr := http2.NewFramer(nil, bytes.NewReader(rest))
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return "", false
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok {
			for _, hf := range h.RegularFields() {
				if hf.Name == "user-agent" {
					return hf.Value, true
				}
			}
			return "no user agent", true
		}
	}
}
