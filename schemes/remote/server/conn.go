package server

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// What one connection can make the server hold, on both HTTP/2 servers alike:
//
//   - Config.MaxStreams requests at a time (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; grpc-go
//     sets no limit of its own, and 2,000 streams of 10,000 text UUIDs that a client never
//     read took one idkitd to 2.2 GB);
//   - Config.MaxConnBytes of answers not yet sent: a Next answer reserves its size from its
//     connection's budget before it is made and gives it back once it has been written to
//     the connection (or dropped with its stream), so a client that asks for much and reads
//     nothing waits for its own earlier answers instead of piling them up. Answers under
//     minCounted bytes are not counted: MaxStreams of them hold little;
//   - recvWindow bytes of request data per stream and recvConnWindow per connection (static
//     HTTP/2 flow-control windows; grpc-go's dynamic window would grow to 16 MiB);
//   - Config.WriteTimeout: a connection whose writes make no progress for that long is closed,
//     which frees what it held (and so is one with an answer not written for that long:
//     limits.go, which also bounds all connections together).

const (
	// minCounted is the smallest answer that is counted against its connection's budget.
	minCounted = 4 << 10
	// recvWindow and recvConnWindow bound the request bytes a client may send ahead.
	recvWindow     = 64 << 10
	recvConnWindow = 1 << 20
)

// heldBytes is an upper bound on the memory a Next answer of n IDs holds until it is sent: the
// response message and its encoding, in the larger of the protobuf and JSON forms. bits is the
// generator's width, 0 when not yet known (counted as 128).
func heldBytes(n int, bits int32, text bool) int64 {
	per := int64(72) // [][]byte: 24-byte slice header and 16 bytes, 18 on the wire, 27 in base64
	if bits == 64 {
		per = 32 // 8 bytes, up to 23 as a JSON string
	}
	if text {
		per += 96 // a string header and up to 36 characters, twice (text and its encoding)
	}
	return int64(n) * per
}

// connBudget is one connection's allowance of answer bytes not yet sent; a connection's draws
// on the server's (parent), Config.MaxTotalBytes.
type connBudget struct {
	limit  int64
	parent *connBudget
	mu     sync.Mutex
	held   int64
	freed  chan struct{} // closed by the next release while someone waits; nil otherwise
}

func newConnBudget(limit int64, parent *connBudget) *connBudget {
	return &connBudget{limit: limit, parent: parent}
}

// acquire reserves n bytes, waiting while the connection's earlier answers hold its budget,
// then while all connections' answers hold the server's; an answer larger than a whole budget
// goes alone. It fails only when ctx ends.
func (b *connBudget) acquire(ctx context.Context, n int64) error {
	if err := b.take(ctx, n); err != nil {
		return err
	}
	if b.parent != nil {
		if err := b.parent.take(ctx, n); err != nil {
			b.give(n)
			return err
		}
	}
	return nil
}

func (b *connBudget) take(ctx context.Context, n int64) error {
	for {
		b.mu.Lock()
		if b.held == 0 || b.held+n <= b.limit {
			b.held += n
			b.mu.Unlock()
			return nil
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		ch := b.freed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives back n bytes, to the server's budget too.
func (b *connBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.give(n)
	if b.parent != nil {
		b.parent.give(n)
	}
}

func (b *connBudget) give(n int64) {
	b.mu.Lock()
	b.held -= n
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// httpBudget returns the budget of the net/http connection ctx belongs to, nil outside Serve.
func httpBudget(ctx context.Context) *connBudget {
	if c := httpState(ctx); c != nil {
		return c.budget
	}
	return nil
}

// grpcState returns the state of the grpc-go connection ctx belongs to, nil outside Serve.
func grpcState(ctx context.Context) *connState {
	if p, ok := peer.FromContext(ctx); ok {
		if a, ok := p.AuthInfo.(budgetAuth); ok {
			return a.st
		}
	}
	return nil
}

// grpcBudget returns the budget of the grpc-go connection ctx belongs to, nil outside Serve.
func grpcBudget(ctx context.Context) *connBudget {
	if c := grpcState(ctx); c != nil {
		return c.budget
	}
	return nil
}

// held is what one net/http request has reserved; the handler gives it back when the request
// is over, which on net/http is when its answer has been written to the connection.
type held struct {
	b *connBudget
	n int64
}

type heldKey struct{}

func (h *held) budget() *connBudget {
	if h == nil {
		return nil
	}
	return h.b
}

func (h *held) add(n int64) {
	if h != nil {
		h.n += n
	}
}

func (h *held) release() { h.b.release(h.n) }

// budgetCreds wraps grpc-go's transport credentials so that each connection's requests find
// its state (budget, pending answers) through their peer's AuthInfo.
type budgetCreds struct {
	credentials.TransportCredentials
}

// budgetAuth is a connection's AuthInfo with its state.
type budgetAuth struct {
	credentials.AuthInfo
	st *connState
}

func (c budgetCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	nc, ai, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		return nil, nil, err
	}
	return nc, budgetAuth{AuthInfo: ai, st: stateOf(conn)}, nil
}

func (c budgetCreds) Clone() credentials.TransportCredentials {
	return budgetCreds{TransportCredentials: c.TransportCredentials.Clone()}
}

// stallListener counts connections against Config.MaxConns (closing one over it at once) and
// gives every accepted connection a write timeout and its state.
type stallListener struct {
	net.Listener
	timeout   time.Duration
	l         *limits
	connBytes int64
}

func (l stallListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.l.conns.Add(1) > l.l.maxConns {
			l.l.conns.Add(-1)
			c.Close()
			l.l.note(l.l.refConns, "refusing connections: bound reached (--max-conns)", "max", l.l.maxConns)
			continue
		}
		sc := &stallConn{Conn: c, timeout: l.timeout}
		sc.st = &connState{l: l.l, conn: sc, budget: newConnBudget(l.connBytes, l.l.bytes), pending: map[*answer]struct{}{}}
		l.l.attach(sc.st)
		return sc, nil
	}
}

// stallConn closes a connection whose client stopped reading: a write that makes no progress
// for its timeout fails and closes the connection (grpc-go's writer, on a write error, leaves
// the closing to its reader, which a silent client never wakes). A slow write that makes
// progress goes on.
//
// The deadline is moved at most every timeout/16 (a write then has at least 15/16 of the
// timeout to make progress): moving it is a runtime timer update, 2% of the CPU of a plain
// GET /v1/next (docs/bench/http-profile.txt), and every answer is a write.
type stallConn struct {
	net.Conn
	timeout   time.Duration
	st        *connState
	closeOnce sync.Once
	renew     atomic.Int64 // Unix nanoseconds after which a write moves the deadline
}

func (c *stallConn) Write(p []byte) (int, error) {
	written := 0
	for {
		now := time.Now()
		if now.UnixNano() >= c.renew.Load() {
			c.Conn.SetWriteDeadline(now.Add(c.timeout))
			c.renew.Store(now.Add(c.timeout / 16).UnixNano())
		}
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil {
			return written, nil
		}
		c.renew.Store(0) // the next write, or the next try, sets a full timeout
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return written, err
		}
		if n == 0 {
			c.Close()
			return written, err
		}
	}
}

// Close closes the connection and, the first time, gives back what its answers held and its
// place under Config.MaxConns.
func (c *stallConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(c.st.closeConn)
	return err
}

// CloseWrite half-closes the connection when the one below can, as net/http does for
// HTTP/1.1 connections it finishes.
func (c *stallConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
