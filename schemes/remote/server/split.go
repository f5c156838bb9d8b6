package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2/hpack"
)

// One port, two HTTP/2 servers. gRPC libraries' clients are answered by grpc-go's own
// transport, which costs less CPU per request and has a far shorter latency tail than
// net/http's HTTP/2 server (docs/service/report.md has the figures); HTTP/1.1, gRPC-Web, the
// Connect protocol and the plain endpoints are answered by net/http and Connect. The splitter
// routes whole connections by their first request, as cmux does, since a gRPC library keeps
// its connections for gRPC alone. Unlike cmux it never lets the server behind it see a
// SETTINGS frame it did not send or an acknowledgement it did not ask for: net/http hangs up
// on an unexpected SETTINGS ACK.

// http2Preface is what every HTTP/2 client sends first (RFC 9113, section 3.4).
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// HTTP/2 frame types and flags the splitter reads (RFC 9113, section 6).
const (
	frameHeaders      = 0x1
	frameSettings     = 0x4
	frameContinuation = 0x9

	flagAck        = 0x1 // SETTINGS
	flagEndHeaders = 0x4 // HEADERS, CONTINUATION
	flagPadded     = 0x8 // HEADERS
	flagPriority   = 0x20

	frameHeaderLen = 9
	// maxFrameLen is SETTINGS_MAX_FRAME_SIZE's initial value: the splitter's own SETTINGS
	// frame is empty, so a client may not send larger frames before the real server's arrive.
	maxFrameLen = 1 << 14
)

// emptySettings is the server preface the splitter sends so that clients which wait for it
// (grpc-go, grpc-java) send their first request: a SETTINGS frame that changes nothing.
var emptySettings = []byte{0, 0, 0, frameSettings, 0, 0, 0, 0, 0}

// errNotHTTP2 reports bytes that cannot be an HTTP/2 connection's opening; such connections go
// to net/http, which answers them with the protocol error they deserve.
var errNotHTTP2 = errors.New("server: not an HTTP/2 opening")

// splitter accepts connections and hands each to the gRPC or the HTTP listener.
type splitter struct {
	ln          net.Listener
	tls         *tls.Config   // nil for cleartext
	prefaceWait time.Duration // TLS handshake and the first bytes
	headersWait time.Duration // from the preface to the first request's headers
	maxSniff    int           // bytes read before giving up and choosing HTTP
	log         *slog.Logger
	grpc, http  *connQueue

	mu       sync.Mutex
	closed   bool
	sniffing map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func newSplitter(ln net.Listener, tlsCfg *tls.Config, prefaceWait, headersWait time.Duration, maxSniff int, log *slog.Logger) *splitter {
	return &splitter{
		ln: ln, tls: tlsCfg, prefaceWait: prefaceWait, headersWait: headersWait, maxSniff: maxSniff, log: log,
		grpc: newConnQueue(ln.Addr()), http: newConnQueue(ln.Addr()), sniffing: map[net.Conn]struct{}{},
	}
}

// serve accepts until the listener is closed, retrying temporary errors (out of file
// descriptors) with a backoff as net/http does.
func (s *splitter) serve() error {
	var backoff time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.isClosed() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if ne, ok := err.(interface{ Temporary() bool }); ok && ne.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "in", backoff.String())
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("server: accept: %w", err)
		}
		backoff = 0
		if !s.track(c) {
			c.Close()
			return nil
		}
		s.wg.Go(func() { s.route(c) })
	}
}

// close stops accepting, closes the connections not yet handed to a server and both queues,
// and waits for the routing goroutines. The servers behind the queues go on with the
// connections they have; closing them is their Shutdown's business.
func (s *splitter) close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.sniffing {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.grpc.Close()
	s.http.Close()
	s.wg.Wait()
}

func (s *splitter) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *splitter) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.sniffing[c] = struct{}{}
	return true
}

func (s *splitter) untrack(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sniffing, c)
}

