package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
		{"load", "--spawn", "--json", "--markdown"},
		{"load", "--spawn", "--token-env", "IDKIT_TEST_SURELY_UNSET"},
		{"load", "--spawn", "extra"},
	} {
		if r := idbench(t, "", args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage); stderr %s", args, r.code, r.stderr)
		}
	}
}

// TestLoadSpawn runs short loads against an in-process idkitd over every protocol: requests
// succeed, IDs/s is batch × req/s, the floor is measured, and paced runs report latency from
// the schedule too.
func TestLoadSpawn(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		batch int
	}{
		{[]string{"--protocol", "grpc"}, 1},
		{[]string{"--protocol", "connect", "--batch", "100"}, 100},
		{[]string{"--protocol", "json", "--gen", "s=ulid"}, 1},
		{[]string{"--protocol", "http", "--batch", "10", "--conns", "2"}, 10},
		{[]string{"--rate", "400", "--requests", "60", "--duration", "1m"}, 1},
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
			if paced := rep.Rate > 0; paced != (next.Scheduled != nil) {
				t.Errorf("rate %v but latency from schedule %v", rep.Rate, next.Scheduled)
			}
			if rep.Rate > 0 && next.Requests != 60 {
				t.Errorf("--requests 60 made %d requests", next.Requests)
			}
		})
	}
}

func TestLoadTableAndMarkdown(t *testing.T) {
	for _, f := range []string{"", "--markdown"} {
		args := []string{"load", "--spawn", "--duration", "150ms", "--warmup", "0s", "--rounds", "1"}
		if f != "" {
			args = append(args, f)
		}
		r := idbench(t, "", args...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		for _, want := range []string{"next", "floor", "p99", "of the floor's requests/s"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, r.stdout)
			}
		}
		if f == "--markdown" && !strings.Contains(r.stdout, "#### `idbench load --spawn --duration 150ms") {
			t.Errorf("markdown lacks the command:\n%s", r.stdout)
		}
	}
}

// TestLoadAddrWithToken drives a running server that wants a bearer token: with --token-env
// every request succeeds; without it the run fails naming the problem.
func TestLoadAddrWithToken(t *testing.T) {
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", Generators: []server.Generator{{Name: "ids", Spec: "uuidv7"}}, Tokens: []string{"tok-123"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, wait, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })
	t.Setenv("IDKIT_TEST_LOAD_TOKEN", "tok-123")
	for _, proto := range []string{"grpc", "http"} {
		args := []string{"load", "--addr", addr, "--generator", "ids", "--protocol", proto, "--duration", "200ms", "--warmup", "0s", "--rounds", "1", "--json"}
		r := idbench(t, "", append(args, "--token-env", "IDKIT_TEST_LOAD_TOKEN")...)
		if r.err != nil {
			t.Fatalf("%s with the token: %v %s", proto, r.err, r.stderr)
		}
		var rep loadReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Results[0].Errors != 0 || rep.Results[0].Requests == 0 || rep.Spec != "uuidv7" {
			t.Errorf("%s: %+v", proto, rep)
		}
		r = idbench(t, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "unauthenticated") || strings.Contains(r.stderr+r.stdout, "tok-123") {
			t.Errorf("%s without the token: exit %d, stderr %s", proto, r.code, r.stderr)
		}
	}
}
