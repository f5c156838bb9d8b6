//go:build fault

// The pause fault test runs with `make fault` (go test -tags fault), not in `make test`: it
// starts real idkitd processes, a real etcd and a real PostgreSQL, freezes a process for
// longer than its lease, and takes about a minute. Its fast deterministic counterparts in
// `make test` are TestPauseBetweenCheckAndIssue and TestCloseStopsIssuerInFlight
// (schemes/nodeid).

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/internal/history"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/jackc/pgx/v5"
)

const pauseTTL = 2 * time.Second

// TestFaultPausePastLease is issue 17's reproduction: idkitd A holds a node slot under a lease
// (lease_ttl=2s, marks=off, so the lease alone protects), clients call it, it is frozen with
// SIGSTOP for longer than the TTL, idkitd B starts with the same spec and claims the slot A
// can no longer renew, and A is thawed while clients call both. No ID may be issued twice:
// A's generator compares the time of each ID with its lease's deadline, so what it serves
// after the thaw it refuses (UNAVAILABLE) until it has claimed another slot, which it does by
// itself. Three rounds per store, etcd and PostgreSQL. The control runs the same harness with
// a static node=0 on both processes (no lease) and must find duplicates.
func TestFaultPausePastLease(t *testing.T) {
	bin := buildIdkitd(t)
	etcdHost := strings.TrimPrefix(etcdtest.Endpoint(t), "http://")
	pgBase := pgStoreURL(t)
	run := time.Now().UnixNano()
	stores := []struct {
		name string
		url  func(round int) string
	}{
		{"etcd", func(round int) string { return fmt.Sprintf("etcd://%s/idkit-pause/%d/%d", etcdHost, run, round) }},
		{"postgres", func(round int) string { return pgBase + "&namespace=" + fmt.Sprintf("pause-%d-%d", run, round) }},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			for round := range 3 {
				spec := "orders=snowflake:layout=twitter,node=" + st.url(round) + ",lease_ttl=" + pauseTTL.String() + ",marks=off"
				r := pauseRound(t, bin, spec, true)
				t.Logf("round %d: %d IDs (A %d, B %d), %d duplicates; A: %s", round, r.ids, r.fromA, r.fromB, r.dups, r.note)
				if r.dups != 0 {
					t.Errorf("round %d: %d IDs issued twice", round, r.dups)
				}
			}
		})
	}
	t.Run("control-static-node", func(t *testing.T) {
		r := pauseRound(t, bin, "orders=snowflake:layout=twitter,node=0", false)
		t.Logf("control: %d IDs (A %d, B %d), %d duplicates", r.ids, r.fromA, r.fromB, r.dups)
		if r.dups == 0 {
			t.Errorf("control: no duplicates between two processes on one static node; the harness cannot see them")
		}
	})
}

type roundResult struct {
	ids, fromA, fromB, dups int
	note                    string
}

// pauseRound runs one round: A serves, is frozen past the TTL, B starts with the same spec,
// A is thawed while clients call both.
func pauseRound(t *testing.T, bin, spec string, leased bool) roundResult {
	t.Helper()
	a := startIdkitd(t, bin, spec)
	nodeA := nodeOf(t, a.addr)
	la := startLoad("A", a.addr, 200, 30*time.Second, true)
	time.Sleep(300 * time.Millisecond)
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	// A's holding lapses TTL after its last renewal; etcd takes up to a second more to
	// expire a lease.
	time.Sleep(pauseTTL + 1500*time.Millisecond)
	b := startIdkitd(t, bin, spec)
	nodeB := nodeOf(t, b.addr)
	if nodeB != nodeA {
		a.cmd.Process.Signal(syscall.SIGCONT)
		t.Fatalf("B got node %d, not A's node %d: the round does not test a takeover", nodeB, nodeA)
	}
	lb := startLoad("B", b.addr, 200, 30*time.Second, true)
	time.Sleep(300 * time.Millisecond)
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	thawed := time.Now()
	note := fmt.Sprintf("frozen %v", thawed.Sub(frozen).Round(time.Millisecond))
	if leased {
		// A finds its slot taken and claims another one by itself.
		deadline := thawed.Add(15 * time.Second)
		for {
			g, err := generatorsOf(a.addr)
			if err == nil && g.GetNode() != nodeA && g.Ready {
				note += fmt.Sprintf(", ready again on node %d %v after the thaw", g.GetNode(), time.Since(thawed).Round(time.Millisecond))
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("A not ready on a new node 15s after the thaw: %v %v", g, err)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(1500*time.Millisecond - time.Since(thawed)) // both serve
	opsA, errsA := la.stop()
	opsB, errsB := lb.stop()
	idsA, idsB := ids(opsA), ids(opsB)
	a.stop()
	b.stop()
	seen := make(map[uint64]struct{}, len(idsA)+len(idsB))
	dups := 0
	for _, l := range [][]uint64{idsA, idsB} {
		for _, id := range l {
			if _, ok := seen[id]; ok {
				dups++
			}
			seen[id] = struct{}{}
		}
	}
	if len(idsA) == 0 || len(idsB) == 0 {
		t.Errorf("a process served nothing: A %d IDs (errors %v), B %d IDs (errors %v)", len(idsA), errsA, len(idsB), errsB)
	}
	note += fmt.Sprintf(", client errors A %d B %d", len(errsA), len(errsB))
	return roundResult{ids: len(idsA) + len(idsB), fromA: len(idsA), fromB: len(idsB), dups: dups, note: note}
}

// buildIdkitd builds this command into a temporary directory.
func buildIdkitd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "idkitd")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building idkitd: %v\n%s", err, out)
	}
	return bin
}

