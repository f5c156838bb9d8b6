package server_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tool returns the path of a command-line tool, or skips the test saying how to install it.
func tool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not on PATH (.ci/run installs it): go install %s", name, install)
		}
		t.Skipf("%s is not on PATH: go install %s", name, install)
	}
	return p
}

// runTool runs a command with a deadline and returns its combined output.
func runTool(t *testing.T, wantErr bool, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if (err != nil) != wantErr {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGRPCTools runs the tools people point at a gRPC service, against both listeners, with
// no .proto: grpcurl lists, describes and calls every IDService method through reflection and
// watches health; grpc-health-probe checks it. Each is skipped when it is not installed.
func TestGRPCTools(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, st := range stacks(r) {
		t.Run(st.name+"/grpcurl", func(t *testing.T) {
			grpcurl := tool(t, "grpcurl", "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4")
			out := runTool(t, false, grpcurl, "-plaintext", st.addr, "list")
			for _, svc := range wantServices {
				if !strings.Contains(out, svc+"\n") {
					t.Errorf("list: %q missing from\n%s", svc, out)
				}
			}
			out = runTool(t, false, grpcurl, "-plaintext", st.addr, "describe", "idkit.v1.IDService")
			for _, m := range []string{"rpc Next", "rpc Decode", "rpc Bounds", "rpc Generators", "rpc Ping"} {
				if !strings.Contains(out, m) {
					t.Errorf("describe: %q missing from\n%s", m, out)
				}
			}
			runTool(t, false, grpcurl, "-plaintext", st.addr, "describe", ".idkit.v1.NextRequest")
			for _, call := range []struct{ method, body, want string }{
				{"Next", `{"generator":"orders","count":3,"text":true}`, `"text"`},
				{"Decode", `{"generator":"orders","id":"2125628946673307648"}`, `"2125628946673307648"`},
				{"Bounds", `{"generator":"orders","at":"2026-01-01T00:00:00Z"}`, `"lo64"`},
				{"Generators", `{}`, `"orders"`},
				{"Ping", `{}`, `{`},
			} {
				out := runTool(t, false, grpcurl, "-plaintext", "-d", call.body, st.addr, "idkit.v1.IDService/"+call.method)
				if !strings.Contains(out, call.want) {
					t.Errorf("%s: %q missing from\n%s", call.method, call.want, out)
				}
			}
			out = runTool(t, false, grpcurl, "-plaintext", st.addr, "grpc.health.v1.Health/List")
			if !strings.Contains(out, `"idkit.v1.IDService"`) {
				t.Errorf("Health/List:\n%s", out)
			}
			// Watch streams until the client goes: grpcurl's -max-time ends it, with an error.
			out = runTool(t, true, grpcurl, "-plaintext", "-max-time", "1", st.addr, "grpc.health.v1.Health/Watch")
			if !strings.Contains(out, `"status": "SERVING"`) {
				t.Errorf("Health/Watch:\n%s", out)
			}
		})
		t.Run(st.name+"/grpc-health-probe", func(t *testing.T) {
			probe := tool(t, "grpc-health-probe", "github.com/grpc-ecosystem/grpc-health-probe@v0.4.62")
			if out := runTool(t, false, probe, "-addr", st.addr); !strings.Contains(out, "SERVING") {
				t.Errorf("grpc-health-probe: %s", out)
			}
			if out := runTool(t, false, probe, "-addr", st.addr, "-service", "idkit.v1.IDService"); !strings.Contains(out, "SERVING") {
				t.Errorf("grpc-health-probe -service: %s", out)
			}
		})
	}
}

// TestGRPCToolsWithTokens runs the tools against a server with tokens, on both listeners, as
// docs/service.md shows them: grpcurl lists and calls the open health service without a token
// (reflection is open), calls the IDService with one (-H) and is refused without;
// grpc-health-probe needs none; ghz runs with the token in --metadata alone. Each is skipped
// when it is not installed (but not under CI, whose .ci/run installs them).
func TestGRPCToolsWithTokens(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	r := start(t, cfg)
	for _, st := range stacks(r) {
		t.Run(st.name+"/grpcurl", func(t *testing.T) {
			grpcurl := tool(t, "grpcurl", "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4")
			if out := runTool(t, false, grpcurl, "-plaintext", st.addr, "grpc.health.v1.Health/Check"); !strings.Contains(out, `"SERVING"`) {
				t.Errorf("Health/Check without a token:\n%s", out)
			}
			if out := runTool(t, false, grpcurl, "-plaintext", "-H", "authorization: Bearer s3cret", "-d", `{"generator":"orders","count":2}`, st.addr, "idkit.v1.IDService/Next"); !strings.Contains(out, `"ids64"`) {
				t.Errorf("Next with a token:\n%s", out)
			}
			if out := runTool(t, true, grpcurl, "-plaintext", "-d", `{"generator":"orders","count":2}`, st.addr, "idkit.v1.IDService/Next"); !strings.Contains(out, "Unauthenticated") {
				t.Errorf("Next without a token:\n%s", out)
			}
		})
		t.Run(st.name+"/grpc-health-probe", func(t *testing.T) {
			probe := tool(t, "grpc-health-probe", "github.com/grpc-ecosystem/grpc-health-probe@v0.4.62")
			if out := runTool(t, false, probe, "-addr", st.addr, "-service", "idkit.v1.IDService"); !strings.Contains(out, "SERVING") {
				t.Errorf("grpc-health-probe: %s", out)
			}
		})
		t.Run(st.name+"/ghz", func(t *testing.T) {
			ghz := tool(t, "ghz", "github.com/bojand/ghz/cmd/ghz@v0.120.0")
			out := runTool(t, false, ghz, "--insecure", "--call", "idkit.v1.IDService/Next", "-d", `{"generator":"orders","count":10}`,
				"--metadata", `{"authorization":"Bearer s3cret"}`, "-n", "50", "-c", "2", st.addr)
			if !strings.Contains(out, "[OK]   50 responses") {
				t.Errorf("ghz with --metadata alone:\n%s", out)
			}
		})
	}
}
