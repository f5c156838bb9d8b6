package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// recorder is a listener that says which of the splitter's queues each connection came from.
type recorder struct {
	net.Listener
	name string
	got  chan string
}

func (r recorder) Accept() (net.Conn, error) {
	c, err := r.Listener.Accept()
	if err == nil {
		r.got <- r.name
	}
	return c, err
}

// TestSplitterRoutes sends each kind of client through a real splitter in front of the real
// servers and checks where its connection went: gRPC libraries to grpc-go, the rest (connect-go,
// whose gRPC calls share connections with its other calls, HTTP/1.1, h2c) to net/http.
func TestSplitterRoutes(t *testing.T) {
	s, err := New(Config{Generators: []Generator{{Name: "orders", Spec: "snowflake:layout=twitter,node=1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sp := newSplitter(ln, nil, 5*time.Second, 5*time.Second, 1<<20, slog.New(slog.DiscardHandler))
	go sp.serve()
	got := make(chan string, 10)
	gs := s.grpcServer()
	hs := &http.Server{Handler: s.Handler(), Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	go gs.Serve(recorder{sp.grpc, "grpc-go", got})
	go hs.Serve(recorder{sp.http, "net/http", got})
	defer func() { sp.close(); gs.Stop(); hs.Close() }()
	addr := ln.Addr().String()
	ctx := context.Background()
	req := &v1.NextRequest{Generator: "orders", Count: 2}
	grpcGo := func(opts ...grpc.DialOption) func() error {
		return func() error {
			cc, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
			if err != nil {
				return err
			}
			defer cc.Close()
			_, err = v1.NewIDServiceClient(cc).Next(ctx, req)
			return err
		}
	}
	connectClient := func(h1 bool, opts ...connect.ClientOption) func() error {
		return func() error {
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetHTTP1(h1)
			tr.Protocols.SetUnencryptedHTTP2(!h1)
			defer tr.CloseIdleConnections()
			_, err := idkitv1connect.NewIDServiceClient(&http.Client{Transport: tr}, "http://"+addr, opts...).Next(ctx, connect.NewRequest(req))
			return err
		}
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"grpc-go", grpcGo(), "grpc-go"},
		{"grpc-go with an application's user agent", grpcGo(grpc.WithUserAgent("orders-api/2.1")), "grpc-go"},
		{"connect-go gRPC", connectClient(false, connect.WithGRPC()), "net/http"},
		{"connect-go gRPC-Web", connectClient(false, connect.WithGRPCWeb()), "net/http"},
		{"Connect JSON over h2c", connectClient(false, connect.WithProtoJSON()), "net/http"},
		{"Connect over HTTP/1.1", connectClient(true), "net/http"},
		{"plain GET", func() error {
			res, err := http.Get("http://" + addr + "/v1/next/orders?n=3")
			if err != nil {
				return err
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || bytes.Count(b, []byte("\n")) != 3 {
				return errors.New(res.Status + " " + string(b))
			}
			return nil
		}, "net/http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatal(err)
			}
			select {
			case g := <-got:
				if g != tc.want {
					t.Fatalf("served by %s, want %s", g, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no connection reached either server")
			}
			if len(got) > 0 {
				t.Fatalf("more than one connection: also %s", <-got)
			}
		})
	}
}

func TestDedicatedGRPCClient(t *testing.T) {
	for ua, want := range map[string]bool{
		"grpc-go/1.83.2":                           true,
		"orders-api/2.1 grpc-go/1.83.2":            true,
		"grpc-java-netty/1.68.0":                   true,
		"grpc-python/1.66.0 grpc-c/43.0.0 (linux)": true,
		"grpc-node-js/1.12.0":                      true,
		"tonic/0.12.3":                             true,
		"grpcurl/v1.9.1 grpc-go/1.61.0":            true,
		"grpc-go-connect/1.21.1 (go1.26.8)":        false,
		"connect-go/1.21.1 (go1.26.8)":             false,
		"Go-http-client/2.0":                       false,
		"":                                         false,
	} {
		if got := dedicatedGRPCClient(ua); got != want {
			t.Errorf("dedicatedGRPCClient(%q) = %v, want %v", ua, got, want)
		}
	}
	for ct, want := range map[string]bool{
		"application/grpc": true, "application/grpc+proto": true, "Application/GRPC+json": true, "application/grpc;x=1": true,
		"application/grpc-web": false, "application/grpc-web+proto": false, "application/grpcx": false, "application/json": false, "": false,
	} {
		if got := isGRPC(ct); got != want {
			t.Errorf("isGRPC(%q) = %v, want %v", ct, got, want)
		}
	}
}

// frame builds one HTTP/2 frame.
func frame(typ, flags byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 1}, payload...)
}

// chunked is a net.Conn whose reads return at most n bytes of r.
type chunked struct {
	net.Conn
	r io.Reader
	n int
}

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// withoutFirstAck is what the server behind the splitter must read: the stream (a preface and
// frames) without the first SETTINGS ACK, found the slow, obvious way.
func withoutFirstAck(stream []byte) []byte {
	out := append([]byte(nil), stream[:min(len(stream), len(http2Preface))]...)
	rest := stream[len(out):]
	for len(rest) >= frameHeaderLen {
		n := int(rest[0])<<16 | int(rest[1])<<8 | int(rest[2])
		if rest[3] == frameSettings && rest[4]&flagAck != 0 && n == 0 {
			return append(out, rest[frameHeaderLen:]...)
		}
		end := min(len(rest), frameHeaderLen+n)
		out = append(out, rest[:end]...)
		rest = rest[end:]
	}
	return append(out, rest...)
}

// TestReplayConnDropsFirstAck reads a stream through replayConn with the splitter's share of it
// cut at every point and the rest arriving in chunks of several sizes: the server behind reads
// every byte but the first SETTINGS ACK, and the second ACK (for its own SETTINGS) passes.
func TestReplayConnDropsFirstAck(t *testing.T) {
	ack := frame(frameSettings, flagAck, nil)
	var stream []byte
	stream = append(stream, http2Preface...)
	stream = append(stream, frame(frameSettings, 0, []byte{0, 3, 0, 0, 0, 100})...)
	stream = append(stream, frame(0x8, 0, []byte{0, 0, 1, 0})...) // WINDOW_UPDATE
	stream = append(stream, frame(frameHeaders, flagEndHeaders, bytes.Repeat([]byte{0x82}, 40))...)
	stream = append(stream, frame(0x0, 0x1, bytes.Repeat([]byte("d"), 300))...) // DATA
	ackAt := len(stream)
	stream = append(stream, ack...)
	stream = append(stream, frame(0x6, 0, make([]byte, 8))...) // PING
	stream = append(stream, ack...)
	want := append(append([]byte(nil), stream[:ackAt]...), stream[ackAt+len(ack):]...)
	if !bytes.Equal(withoutFirstAck(stream), want) {
		t.Fatal("withoutFirstAck disagrees with the stream's layout")
	}
	for cut := len(http2Preface); cut <= ackAt; cut++ {
		for _, chunk := range []int{1, 2, 7, 9, 10, 64, 4096} {
			rc := newReplayConn(&chunked{r: bytes.NewReader(stream[cut:]), n: chunk}, stream[:cut], true)
			got, err := io.ReadAll(readerOf{rc, chunk})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("cut %d, chunks of %d: err %v, read %d bytes, want %d", cut, chunk, err, len(got), len(want))
			}
		}
	}
}

// readerOf reads through r with buffers of at most n bytes.
type readerOf struct {
	r io.Reader
	n int
}

func (r readerOf) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), r.n)]) }

