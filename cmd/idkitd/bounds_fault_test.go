//go:build fault

// The server-wide memory bound of issue 24, with real processes: it runs with `make fault`.
// Its quick in-process counterparts in `make test` are TestTotalBytesBounded,
// TestZeroWindowStall, TestOpenWatchBound and TestMaxConns (schemes/remote/server).

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/h2raw"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"golang.org/x/net/http2"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestFaultConnsFlood is issue 24's reproduction: many connections, each announcing a zero
// stream window (so no answer ever becomes writable) and opening 100 streams it never reads,
// against both of idkitd's listeners, with its default bounds; the RSS of the process is
// measured once it has settled.
//
//   - without a token: 200 connections × 100 grpc.health.v1.Health/Watch streams to an idkitd
//     with --tokens, sending none: the RSS must grow by less than 64 MB (the old code grew
//     from 21 MB to 399 MB);
//   - with a token: 24 connections × 100 Next streams of 10,000 text UUIDv7: less than 256 MB
//     (old: +262 MB on net/http, +338 MB on grpc-go).
//
// Each control lifts the server-wide bounds (--max-conns, --max-total-streams,
// --max-total-bytes, --max-open-streams, --max-open-watches, --max-open-conns, and
// --write-timeout, which
// closes a connection whose answer stays unwritten) and must grow past the same bound; the
// Next control also raises --max-conn-bytes to 24 MiB, since 24 connections of the default
// 16 MiB sit right at 256 MB.
func TestFaultConnsFlood(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	bin := buildIdkitd(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lifted := []string{"--max-conns", "100000", "--max-total-streams", "1000000", "--max-total-bytes", strconv.Itoa(1 << 40),
		"--max-open-streams", "1000000", "--max-open-watches", "1000000", "--max-open-conns", "100000", "--write-timeout", "1h"}
	watch := h2raw.GRPCFrame(&healthpb.HealthCheckRequest{})
	next := h2raw.GRPCFrame(&v1.NextRequest{Generator: "keys", Count: 10_000, Text: true})
	for _, tc := range []struct {
		name    string
		extra   []string
		conns   int
		path    string
		body    []byte
		auth    bool
		bound   int64
		control bool
	}{
		{"no-token-watch/limits", nil, 200, "/grpc.health.v1.Health/Watch", watch, false, 64 << 20, false},
		{"no-token-watch/control", lifted, 200, "/grpc.health.v1.Health/Watch", watch, false, 64 << 20, true},
		{"token-next/limits", nil, 24, idkitv1connect.IDServiceNextProcedure, next, true, 256 << 20, false},
		{"token-next/control", append([]string{"--max-conn-bytes", strconv.Itoa(24 << 20)}, lifted...), 24, idkitv1connect.IDServiceNextProcedure, next, true, 256 << 20, true},
	} {
		for _, grpcPort := range []bool{false, true} {
			stack := map[bool]string{false: "net-http", true: "grpc-go"}[grpcPort]
			t.Run(tc.name+"/"+stack, func(t *testing.T) {
				addr, gaddr := freePorts(t)
				args := append([]string{"--listen", addr, "--grpc-listen", gaddr, "--gen", "keys=uuidv7", "--tokens", tokens, "--shutdown-delay", "0"}, tc.extra...)
				p := startProc(t, bin, addr, args...)
				target := addr
				if grpcPort {
					target = gaddr
				}
				before := p.settledRSS(t)
				hdrs := h2raw.GRPC
				if tc.auth {
					hdrs = append(append([]string{}, h2raw.GRPC...), "authorization", "Bearer s3cret")
				}
				conns := make([]*h2raw.Conn, tc.conns)
				for i := range conns {
					conns[i] = h2raw.Dial(t, target, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
					for range 100 {
						if _, err := conns[i].TrySend("POST", tc.path, tc.body, hdrs...); err != nil {
							break // the server closed it (a bound)
						}
					}
				}
				time.Sleep(3 * time.Second) // a loaded machine makes the answers slowly: let it
				after := p.settledRSS(t)
				grew := after - before
				t.Logf("%d conns × 100 unread streams: RSS %.0f MB -> %.0f MB (+%.0f MB; bound %d MB)", tc.conns, float64(before)/1e6, float64(after)/1e6, float64(grew)/1e6, tc.bound>>20)
				switch {
				case !tc.control && grew >= tc.bound:
					t.Errorf("RSS grew %.0f MB, want under %d MB", float64(grew)/1e6, tc.bound>>20)
				case tc.control && grew <= tc.bound:
					t.Errorf("control: RSS grew only %.0f MB with the bounds lifted, want over %d MB: the test cannot see the fault", float64(grew)/1e6, tc.bound>>20)
				}
				for _, c := range conns {
					c.Close()
				}
			})
		}
	}
}
