package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/bearer"
	"github.com/idkit/idkit/internal/h2raw"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// zeroWindow is the setting of a client that never lets an answer's byte become writable.
var zeroWindow = http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}

// closedWithin reports whether the server closes c within d.
func closedWithin(c *h2raw.Conn, d time.Duration) bool { return c.Drain(d) }

// TestZeroWindowStall: a client that announces a zero stream window and asks for answers it
// never lets through has its connection closed once an answer has waited Config.WriteTimeout,
// on both stacks, which frees what it held (the old server kept it for ever: no write ever
// stalled, since none was attempted). The control, with a long timeout, stays open.
func TestZeroWindowStall(t *testing.T) {
	t.Parallel()
	body := h2raw.GRPCFrame(&v1.NextRequest{Generator: "keys", Count: 2000, Text: true})
	for _, timeout := range []time.Duration{300 * time.Millisecond, time.Hour} {
		r := start(t, server.Config{Generators: []server.Generator{{Name: "keys", Spec: "uuidv7"}}, WriteTimeout: timeout})
		for _, st := range stacks(r) {
			c := h2raw.Dial(t, st.addr, zeroWindow)
			for range 5 {
				c.Send("POST", idkitv1connect.IDServiceNextProcedure, body, h2raw.GRPC...)
			}
			closed := closedWithin(c, 1500*time.Millisecond)
			if timeout < time.Minute && !closed {
				t.Errorf("%s: a connection whose answers cannot be written is open 1.5s on (write timeout %v)", st.name, timeout)
			}
			if timeout > time.Minute && closed {
				t.Errorf("%s: control (write timeout %v): the connection was closed", st.name, timeout)
			}
		}
	}
}

// TestMaxConns: a connection over Config.MaxConns (both listeners together) is closed at once;
// once one closes, a new one is served.
func TestMaxConns(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.MaxConns = 2
	r := start(t, cfg)
	sts := stacks(r)
	a := h2raw.Dial(t, sts[0].addr)
	b := h2raw.Dial(t, sts[1].addr)
	a.Settings()
	b.Settings()
	over, err := net.DialTimeout("tcp", sts[0].addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	over.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := over.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("third connection with MaxConns 2: read %d bytes, %v; want it closed", n, err)
	}
	a.Close()
	time.Sleep(100 * time.Millisecond)
	if got := h2raw.Dial(t, sts[1].addr).Settings(); got == nil {
		t.Errorf("no SETTINGS once a connection was freed")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestOpenWatchBound: on a server with tokens, health Watch streams without a token are
// bounded by Config.MaxOpenWatches on both stacks: past it the caller's connection is
// closed; a token holder's Watch is not counted against it.
func TestOpenWatchBound(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	cfg.MaxOpenWatches = 3
	r := start(t, cfg)
	watch := h2raw.GRPCFrame(&healthpb.HealthCheckRequest{})
	path := "/grpc.health.v1.Health/Watch"
	for _, st := range stacks(r) {
		held := h2raw.Dial(t, st.addr)
		for range 3 {
			held.Send("POST", path, watch, h2raw.GRPC...)
		}
		time.Sleep(200 * time.Millisecond) // the three are admitted
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		w, err := healthpb.NewHealthClient(stockAt(t, st.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithPerRPCCredentials(bearer.Credentials("s3cret")))).Watch(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = w.Recv()
		}
		if err != nil {
			t.Errorf("%s: a token holder's Watch past the open bound: %v", st.name, err)
		}
		over := h2raw.Dial(t, st.addr)
		over.Send("POST", path, watch, h2raw.GRPC...)
		if !closedWithin(over, 3*time.Second) {
			t.Errorf("%s: a fourth Watch without a token (MaxOpenWatches 3): connection still open", st.name)
		}
		held.Close()
		cancel()
		time.Sleep(200 * time.Millisecond) // the slots come back
	}
}

// TestTotalBytesBounded: several connections that ask for much and read nothing make the server
// hold no more than Config.MaxTotalBytes of answers (and a little per stream), on both stacks,
// where each connection's own budget alone would let them hold it once per connection; the
// control, with MaxTotalBytes lifted, holds several times more. The full-size version is
// TestFaultConnsFlood (make fault).
func TestTotalBytesBounded(t *testing.T) {
	const (
		conns   = 12
		streams = 8
		budget  = 2 << 20
	)
	gens := []server.Generator{{Name: "keys", Spec: "uuidv7"}}
	bounded := start(t, server.Config{Generators: gens, MaxConnBytes: budget, MaxTotalBytes: budget})
	lifted := start(t, server.Config{Generators: gens, MaxConnBytes: budget, MaxTotalBytes: 1 << 40})
	body := h2raw.GRPCFrame(&v1.NextRequest{Generator: "keys", Count: 3000, Text: true})
	grow := func(addr string) int64 {
		before := heapAfterGC()
		var cs []*h2raw.Conn
		for range conns {
			c := h2raw.Dial(t, addr, zeroWindow)
			for range streams {
				c.Send("POST", idkitv1connect.IDServiceNextProcedure, body, h2raw.GRPC...)
			}
			cs = append(cs, c)
		}
		grew := int64(settledHeap()) - int64(before)
		for _, c := range cs {
			c.Close()
		}
		settledHeap()
		return grew
	}
	for i, st := range stacks(bounded) {
		grew := grow(st.addr)
		ctl := grow(stacks(lifted)[i].addr)
		t.Logf("%s: live heap grew %.1f MB with MaxTotalBytes %d MiB, %.1f MB without", st.name, float64(grew)/1e6, budget>>20, float64(ctl)/1e6)
		if grew > 3*budget {
			t.Errorf("%s: %d unread connections made the server hold %.1f MB (MaxTotalBytes %.1f MB)", st.name, conns, float64(grew)/1e6, float64(budget)/1e6)
		}
		if ctl < 2*grew || ctl < 3*budget {
			t.Errorf("%s: control: without MaxTotalBytes the heap grew only %.1f MB: the test cannot see what it looks for", st.name, float64(ctl)/1e6)
		}
	}
}

// TestKeepAliveNotStalled: an HTTP/1.1 connection that was answered in full and then sits idle
// longer than Config.WriteTimeout is not taken for a stalled one: its next request is served.
func TestKeepAliveNotStalled(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.WriteTimeout = 200 * time.Millisecond
	r := start(t, cfg)
	c, err := net.DialTimeout("tcp", stacks(r)[0].addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 2 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "GET /v1/next/orders?n=3 HTTP/1.1\r\nHost: idkitd\r\n\r\n"); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on a kept-alive connection: %v", i+1, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("request %d: %s", i+1, res.Status)
		}
	}
}