// FuzzReplayConn: whatever the bytes after the preface, cut and chunked anyhow, replayConn
// passes all of them but the first SETTINGS ACK, never more and never fewer.
func FuzzReplayConn(f *testing.F) {
	f.Add([]byte{0, 0, 0, 4, 1, 0, 0, 0, 0}, uint8(0), uint8(1))
	f.Add(append(frame(0, 0, []byte("abc")), frame(frameSettings, flagAck, nil)...), uint8(5), uint8(3))
	f.Add(append(frame(frameSettings, flagAck, []byte{1}), frame(frameSettings, flagAck, nil)...), uint8(12), uint8(2))
	f.Fuzz(func(t *testing.T, frames []byte, cut, chunk uint8) {
		stream := append([]byte(http2Preface), frames...)
		c := len(http2Preface) + int(cut)%(len(frames)+1)
		n := int(chunk)%16 + 1
		rc := newReplayConn(&chunked{r: bytes.NewReader(stream[c:]), n: n}, stream[:c], true)
		got, err := io.ReadAll(readerOf{rc, n})
		if err != nil {
			t.Fatal(err)
		}
		if want := withoutFirstAck(stream); !bytes.Equal(got, want) {
			t.Fatalf("read %x\nwant %x", got, want)
		}
	})
}

