// Package h2raw is an HTTP/2 client written with x/net/http2's Framer, for the ID service's
// tests of what no well-behaved client does: several protocols on one connection as a proxy
// sends them, requests whose answers it never reads, frames at chosen moments.
package h2raw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"
)

// Conn is one cleartext HTTP/2 connection (prior knowledge). Its methods fail the test on a
// transport error; it is not safe for concurrent use.
type Conn struct {
	t    testing.TB
	c    net.Conn
	fr   *http2.Framer
	hbuf bytes.Buffer
	enc  *hpack.Encoder
	next uint32
}

// Dial connects to addr and sends the client preface with settings. The connection is closed
// when the test ends.
func Dial(t testing.TB, addr string, settings ...http2.Setting) *Conn {
	t.Helper()
	return DialFrom(t, "", addr, settings...)
}

// DialFrom is Dial from the local IP address from (empty: any), such as another loopback
// address (127.0.0.2) to be a second client address for a server's per-address bounds.
func DialFrom(t testing.TB, from, addr string, settings ...http2.Setting) *Conn {
	t.Helper()
	r, err := TryDial(t, from, addr, settings...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TryDial is DialFrom that returns the error (the connection refused, or closed by the server
// before the preface was written) instead of failing the test.
func TryDial(t testing.TB, from, addr string, settings ...http2.Setting) (*Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	r := &Conn{t: t, c: c, fr: http2.NewFramer(c, c), next: 1}
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	r.enc = hpack.NewEncoder(&r.hbuf)
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	defer c.SetWriteDeadline(time.Time{})
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return nil, err
	}
	if err := r.fr.WriteSettings(settings...); err != nil {
		return nil, err
	}
	return r, nil
}

// Close closes the connection.
func (r *Conn) Close() error { return r.c.Close() }

// TrySend is Send that returns a write error (the server closed the connection) instead of
// failing the test.
func (r *Conn) TrySend(method, path string, body []byte, hdrs ...string) (uint32, error) {
	return r.send(method, path, body, false, hdrs)
}

// Stall starts a request whose body never comes: HEADERS without END_STREAM and nothing after
// (the connection still answers PINGs and SETTINGS whenever it reads). It returns the stream ID
// or the write error.
func (r *Conn) Stall(method, path string, hdrs ...string) (uint32, error) {
	return r.send(method, path, nil, true, hdrs)
}

func (r *Conn) send(method, path string, body []byte, open bool, hdrs []string) (uint32, error) {
	r.hbuf.Reset()
	for _, f := range [][2]string{{":method", method}, {":scheme", "http"}, {":authority", "idkitd"}, {":path", path}} {
		r.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; i+1 < len(hdrs); i += 2 {
		r.enc.WriteField(hpack.HeaderField{Name: hdrs[i], Value: hdrs[i+1]})
	}
	id := r.next
	r.next += 2
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	defer r.c.SetWriteDeadline(time.Time{})
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.hbuf.Bytes(), EndHeaders: true, EndStream: body == nil && !open}); err != nil {
		return id, err
	}
	if body != nil {
		if err := r.fr.WriteData(id, true, body); err != nil {
			return id, err
		}
	}
	return id, nil
}

// Send starts a request and returns its stream ID. Header names are lower case, given as name
// and value pairs; the pseudo headers come from method and path. A nil body ends the stream
// with the headers.
func (r *Conn) Send(method, path string, body []byte, hdrs ...string) uint32 {
	r.t.Helper()
	id, err := r.TrySend(method, path, body, hdrs...)
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}

// Response is what came back on one stream.
type Response struct {
	Header  map[string]string // response headers and trailers, ":status" included
	Body    []byte
	Aborted bool // RST_STREAM or GOAWAY ended it
	ErrCode http2.ErrCode
}

// Status is the response's HTTP status, 0 without one.
func (res Response) Status() int { n, _ := strconv.Atoi(res.Header[":status"]); return n }

// String describes the response in one line, for failure messages.
func (res Response) String() string {
	var hs []string
	for k, v := range res.Header {
		hs = append(hs, k+"="+v)
	}
	return fmt.Sprintf("headers %v, body %.120q, aborted %v %v", strings.Join(hs, " "), res.Body, res.Aborted, res.ErrCode)
}

// Frame reads the next frame, answering SETTINGS and PING and granting flow control for DATA.
func (r *Conn) Frame() (http2.Frame, error) {
	f, err := r.fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if !f.IsAck() {
			r.fr.WriteSettingsAck()
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			r.fr.WritePing(true, f.Data)
		}
	case *http2.DataFrame:
		if n := len(f.Data()); n > 0 {
			r.fr.WriteWindowUpdate(0, uint32(n))
			r.fr.WriteWindowUpdate(f.StreamID, uint32(n))
		}
	}
	return f, nil
}

