package server

import (
	"container/list"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// What all connections together can make the server hold (conn.go bounds each one):
//
//   - Config.MaxConns connections at a time, on both listeners together: one more is closed
//     as soon as it is accepted; on a server with tokens, Config.MaxOpenConns of them that
//     have shown no token yet (one more closes the oldest such, below);
//   - Config.MaxTotalStreams requests in flight, on both listeners, and of those
//     Config.MaxOpenStreams from callers without a token on a server with tokens (the open
//     paths: health, reflection, /healthz, /readyz, and the 401s), of which
//     Config.MaxOpenWatches long-lived streams (health Watch, reflection). A token holder's
//     request over a bound is refused at once with UNAVAILABLE (HTTP 503, Retry-After: 1) and
//     no body, which a client that reads nothing still receives (headers are not
//     flow-controlled); a caller without a token has its connection closed instead;
//   - Config.MaxTotalBytes of answers not yet sent: each connection's budget draws on it, so
//     a Next answer waits while all connections' unread answers hold it;
//   - an answer that has not been written for Config.WriteTimeout (the client gave it no
//     flow-control window, or stopped reading) closes its connection, which frees what it
//     held: so a stream window of zero holds nothing for longer than that. A request is counted
//     until its answer has been written, not only until its handler returns.

// limits is the server-wide half of the bounds: connection and stream counts, the byte budget
// every connection's draws on, and the answers waiting to be written.
type limits struct {
	maxConns           int64
	conns              atomic.Int64
	maxAnon            int64
	tokens             bool // the server has tokens: connections start unproven
	shedMu             sync.Mutex
	shedTimer          *time.Timer
	shedLast           time.Time
	unprovenList       *list.List // of *connState, oldest first; under mu
	total, open, watch slots
	bytes              *connBudget
	stall              time.Duration
	refused            *prometheus.CounterVec
	log                *slog.Logger
	lastLog            atomic.Int64 // Unix nanoseconds of the last refusal logged
	mu                 sync.Mutex
	live               map[*connState]struct{}
	refConns, refTotal prometheus.Counter
	refOpen, refWatch  prometheus.Counter
	refAnon            prometheus.Counter
	stalled            prometheus.Counter
}

func newLimits(cfg *Config, reg *prometheus.Registry, log *slog.Logger) *limits {
	l := &limits{
		maxConns:     int64(cfg.MaxConns),
		maxAnon:      int64(cfg.MaxOpenConns),
		tokens:       len(cfg.Tokens) > 0,
		unprovenList: list.New(),
		total:        slots{max: int64(cfg.MaxTotalStreams)},
		open:         slots{max: int64(cfg.MaxOpenStreams)},
		watch:        slots{max: int64(cfg.MaxOpenWatches)},
		bytes:        newConnBudget(int64(cfg.MaxTotalBytes), nil),
		stall:        cfg.WriteTimeout,
		log:          log,
		live:         map[*connState]struct{}{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_refused_total",
			Help: "Connections and requests refused because a server-wide bound was reached (conns, open_conns, streams, open_streams, open_watches), and connections closed because an answer stayed unwritten (stalled).",
		}, []string{"bound"}),
	}
	l.refConns = l.refused.WithLabelValues("conns")
	l.refAnon = l.refused.WithLabelValues("open_conns")
	l.refTotal = l.refused.WithLabelValues("streams")
	l.refOpen = l.refused.WithLabelValues("open_streams")
	l.refWatch = l.refused.WithLabelValues("open_watches")
	l.stalled = l.refused.WithLabelValues("stalled")
	reg.MustRegister(l.refused)
	return l
}

// slots counts what is in use of a bound.
type slots struct {
	n   atomic.Int64
	max int64
}

func (s *slots) take() bool {
	if s.n.Add(1) > s.max {
		s.n.Add(-1)
		return false
	}
	return true
}

func (s *slots) give() { s.n.Add(-1) }

// note logs a refusal, at most every 10 seconds, and has the memory the flood took returned.
func (l *limits) note(c prometheus.Counter, msg string, args ...any) {
	c.Inc()
	l.shed()
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last >= int64(10*time.Second) && l.lastLog.CompareAndSwap(last, now) {
		l.log.Warn(msg, args...)
	}
}

// On a server with tokens, every connection counts as unproven from the moment it is accepted
// until a request on it shows a token; at most Config.MaxOpenConns are unproven at a time, and
// one more makes the oldest unproven connection close. A client that floods with connections
// that show no token therefore has at most that many alive, each with at most
// Config.MaxStreams requests, and cannot keep a newcomer out: the newcomer evicts it. (Counting
// from the first request instead came too late on net/http, which starts a handler for each of
// a connection's streams before any of them can refuse it.)

