package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/health" // client-side health checking (healthCheckConfig)
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// rolloutServiceConfig is what a gRPC client that balances over a service's instances is
// given: round robin over the instances that the health service calls SERVING.
const rolloutServiceConfig = `{"loadBalancingConfig":[{"round_robin":{}}],"healthCheckConfig":{"serviceName":""}}`

// instance is one in-process ID service of a rollout, on fixed addresses so that it can be
// started again where it was.
type instance struct {
	cfg   server.Config
	addrs server.Addrs
	stop  context.CancelFunc
	done  chan error
}

func startInstance(t *testing.T, cfg server.Config) *instance {
	t.Helper()
	var (
		srv   *server.Server
		addrs server.Addrs
		wait  func() error
		err   error
	)
	ctx, cancel := context.WithCancel(context.Background())
	for i := 0; ; i++ { // a port just given up can take a moment to come free
		if srv, err = server.New(cfg); err != nil {
			t.Fatal(err)
		}
		if addrs, wait, err = srv.Start(ctx); err == nil || i == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	in := &instance{cfg: cfg, addrs: addrs, stop: cancel, done: make(chan error, 1)}
	go func() { in.done <- wait() }()
	t.Cleanup(func() { cancel(); <-in.done })
	return in
}

// restart starts a new instance with the same config on the same addresses.
func (in *instance) restart(t *testing.T) *instance {
	cfg := in.cfg
	cfg.Listen, cfg.GRPCListen = in.addrs.HTTP, in.addrs.GRPC
	return startInstance(t, cfg)
}

// rollout calls two instances through one round-robin, health-checking grpc-go client at a
// steady rate while the first gets the equivalent of SIGTERM and is started again; during
// its shutdown a few clients that know only its address (a proxy or DNS that has not caught
// up) connect to it and call once. It returns the failed calls and the IDs issued twice.
func rollout(t *testing.T, delay time.Duration, useGRPCListener bool) (failed []error, dups int) {
	dir := t.TempDir()
	inst := func(node int) server.Config {
		return server.Config{
			Listen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", ShutdownDelay: delay, DrainTimeout: 5 * time.Second,
			Generators: []server.Generator{{Name: "orders", Spec: fmt.Sprintf("snowflake:layout=twitter,node=%d,marks=file:%s", node, filepath.Join(dir, fmt.Sprint(node)))}},
		}
	}
	a, b := startInstance(t, inst(1)), startInstance(t, inst(2))
	addrOf := func(in *instance) string {
		if useGRPCListener {
			return in.addrs.GRPC
		}
		return in.addrs.HTTP
	}
	res := manual.NewBuilderWithScheme("rollout")
	res.InitialState(resolver.State{Addresses: []resolver.Address{{Addr: addrOf(a)}, {Addr: addrOf(b)}}})
	cc, err := grpc.NewClient(res.Scheme()+":///idkitd", grpc.WithResolvers(res),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(rolloutServiceConfig),
		// Reconnect within the test's time rather than after grpc-go's default second.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, MaxDelay: 200 * time.Millisecond}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := v1.NewIDServiceClient(cc)

	var (
		mu   sync.Mutex
		ids  []uint64
		errs []error
	)
	call := func(c v1.IDServiceClient) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := c.Next(ctx, &v1.NextRequest{Generator: "orders", Count: 1})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		ids = append(ids, r.Ids64...)
	}
	// The load: a call every 500 µs, on 16 workers.
	ticks := make(chan struct{}, 64)
	stopLoad := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		defer close(ticks)
		for {
			select {
			case <-stopLoad:
				return
			case <-t.C:
				select {
				case ticks <- struct{}{}:
				default: // the workers are behind; the ticker's pace is not the point
				}
			}
		}
	})
	for range 16 {
		wg.Go(func() {
			for range ticks {
				call(c)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	a.stop() // SIGTERM
	var late atomic.Int32
	var lateWG sync.WaitGroup
	lateAddr := addrOf(a)
	for _, after := range []time.Duration{50 * time.Millisecond, 150 * time.Millisecond} {
		lateWG.Go(func() {
			time.Sleep(after)
			lc, err := grpc.NewClient(lateAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Error(err)
				return
			}
			defer lc.Close()
			call(v1.NewIDServiceClient(lc))
			late.Add(1)
		})
	}
	if err := <-a.done; err != nil {
		t.Errorf("first instance's shutdown: %v", err)
	}
	a.done <- nil // for its cleanup
	lateWG.Wait() // a restart any sooner would answer them in the control
	a = a.restart(t)
	time.Sleep(500 * time.Millisecond)
	close(stopLoad)
	wg.Wait()
	seen := map[uint64]bool{}
	for _, id := range ids {
		if seen[id] {
			dups++
		}
		seen[id] = true
	}
	codec, err := idkit.NewCodec("snowflake:layout=twitter")
	if err != nil {
		t.Fatal(err)
	}
	var fromRestarted int
	for _, id := range ids[len(ids)*3/4:] {
		if p, _ := codec.Decode(idkit.FromUint64(id)); p.Node == 1 {
			fromRestarted++
		}
	}
	t.Logf("shutdown delay %v: %d calls, %d failed, %d duplicates, %d late clients; of the last quarter %d from the restarted instance", delay, len(ids)+len(errs), len(errs), dups, late.Load(), fromRestarted)
	if len(ids) < 100 {
		t.Errorf("only %d calls succeeded", len(ids))
	}
	return errs, dups
}

// TestRollout: with the shutdown delay, an instance that is told to stop keeps serving while
// it reports NOT_SERVING, so a health-checking round-robin client moves away from it before
// it stops accepting, and clients that reach it late still get answers: no call fails, no ID
// repeats, on either listener. The control, without the delay, loses the late clients' calls.
// It is not parallel: it needs at least 100 calls of its paced load to succeed, each within
// 5 s, which, beside the package's other tests on a loaded machine, they did not (the
// parallel tests start only once it has finished).
func TestRollout(t *testing.T) {
	for _, grpcListener := range []bool{false, true} {
		name := map[bool]string{false: "net-http", true: "grpc-go"}[grpcListener]
		t.Run(name, func(t *testing.T) {
			failed, dups := rollout(t, 1500*time.Millisecond, grpcListener)
			if len(failed) > 0 || dups > 0 {
				t.Errorf("%d failed calls (first: %v) and %d duplicate IDs", len(failed), failed, dups)
			}
		})
		t.Run(name+"/control", func(t *testing.T) {
			failed, _ := rollout(t, -1, grpcListener)
			if len(failed) == 0 {
				t.Errorf("without the shutdown delay no call failed: the test cannot see what it looks for")
			}
		})
	}
}

// TestShutdownSequence: once told to stop, the server reports not ready on every probe (/readyz,
// gRPC health Check, and Watch streams on both stacks, which learn it without asking again)
// while it still issues IDs for Config.ShutdownDelay; then it stops accepting and ends the
// Watch streams, so they do not hold the drain.
func TestShutdownSequence(t *testing.T) {
	t.Parallel()
	const delay = 1500 * time.Millisecond
	cfg := twoGens()
	cfg.ShutdownDelay = delay
	r := start(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type watch struct {
		name string
		recv func() (healthpb.HealthCheckResponse_ServingStatus, error)
	}
	var watches []watch
	for _, st := range stacks(r) {
		w, err := healthpb.NewHealthClient(stockAt(t, st.addr)).Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		watches = append(watches, watch{"grpc-go client on " + st.name, func() (healthpb.HealthCheckResponse_ServingStatus, error) {
			m, err := w.Recv()
			return m.GetStatus(), err
		}})
	}
	cw, err := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](h2(), r.url+"/grpc.health.v1.Health/Watch").
		CallServerStream(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{Service: "idkit.v1.IDService"}))
	if err != nil {
		t.Fatal(err)
	}
	watches = append(watches, watch{"connect client", func() (healthpb.HealthCheckResponse_ServingStatus, error) {
		if !cw.Receive() {
			return 0, fmt.Errorf("stream ended: %w", cw.Err())
		}
		return cw.Msg().Status, nil
	}})
	for _, w := range watches {
		if st, err := w.recv(); err != nil || st != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("%s: first status %v, %v; want SERVING", w.name, st, err)
		}
	}
	stopped := time.Now()
	r.stop()
	for _, w := range watches {
		if st, err := w.recv(); err != nil || st != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("%s: after the stop %v, %v; want NOT_SERVING", w.name, st, err)
		}
	}
	// Still serving, while saying it should not be sent more.
	if res, err := r.client.Get(r.url + "/readyz"); err != nil || res.StatusCode != 503 {
		t.Errorf("/readyz while shutting down: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	for _, st := range stacks(r) {
		cc := stockAt(t, st.addr) // a new connection is still accepted
		if h, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || h.Status != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("%s: Check while shutting down: %v, %v", st.name, h, err)
		}
		if _, err := v1.NewIDServiceClient(cc).Next(ctx, &v1.NextRequest{Generator: "orders", Count: 1}); err != nil {
			t.Errorf("%s: Next while shutting down: %v", st.name, err)
		}
	}
	if time.Since(stopped) > delay/2 {
		t.Logf("the checks above took %v of the %v delay (a slow machine)", time.Since(stopped), delay)
	}
	// Then the streams end and the server stops.
	for _, w := range watches {
		if st, err := w.recv(); err == nil {
			t.Errorf("%s: stream goes on after the delay (%v)", w.name, st)
		}
	}
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(stopped); d < delay {
		t.Errorf("stopped %v after the stop, before the %v delay", d, delay)
	}
}
