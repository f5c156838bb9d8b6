package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/h2raw"
	"github.com/idkit/idkit/schemes"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// running is a server serving on a loopback port for one test.
type running struct {
	srv    *server.Server
	url    string       // Config.Listen: every protocol, net/http and Connect
	grpc   string       // host:port of Config.GRPCListen, served by grpc-go
	client *http.Client // HTTP/1.1 and h2c
	stop   context.CancelFunc
	done   chan struct{} // closed when Serve has returned; err is then its result
	err    error
}

// wait returns Serve's result once it has returned.
func (r *running) wait() error { <-r.done; return r.err }

// start serves cfg (on 127.0.0.1 unless cfg says where, with a grpc-go listener, and without a
// shutdown delay unless cfg asks for one) until the test ends. Each test has servers, ports
// and clients of its own, so the tests of this package run in parallel (t.Parallel), except
// those that measure the process's heap (heapAfterGC), set the environment (t.Setenv) or
// need the machine to themselves for their paced load (TestRollout).
func start(t testing.TB, cfg server.Config) *running {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.GRPCListen == "" {
		cfg.GRPCListen = "127.0.0.1:0"
	}
	if cfg.ShutdownDelay == 0 {
		cfg.ShutdownDelay = -1
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs, wait, err := srv.Start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	scheme := "http://"
	if cfg.TLSCert != "" {
		scheme = "https://"
	}
	r := &running{srv: srv, url: scheme + addrs.HTTP, grpc: addrs.GRPC, stop: cancel, done: make(chan struct{})}
	go func() { r.err = wait(); close(r.done) }()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	tr.Protocols.SetUnencryptedHTTP2(true)
	r.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	t.Cleanup(func() {
		cancel()
		if err := r.wait(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return r
}

// h2 returns a client that speaks HTTP/2 without TLS only (gRPC needs it).
func h2() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

var protocols = []struct {
	name string
	opts []connect.ClientOption
}{
	{"grpc", []connect.ClientOption{connect.WithGRPC()}},
	{"grpcweb", []connect.ClientOption{connect.WithGRPCWeb()}},
	{"connect-json", []connect.ClientOption{connect.WithProtoJSON()}},
	{"connect-proto", nil},
}

func twoGens() server.Config {
	return server.Config{Generators: []server.Generator{
		{Name: "orders", Spec: "snowflake:layout=twitter,worker=3"},
		{Name: "sessions", Spec: "ulid"},
		{Name: "toy", Spec: "toyseq:start=100"},
	}, MaxCount: 5000}
}

func TestNextEveryProtocol(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, p := range protocols {
		c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
		for _, tc := range []struct {
			gen  string
			n    uint32
			bits int
		}{{"orders", 1, 64}, {"orders", 5000, 64}, {"sessions", 1, 128}, {"sessions", 777, 128}, {"toy", 10, 64}} {
			t.Run(fmt.Sprintf("%s/%s/%d", p.name, tc.gen, tc.n), func(t *testing.T) {
				res, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: tc.gen, Count: tc.n, Text: true}))
				if err != nil {
					t.Fatal(err)
				}
				ids := toIDs(t, res.Msg)
				if len(ids) != int(tc.n) || len(res.Msg.Text) != int(tc.n) {
					t.Fatalf("got %d IDs and %d texts, want %d", len(ids), len(res.Msg.Text), tc.n)
				}
				for i, id := range ids {
					if id.Bits() != tc.bits {
						t.Fatalf("ID %d has %d bits, want %d", i, id.Bits(), tc.bits)
					}
					if i > 0 && idkit.Compare(ids[i-1], id) >= 0 {
						t.Fatalf("IDs %d and %d out of order: %v, %v", i-1, i, ids[i-1], id)
					}
					if res.Msg.Text[i] != id.String() {
						t.Fatalf("text %d = %q, want %q", i, res.Msg.Text[i], id.String())
					}
				}
				d, err := c.Decode(context.Background(), connect.NewRequest(&v1.DecodeRequest{Generator: tc.gen, Id: res.Msg.Text[0]}))
				if err != nil {
					t.Fatal(err)
				}
				if d.Msg.Text != res.Msg.Text[0] {
					t.Errorf("Decode text = %q, want %q", d.Msg.Text, res.Msg.Text[0])
				}
				if tc.gen == "orders" && (d.Msg.GetNode() != 3 || d.Msg.Time == "") {
					t.Errorf("Decode = %v, want node 3 and a time", d.Msg)
				}
			})
		}
	}
}

// toIDs reads a NextResponse's IDs; 128-bit ones are read as ULIDs (width is all that matters
// here).
func toIDs(t *testing.T, m *v1.NextResponse) []idkit.ID {
	t.Helper()
	var ids []idkit.ID
	for _, v := range m.Ids64 {
		ids = append(ids, idkit.FromUint64(v))
	}
	for _, b := range m.Ids128 {
		if len(b) != 16 {
			t.Fatalf("128-bit ID of %d bytes", len(b))
		}
		ids = append(ids, idkit.FromULID([16]byte(b)))
	}
	return ids
}

func TestRPCErrors(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	ctx := context.Background()
	for _, p := range protocols {
		c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
		for _, tc := range []struct {
			name string
			call func() error
			code connect.Code
			msg  string
		}{
			{"unknown generator", func() error {
				_, err := c.Next(ctx, connect.NewRequest(&v1.NextRequest{Generator: "nope", Count: 1}))
				return err
			}, connect.CodeNotFound, `unknown generator "nope" (known: orders, sessions, toy)`},
			{"no generator", func() error {
				_, err := c.Next(ctx, connect.NewRequest(&v1.NextRequest{Count: 1}))
				return err
			}, connect.CodeInvalidArgument, "no generator named"},
			{"count 0", func() error {
				_, err := c.Next(ctx, connect.NewRequest(&v1.NextRequest{Generator: "orders"}))
				return err
			}, connect.CodeInvalidArgument, "count 0: want 1 to 5000"},
			{"count above limit", func() error {
				_, err := c.Next(ctx, connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 5001}))
				return err
			}, connect.CodeInvalidArgument, "count 5001: want 1 to 5000"},
			{"decode bad text", func() error {
				_, err := c.Decode(ctx, connect.NewRequest(&v1.DecodeRequest{Generator: "orders", Id: "12x4"}))
				return err
			}, connect.CodeInvalidArgument, `"12x4" is not a decimal ID`},
			{"decode other scheme", func() error {
				_, err := c.Decode(ctx, connect.NewRequest(&v1.DecodeRequest{Generator: "sessions", Id: "12345"}))
				return err
			}, connect.CodeInvalidArgument, "12345"},
			{"decode no id", func() error {
				_, err := c.Decode(ctx, connect.NewRequest(&v1.DecodeRequest{Generator: "orders"}))
				return err
			}, connect.CodeInvalidArgument, "no id given"},
			{"decode unknown generator", func() error {
				_, err := c.Decode(ctx, connect.NewRequest(&v1.DecodeRequest{Generator: "x", Id: "1"}))
				return err
			}, connect.CodeNotFound, "unknown generator"},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				err := tc.call()
				if connect.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v (%v), want code %v with %q", err, connect.CodeOf(err), tc.code, tc.msg)
				}
			})
		}
	}
}