// unproven counts a newly accepted connection as unproven, closing the oldest one when there
// are more than MaxOpenConns.
func (l *limits) unproven(st *connState) {
	st.anon.Store(1)
	l.mu.Lock()
	st.elem = l.unprovenList.PushBack(st)
	var evict *connState
	if int64(l.unprovenList.Len()) > l.maxAnon {
		evict = l.unprovenList.Remove(l.unprovenList.Front()).(*connState)
		evict.elem = nil
	}
	l.mu.Unlock()
	if evict != nil && evict.anon.CompareAndSwap(1, 2) {
		l.note(l.refAnon, "closing the oldest connection without a token: bound reached (--max-open-conns)", "max", l.maxAnon)
		evict.conn.Close()
	}
}

// proven notes that a request on st showed a token.
func (l *limits) proven(st *connState) {
	if st == nil || st.anon.Load() != 1 || !st.anon.CompareAndSwap(1, 2) {
		return
	}
	l.forget(st)
}

// forget takes st off the unproven list.
func (l *limits) forget(st *connState) {
	l.mu.Lock()
	if st.elem != nil {
		l.unprovenList.Remove(st.elem)
		st.elem = nil
	}
	l.mu.Unlock()
}

// shed returns to the operating system, once refusals have stopped for shedQuiet (and at most
// every shedEvery), the memory a flood made the runtime take: the handlers net/http starts for
// every stream of a connection before one of them can refuse it leave garbage the runtime
// would keep mapped for minutes, which counts against the bounds as RSS.
func (l *limits) shed() {
	l.shedMu.Lock()
	defer l.shedMu.Unlock()
	if l.shedTimer != nil {
		l.shedTimer.Reset(shedQuiet)
		return
	}
	wait := max(shedQuiet, time.Until(l.shedLast.Add(shedEvery)))
	l.shedTimer = time.AfterFunc(wait, func() {
		l.shedMu.Lock()
		l.shedTimer = nil
		l.shedLast = time.Now()
		l.shedMu.Unlock()
		debug.FreeOSMemory()
	})
}

const (
	shedQuiet = 500 * time.Millisecond
	shedEvery = 10 * time.Second
)

// ticket is what one request holds of the server-wide bounds, given back when it is over.
type ticket struct {
	l           *limits
	open, watch bool
	refs        atomic.Int32 // grpc-go: the stream, and each answer not yet written
}

// admit takes a request's slots: one of MaxTotalStreams, and for a caller without a token
// (authed false) one of MaxOpenStreams, and one of MaxOpenWatches for a long-lived stream.
// It returns nil, with the bound that refused it counted and logged, when one is full.
func (l *limits) admit(authed, long bool) *ticket {
	t := &ticket{l: l}
	if !l.take(t, authed, long) {
		return nil
	}
	return t
}

// take is admit into a ticket the caller holds (t.l set).
func (l *limits) take(t *ticket, authed, long bool) bool {
	if !l.total.take() {
		l.note(l.refTotal, "refusing requests: server-wide stream bound reached (--max-total-streams)", "max", l.total.max)
		return false
	}
	if !authed {
		if !l.open.take() {
			l.total.give()
			l.note(l.refOpen, "refusing requests without a token: bound reached (--max-open-streams)", "max", l.open.max)
			return false
		}
		t.open = true
		if long {
			if !l.watch.take() {
				l.open.give()
				l.total.give()
				l.note(l.refWatch, "refusing streams without a token: bound reached (--max-open-watches)", "max", l.watch.max)
				return false
			}
			t.watch = true
		}
	}
	t.refs.Store(1)
	return true
}

// release gives the slots back.
func (t *ticket) release() {
	if t.watch {
		t.l.watch.give()
	}
	if t.open {
		t.l.open.give()
	}
	t.l.total.give()
}

func (t *ticket) ref() {
	if t != nil {
		t.refs.Add(1)
	}
}

func (t *ticket) unref() {
	if t != nil && t.refs.Add(-1) == 0 {
		t.release()
	}
}

// refuse answers what take refused: for a caller without a token, closing its connection
// (it is flooding the open paths: a refusal left unread would hold the handler that wrote it),
// for the others UNAVAILABLE.
func (l *limits) refuse(st *connState, open bool, w http.ResponseWriter, r *http.Request) {
	if open && st != nil {
		st.conn.Close()
		return
	}
	busy(w, r)
}

// longStream reports whether a path is a stream that may stay open for long: health Watch and
// reflection.
func longStream(path string) bool {
	return path == healthPath+"Watch" || strings.HasPrefix(path, "/grpc.reflection.")
}

// busy answers a request refused by a server-wide bound: UNAVAILABLE without a body, so that
// even a client that grants no flow-control window gets it.
func busy(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Retry-After", "1")
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/grpc") {
		h.Set("Content-Type", ct)
		h.Set("Grpc-Status", "14")
		h.Set("Grpc-Message", busyMsg)
		w.WriteHeader(http.StatusOK)
		return
	}
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusServiceUnavailable)
}

