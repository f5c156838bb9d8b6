package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit/internal/certtest"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// stack is one of the two servers a running service answers gRPC with: net/http and Connect
// on Config.Listen, grpc-go on Config.GRPCListen.
type stack struct{ name, addr string }

func stacks(r *running) []stack {
	return []stack{
		{"net-http", strings.TrimPrefix(strings.TrimPrefix(r.url, "http://"), "https://")},
		{"grpc-go", r.grpc},
	}
}

// stockAt dials addr with google.golang.org/grpc, the stock gRPC client for Go.
func stockAt(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// TestStockGRPC runs every RPC through the stock grpc-go client, against both stacks: IDs,
// errors with their codes and messages, the health service, no-store on every answer.
func TestStockGRPC(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for i, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) { stockGRPC(t, r, st.addr, i+1) })
	}
}

func stockGRPC(t *testing.T, r *running, addr string, round int) {
	stock := func(t testing.TB, _ *running) *grpc.ClientConn { return stockAt(t, addr) }
	c := v1.NewIDServiceClient(stock(t, r))
	ctx := context.Background()
	for _, tc := range []struct {
		gen  string
		n    uint32
		bits int
	}{{"orders", 1, 64}, {"orders", 5000, 64}, {"sessions", 777, 128}, {"toy", 10, 64}} {
		var hdr metadata.MD
		res, err := c.Next(ctx, &v1.NextRequest{Generator: tc.gen, Count: tc.n, Text: true}, grpc.Header(&hdr))
		if err != nil {
			t.Fatalf("%s: %v", tc.gen, err)
		}
		if got := hdr.Get("cache-control"); len(got) != 1 || got[0] != "no-store" {
			t.Errorf("%s: answer with cache-control %q, want no-store", tc.gen, got)
		}
		ids := toIDs(t, res)
		if len(ids) != int(tc.n) || len(res.Text) != int(tc.n) || ids[0].Bits() != tc.bits {
			t.Fatalf("%s: %d IDs, %d texts, %d bits", tc.gen, len(ids), len(res.Text), ids[0].Bits())
		}
		d, err := c.Decode(ctx, &v1.DecodeRequest{Generator: tc.gen, Id: res.Text[0]})
		if err != nil || d.Text != res.Text[0] {
			t.Fatalf("%s: Decode = %v, %v", tc.gen, d, err)
		}
	}
	g, err := c.Generators(ctx, &v1.GeneratorsRequest{})
	if err != nil || len(g.Generators) != 3 || g.Generators[0].Name != "orders" {
		t.Fatalf("Generators = %v, %v", g, err)
	}
	if _, err := c.Ping(ctx, &v1.PingRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"unknown generator", func() error {
			_, err := c.Next(ctx, &v1.NextRequest{Generator: "nope", Count: 1})
			return err
		}, codes.NotFound, `unknown generator "nope" (known: orders, sessions, toy)`},
		{"no generator", func() error { _, err := c.Next(ctx, &v1.NextRequest{Count: 1}); return err }, codes.InvalidArgument, "no generator named"},
		{"count 0", func() error { _, err := c.Next(ctx, &v1.NextRequest{Generator: "orders"}); return err }, codes.InvalidArgument, "count 0: want 1 to 5000"},
		{"count above limit", func() error {
			_, err := c.Next(ctx, &v1.NextRequest{Generator: "orders", Count: 5001})
			return err
		}, codes.InvalidArgument, "count 5001: want 1 to 5000"},
		{"decode bad text", func() error {
			_, err := c.Decode(ctx, &v1.DecodeRequest{Generator: "orders", Id: "12x4"})
			return err
		}, codes.InvalidArgument, `"12x4" is not a decimal ID`},
		{"decode no id", func() error { _, err := c.Decode(ctx, &v1.DecodeRequest{Generator: "orders"}); return err }, codes.InvalidArgument, "no id given"},
		{"message too large", func() error {
			_, err := c.Next(ctx, &v1.NextRequest{Generator: strings.Repeat("a", 70<<10), Count: 1})
			return err
		}, codes.ResourceExhausted, "larger than"},
		{"health of an unknown service", func() error {
			_, err := healthpb.NewHealthClient(stock(t, r)).Check(ctx, &healthpb.HealthCheckRequest{Service: "other"})
			return err
		}, codes.NotFound, `unknown service "other"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if st := status.Convert(err); st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
				t.Fatalf("err = %v, want %v with %q", err, tc.code, tc.msg)
			}
		})
	}
	h, err := healthpb.NewHealthClient(stock(t, r)).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", h, err)
	}
	// A message that is not protobuf is the client's fault: INVALID_ARGUMENT, as Connect says.
	err = stock(t, r).Invoke(ctx, idkitv1connect.IDServiceNextProcedure, []byte{0xff, 0xff, 0xff}, new([]byte), grpc.ForceCodecV2(rawCodec{}))
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "unmarshal") {
		t.Fatalf("malformed message: %v", err)
	}
	// The stock client's requests are timed like everyone else's.
	b := get(t, r, "/metrics")
	for _, want := range []string{
		fmt.Sprintf(`idkit_request_duration_seconds_count{code="ok",rpc="Next"} %d`, 4*round),
		fmt.Sprintf(`idkit_request_duration_seconds_count{code="not_found",rpc="Next"} %d`, round),
		fmt.Sprintf(`code="ok",rpc="Ping"} %d`, round),
	} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// rawCodec sends a []byte as the message, for malformed requests.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

func get(t *testing.T, r *running, path string) string {
	t.Helper()
	res, err := r.client.Get(r.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestStockGRPCTokens: the stock client is refused without a token before its message is
// read, served with one, and the health service stays open for probes, on both stacks.
func TestStockGRPCTokens(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	r := start(t, cfg)
	for _, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) { stockGRPCTokens(t, stockAt(t, st.addr)) })
	}
}

func stockGRPCTokens(t *testing.T, cc *grpc.ClientConn) {
	c := v1.NewIDServiceClient(cc)
	for _, tc := range []struct {
		auth string
		code codes.Code
	}{{"", codes.Unauthenticated}, {"Bearer wrong", codes.Unauthenticated}, {"s3cret", codes.Unauthenticated}, {"Bearer s3cret", codes.OK}} {
		ctx := context.Background()
		if tc.auth != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", tc.auth)
		}
		_, err := c.Next(ctx, &v1.NextRequest{Generator: "orders", Count: 1})
		if st := status.Convert(err); st.Code() != tc.code || strings.Contains(st.Message(), "s3cret") {
			t.Errorf("with %q: %v, want %v", tc.auth, err, tc.code)
		}
	}
	if h, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v, %v", h, err)
	}
}

// TestStockGRPCTLS: the stock client over TLS is served on both stacks, and on the main port
// a general HTTP client sends gRPC (through Connect) and a plain GET on one HTTP/2 connection.
func TestStockGRPCTLS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, pool := certtest.SelfSigned(t, t.TempDir())
	cfg := twoGens()
	cfg.TLSCert, cfg.TLSKey = certPath, keyPath
	r := start(t, cfg)
	for _, st := range stacks(r) {
		c := v1.NewIDServiceClient(stockAt(t, st.addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool}))))
		res, err := c.Next(context.Background(), &v1.NextRequest{Generator: "orders", Count: 3})
		if err != nil || len(res.Ids64) != 3 {
			t.Fatalf("%s: stock gRPC over TLS: %v, %v", st.name, res, err)
		}
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP2(true)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	cc := idkitv1connect.NewIDServiceClient(hc, r.url, connect.WithGRPC())
	for range 3 {
		if _, err := cc.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})); err != nil {
			t.Fatal(err)
		}
		res, err := hc.Get(r.url + "/v1/next/orders?n=2")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.ProtoMajor != 2 || bytes.Count(b, []byte("\n")) != 2 {
			t.Fatalf("GET after gRPC on one connection: %s %s %q", res.Status, res.Proto, b)
		}
	}
}