// TestConnectBadInput sends malformed requests straight over HTTP: each gets a Connect error
// with the right status.
func TestConnectBadInput(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	next := r.url + idkitv1connect.IDServiceNextProcedure
	for _, tc := range []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"malformed JSON", "application/json", `{"generator":`, 400, "invalid_argument"},
		{"wrong JSON type", "application/json", `{"generator":5}`, 400, "invalid_argument"},
		// An unknown field is refused by name: a misspelt "cuont" would otherwise be served
		// with the default.
		{"unknown JSON field", "application/json", `{"generator":"orders","count":1,"bogus":1}`, 400, `unknown field \"bogus\"`},
		{"negative count", "application/json", `{"generator":"orders","count":-1}`, 400, "invalid_argument"},
		{"malformed protobuf", "application/proto", "\xff\xff\xff", 400, "invalid_argument"},
		{"wrong content type", "text/plain", `{"generator":"orders","count":1}`, 415, ""},
		{"too large", "application/json", `{"generator":"` + strings.Repeat("a", 70<<10) + `","count":1}`, 0, ""},
		{"good", "application/json", `{"generator":"orders","count":2,"text":true}`, 200, `"text":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.client.Post(next, tc.ct, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if tc.status == 0 { // too large: any 4xx naming the limit
				if res.StatusCode < 400 || res.StatusCode >= 500 {
					t.Fatalf("status %d, body %s; want a 4xx", res.StatusCode, b)
				}
				return
			}
			if res.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("status %d, body %s; want %d with %q", res.StatusCode, b, tc.status, tc.want)
			}
		})
	}
}

func TestPlainNext(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, tc := range []struct {
		method, path string
		status       int
		lines        int
		want         string
	}{
		{"GET", "/v1/next/orders", 200, 1, ""},
		{"GET", "/v1/next/orders?n=25", 200, 25, ""},
		{"GET", "/v1/next/sessions?n=5000", 200, 5000, ""},
		{"GET", "/v1/next/orders?n=0", 400, 1, "count 0: want 1 to 5000"},
		{"GET", "/v1/next/orders?n=5001", 400, 1, "count 5001: want 1 to 5000"},
		{"GET", "/v1/next/orders?n=-3", 400, 1, "count -3"},
		{"GET", "/v1/next/orders?n=abc", 400, 1, `n="abc": want a whole number from 1 to 5000`},
		{"GET", "/v1/next/orders?n=99999999999999999999", 400, 1, "want a whole number"},
		{"GET", "/v1/next/orders?n=1&n=2", 400, 1, "n is given more than once"},
		{"GET", "/v1/next/orders?count=2", 400, 1, `unknown query parameter "count"`},
		{"GET", "/v1/next/nope", 404, 1, `unknown generator "nope"`},
		{"POST", "/v1/next/orders", 405, 0, ""},
		{"GET", "/v1/next/", 404, 0, ""},
		{"GET", "/healthz", 200, 1, "ok"},
		{"GET", "/readyz", 200, 1, "ready"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, r.url+tc.path, nil)
			res, err := r.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("status %d, body %.200q; want %d with %q", res.StatusCode, b, tc.status, tc.want)
			}
			if tc.lines > 0 {
				lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
				if len(lines) != tc.lines {
					t.Fatalf("%d lines, want %d", len(lines), tc.lines)
				}
				if tc.status == 200 && strings.HasPrefix(tc.path, "/v1/") {
					seen := map[string]bool{}
					for _, l := range lines {
						if _, err := idkit.Parse(l); err != nil || seen[l] {
							t.Fatalf("line %q: not a new ID (%v)", l, err)
						}
						seen[l] = true
					}
				}
			}
		})
	}
}

// TestReadyAndFence fences a generator: /readyz, gRPC health (from grpc-go and from Connect)
// and Generators say not ready, Next answers UNAVAILABLE on both gRPC stacks (503 on the plain
// endpoint), and all recover when the fence lifts.
func TestReadyAndFence(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Generators = append(cfg.Generators, server.Generator{Name: "fenced", Spec: "toyseq:key=ready"})
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	r := start(t, cfg)
	c := idkitv1connect.NewIDServiceClient(h2(), r.url, connect.WithGRPC())
	hc := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](h2(), r.url+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	var ccs []*grpc.ClientConn // the stock client on both stacks
	for _, st := range stacks(r) {
		ccs = append(ccs, stockAt(t, st.addr))
	}
	check := func(wantReady bool) {
		t.Helper()
		for _, cc := range ccs {
			sh, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if (sh.Status == healthpb.HealthCheckResponse_SERVING) != wantReady {
				t.Errorf("health (stock gRPC client at %s): %v", cc.Target(), sh.Status)
			}
			_, err = v1.NewIDServiceClient(cc).Next(context.Background(), &v1.NextRequest{Generator: "fenced", Count: 3})
			if wantReady && err != nil || !wantReady && status.Code(err) != codes.Unavailable {
				t.Errorf("Next (stock gRPC client at %s): %v", cc.Target(), err)
			}
		}
		res, err := r.client.Get(r.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if (res.StatusCode == 200) != wantReady {
			t.Errorf("/readyz: %d %s", res.StatusCode, b)
		}
		h, err := hc.CallUnary(context.Background(), connect.NewRequest(&healthpb.HealthCheckRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		if (h.Msg.Status == healthpb.HealthCheckResponse_SERVING) != wantReady {
			t.Errorf("health: %v", h.Msg.Status)
		}
		g, err := c.Generators(context.Background(), connect.NewRequest(&v1.GeneratorsRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(g.Msg.Generators, func(g *v1.Generator) bool { return g.Name == "fenced" })
		if g.Msg.Generators[i].Ready != wantReady {
			t.Errorf("Generators: %v", g.Msg.Generators[i])
		}
		_, err = c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "fenced", Count: 3}))
		if wantReady && err != nil || !wantReady && connect.CodeOf(err) != connect.CodeUnavailable {
			t.Errorf("Next: %v", err)
		}
		res, err = r.client.Get(r.url + "/v1/next/fenced")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if want := map[bool]int{true: 200, false: 503}[wantReady]; res.StatusCode != want {
			t.Errorf("GET /v1/next/fenced: %d, want %d", res.StatusCode, want)
		}
	}
	check(true)
	lost := fmt.Errorf("%w: test lease lost", schemes.ErrFenced)
	toyOf("ready").fenced.Store(&lost)
	check(false)
	logs.waitFor(t, `msg="generator fenced: not issuing IDs, not ready" generator=fenced err="schemes: node ID no longer held: test lease lost"`)
	toyOf("ready").fenced.Store(nil)
	check(true)
	logs.waitFor(t, `msg="generator holds its node again" generator=fenced`)
	// The health service knows only its own names.
	_, err := hc.CallUnary(context.Background(), connect.NewRequest(&healthpb.HealthCheckRequest{Service: "other"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("health of an unknown service: %v", err)
	}
}

func TestGeneratorsAndMetrics(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Generators[0].Spec = "snowflake:layout=twitter,node=7"
	r := start(t, cfg)
	c := idkitv1connect.NewIDServiceClient(h2(), r.url, connect.WithProtoJSON())
	g, err := c.Generators(context.Background(), connect.NewRequest(&v1.GeneratorsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	o := g.Msg.Generators[0]
	if o.Name != "orders" || o.GetNode() != 7 || o.Bits != 64 || o.IdsPerSecond != 4_096_000 || !strings.Contains(o.Layout, "twitter") || !o.Ready {
		t.Errorf("orders = %v", o)
	}
	if _, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 42})); err != nil {
		t.Fatal(err)
	}
	c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 0}))
	res, err := r.client.Get(r.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`idkit_ids_issued_total{generator="orders"} 42`,
		`idkit_request_duration_seconds_count{code="ok",rpc="Next"} 1`,
		`idkit_request_duration_seconds_count{code="invalid_argument",rpc="Next"} 1`,
		`idkit_ready 1`,
		`idkit_generate_seconds_count{generator="orders"} 1`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The generator's own counters are exported; how they count is TestSnowflakeStats's
	// business (with a fake clock), since how often a real clock runs a tick's sequence out
	// depends on the machine.
	res, err = r.client.Get(r.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !regexp.MustCompile(`(?m)^idkit_sequence_exhausted_total\{generator="orders"\} \d+$`).Match(b) {
		t.Errorf("/metrics lacks idkit_sequence_exhausted_total for orders")
	}
	for _, want := range []string{"idkit_clock_drift_waits_total", "idkit_clock_drift_continued_total", "idkit_lease_renewals_total", "idkit_lease_renewal_failures_total"} {
		if !bytes.Contains(b, []byte(want+`{generator="orders"} 0`)) {
			t.Errorf("/metrics lacks %s for orders at 0", want)
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret", "other"}
	r := start(t, cfg)
	for _, tc := range []struct {
		path, auth string
		status     int
	}{
		{"/v1/next/orders", "", 401},
		{"/v1/next/orders", "Bearer wrong", 401},
		{"/v1/next/orders", "s3cret", 401},
		{"/v1/next/orders", "Bearer s3cret", 200},
		{"/v1/next/orders", "Bearer other", 200},
		{"/metrics", "", 401},
		{"/healthz", "", 200},
		{"/readyz", "", 200},
	} {
		req, _ := http.NewRequest("GET", r.url+tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := r.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || bytes.Contains(b, []byte("s3cret")) {
			t.Errorf("%s with %q: %d %s, want %d", tc.path, tc.auth, res.StatusCode, b, tc.status)
		}
	}
	for _, p := range protocols {
		c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
		_, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1}))
		if connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s without a token: %v", p.name, err)
		}
		req := connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})
		req.Header().Set("Authorization", "Bearer s3cret")
		if _, err := c.Next(context.Background(), req); err != nil {
			t.Errorf("%s with a token: %v", p.name, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  server.Config
		want string
	}{
		{"none", server.Config{}, "no generators"},
		{"bad name", server.Config{Generators: []server.Generator{{Name: "a b", Spec: "ulid"}}}, `generator name "a b"`},
		// GET /v1/next/. and /v1/next/.. are cleaned to other paths (307): unreachable.
		{"dot", server.Config{Generators: []server.Generator{{Name: ".", Spec: "ulid"}}}, `generator name ".": want letters, digits, '_', '-' and '.' (not "." or "..")`},
		{"dot dot", server.Config{Generators: []server.Generator{{Name: "..", Spec: "ulid"}}}, `generator name ".."`},
		{"twice", server.Config{Generators: []server.Generator{{Name: "a", Spec: "ulid"}, {Name: "a", Spec: "ulid"}}}, `"a" is configured twice`},
		{"bad spec", server.Config{Generators: []server.Generator{{Name: "a", Spec: "snowflake:worker=99"}}}, `generator "a": idkit: bad spec`},
		{"half TLS", server.Config{Generators: []server.Generator{{Name: "a", Spec: "ulid"}}, TLSCert: "x"}, "both a certificate and a key"},
		{"password redacted", server.Config{Generators: []server.Generator{{Name: "a", Spec: "snowflake:node=postgres://u:hunter2@127.0.0.1:1/db?namespace=x"}}}, "generator \"a\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := server.NewContext(ctx, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	_, err := server.New(server.Config{})
	if !errors.Is(err, server.ErrConfig) {
		t.Errorf("err = %v, want ErrConfig", err)
	}
}

// TestDrain cancels Serve while a request waits inside a generator, once from a plain HTTP
// client (answered by net/http) and once from the stock gRPC client on each listener: the
// request completes, Serve returns nil, the generator is closed afterwards, and new
// connections are refused.
func TestDrain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// client returns a call that asks the generator "slow" for one ID and checks the answer.
		client func(t *testing.T, r *running) func() error
	}{
		{"http", func(_ *testing.T, r *running) func() error {
			return func() error {
				res, err := http.Get(r.url + "/v1/next/slow?n=1")
				if err != nil {
					return err
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || len(body) == 0 {
					return fmt.Errorf("%s %q", res.Status, body)
				}
				return nil
			}
		}},
		{"grpc-on-net-http", func(t *testing.T, r *running) func() error {
			return stockNext(v1.NewIDServiceClient(stockAt(t, stacks(r)[0].addr)))
		}},
		{"grpc-go", func(t *testing.T, r *running) func() error {
			return stockNext(v1.NewIDServiceClient(stockAt(t, r.grpc)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "drain-" + tc.name
			r := start(t, server.Config{Generators: []server.Generator{{Name: "slow", Spec: "toyseq:gated=true,key=" + key}}})
			call := tc.client(t, r)
			errc := make(chan error, 1)
			go func() { errc <- call() }()
			toy := waitToy(t, key)
			<-toy.inside // the request is inside Next
			r.stop()
			select {
			case <-r.done:
				t.Fatalf("Serve returned %v with a request in flight", r.err)
			case <-time.After(100 * time.Millisecond):
			}
			if toy.closed.Load() {
				t.Fatal("generator closed before the in-flight request finished")
			}
			toy.gate <- struct{}{}
			if err := <-errc; err != nil {
				t.Fatalf("in-flight request: %v", err)
			}
			if err := r.wait(); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if !toy.closed.Load() {
				t.Fatal("generator not closed after the drain")
			}
			if _, err := http.Get(r.url + "/healthz"); err == nil {
				t.Fatal("server still accepts connections after the drain")
			}
		})
	}
}

// stockNext returns a call that asks the generator "slow" for one ID through c.
func stockNext(c v1.IDServiceClient) func() error {
	return func() error {
		res, err := c.Next(context.Background(), &v1.NextRequest{Generator: "slow", Count: 1})
		if err == nil && len(res.Ids64) != 1 {
			err = fmt.Errorf("%d IDs", len(res.Ids64))
		}
		return err
	}
}

func waitToy(t *testing.T, key string) *toy {
	t.Helper()
	for range 100 {
		if v, ok := toys.Load(key); ok {
			return v.(*toy)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("toy %q never built", key)
	return nil
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// waitFor waits up to five seconds for want to appear in the log.
func (s *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	for range 500 {
		s.mu.Lock()
		ok := strings.Contains(s.b.String(), want)
		s.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("log lacks %q:\n%s", want, s.b.String())
}

// TestMixedConnection sends, on one HTTP/2 connection, what a proxy that pools upstream
// connections and forwards each client's user agent sends: a gRPC call from grpc-go first, then
// every other documented endpoint with the same user agent. Each must be answered as on a
// connection of its own.
func TestMixedConnection(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	c := h2raw.Dial(t, strings.TrimPrefix(r.url, "http://"))
	const ua = "grpc-go/1.83.2"
	grpcCall := func(path string, m proto.Message) {
		t.Helper()
		res := c.Read(c.Send("POST", path, h2raw.GRPCFrame(m), h2raw.GRPC...))
		if res.Status() != 200 || res.Header["grpc-status"] != "0" {
			t.Errorf("gRPC %s: %s", path, res)
		}
	}
	grpcCall(idkitv1connect.IDServiceNextProcedure, &v1.NextRequest{Generator: "orders", Count: 1})
	for _, tc := range []struct {
		method, path, ct, body string
		want                   string
	}{
		{"GET", "/v1/next/orders?n=2", "", "", "\n"},
		{"GET", "/readyz", "", "", "ready"},
		{"GET", "/healthz", "", "", "ok"},
		{"GET", "/metrics", "", "", "idkit_ready 1"},
		{"POST", idkitv1connect.IDServiceNextProcedure, "application/json", `{"generator":"orders","count":2}`, `"ids64"`},
		{"POST", idkitv1connect.IDServicePingProcedure, "application/json", `{}`, `{}`},
		{"POST", idkitv1connect.IDServiceGeneratorsProcedure, "application/proto", "", ""},
	} {
		var body []byte
		hdrs := []string{"user-agent", ua}
		if tc.method == "POST" {
			body = []byte(tc.body)
			hdrs = append(hdrs, "content-type", tc.ct)
		}
		res := c.Read(c.Send(tc.method, tc.path, body, hdrs...))
		if res.Status() != 200 || !strings.Contains(string(res.Body), tc.want) {
			t.Errorf("%s %s after a gRPC call on the same connection: %s", tc.method, tc.path, res)
		}
	}
	grpcCall(idkitv1connect.IDServicePingProcedure, &v1.PingRequest{})
}

// TestDrainTimeoutNamesTheListener keeps one request inside a generator past the drain
// timeout, on one listener at a time: Serve's error names that listener and never the other,
// in every run (the error used to come from a random choice between two ready channels).
func TestDrainTimeoutNamesTheListener(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, blamed, spared string
		call                 func(r *running) func() error
	}{
		{"http", "draining HTTP", "gRPC", func(r *running) func() error {
			return func() error { _, err := http.Get(r.url + "/v1/next/slow?n=1"); return err }
		}},
		{"grpc-go", "draining gRPC", "HTTP", func(r *running) func() error { return stockNext(v1.NewIDServiceClient(stockAt(t, r.grpc))) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 8 {
				key := fmt.Sprintf("blame-%s-%d", tc.name, i)
				r := start(t, server.Config{Generators: []server.Generator{{Name: "slow", Spec: "toyseq:gated=true,key=" + key}}, DrainTimeout: 250 * time.Millisecond})
				go tc.call(r)()
				toy := waitToy(t, key)
				<-toy.inside
				r.stop()
				err := r.wait()
				close(toy.gate)
				r.err = nil // checked here, not by start's cleanup
				if err == nil || !strings.Contains(err.Error(), tc.blamed) || strings.Contains(err.Error(), tc.spared) {
					t.Fatalf("run %d: Serve = %v, want %q alone", i, err, tc.blamed)
				}
			}
		})
	}
}