// Read reads frames until stream id ends and returns what came on it.
func (r *Conn) Read(id uint32) Response {
	r.t.Helper()
	res, err := r.ReadWithin(id, 10*time.Second)
	if err != nil {
		r.t.Fatalf("stream %d: reading: %v", id, err)
	}
	return res
}

// ReadWithin is Read that waits at most d and returns the error (a timeout, or the connection
// closed) instead of failing the test.
func (r *Conn) ReadWithin(id uint32, d time.Duration) (Response, error) {
	res := Response{Header: map[string]string{}}
	r.c.SetReadDeadline(time.Now().Add(d))
	defer r.c.SetReadDeadline(time.Time{})
	for {
		f, err := r.Frame()
		if err != nil {
			return res, err
		}
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			if f.LastStreamID < id {
				res.Aborted, res.ErrCode = true, f.ErrCode
				return res, nil
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID != id {
				continue
			}
			for _, h := range f.Fields {
				res.Header[h.Name] = h.Value
			}
			if f.StreamEnded() {
				return res, nil
			}
		case *http2.DataFrame:
			if f.StreamID != id {
				continue
			}
			res.Body = append(res.Body, f.Data()...)
			if f.StreamEnded() {
				return res, nil
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				res.Aborted, res.ErrCode = true, f.ErrCode
				return res, nil
			}
		}
	}
}

// Settings reads frames until the server's first SETTINGS frame and returns its values.
func (r *Conn) Settings() map[http2.SettingID]uint32 {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer r.c.SetReadDeadline(time.Time{})
	for {
		f, err := r.Frame()
		if err != nil {
			r.t.Fatalf("waiting for SETTINGS: %v", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			out := map[http2.SettingID]uint32{}
			sf.ForeachSetting(func(s http2.Setting) error { out[s.ID] = s.Val; return nil })
			return out
		}
	}
}

// GRPCFrame is a gRPC length-prefixed message.
func GRPCFrame(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// GRPC are the request headers of a gRPC call from grpc-go, as a proxy forwards them.
var GRPC = []string{"content-type", "application/grpc", "te", "trailers", "user-agent", "grpc-go/1.83.2"}

// WindowUpdate grants the server n more bytes of flow-control window on a stream (0: the
// connection).
func (r *Conn) WindowUpdate(stream, n uint32) {
	r.t.Helper()
	if err := r.fr.WriteWindowUpdate(stream, n); err != nil {
		r.t.Fatal(err)
	}
}

// Open reports whether the connection still takes writes: it sends a PING (without reading
// anything). Once the server has closed the connection a write fails, at the latest the second
// one after the close.
func (r *Conn) Open() bool {
	r.c.SetWriteDeadline(time.Now().Add(time.Second))
	defer r.c.SetWriteDeadline(time.Time{})
	return r.fr.WritePing(false, [8]byte{'h', '2', 'r', 'a', 'w'}) == nil
}

// Drain reads and discards what the connection holds for up to d and reports whether the
// server closed it (the read ended other than by the deadline).
func (r *Conn) Drain(d time.Duration) (closed bool) {
	r.c.SetReadDeadline(time.Now().Add(d))
	defer r.c.SetReadDeadline(time.Time{})
	_, err := io.Copy(io.Discard, r.c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// CallGRPC sends one unary gRPC request (body, a GRPCFrame) to path on a new connection from
// the local address from (empty: any), with hdrs besides the gRPC ones, and waits up to d for
// its end. It returns "" when the call succeeded (grpc-status 0), else what went wrong: the
// dial, the send, the read (a timeout says "i/o timeout"), or the response.
func CallGRPC(t testing.TB, from, addr, path string, body []byte, d time.Duration, hdrs ...string) string {
	c, err := TryDial(t, from, addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	id, err := c.TrySend("POST", path, body, append(append([]string{}, GRPC...), hdrs...)...)
	if err != nil {
		return "send: " + err.Error()
	}
	res, err := c.ReadWithin(id, d)
	switch {
	case err != nil:
		return "read: " + err.Error()
	case res.Aborted || res.Header["grpc-status"] != "0":
		return res.String()
	}
	return ""
}

// FloodConnects connects to addr from the local address from over and over on workers
// goroutines, sending nothing and pausing pause after each connect (0: not at all), each
// keeping its last keep connections open, until the stop it returns is called; stop closes
// them and returns once the goroutines have ended.
func FloodConnects(from, addr string, workers, keep int, pause time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
			ring := make([]net.Conn, keep)
			defer func() {
				for _, c := range ring {
					if c != nil {
						c.Close()
					}
				}
			}()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					continue
				}
				if pause > 0 {
					time.Sleep(pause)
				}
				if old := ring[i%keep]; old != nil {
					old.Close()
				}
				ring[i%keep] = c
			}
		})
	}
	return func() { close(done); wg.Wait() }
}
