package remote

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestDialRPC: protocol=grpc takes grpc-go, unless the caller brings an HTTP client, which
// only connect-go can use; the Connect protocol and JSON take connect-go.
func TestDialRPC(t *testing.T) {
	hc := &http.Client{}
	for _, tc := range []struct {
		name     string
		protocol string
		hc       *http.Client
		grpcGo   bool
	}{
		{"grpc", "grpc", nil, true},
		{"grpc over the caller's HTTP client", "grpc", hc, false},
		{"connect", "connect", nil, false},
		{"json", "json", nil, false},
		{"connect over the caller's HTTP client", "connect", hc, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Addr: "127.0.0.1:1", Generator: "g", Protocol: tc.protocol, Timeout: time.Second, MaxCount: 10}
			if tc.hc != nil {
				c.HTTPClient = tc.hc
			}
			x, err := dialRPC(c)
			if err != nil {
				t.Fatal(err)
			}
			defer x.close()
			if _, ok := x.(*grpcRPC); ok != tc.grpcGo {
				t.Errorf("client %T, want grpc-go: %v", x, tc.grpcGo)
			}
		})
	}
}

// liveError is an error a grpc-go client returned, and whether the retry loop must retry it.
type liveError struct {
	name string
	err  error
	want bool
}

// liveGRPCErrors makes grpc-go fail in each way the retry loop must tell apart, against real
// servers: the service out of reach, cut off mid-request (the server's connections closed, as
// the kernel closes a SIGKILLed process's) and mid-response, an attempt past its deadline, and
// each status a service can send.
func liveGRPCErrors(t *testing.T) []liveError {
	t.Helper()
	call := func(addr string, timeout time.Duration) error {
		t.Helper()
		x, err := dialGRPC(Config{Addr: addr, Protocol: "grpc", Timeout: 10 * time.Second, MaxCount: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err = x.next(ctx, &v1.NextRequest{Generator: "g", Count: 1})
		if err == nil {
			t.Fatalf("a request to %s did not fail", addr)
		}
		return err
	}
	long := 10 * time.Second // ample: only the deadline case may reach its deadline
	var out []liveError
	add := func(name string, err error, want bool) { out = append(out, liveError{name, err, want}) }

	add("connection refused", call(closedPort(t), long), true)
	add("connection closed at once", call(listen(t, func(c net.Conn) { c.Close() }), long), true)
	add("attempt deadline", call(grpcFake(t, func(ctx context.Context, _ *tracker) error {
		<-ctx.Done()
		return ctx.Err()
	}), 200*time.Millisecond), true)
	add("connection cut mid-request", call(grpcFake(t, func(ctx context.Context, tr *tracker) error {
		tr.cut()
		<-ctx.Done()
		return ctx.Err()
	}), long), true)
	add("connection cut mid-response", call(listen(t, halfAnswer), long), true)
	for _, tc := range []struct {
		code codes.Code
		want bool
	}{
		{codes.Unavailable, true},
		{codes.DeadlineExceeded, true},
		{codes.Internal, false},
		{codes.Canceled, false},
		{codes.Unknown, false},
		{codes.NotFound, false},
		{codes.InvalidArgument, false},
	} {
		err := call(grpcFake(t, func(context.Context, *tracker) error { return status.Error(tc.code, "sent by the service") }), long)
		if status.Code(err) != tc.code {
			t.Fatalf("the service sent %v, the client says %v", tc.code, err)
		}
		add("sent "+tc.code.String(), err, tc.want)
	}
	return out
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return ln.Addr().String()
}

// listen accepts connections on a loopback port and hands each to handle, until the test
// ends.
func listen(t *testing.T, handle func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { handle(c) })
		}
	})
	return ln.Addr().String()
}

// halfAnswer speaks HTTP/2 until the first request has arrived, answers with gRPC headers and
// the first bytes of a message promising 100, and closes the connection.
func halfAnswer(c net.Conn) {
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if d, ok := f.(*http2.DataFrame); ok && d.StreamEnded() {
			var hdr bytes.Buffer
			enc := hpack.NewEncoder(&hdr)
			enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
			enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: d.StreamID, BlockFragment: hdr.Bytes(), EndHeaders: true})
			fr.WriteData(d.StreamID, false, []byte{0, 0, 0, 0, 100, 8, 1})
			return
		}
	}
}

// tracker is a listener that can close every connection it accepted.
type tracker struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *tracker) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *tracker) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// fakeService is an IDService whose Next fails as told.
type fakeService struct {
	v1.UnimplementedIDServiceServer
	tr   *tracker
	fail func(context.Context, *tracker) error
}

func (f fakeService) Next(ctx context.Context, _ *v1.NextRequest) (*v1.NextResponse, error) {
	return nil, f.fail(ctx, f.tr)
}

// grpcFake serves a fakeService with grpc-go until the test ends.
func grpcFake(t *testing.T, fail func(context.Context, *tracker) error) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracker{Listener: ln}
	gs := grpc.NewServer()
	gs.RegisterService(&v1.IDService_ServiceDesc, fakeService{tr: tr, fail: fail})
	done := make(chan struct{})
	go func() { gs.Serve(tr); close(done) }()
	t.Cleanup(func() { gs.Stop(); <-done })
	return ln.Addr().String()
}
