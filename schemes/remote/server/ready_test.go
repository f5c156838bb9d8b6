package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// TestNotReadyReason fences a generator with a reason: /readyz says it, and so does the gRPC
// health answer, from grpc-go and from Connect, in its idkit-not-ready header (the health
// message has no field for a reason); non-ASCII text is replaced there. A ready server sends no
// such header. The log says the scheme once the generator is ready again.
func TestNotReadyReason(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Generators = append(cfg.Generators, server.Generator{Name: "why", Spec: "toyseq:key=why"})
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	r := start(t, cfg)
	hc := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](h2(), r.url+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	sc := healthpb.NewHealthClient(stockAt(t, r.grpc)) // grpc-go, where hc is answered by Connect
	reasons := func() (readyz, viaConnect, viaGRPC string) {
		t.Helper()
		res, err := r.client.Get(r.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		h, err := hc.CallUnary(context.Background(), connect.NewRequest(&healthpb.HealthCheckRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		var md metadata.MD
		if _, err := sc.Check(context.Background(), &healthpb.HealthCheckRequest{}, grpc.Header(&md)); err != nil {
			t.Fatal(err)
		}
		return string(b), h.Header().Get("idkit-not-ready"), strings.Join(md.Get("idkit-not-ready"), "|")
	}
	if rz, c, g := reasons(); rz != "ready\n" && rz != "ready" || c != "" || g != "" {
		t.Errorf("ready server: /readyz %q, headers %q and %q", rz, c, g)
	}
	why := fmt.Errorf("%w: node 7 taken by “B”; retrying slot 7", schemes.ErrFenced)
	toyOf("why").fenced.Store(&why)
	rz, c, g := reasons()
	if !strings.Contains(rz, "retrying slot 7") {
		t.Errorf("/readyz %q lacks the reason", rz)
	}
	want := `generator "why": schemes: node ID no longer held: node 7 taken by ???B???; retrying slot 7`
	if c != want || g != want {
		t.Errorf("health headers:\nConnect %q\ngrpc-go %q\nwant    %q", c, g, want)
	}
	logs.waitFor(t, "retrying slot 7")
	toyOf("why").fenced.Store(nil)
	logs.waitFor(t, `msg="generator holds its node again" generator=why scheme="toyseq:start=0"`)
}

// TestNotReadyReasonNeedsToken: on a server with tokens, /readyz and the health answers of both
// stacks give a caller without a token the status only (503, NOT_SERVING, no idkit-not-ready
// header), and one with a token the reason.
func TestNotReadyReasonNeedsToken(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	cfg.Generators = append(cfg.Generators, server.Generator{Name: "hush", Spec: "toyseq:key=hush"})
	r := start(t, cfg)
	why := fmt.Errorf("%w: lease store 10.1.2.3:2379/secret-prefix: taken by host-b:4242", schemes.ErrFenced)
	toyOf("hush").fenced.Store(&why)
	hc := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](h2(), r.url+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	sc := healthpb.NewHealthClient(stockAt(t, r.grpc))
	for _, auth := range []string{"", "Bearer s3cret"} {
		req, _ := http.NewRequest("GET", r.url+"/readyz", nil)
		creq := connect.NewRequest(&healthpb.HealthCheckRequest{})
		ctx := context.Background()
		if auth != "" {
			req.Header.Set("Authorization", auth)
			creq.Header().Set("Authorization", auth)
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
		}
		res, err := r.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		h, err := hc.CallUnary(context.Background(), creq)
		if err != nil {
			t.Fatal(err)
		}
		var md metadata.MD
		g, err := sc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&md))
		if err != nil {
			t.Fatal(err)
		}
		got := string(b) + " | " + h.Header().Get("idkit-not-ready") + " | " + strings.Join(md.Get("idkit-not-ready"), "")
		told := strings.Count(got, "host-b:4242")
		if res.StatusCode != 503 || h.Msg.Status != healthpb.HealthCheckResponse_NOT_SERVING || g.Status != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("auth %q: /readyz %d, health %v and %v; want 503 and NOT_SERVING", auth, res.StatusCode, h.Msg.Status, g.Status)
		}
		if auth == "" && (told != 0 || strings.Contains(got, "hush") || strings.Contains(got, "10.1.2.3")) {
			t.Errorf("without a token the reason was told: %s", got)
		}
		if auth != "" && told != 3 {
			t.Errorf("with a token the reason was not told on all three: %s", got)
		}
	}
}
