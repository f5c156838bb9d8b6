package remote_test

// Fault tests with real processes: the test binary runs itself again as an ID service (the
// helper mode of TestMain: server.Run with one generator, which is what cmd/idkitd does after
// reading its flags), and the tests SIGKILL, restart and fence those processes while clients
// draw IDs through the remote scheme. Each test has a control run without marks or leases
// that must find duplicates, to show that the check can see them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	"github.com/idkit/idkit/schemes/remote"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	helperEnv = "IDKIT_FAULT_HELPER" // set: run as an ID service
	listenEnv = "IDKIT_FAULT_LISTEN"
	specEnv   = "IDKIT_FAULT_SPEC"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helper())
	}
	os.Exit(etcdtest.Run(m))
}

// helper serves one generator "orders" until SIGTERM (or dies by SIGKILL).
func helper() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv, err := server.NewContext(ctx, server.Config{
		Listen:     os.Getenv(listenEnv),
		Generators: []server.Generator{{Name: "orders", Spec: os.Getenv(specEnv)}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	if err := srv.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// skewflake is the twitter-layout snowflake core with a clock that reads offset from the real
// one, registered for the fault tests: "skewflake:node=N,offset=-1500ms,marks=PATH|off". A
// process restarted with a negative offset is a host whose wall clock stepped back across
// the restart, the case that only persisted marks can cover.
type skewflake struct {
	g *schemes.Snowflake
	idkit.Codec
}

type offsetClock time.Duration

func (o offsetClock) Now() time.Time        { return time.Now().Add(time.Duration(o)) }
func (o offsetClock) Sleep(d time.Duration) { time.Sleep(d) }

func init() {
	idkit.Register("skewflake", func(_ context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
		node, _, err := sp.Uint("node", 1023)
		if err != nil {
			return nil, err
		}
		var offset time.Duration
		if v, ok := sp.Lookup("offset"); ok {
			if offset, err = time.ParseDuration(v); err != nil {
				return nil, sp.Errorf("offset=%s: %v", v, err)
			}
		}
		var marks schemes.MarkStore
		if v, ok := sp.Lookup("marks"); ok && v != "off" {
			marks = nodeid.NewFileMarks(v, node)
		}
		if err := sp.Done("node", "offset", "marks"); err != nil {
			return nil, err
		}
		g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: layouts.Twitter, Node: node, Clock: offsetClock(offset), Marks: marks})
		if err != nil {
			return nil, err
		}
		codec, err := idkit.NewCodec("snowflake:layout=twitter")
		if err != nil {
			return nil, err
		}
		return &skewflake{g: g, Codec: codec}, nil
	})
}

func (s *skewflake) Name() string { return "skewflake" }

func (s *skewflake) Next() (idkit.ID, error) {
	v, err := s.g.Next()
	return idkit.FromUint64(v), err
}

func (s *skewflake) NextBatch(dst []idkit.ID) error {
	buf := make([]uint64, len(dst))
	if err := s.g.NextN(buf); err != nil {
		return err
	}
	for i, v := range buf {
		dst[i] = idkit.FromUint64(v)
	}
	return nil
}

// proc is one service process.
type proc struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{} // closed when the process has ended; err is then its Wait error
	err  error
}

// spawn starts a helper serving spec on addr and waits until it is ready.
func spawn(t *testing.T, addr, spec string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", listenEnv+"="+addr, specEnv+"="+spec)
	return startProc(t, cmd, addr, spec)
}