// pgStoreURL is a pg:// lease store URL (without namespace) for the test's PostgreSQL.
func pgStoreURL(t *testing.T) string {
	cfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	// pgtest's private cluster runs with fsync=off, which the lease store refuses unless
	// told the data is throwaway.
	q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}, "unsafe": {"true"}}
	u := url.URL{Scheme: "pg", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	}
	return u.String()
}

type idkitd struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	log  *lockedBuilder
}

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startIdkitd runs bin on a free loopback port with one generator and waits until it is
// ready.
func startIdkitd(t *testing.T, bin, gen string) *idkitd {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return startIdkitdAt(t, nil, addr, bin, gen)
}

// startIdkitdAt runs bin through the command prefix wrap (nil, or a network namespace's "ip
// netns exec NS") listening on addr with one generator, and waits until it is ready.
func startIdkitdAt(t *testing.T, wrap []string, addr, bin, gen string) *idkitd {
	t.Helper()
	argv := append(append([]string{}, wrap...), bin, "--listen", addr, "--grpc-listen", "off", "--gen", gen)
	p := &idkitd{cmd: exec.Command(argv[0], argv[1:]...), addr: addr, done: make(chan struct{}), log: &lockedBuilder{}}
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := hc.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("idkitd %s exited:\n%s", gen, p.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("idkitd %s not ready after 20s:\n%s", gen, p.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the process (thawing it first) and waits for it.
func (p *idkitd) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGCONT)
	p.cmd.Process.Kill()
	<-p.done
}

func generatorsOf(addr string) (*v1.Generator, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	g, err := idkitv1connect.NewIDServiceClient(http.DefaultClient, "http://"+addr).Generators(ctx, connect.NewRequest(&v1.GeneratorsRequest{}))
	if err != nil {
		return nil, err
	}
	return g.Msg.Generators[0], nil
}

func nodeOf(t *testing.T, addr string) uint64 {
	t.Helper()
	g, err := generatorsOf(addr)
	if err != nil {
		t.Fatal(err)
	}
	return g.GetNode()
}

// load is four clients calling one idkitd until stopped, recording every answer as history
// operations (each ID with the call's send and receive times) and every failed call.
type load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	ops    []history.Op
	errs   []error
}

// startLoad starts four clients, named for the process name, that ask addr for 1 to most IDs
// at a time, each call with timeout. With finish, a call in flight when the load is stopped
// is waited for (a request to a frozen process waits for the thaw when timeout is longer than
// the freeze, so whatever the process serves after the thaw is counted); without, it is
// cancelled.
func startLoad(name, addr string, most int, timeout time.Duration, finish bool) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel}
	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	c := idkitv1connect.NewIDServiceClient(hc, "http://"+addr)
	callCtx := ctx
	if finish {
		callCtx = context.WithoutCancel(ctx)
	}
	for i := range 4 {
		client := fmt.Sprintf("c%d->%s", i, name)
		l.wg.Go(func() {
			for ctx.Err() == nil {
				n := 1 + rand.IntN(most)
				sent := time.Now()
				res, err := c.Next(callCtx, connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: uint32(n)}))
				recv := time.Now()
				l.mu.Lock()
				if err != nil {
					l.errs = append(l.errs, err)
				} else {
					for _, id := range res.Msg.Ids64 {
						l.ops = append(l.ops, history.Op{Client: client, Generator: name, ID: id, Send: sent, Recv: recv})
					}
				}
				l.mu.Unlock()
				if err != nil {
					if errors.Is(err, syscall.ECONNREFUSED) {
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	return l
}

// stop ends the load and returns what it recorded.
func (l *load) stop() ([]history.Op, []error) {
	l.cancel()
	l.wg.Wait()
	return l.ops, l.errs
}

// ids returns the IDs of ops.
func ids(ops []history.Op) []uint64 {
	out := make([]uint64, len(ops))
	for i, o := range ops {
		out[i] = o.ID
	}
	return out
}
