package main

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/certtest"
	"github.com/idkit/idkit/schemes/remote/server"
)

func TestLoadHelp(t *testing.T) {
	r := idbench(t, "", "load", "--help")
	if r.err != nil {
		t.Fatal(r.err)
	}
	golden(t, "help_load.golden", r.stdout)
}

func TestLoadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"load"},
		{"load", "--spawn", "--addr", "127.0.0.1:1"},
		{"load", "--addr", "127.0.0.1:1", "--gen", "a=ulid"},
		{"load", "--spawn", "--protocol", "soap"},
		{"load", "--spawn", "--clients", "0"},
		{"load", "--spawn", "--rounds", "0"},
		{"load", "--spawn", "--duration", "0s"},
		{"load", "--spawn", "--rate", "-1"},
		{"load", "--spawn", "--rate", "1e8"},
		{"load", "--spawn", "--requests", "2", "--rounds", "3"},
		{"load", "--spawn", "--json", "--markdown"},
		{"load", "--spawn", "--token-env", "IDKIT_TEST_SURELY_UNSET"},
		{"load", "--spawn", "extra"},
		{"load", "--spawn", "--stack", "nginx"},
		{"load", "--spawn", "--stack", "grpc-go", "--protocol", "json"},
		{"load", "--spawn", "--stack", "grpc-go", "--protocol", "grpc-connect"},
		{"load", "--addr", "127.0.0.1:1", "--stack", "grpc-go"},
	} {
		if r := idbench(t, "", args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage); stderr %s", args, r.code, r.stderr)
		}
	}
	// A token pasted where its variable's name belongs is refused and not shown (issue 24,
	// item 7).
	const token = "s3cret-T0ken/value"
	r := idbench(t, "", "load", "--spawn", "--token-env", token)
	if r.code != 2 || strings.Contains(r.stdout+r.stderr, "s3cret") || !strings.Contains(r.stderr, "--token-env wants the name of an environment variable") {
		t.Errorf("--token-env %s: exit %d, stderr %s; want 2 (usage), the token not shown", token, r.code, r.stderr)
	}
}

// TestLoadSpawn runs short loads against an in-process idkitd over every protocol: requests
// succeed, IDs/s is batch × req/s, the floor is measured, and paced runs send exactly
// --requests requests and report the latency from the schedule, never below the latency from
// the send, and the send lag.
func TestLoadSpawn(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		batch  int
		client string
	}{
		{[]string{"--protocol", "grpc"}, 1, "google.golang.org/grpc"},
		{[]string{"--protocol", "grpc", "--batch", "1000", "--conns", "3"}, 1000, "google.golang.org/grpc"},
		{[]string{"--protocol", "connect", "--batch", "100"}, 100, "connectrpc.com/connect"},
		{[]string{"--protocol", "json", "--gen", "s=ulid"}, 1, "connectrpc.com/connect"},
		{[]string{"--protocol", "grpc-connect"}, 1, "connectrpc.com/connect"},
		{[]string{"--protocol", "grpc", "--stack", "grpc-go"}, 1, "google.golang.org/grpc"},
		{[]string{"--protocol", "grpc", "--stack", "net-http"}, 1, "google.golang.org/grpc"},
		{[]string{"--protocol", "grpc", "--stack", "grpc-go", "--batch", "50"}, 50, "google.golang.org/grpc"},
		{[]string{"--protocol", "http", "--batch", "10", "--conns", "2"}, 10, "net/http"},
		{[]string{"--rate", "400", "--requests", "60", "--duration", "1m", "--rounds", "1"}, 1, "google.golang.org/grpc"},
		{[]string{"--rate", "2000", "--requests", "100", "--rounds", "3", "--protocol", "grpc", "--conns", "2"}, 1, "google.golang.org/grpc"},
		{[]string{"--rate", "2000", "--requests", "50", "--rounds", "1", "--protocol", "connect"}, 1, "connectrpc.com/connect"},
		{[]string{"--rate", "2000", "--requests", "50", "--rounds", "1", "--protocol", "http"}, 1, "net/http"},
		{[]string{"--rate", "3000", "--rounds", "1"}, 1, "google.golang.org/grpc"}, // rounds: the default 3 is the case above
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"load", "--spawn", "--duration", "300ms", "--warmup", "50ms", "--clients", "2", "--json"}, tc.args...)
			r := idbench(t, "", args...)
			if r.err != nil {
				t.Fatalf("%v: %s", r.err, r.stderr)
			}
			var rep loadReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("%v in %s", err, r.stdout)
			}
			if len(rep.Results) != 2 || rep.Results[0].Kind != "next" || rep.Results[1].Kind != "floor" || rep.FloorRatio <= 0 {
				t.Fatalf("report %+v", rep)
			}
			next := rep.Results[0]
			if next.Errors != 0 || next.Requests == 0 || next.Latency.P50 <= 0 || next.Latency.Max < next.Latency.P99 {
				t.Errorf("next %+v", next)
			}
			if got, want := next.IDsPerSec, next.RequestsPerSec*float64(tc.batch); got < want*0.999 || got > want*1.001 {
				t.Errorf("IDs/s %v, want %v (batch %d × req/s)", got, want, tc.batch)
			}
			if rep.Client != tc.client {
				t.Errorf("client %q, want %q", rep.Client, tc.client)
			}
			// gRPC goes to the gRPC port (grpc-go) unless --stack says otherwise, as
			// docs/service.md sends gRPC clients there; the other protocols to the main port.
			flags := strings.Join(tc.args, " ")
			want := "net-http"
			if strings.Contains(flags, "grpc-go") || !strings.Contains(flags, "--stack") && (!strings.Contains(flags, "--protocol") || strings.Contains(flags, "--protocol grpc ") || strings.HasSuffix(flags, "--protocol grpc")) {
				want = "grpc-go"
			}
			if rep.Stack != want {
				t.Errorf("stack %q, want %q", rep.Stack, want)
			}
			for _, r := range rep.Results {
				// Requests cost the process some CPU: getrusage counts it (Linux, in CI).
				if runtime.GOOS == "linux" && r.CPUPerRequest <= 0 {
					t.Errorf("%s: CPU per request %v", r.Kind, r.CPUPerRequest)
				}
				paced := rep.Rate > 0
				if paced != (r.Scheduled != nil) || paced != (r.SendLag != nil) {
					t.Fatalf("%s: rate %v but latency from schedule %v, send lag %v", r.Kind, rep.Rate, r.Scheduled, r.SendLag)
				}
				if !paced {
					continue
				}
				if want := requestsFlag(t, tc.args); want > 0 && r.Requests != want {
					t.Errorf("%s: --requests %d made %d requests", r.Kind, want, r.Requests)
				}
				if r.Sent != r.Requests+r.Errors || r.Unsent != 0 {
					t.Errorf("%s: %d sent, %d unsent for %d requests and %d errors", r.Kind, r.Sent, r.Unsent, r.Requests, r.Errors)
				}
				s, l, g := *r.Scheduled, r.Latency, *r.SendLag
				if s.P50 < l.P50 || s.P90 < l.P90 || s.P99 < l.P99 || s.P999 < l.P999 || s.Max < l.Max {
					t.Errorf("%s: latency from schedule %+v below latency from send %+v", r.Kind, s, l)
				}
				if g.P50 < 0 || g.P99 < g.P50 || g.Max < g.P99 {
					t.Errorf("%s: send lag %+v", r.Kind, g)
				}
			}
		})
	}
}