// startProc starts cmd, a service that will listen on addr, and waits until it is ready.
func startProc(t *testing.T, cmd *exec.Cmd, addr, spec string) *proc {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, addr: addr, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("service for %s exited: %v\n%s", spec, p.err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("service for %s not ready after 20s\n%s", spec, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestFaultIdkitdBinary builds cmd/idkitd, SIGKILLs it mid-load and starts it again at once
// with the same node and mark file: no ID repeats and the clients see no error.
func TestFaultIdkitdBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/idkitd and runs for seconds")
	}
	bin := filepath.Join(t.TempDir(), "idkitd")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/idkit/idkit/cmd/idkitd")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building idkitd: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	spec := "orders=snowflake:layout=twitter,node=1,marks=file:" + filepath.Join(t.TempDir(), "orders.mark")
	run := func() *proc {
		return startProc(t, exec.Command(bin, "--listen", addr, "--grpc-listen", "off", "--gen", spec, "--shutdown-delay", "0"), addr, spec)
	}
	p := run()
	s := open(t, "remote:addr="+addr+",generator=orders,retry_for=30s")
	stop := loaders(t, []idkit.Scheme{s})
	time.Sleep(500 * time.Millisecond)
	p.kill()
	p = run()
	time.Sleep(time.Second)
	ids, errs := stop()
	dup := duplicates(ids)
	t.Logf("%d IDs, %d duplicates, %d client errors", len(ids), dup, len(errs))
	if dup > 0 || len(errs) > 0 || len(ids) < 10_000 {
		t.Errorf("%d duplicates and %d client errors among %d IDs (first error: %v)", dup, len(errs), len(ids), errs)
	}
	// SIGTERM drains and exits 0.
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	if p.err != nil {
		t.Errorf("idkitd after SIGTERM: %v", p.err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// loaders draw batches of IDs from the given remote schemes (round robin) in four goroutines
// until stop is called, which returns every ID drawn and the errors seen.
func loaders(t *testing.T, ss []idkit.Scheme) (stop func() ([]idkit.ID, []error)) {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		all  []idkit.ID
		errs []error
		wg   sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			var mine []idkit.ID
			for i := w; ctx.Err() == nil; i++ {
				buf := make([]idkit.ID, 50)
				err := ss[i%len(ss)].(interface {
					NextBatchContext(context.Context, []idkit.ID) error
				}).NextBatchContext(ctx, buf)
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				mine = append(mine, buf...)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	return func() ([]idkit.ID, []error) {
		cancel()
		wg.Wait()
		return all, errs
	}
}

func duplicates(ids []idkit.ID) int {
	seen := make(map[idkit.ID]struct{}, len(ids))
	dup := 0
	for _, id := range ids {
		if _, ok := seen[id]; ok {
			dup++
		}
		seen[id] = struct{}{}
	}
	return dup
}

// TestFaultKillRestart SIGKILLs the service mid-load and restarts it at once on a host whose
// clock now reads 1.5 s behind: with a mark file no ID repeats and the clients, retrying
// through the gap and the UNAVAILABLE answers while the clock catches up with the mark, see no
// error; without marks (the control) IDs repeat.
func TestFaultKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and runs for seconds")
	}
	for _, tc := range []struct {
		name    string
		marks   bool
		wantDup bool
	}{{"marks", true, false}, {"control without marks", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			marks := "off"
			if tc.marks {
				marks = t.TempDir() + "/orders.mark"
			}
			addr := freeAddr(t)
			p1 := spawn(t, addr, "skewflake:node=1,marks="+marks)
			s := open(t, "remote:addr="+addr+",generator=orders,retry_for=30s")
			stop := loaders(t, []idkit.Scheme{s})
			time.Sleep(500 * time.Millisecond)
			p1.kill()
			spawn(t, addr, "skewflake:node=1,offset=-1500ms,marks="+marks)
			time.Sleep(3 * time.Second) // past the 1.5 s the clock was behind
			ids, errs := stop()
			dup := duplicates(ids)
			t.Logf("%d IDs, %d duplicates, %d client errors", len(ids), dup, len(errs))
			if len(ids) < 10_000 {
				t.Fatalf("only %d IDs drawn", len(ids))
			}
			if tc.wantDup != (dup > 0) {
				t.Errorf("%d duplicates among %d IDs, want duplicates: %v", dup, len(ids), tc.wantDup)
			}
			if tc.marks && len(errs) > 0 {
				t.Errorf("clients saw %d errors across the restart, first: %v", len(errs), errs[0])
			}
		})
	}
}

// TestFaultTwoInstancesOnLeases runs two services whose nodes come from one etcd lease store,
// with clients spread over both: no duplicates. Then one instance loses its lease for good
// (the test revokes it and takes the slot): it claims another free slot by itself and serves
// again on that node, and still nothing repeats. The control gives both the same fixed node:
// IDs repeat.
func TestFaultTwoInstancesOnLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and runs for seconds")
	}
	ep := etcdtest.Endpoint(t)
	prefix := fmt.Sprintf("/idkit-test/remote/%d", time.Now().UnixNano())
	leased := "snowflake:layout=twitter,node=etcd://" + strings.TrimPrefix(ep, "http://") + prefix + ",lease_ttl=2s"
	for _, tc := range []struct {
		name    string
		spec    string
		wantDup bool
	}{{"leases", leased, false}, {"control with one fixed node", "snowflake:layout=twitter,node=1", true}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := spawn(t, freeAddr(t), tc.spec), spawn(t, freeAddr(t), tc.spec)
			sa := open(t, "remote:addr="+a.addr+",generator=orders,retry_for=2s")
			sb := open(t, "remote:addr="+b.addr+",generator=orders,retry_for=2s")
			stop := loaders(t, []idkit.Scheme{sa, sb})
			time.Sleep(1500 * time.Millisecond)
			if tc.wantDup {
				ids, _ := stop()
				if dup := duplicates(ids); dup == 0 {
					t.Errorf("control: no duplicates among %d IDs from two instances on one node", len(ids))
				} else {
					t.Logf("control: %d duplicates among %d IDs", dup, len(ids))
				}
				return
			}
			old := fenceInstance(t, ep, prefix, b.addr)
			// b must claim another slot by itself and serve on it; a keeps serving.
			c := idkitv1connect.NewIDServiceClient(http.DefaultClient, "http://"+b.addr)
			var node uint64
			waitFor(t, 10*time.Second, "instance b on a new node", func() bool {
				g, err := c.Generators(context.Background(), connect.NewRequest(&v1.GeneratorsRequest{}))
				if err != nil {
					return false
				}
				node = g.Msg.Generators[0].GetNode()
				return node != old && g.Msg.Generators[0].Ready
			})
			if _, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})); err != nil {
				t.Errorf("instance b on node %d: %v", node, err)
			}
			t.Logf("instance b lost node %d and serves on node %d", old, node)
			time.Sleep(500 * time.Millisecond)
			ids, errs := stop()
			dup := duplicates(ids)
			t.Logf("%d IDs, %d duplicates, %d client errors (from the fenced instance)", len(ids), dup, len(errs))
			if dup > 0 {
				t.Errorf("%d duplicates among %d IDs", dup, len(ids))
			}
			for _, err := range errs {
				if !errors.Is(err, remote.ErrUnavailable) && connect.CodeOf(errors.Unwrap(err)) != connect.CodeUnavailable {
					t.Errorf("client error other than unavailable: %v", err)
					break
				}
			}
		})
	}
}