// route classifies c and queues it for its server.
func (s *splitter) route(c net.Conn) {
	dst, rc, err := s.classify(c)
	s.untrack(c)
	if err != nil {
		s.log.Debug("connection closed before its first request", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	if !dst.put(rc) {
		rc.Close()
	}
}

// classify reads the opening of a connection, up to the first request's headers on HTTP/2,
// and returns the queue it belongs to with a connection that replays what was read.
func (s *splitter) classify(c net.Conn) (*connQueue, net.Conn, error) {
	c.SetDeadline(time.Now().Add(s.prefaceWait))
	conn := c
	if s.tls != nil {
		tc := tls.Server(c, s.tls)
		if err := tc.Handshake(); err != nil {
			var re tls.RecordHeaderError
			if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader[:]) {
				io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			}
			return nil, nil, fmt.Errorf("TLS handshake: %w", err)
		}
		if tc.ConnectionState().NegotiatedProtocol != "h2" {
			c.SetDeadline(time.Time{})
			return s.http, tc, nil // net/http sees the *tls.Conn it knows
		}
		conn = tc
	}
	read, err := readPreface(conn)
	if errors.Is(err, errNotHTTP2) {
		conn.SetDeadline(time.Time{})
		return s.http, newReplayConn(conn, read, false), nil
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.Write(emptySettings); err != nil {
		return nil, nil, err
	}
	conn.SetDeadline(time.Now().Add(s.headersWait))
	sn := sniffer{r: conn, buf: read, max: s.maxSniff}
	grpc, err := sn.firstRequest()
	if err != nil && !errors.Is(err, errNotHTTP2) {
		return nil, nil, err
	}
	conn.SetDeadline(time.Time{})
	rc := newReplayConn(conn, sn.buf, !sn.acked)
	if grpc {
		return s.grpc, rc, nil
	}
	return s.http, rc, nil
}

// readPreface reads the HTTP/2 client preface, or as much of a connection's opening as shows
// that it is not one (errNotHTTP2). It returns every byte it read.
func readPreface(r io.Reader) ([]byte, error) {
	buf := make([]byte, len(http2Preface))
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if string(buf[:n]) != http2Preface[:n] {
			return buf[:n], errNotHTTP2
		}
		if err != nil {
			return buf[:n], err
		}
	}
	return buf, nil
}

// sniffer reads an HTTP/2 connection's frames, after the preface, up to the end of its first
// request's headers.
type sniffer struct {
	r     io.Reader
	buf   []byte // what the server behind will read: everything but the dropped ACK
	max   int
	acked bool // the client's SETTINGS ACK for emptySettings was read and dropped
	block []byte
}

// firstRequest reports whether the first request is gRPC. It returns errNotHTTP2 (with false)
// when the frames break the protocol, so that net/http answers them.
func (sn *sniffer) firstRequest() (grpc bool, err error) {
	var hdr [frameHeaderLen]byte
	inHeaders := false
	for {
		if _, err := io.ReadFull(sn.r, hdr[:]); err != nil {
			return false, err
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := hdr[3], hdr[4]
		if n > maxFrameLen || len(sn.buf)+frameHeaderLen+n > sn.max {
			sn.buf = append(sn.buf, hdr[:]...)
			return false, errNotHTTP2
		}
		if typ == frameSettings && flags&flagAck != 0 && n == 0 && !sn.acked {
			sn.acked = true
			continue
		}
		start := len(sn.buf) + frameHeaderLen
		sn.buf = append(sn.buf, hdr[:]...)
		sn.buf = append(sn.buf, make([]byte, n)...)
		if _, err := io.ReadFull(sn.r, sn.buf[start:]); err != nil {
			return false, err
		}
		payload := sn.buf[start:]
		switch {
		case typ == frameHeaders && !inHeaders:
			frag, ok := headerFragment(payload, flags)
			if !ok {
				return false, errNotHTTP2
			}
			sn.block, inHeaders = append(sn.block, frag...), true
		case typ == frameContinuation && inHeaders:
			sn.block = append(sn.block, payload...)
		case inHeaders, typ == frameContinuation:
			return false, errNotHTTP2 // RFC 9113, 6.10: nothing may come between them
		default:
			continue
		}
		if flags&flagEndHeaders != 0 {
			ct, ua, err := requestHeaders(sn.block)
			if err != nil {
				return false, errNotHTTP2
			}
			return isGRPC(ct) && dedicatedGRPCClient(ua), nil
		}
	}
}

// headerFragment strips a HEADERS frame's padding and priority fields.
func headerFragment(p []byte, flags byte) ([]byte, bool) {
	if flags&flagPadded != 0 {
		if len(p) < 1 {
			return nil, false
		}
		pad := int(p[0])
		p = p[1:]
		if pad > len(p) {
			return nil, false
		}
		p = p[:len(p)-pad]
	}
	if flags&flagPriority != 0 {
		if len(p) < 5 {
			return nil, false
		}
		p = p[5:]
	}
	return p, true
}

// requestHeaders decodes a header block and returns its content-type and user-agent.
func requestHeaders(block []byte) (ct, ua string, err error) {
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		switch f.Name {
		case "content-type":
			ct = f.Value
		case "user-agent":
			ua = f.Value
		}
	})
	if _, err := dec.Write(block); err != nil {
		return "", "", err
	}
	return ct, ua, dec.Close()
}