// busyMsg is the reason of a refusal by a server-wide bound.
const busyMsg = "server busy: too many requests in flight, try again"

// connState is one accepted connection: its byte budget and the answers on it not yet written.
type connState struct {
	l       *limits
	conn    net.Conn
	budget  *connBudget
	mu      sync.Mutex
	pending map[*answer]struct{}
	closed  bool
	anon    atomic.Int32  // 1 unproven (counted under MaxOpenConns), else 0
	elem    *list.Element // on limits.unprovenList while unproven; under limits.mu
	gone    atomic.Bool   // closed: its remaining requests are dropped at once
}

// answer is one answer being written: from its first byte until it has all been handed to the
// connection (net/http) or written by grpc-go (which frees its buffer).
type answer struct {
	start time.Time
	done  func() // grpc-go: what it holds, given back once
	once  sync.Once
}

// track counts a as pending on its connection; false when the connection is closed already.
func (c *connState) track(a *answer) bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.pending[a] = struct{}{}
	return true
}

func (c *connState) untrack(a *answer) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.pending, a)
	c.mu.Unlock()
}

// finish gives back what an answer holds, once, and stops tracking it.
func (a *answer) finish(c *connState) {
	a.once.Do(func() {
		c.untrack(a)
		if a.done != nil {
			a.done()
		}
	})
}

// stalledSince reports whether an answer has been pending since before t.
func (c *connState) stalledSince(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a := range c.pending {
		if a.start.Before(t) {
			return true
		}
	}
	return false
}

// closeConn is called once when the connection closes: the answers still pending give back
// what they hold (grpc-go may never free the buffers of a connection it dropped).
func (c *connState) closeConn() {
	c.gone.Store(true)
	c.mu.Lock()
	c.closed = true
	left := make([]*answer, 0, len(c.pending))
	for a := range c.pending {
		left = append(left, a)
	}
	c.mu.Unlock()
	for _, a := range left {
		a.finish(c)
	}
	if c.anon.Swap(2) == 1 {
		c.l.forget(c)
	}
	c.l.mu.Lock()
	delete(c.l.live, c)
	c.l.mu.Unlock()
	c.l.conns.Add(-1)
}

// watchStalls closes, until stop is closed, every connection with an answer that has not been
// written for the stall timeout.
func (l *limits) watchStalls(stop <-chan struct{}) {
	every := max(l.stall/4, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		cut := time.Now().Add(-l.stall)
		l.mu.Lock()
		conns := make([]*connState, 0, len(l.live))
		for c := range l.live {
			conns = append(conns, c)
		}
		l.mu.Unlock()
		for _, c := range conns {
			if c.stalledSince(cut) {
				l.note(l.stalled, "closing a connection: an answer on it has not been written for the write timeout (the client gives it no flow-control window or reads nothing)",
					"remote", c.conn.RemoteAddr().String(), "timeout", l.stall.String())
				c.conn.Close()
			}
		}
	}
}

// stateOf returns the state of a connection net/http or grpc-go got from stallListener.
func stateOf(c net.Conn) *connState {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if sc, ok := c.(*stallConn); ok {
		return sc.st
	}
	return nil
}

// stateKey is the context key of a net/http connection's *connState (http.Server's
// ConnContext).
type stateKey struct{}

func httpState(ctx context.Context) *connState {
	c, _ := ctx.Value(stateKey{}).(*connState)
	return c
}

// trackWriter marks a net/http answer pending on its connection from its first byte of body
// until a Flush has handed it all over, so that watchStalls sees an answer the client does not
// take. Headers alone are not flow-controlled: an answer without a body is never pending (and
// is not flushed early, which would split a gRPC trailers-only answer).
type trackWriter struct {
	http.ResponseWriter
	st    *connState
	a     answer
	on    bool
	unary bool // an IDService RPC on HTTP/2: its answer goes out whole after the handler
}

func (w *trackWriter) begin() {
	if !w.on {
		w.on = true
		w.a.start = time.Now()
		w.st.track(&w.a)
	}
}

func (w *trackWriter) end() {
	if w.on {
		w.on = false
		w.st.untrack(&w.a)
	}
}

func (w *trackWriter) Write(p []byte) (int, error) {
	w.begin()
	return w.ResponseWriter.Write(p)
}

// Flush writes what is buffered and waits until the connection has taken it; the answer is then
// no longer pending (a stream waiting for its next message is not stalled). In a unary RPC on
// HTTP/2 it does nothing: Connect flushes after each gRPC and gRPC-Web message, which would
// send the answer's headers, message and end in separate writes, and the answer is held and
// counted until its stream closes anyway (inFlight.finish).
func (w *trackWriter) Flush() {
	if w.unary {
		return
	}
	w.begin()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	w.end()
}

func (w *trackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