// pipeConn serves a client's bytes to classify and swallows what it writes.
type pipeConn struct {
	net.Conn
	r io.Reader
}

func (p *pipeConn) Read(b []byte) (int, error)       { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error)      { return len(b), nil }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }
func (p *pipeConn) Close() error                     { return nil }

// FuzzClassify sends arbitrary openings to the splitter: it never panics, and a connection it
// routes replays exactly what the client sent (less the one ACK, on HTTP/2).
func FuzzClassify(f *testing.F) {
	h := func(block []byte) []byte {
		s := append([]byte(http2Preface), frame(frameSettings, 0, nil)...)
		s = append(s, frame(frameSettings, flagAck, nil)...)
		return append(s, frame(frameHeaders, flagEndHeaders, block)...)
	}
	f.Add([]byte("GET /v1/next/orders HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("PRI * HTTP/2.0\r\n"))
	f.Add(h([]byte{0x83, 0x86, 0x5f, 0x10}))
	f.Add(h(append([]byte{0x5f, 0x10}, "application/grpc"...)))
	f.Add(append(h(nil)[:len(http2Preface)+9], frame(frameHeaders, flagPadded|flagPriority, []byte{200, 1, 2})...))
	f.Add(append(h(nil), frame(frameContinuation, flagEndHeaders, []byte{0x82})...))
	sp := &splitter{prefaceWait: time.Second, headersWait: time.Second, maxSniff: 1 << 16, log: slog.New(slog.DiscardHandler),
		grpc: newConnQueue(nil), http: newConnQueue(nil)}
	f.Fuzz(func(t *testing.T, opening []byte) {
		q, rc, err := sp.classify(&pipeConn{r: bytes.NewReader(opening)})
		if err != nil {
			return // the client went away before its first request
		}
		if q != sp.grpc && q != sp.http {
			t.Fatal("routed nowhere")
		}
		got, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		want := opening
		if bytes.HasPrefix(opening, []byte(http2Preface)) {
			want = withoutFirstAck(opening)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("replayed %q\nwant %q", got, want)
		}
	})
}

// TestSplitterTimeouts: a client that opens HTTP/2 and never sends a request is closed after
// the headers wait, one that sends nothing after the preface wait, and close ends the
// connections still being read.
func TestSplitterTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sp := newSplitter(ln, nil, 200*time.Millisecond, 300*time.Millisecond, 1<<16, slog.New(slog.DiscardHandler))
	go sp.serve()
	for _, opening := range []string{"", http2Preface + string(frame(frameSettings, 0, nil))} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, opening)
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang check, not a timing claim
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatalf("opening %q: connection not closed by the splitter: %v", opening, err)
		}
		if opening != "" && !bytes.Equal(b, emptySettings) {
			t.Fatalf("opening %q: read %x, want the empty SETTINGS frame", opening, b)
		}
	}
	sp.close()
	// A connection still being read when the splitter closes is closed with it.
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sp = newSplitter(ln, nil, time.Hour, time.Hour, 1<<16, slog.New(slog.DiscardHandler))
	go sp.serve()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, http2Preface)
	buf := make([]byte, len(emptySettings))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sp.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("close waits for a connection that never sends its request")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(buf); !errors.Is(err, io.EOF) && !strings.Contains(errString(err), "reset") {
		t.Fatalf("read after close: %v", err)
	}
}

// TestSplitterCloseUnserved: close returns even when a routed connection waits for a server
// that no longer accepts (one whose Serve has failed), and that connection is closed.
func TestSplitterCloseUnserved(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sp := newSplitter(ln, nil, time.Minute, time.Minute, 1<<16, slog.New(slog.DiscardHandler))
	go sp.serve()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") // routed to HTTP at once; nobody accepts
	// Wait until the routing goroutine holds it.
	for range 500 {
		sp.mu.Lock()
		n := len(sp.sniffing)
		sp.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { sp.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("close waits for a server that does not accept")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !strings.Contains(errString(err), "reset") {
		t.Fatalf("read after close: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