// fenceInstance makes the instance at addr lose its node for good: it revokes the etcd lease
// behind its slot and holds the slot under another owner, so the instance cannot claim it
// back. It returns the node.
func fenceInstance(t *testing.T, ep, prefix, addr string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gens, err := idkitv1connect.NewIDServiceClient(http.DefaultClient, "http://"+addr).Generators(ctx, connect.NewRequest(&v1.GeneratorsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	node := gens.Msg.Generators[0].GetNode()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// The instance claims its slot back if it renews between the revoke and the test's claim
	// (nobody held the slot in between): revoke again until the test's claim wins.
	var l *nodeid.Lease
	for attempt := 0; l == nil; attempt++ {
		res, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		revoked := 0
		for _, kv := range res.Kvs {
			if kv.Lease != 0 && strings.HasSuffix(string(kv.Key), fmt.Sprintf("/slots/%d", node)) {
				if _, err := cli.Revoke(ctx, clientv3.LeaseID(kv.Lease)); err != nil {
					t.Fatal(err)
				}
				revoked++
			}
		}
		if revoked == 0 && attempt == 0 {
			var keys []string
			for _, kv := range res.Kvs {
				keys = append(keys, string(kv.Key))
			}
			t.Fatalf("no leased key for node %d under %s: %v", node, prefix, keys)
		}
		st, err := etcdlease.Open(etcdlease.Settings{Endpoints: []string{ep}, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		l, err = nodeid.Hold(ctx, st, nodeid.LeaseSettings{Nodes: layouts.Twitter.Nodes(), TTL: 2 * time.Second, Exact: true, Node: node, Owner: "fault-test"})
		if err != nil && (!errors.Is(err, nodeid.ErrHeld) || attempt == 9) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { l.Close() })
	return node
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
