package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestCannotIssueUnavailable: a generator whose scheme says it cannot issue (Err, as a segment
// whose stores refuse or are down says) and fails with a plain error is answered UNAVAILABLE
// with a retry hint, not INTERNAL: HTTP 503 with Retry-After, gRPC UNAVAILABLE with a
// google.rpc.RetryInfo detail on both stacks. Its health service name
// (idkit.v1.IDService/NAME) is NOT_SERVING with the reason, another generator's stays
// SERVING, the server's is NOT_SERVING, and an unknown generator's name is NOT_FOUND.
func TestCannotIssueUnavailable(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Generators = append(cfg.Generators, server.Generator{Name: "dry", Spec: "toyseq:key=dry"})
	r := start(t, cfg)
	why := errors.New("segment: no block available for key \"k\": store 1 of 1: connection refused")
	toyOf("dry").fenced.Store(&why)

	res, err := r.client.Get(r.url + "/v1/next/dry")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || !strings.Contains(string(b), "connection refused") {
		t.Errorf("GET /v1/next/dry: %d, Retry-After %q, %q; want 503, 1 and the reason", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	for _, st := range stacks(r) {
		_, err := v1.NewIDServiceClient(stockAt(t, st.addr)).Next(context.Background(), &v1.NextRequest{Generator: "dry", Count: 1})
		s := status.Convert(err)
		var hint *errdetails.RetryInfo
		for _, d := range s.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				hint = ri
			}
		}
		if s.Code() != codes.Unavailable || hint == nil || hint.GetRetryDelay().AsDuration() <= 0 || !strings.Contains(s.Message(), "connection refused") {
			t.Errorf("%s: Next: %v, details %v; want UNAVAILABLE naming the reason, with a RetryInfo", st.name, err, s.Details())
		}
		hc := healthpb.NewHealthClient(stockAt(t, st.addr))
		for svc, want := range map[string]healthpb.HealthCheckResponse_ServingStatus{
			"":                            healthpb.HealthCheckResponse_NOT_SERVING,
			"idkit.v1.IDService/dry":      healthpb.HealthCheckResponse_NOT_SERVING,
			"idkit.v1.IDService/sessions": healthpb.HealthCheckResponse_SERVING,
		} {
			got, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
			if err != nil || got.GetStatus() != want {
				t.Errorf("%s: health %q: %v, %v; want %v", st.name, svc, got.GetStatus(), err, want)
			}
		}
		if _, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "idkit.v1.IDService/nope"}); status.Code(err) != codes.NotFound {
			t.Errorf("%s: health of an unknown generator: %v; want NOT_FOUND", st.name, err)
		}
	}
	// The Connect protocol: the hint among the error's details.
	cc := connect.NewClient[v1.NextRequest, v1.NextResponse](h2(), r.url+"/idkit.v1.IDService/Next")
	_, err = cc.CallUnary(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "dry", Count: 1}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeUnavailable || len(ce.Details()) == 0 || ce.Meta().Get("Retry-After") != "1" {
		t.Errorf("Connect Next: %v; want unavailable with a RetryInfo detail and Retry-After", err)
	}
	toyOf("dry").fenced.Store(nil)
	if res, err := r.client.Get(r.url + "/v1/next/dry"); err != nil || res.StatusCode != 200 {
		t.Errorf("after the generator can issue again: %v, %v", res, err)
	}
}
