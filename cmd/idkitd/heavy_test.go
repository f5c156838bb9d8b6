//go:build fault

// The ID service's heavy real-process tests run with `make fault` (go test -tags fault), not in
// `make test`: the full one-connection flood of issue 17 against an idkitd binary, and rolling
// restarts of two idkitd processes under a health-checking round-robin client. Each has a
// control run with the protection off that must show the fault. Their fast counterparts in
// `make test` are TestFloodBounded, TestWriteStall and TestRollout (schemes/remote/server).

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/h2raw"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/health" // client-side health checking
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// proc is an idkitd process started with the arguments a test chose (startIdkitd, in
// pause_fault_test.go, starts one with a single generator).
type proc struct {
	cmd  *exec.Cmd
	addr string // --listen
	done chan struct{}
	err  error
	logs *lockedWriter
	buf  *strings.Builder
}

// freePorts returns two loopback addresses nothing listens on now, for idkitd's --listen and
// --grpc-listen. Both listeners stay open until both are picked: a port taken and closed
// one at a time can be handed out again by the next pick, and the second listen then fails
// with "address already in use" (seen once in TestFaultFlood under make fault).
func freePorts(t *testing.T) (string, string) {
	t.Helper()
	var addrs [2]string
	for i := range addrs {
		ln, err := (&netListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs[i] = ln.Addr().String()
	}
	return addrs[0], addrs[1]
}

// startProc starts idkitd with args (which must include --listen addr) and waits until its
// /readyz answers 200.
func startProc(t *testing.T, bin, addr string, args ...string) *proc {
	t.Helper()
	buf := &strings.Builder{}
	p := &proc{cmd: exec.Command(bin, args...), addr: addr, done: make(chan struct{}), buf: buf, logs: &lockedWriter{w: buf}}
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		if res, err := httpGet("http://" + addr + "/readyz"); err == nil && res == 200 {
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("idkitd %v exited: %v\n%s", args, p.err, p.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("idkitd %v not ready after 30s\n%s", args, p.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) log() string {
	p.logs.mu.Lock()
	defer p.logs.mu.Unlock()
	return p.buf.String()
}

// rss is the process's resident set size in bytes.
func (p *proc) rss(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/PID/status")
	return 0
}

// settledRSS waits until the RSS stays within 2 MB for three looks in a row (up to a minute).
func (p *proc) settledRSS(t *testing.T) int64 {
	last, still := p.rss(t), 0
	for deadline := time.Now().Add(time.Minute); still < 3 && time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		now := p.rss(t)
		if d := now - last; d < 2<<20 && d > -2<<20 {
			still++
		} else {
			still = 0
		}
		last = now
	}
	return last
}

// TestFaultFlood is issue 17's reproduction at full size: one connection opens 2,000 streams
// that each ask for 10,000 text UUIDv7 and reads nothing, against both of idkitd's listeners;
// the process's RSS must grow by less than 100 MB. The control lifts the limits
// (--max-streams, --max-conn-bytes, and the server-wide --max-total-streams and
// --max-total-bytes) and sends 500 such streams: the RSS must grow by more
// than 250 MB (the unlimited grpc-go path of the old code grew from 22 MB to 2.2 GB).
func TestFaultFlood(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	bin := buildIdkitd(t)
	for _, tc := range []struct {
		name    string
		extra   []string
		streams int
		check   func(grew int64) bool
		want    string
	}{
		{"limits", nil, 2000, func(g int64) bool { return g < 100<<20 }, "under 100 MB"},
		{"control", []string{"--max-streams", "100000", "--max-conn-bytes", strconv.Itoa(1 << 40), "--max-total-streams", "100000", "--max-total-bytes", strconv.Itoa(1 << 40)}, 500, func(g int64) bool { return g > 250<<20 }, "over 250 MB (the fault)"},
	} {
		for _, grpcPort := range []bool{false, true} {
			stack := map[bool]string{false: "net-http", true: "grpc-go"}[grpcPort]
			t.Run(tc.name+"/"+stack, func(t *testing.T) {
				addr, gaddr := freePorts(t)
				p := startProc(t, bin, addr, append([]string{"--listen", addr, "--grpc-listen", gaddr, "--gen", "keys=uuidv7", "--shutdown-delay", "0"}, tc.extra...)...)
				for range 20 { // warm up: the service as it runs, not as it starts
					httpGet("http://" + addr + "/v1/next/keys?n=10000")
				}
				target := addr
				if grpcPort {
					target = gaddr
				}
				before := p.settledRSS(t)
				c := h2raw.Dial(t, target)
				body := h2raw.GRPCFrame(&v1.NextRequest{Generator: "keys", Count: 10_000, Text: true})
				for range tc.streams {
					c.Send("POST", idkitv1connect.IDServiceNextProcedure, body, h2raw.GRPC...)
				}
				after := p.settledRSS(t)
				grew := after - before
				t.Logf("%d unread streams of 10,000 text UUIDv7: RSS %.0f MB -> %.0f MB", tc.streams, float64(before)/1e6, float64(after)/1e6)
				if !tc.check(grew) {
					t.Errorf("RSS grew %.0f MB, want %s", float64(grew)/1e6, tc.want)
				}
				c.Close()
			})
		}
	}
}

// TestFaultRollout restarts two idkitd processes one after the other under a grpc-go client
// that balances round robin over the instances its health checks call SERVING, at 5,000
// requests/s; while each is shutting down, new clients that know only its address (a proxy
// or DNS that has not caught up) call it too. With --shutdown-delay no call fails and no ID
// repeats, on either listener. Controls: without the delay the late clients' calls fail; with
// both instances on one node, IDs repeat.
func TestFaultRollout(t *testing.T) {
	bin := buildIdkitd(t)
	for _, grpcPort := range []bool{false, true} {
		stack := map[bool]string{false: "net-http", true: "grpc-go"}[grpcPort]
		t.Run(stack, func(t *testing.T) {
			r := heavyRollout(t, bin, grpcPort, "2s", [2]int{1, 2})
			if r.failed > 0 || r.dups > 0 || r.late == 0 {
				t.Errorf("%d failed calls (first: %v), %d duplicate IDs, %d late calls", r.failed, r.firstErr, r.dups, r.late)
			}
		})
		t.Run(stack+"/control-no-delay", func(t *testing.T) {
			if r := heavyRollout(t, bin, grpcPort, "0", [2]int{1, 2}); r.failed == 0 {
				t.Errorf("without the shutdown delay no call failed: the test cannot see what it looks for")
			}
		})
		t.Run(stack+"/control-one-node", func(t *testing.T) {
			if r := heavyRollout(t, bin, grpcPort, "2s", [2]int{1, 1}); r.dups == 0 {
				t.Errorf("two instances on one node repeated no ID: the test cannot see what it looks for")
			}
		})
	}
}

type rolloutResult struct {
	calls, failed, dups, late int
	firstErr                  error
}

func heavyRollout(t *testing.T, bin string, grpcPort bool, delay string, nodes [2]int) rolloutResult {
	dir := t.TempDir()
	type inst struct {
		p           *proc
		addr, gaddr string
		args        []string
	}
	var insts [2]*inst
	for i := range insts {
		in := &inst{}
		in.addr, in.gaddr = freePorts(t)
		spec := fmt.Sprintf("orders=snowflake:layout=twitter,node=%d,marks=file:%s", nodes[i], filepath.Join(dir, fmt.Sprint(i)))
		in.args = []string{"--listen", in.addr, "--grpc-listen", in.gaddr, "--gen", spec, "--shutdown-delay", delay, "--log-format", "json"}
		in.p = startProc(t, bin, in.addr, in.args...)
		insts[i] = in
	}
	target := func(in *inst) string {
		if grpcPort {
			return in.gaddr
		}
		return in.addr
	}
	res := manual.NewBuilderWithScheme("rollout")
	res.InitialState(resolver.State{Addresses: []resolver.Address{{Addr: target(insts[0])}, {Addr: target(insts[1])}}})
	cc, err := grpc.NewClient(res.Scheme()+":///idkitd", grpc.WithResolvers(res),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}],"healthCheckConfig":{"serviceName":""}}`),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, MaxDelay: 250 * time.Millisecond}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := v1.NewIDServiceClient(cc)
	var (
		mu   sync.Mutex
		ids  = make(map[uint64]int, 200_000)
		out  rolloutResult
		late atomic.Int32
	)
	call := func(c v1.IDServiceClient) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := c.Next(ctx, &v1.NextRequest{Generator: "orders", Count: 1})
		mu.Lock()
		defer mu.Unlock()
		out.calls++
		if err != nil {
			out.failed++
			if out.firstErr == nil {
				out.firstErr = err
			}
			return false
		}
		for _, id := range r.Ids64 {
			ids[id]++
		}
		return true
	}
	// 5,000 calls a second: 5 released every millisecond to 64 workers.
	tokens := make(chan struct{}, 10_000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		defer close(tokens)
		start, sent := time.Now(), 0
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				for due := int(now.Sub(start).Seconds() * 5000); sent < due; sent++ {
					tokens <- struct{}{}
				}
			}
		}
	})
	for range 64 {
		wg.Go(func() {
			for range tokens {
				call(c)
			}
		})
	}
	began := time.Now()
	time.Sleep(2 * time.Second)
	for i, in := range insts {
		in.p.cmd.Process.Signal(syscall.SIGTERM)
		var lateWG sync.WaitGroup
		for _, after := range []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 900 * time.Millisecond} {
			lateWG.Go(func() {
				time.Sleep(after)
				lc, err := grpc.NewClient(target(in), grpc.WithTransportCredentials(insecure.NewCredentials()))
				if err != nil {
					t.Error(err)
					return
				}
				defer lc.Close()
				if call(v1.NewIDServiceClient(lc)) {
					late.Add(1)
				}
			})
		}
		select {
		case <-in.p.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("instance %d still running 30s after SIGTERM\n%s", i, in.p.log())
		}
		if in.p.err != nil {
			t.Errorf("instance %d after SIGTERM: %v\n%s", i, in.p.err, in.p.log())
		}
		lateWG.Wait() // a restart any sooner would answer them in the control
		in.p = startProc(t, bin, in.addr, in.args...)
		time.Sleep(2 * time.Second)
	}
	close(stop)
	wg.Wait()
	secs := time.Since(began).Seconds()
	for _, n := range ids {
		if n > 1 {
			out.dups += n - 1
		}
	}
	out.late = int(late.Load())
	t.Logf("shutdown delay %s, nodes %v: %d calls (%.0f/s), %d failed, %d duplicate IDs, %d late clients answered", delay, nodes, out.calls, float64(out.calls)/secs, out.failed, out.dups, out.late)
	return out
}