// requestsFlag returns the value of --requests in args, or 0.
func requestsFlag(t *testing.T, args []string) int64 {
	t.Helper()
	for i, a := range args {
		if a == "--requests" {
			var n int64
			if err := json.Unmarshal([]byte(args[i+1]), &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

func TestLoadTableAndMarkdown(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  []string
	}{
		{nil, []string{"next", "floor", "p99", "of the floor's requests/s", "protocol grpc (google.golang.org/grpc client, served by grpc-go)", "4 clients on 1 connections"}},
		{[]string{"--markdown", "--stack", "net-http"}, []string{"next", "floor", "p99", "of the floor's requests/s", "protocol grpc (`google.golang.org/grpc` client, served by net/http with Connect)"}},
		{[]string{"--stack", "grpc-go"}, []string{"protocol grpc (google.golang.org/grpc client, served by grpc-go)"}},
		{[]string{"--rate", "2000", "--protocol", "connect"}, []string{"from schedule", "send lag", "paced open loop at 2,000 req/s", "32 workers", "(connectrpc.com/connect client, served by net/http with Connect)"}},
		{[]string{"--rate", "2000", "--markdown"}, []string{"| from schedule |", "| send lag |", "paced open loop at 2,000 req/s"}},
	} {
		f := strings.Join(tc.flags, " ")
		args := append([]string{"load", "--spawn", "--duration", "150ms", "--warmup", "0s", "--rounds", "1"}, tc.flags...)
		r := idbench(t, "", args...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		for _, want := range tc.want {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, r.stdout)
			}
		}
		if strings.Contains(f, "--markdown") && !strings.Contains(r.stdout, "#### `idbench load --spawn --duration 150ms") {
			t.Errorf("markdown lacks the command:\n%s", r.stdout)
		}
	}
}

// serveIDs serves cfg on a free loopback port until the test ends and returns the address.
func serveIDs(t *testing.T, cfg server.Config) string {
	t.Helper()
	cfg.Listen, cfg.ShutdownDelay = "127.0.0.1:0", -1
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
	t.Cleanup(func() { cancel(); wait() })
	return addrs.HTTP
}

// TestLoadAddrWithToken drives a running server that wants a bearer token: with --token-env
// every request succeeds; without it the run fails naming the problem.
func TestLoadAddrWithToken(t *testing.T) {
	addr := serveIDs(t, server.Config{Generators: []server.Generator{{Name: "ids", Spec: "uuidv7"}}, Tokens: []string{"tok-123"}})
	t.Setenv("IDKIT_TEST_LOAD_TOKEN", "tok-123")
	for _, tc := range []struct{ proto, rate string }{{"grpc", "0"}, {"grpc", "2000"}, {"connect", "0"}, {"http", "0"}} {
		proto := tc.proto
		args := []string{"load", "--addr", addr, "--generator", "ids", "--protocol", proto, "--rate", tc.rate, "--duration", "200ms", "--warmup", "0s", "--rounds", "1", "--json"}
		r := idbench(t, "", append(args, "--token-env", "IDKIT_TEST_LOAD_TOKEN")...)
		if r.err != nil {
			t.Fatalf("%s with the token: %v %s", proto, r.err, r.stderr)
		}
		var rep loadReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		for _, res := range rep.Results {
			if res.Errors != 0 || res.Requests == 0 || rep.Spec != "uuidv7" {
				t.Errorf("%s: %+v", proto, rep)
			}
		}
		r = idbench(t, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "unauthenticated") || strings.Contains(r.stderr+r.stdout, "tok-123") {
			t.Errorf("%s without the token: exit %d, stderr %s", proto, r.code, r.stderr)
		}
	}
}

// TestLoadTLS drives an idkitd that speaks TLS over every protocol with --tls-ca, and fails
// clearly when the certificate is not trusted or TLS is not asked for.
func TestLoadTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := certtest.SelfSigned(t, dir)
	addr := serveIDs(t, server.Config{Generators: []server.Generator{{Name: "ids", Spec: "ulid"}}, TLSCert: cert, TLSKey: key})
	base := []string{"load", "--addr", addr, "--generator", "ids", "--duration", "150ms", "--warmup", "0s", "--rounds", "1", "--json"}
	for _, proto := range []string{"grpc", "connect", "json", "grpc-connect", "http"} {
		r := idbench(t, "", append(base, "--protocol", proto, "--tls-ca", cert)...)
		if r.err != nil {
			t.Fatalf("%s over TLS: %v %s", proto, r.err, r.stderr)
		}
		var rep loadReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if !rep.TLS || rep.Results[0].Requests == 0 || rep.Results[0].Errors != 0 {
			t.Errorf("%s over TLS: %+v", proto, rep)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tls"}, 1, "certificate"}, // the system does not trust the test's certificate
		{nil, 1, addr},                        // cleartext to a TLS port
		{[]string{"--tls-ca", dir + "/nope.pem"}, 2, "--tls-ca"},
		{[]string{"--tls-ca", key}, 2, "no PEM certificate"},
	} {
		r := idbench(t, "", append(base, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if r := idbench(t, "", "load", "--spawn", "--tls"); r.code != 2 || !strings.Contains(r.stderr, "--tls and --tls-ca need --addr") {
		t.Errorf("--spawn --tls: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestLoadDefaultClients checks the default pool: 4 closed-loop clients, or 32 workers for a
// paced run, unless --clients says otherwise.
func TestLoadDefaultClients(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 4},
		{[]string{"--rate", "1000"}, 32},
		{[]string{"--rate", "1000", "--clients", "3"}, 3},
		{[]string{"--clients", "2"}, 2},
	} {
		args := append([]string{"load", "--spawn", "--requests", "20", "--rounds", "1", "--warmup", "0s", "--no-floor", "--json"}, tc.args...)
		r := idbench(t, "", args...)
		if r.err != nil {
			t.Fatalf("%q: %v %s", tc.args, r.err, r.stderr)
		}
		var rep loadReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Clients != tc.want {
			t.Errorf("%q: %d clients, want %d", tc.args, rep.Clients, tc.want)
		}
	}
}

// TestLoadCancel cancels a long paced run part way: idbench load returns the context's error
// (main says "interrupted").
func TestLoadCancel(t *testing.T) {
	for _, proto := range []string{"grpc", "connect"} {
		ctx, cancel := context.WithCancel(context.Background())
		stop := time.AfterFunc(300*time.Millisecond, cancel)
		done := make(chan result, 1)
		go func() {
			done <- idbenchCtx(ctx, t, "", "load", "--spawn", "--protocol", proto, "--rate", "2000", "--duration", "1h", "--warmup", "0s")
		}()
		select {
		case r := <-done:
			if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.stderr, "interrupted") {
				t.Errorf("%s: %v, stderr %q; want context.Canceled", proto, r.err, r.stderr)
			}
		case <-time.After(10 * time.Second): // a hang check, not a speed goal
			t.Fatalf("%s: idbench load did not return after its context was cancelled", proto)
		}
		stop.Stop()
		cancel()
	}
}
