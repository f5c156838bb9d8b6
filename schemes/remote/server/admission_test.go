package server_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/h2raw"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Issue 36's admission defects, with clients on several loopback addresses (127.0.0.0/8 is all
// loopback on Linux): a client at 127.0.0.2 is another address than one at 127.0.0.1.

// nextBody is a gRPC Next request for one ID of "orders" (twoGens).
var nextBody = h2raw.GRPCFrame(&v1.NextRequest{Generator: "orders", Count: 1})

// stall opens n requests on c whose bodies never come and returns how many the server took
// (the others were refused, or the connection closed).
func stall(c *h2raw.Conn, n int) {
	for range n {
		if _, err := c.Stall("POST", idkitv1connect.IDServiceNextProcedure, h2raw.GRPC...); err != nil {
			return
		}
	}
}

// nextOK makes one gRPC Next on a new connection from 127.0.0.1 and returns what came back,
// "" when the call succeeded.
func nextOK(t *testing.T, addr string, hdrs ...string) string {
	return h2raw.CallGRPC(t, "", addr, idkitv1connect.IDServiceNextProcedure, nextBody, 5*time.Second, hdrs...)
}

// TestStalledBodies: requests whose bodies never come (HEADERS of a unary RPC without
// END_STREAM, then only PINGs answered) from one client address do not hold the whole
// server-wide stream budget, on either stack: a client at another address is served; and such
// a request ends once Config.BodyTimeout has passed, which gives its slot back. (The old server
// let 40 of them, at its MaxTotalStreams 40, refuse everyone else with UNAVAILABLE for good.)
func TestStalledBodies(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.MaxTotalStreams = 40 // a quarter, 10, from one address (MaxAddrStreams' default)
	cfg.BodyTimeout = 500 * time.Millisecond
	r := start(t, cfg)
	for _, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) {
			var held []*h2raw.Conn
			for range 4 {
				c := h2raw.DialFrom(t, "127.0.0.2", st.addr)
				stall(c, 10)
				held = append(held, c)
			}
			time.Sleep(300 * time.Millisecond) // the server has seen them all
			if got := nextOK(t, st.addr); got != "" {
				t.Errorf("40 stalled requests from 127.0.0.2 (MaxTotalStreams 40): a Next from 127.0.0.1 got %s", got)
			}
			for _, c := range held {
				c.Close()
			}
			time.Sleep(100 * time.Millisecond) // their slots are given back
			c := h2raw.DialFrom(t, "127.0.0.3", st.addr)
			id, err := c.Stall("POST", idkitv1connect.IDServiceNextProcedure, h2raw.GRPC...)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := c.ReadWithin(id, 3*time.Second)
			if err != nil {
				t.Errorf("a request whose body never comes (BodyTimeout %v): no end 3s on (%v)", cfg.BodyTimeout, err)
			} else {
				t.Logf("a stalled request ended after %v: %s", time.Since(start).Round(time.Millisecond), res)
			}
		})
	}
}

// TestBareConnectsEvict: on a server with tokens, a flood of bare TCP connects (nothing sent)
// from one address does not close the fresh connections of token holders at another address
// before their first request, on either stack (the old server closed the oldest connection
// without a token yet, usually a token holder's fresh one: 6-13% of their requests reset in
// issue 36). The control floods from the token holders' own address, which shares their
// fate, and must see resets.
func TestBareConnectsEvict(t *testing.T) {
	t.Parallel()
	const calls = 60
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	cfg.MaxOpenConns = 2
	r := start(t, cfg)
	for _, st := range stacks(r) {
		for _, from := range []string{"127.0.0.2", "127.0.0.1"} {
			control := from == "127.0.0.1"
			t.Run(fmt.Sprintf("%s/flood-from-%s", st.name, from), func(t *testing.T) {
				stop := h2raw.FloodConnects(from, st.addr, 1, 64, 200*time.Microsecond) // a flood, not a SYN backlog overflow
				time.Sleep(100 * time.Millisecond)
				failed, first := 0, ""
				for range calls {
					if got := nextOK(t, st.addr, "authorization", "Bearer s3cret"); got != "" {
						failed++
						if first == "" {
							first = got
						}
					}
				}
				stop()
				t.Logf("%d of %d token holders' calls on fresh connections failed (first: %s)", failed, calls, first)
				if !control && failed > 0 {
					t.Errorf("a flood of bare connects from %s failed %d of %d token holders' calls from 127.0.0.1 (first: %s)", from, failed, calls, first)
				}
				if control && failed == 0 {
					t.Errorf("control: a flood from the token holders' own address failed none of their calls: the test cannot see evictions")
				}
			})
		}
	}
}

// TestProbesAtBound: at the MaxTotalStreams bound, the probes (/healthz, /readyz, /metrics and
// the gRPC health service, on both stacks) are still answered from a small reserve, while a
// Next is refused with UNAVAILABLE (the control: the bound is reached). The old server refused
// them all with 503, so a busy server failed its liveness probe and could not be scraped.
func TestProbesAtBound(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.MaxTotalStreams = 8 // and 2 from one address
	cfg.BodyTimeout = time.Minute
	r := start(t, cfg)
	sts := stacks(r)
	for i := range 4 { // the bound, held from four addresses, each within its share
		stall(h2raw.DialFrom(t, fmt.Sprintf("127.0.0.%d", 10+i), sts[0].addr), 2)
	}
	time.Sleep(300 * time.Millisecond)
	for _, st := range sts {
		if got := nextOK(t, st.addr); got == "" {
			t.Errorf("%s: control: a Next at the bound was served: the bound is not reached", st.name)
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		res, err := r.client.Get(r.url + path)
		if err != nil {
			t.Errorf("GET %s at the bound: %v", path, err)
			continue
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("GET %s at the bound: %s", path, res.Status)
		}
	}
	for _, st := range sts {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := healthpb.NewHealthClient(stockAt(t, st.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))).Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err != nil || res.Status != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("%s: gRPC health Check at the bound: %v, %v", st.name, res, err)
		}
	}
}