// dedicatedGRPCClient reports whether a user agent is a gRPC library's own (grpc-go, grpc-java,
// the C core under Python, Ruby, PHP and C++, grpc-node, grpc-dotnet, grpc-swift, Rust's tonic,
// grpcurl), which keeps its connections for gRPC alone. General HTTP clients (net/http,
// connect-go, whose gRPC calls say grpc-go-connect/…) may send gRPC and other requests on one
// connection; they stay with net/http, whose Connect handler answers gRPC as well, since
// grpc-go would refuse their other requests.
func dedicatedGRPCClient(ua string) bool {
	ua = strings.ToLower(ua)
	if strings.HasPrefix(ua, "grpc-go-connect/") {
		return false
	}
	return strings.HasPrefix(ua, "grpc-") || strings.Contains(ua, " grpc-") || strings.HasPrefix(ua, "tonic/")
}

// isGRPC reports whether a content type is gRPC's own (application/grpc, application/grpc+proto
// …); gRPC-Web is served by Connect.
func isGRPC(ct string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(ct), "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}

// looksLikeHTTP reports whether the first bytes of a would-be TLS connection are a plaintext
// HTTP request, as net/http checks before it answers 400.
func looksLikeHTTP(hdr []byte) bool {
	switch string(hdr) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// replayConn is a connection whose first bytes were read by the splitter: Read returns them
// again, then the rest. While dropAck is set it also removes the first SETTINGS ACK, which
// acknowledges the splitter's SETTINGS frame and not the server's.
type replayConn struct {
	net.Conn
	br      *bufio.Reader
	dropAck bool
	pass    int // bytes of the current frame to pass before looking at the next header
	scanned int // bytes looked through for the ACK; past scanLimit the search stops
}

// scanLimit bounds the search for the ACK: a client that has not acknowledged within this
// many bytes breaks the protocol, and the server behind may say so.
const scanLimit = 1 << 20

// newReplayConn returns c reading read first. With dropAck, read starts with the HTTP/2
// preface, which the ACK filter passes before it reads frame headers.
func newReplayConn(c net.Conn, read []byte, dropAck bool) *replayConn {
	rc := &replayConn{Conn: c, br: bufio.NewReader(io.MultiReader(bytes.NewReader(read), c)), dropAck: dropAck}
	if dropAck {
		rc.pass = len(http2Preface)
	}
	return rc
}

func (c *replayConn) Read(p []byte) (int, error) {
	for c.dropAck && c.pass == 0 {
		h, err := c.br.Peek(frameHeaderLen)
		if err != nil {
			c.dropAck = false // hand over what is left, then the error
			break
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		if h[3] == frameSettings && h[4]&flagAck != 0 && n == 0 {
			c.br.Discard(frameHeaderLen)
			c.dropAck = false
			break
		}
		c.pass = frameHeaderLen + n
		if c.scanned += c.pass; c.scanned > scanLimit {
			c.dropAck, c.pass = false, 0
		}
	}
	if c.pass > 0 && len(p) > c.pass {
		p = p[:c.pass]
	}
	n, err := c.br.Read(p)
	c.pass = max(c.pass-n, 0)
	return n, err
}

// CloseWrite half-closes the connection when the one below can, as net/http does for
// HTTP/1.1 connections it finishes.
func (c *replayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connQueue is a net.Listener fed by the splitter.
type connQueue struct {
	addr net.Addr
	c    chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, c: make(chan net.Conn), done: make(chan struct{})}
}

// put hands c to Accept; it reports false once the queue is closed.
func (q *connQueue) put(c net.Conn) bool {
	select {
	case q.c <- c:
		return true
	case <-q.done:
		return false
	}
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.c:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

func (q *connQueue) Addr() net.Addr { return q.addr }
