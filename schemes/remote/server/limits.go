package server

import (
	"container/list"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
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
//     have shown no token yet (one more closes one of those, below);
//   - Config.MaxTotalStreams requests in flight, on both listeners, of which one client address
//     (an IPv4 address, an IPv6 /64) holds at most Config.MaxAddrStreams (and one connection at
//     most Config.MaxStreams), and of those Config.MaxOpenStreams from callers without a token
//     on a server with tokens (the open paths: health, reflection, /healthz, /readyz, and the
//     401s), of which Config.MaxOpenWatches long-lived streams (health Watch, reflection). A
//     token holder's request over a bound is refused at once with UNAVAILABLE (HTTP 503,
//     Retry-After: 1) and no body, which a client that reads nothing still receives (headers
//     are not flow-controlled); a caller without a token has its connection closed instead.
//     The probes (/healthz, /readyz, /metrics, health Check and List) that a bound refuses
//     take one of probeReserve slots instead, at most probeAddrReserve per address, so that a
//     busy server still answers its liveness probe and its scrape;
//   - a request's body must all have come within Config.BodyTimeout of its headers, or its
//     reads fail and the request ends: a request whose body never comes holds its slot no
//     longer than that;
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
	unprovenN          int                     // connections without a token yet; under mu
	crowded            map[*addrState]struct{} // the peers with unproven connections; under mu
	seq                uint64                  // accepts so far; under mu
	peers              map[netip.Addr]*addrState
	maxAddr            int64 // Config.MaxAddrStreams
	total, open, watch slots
	reserve            slots // probeReserve
	bytes              *connBudget
	stall              time.Duration
	refused            *prometheus.CounterVec
	log                *slog.Logger
	lastLog            atomic.Int64 // Unix nanoseconds of the last refusal logged
	mu                 sync.Mutex
	live               map[*connState]struct{}
	refConns, refTotal prometheus.Counter
	refOpen, refWatch  prometheus.Counter
	refAnon, refAddr   prometheus.Counter
	stalled            prometheus.Counter
}

// probeReserve is how many probe requests (probePaths) may be in flight beyond the bounds
// that refuse them, and probeAddrReserve how many of those one client address may hold: a
// probe's answer is small and quick, so a few keep a busy server's liveness and scrape.
const (
	probeReserve     = 32
	probeAddrReserve = probeReserve / 4
)

// probePaths are the requests that may take the probe reserve: the unary probes and the
// scrape, not health Watch, which stays open.
var probePaths = map[string]bool{
	"/healthz": true, "/readyz": true, "/metrics": true, healthPath + "Check": true, healthPath + "List": true,
}

// addrState is one client address (an IPv4 address, an IPv6 /64) and what its connections hold.
type addrState struct {
	key      netip.Addr
	conns    int       // open connections; under limits.mu
	unproven list.List // of *connState without a token yet, oldest first; under limits.mu
	streams  atomic.Int64
	probes   atomic.Int64 // of the probe reserve
}

// peerKey is the address a connection counts under: its IP, or for IPv6 its /64, which one
// host is commonly given whole.
func peerKey(a net.Addr) netip.Addr {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip := ta.AddrPort().Addr().Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return ip
}

func newLimits(cfg *Config, reg *prometheus.Registry, log *slog.Logger) *limits {
	l := &limits{
		maxConns: int64(cfg.MaxConns),
		maxAnon:  int64(cfg.MaxOpenConns),
		tokens:   len(cfg.Tokens) > 0,
		crowded:  map[*addrState]struct{}{},
		peers:    map[netip.Addr]*addrState{},
		maxAddr:  int64(cfg.MaxAddrStreams),
		total:    slots{max: int64(cfg.MaxTotalStreams)},
		open:     slots{max: int64(cfg.MaxOpenStreams)},
		watch:    slots{max: int64(cfg.MaxOpenWatches)},
		reserve:  slots{max: probeReserve},
		bytes:    newConnBudget(int64(cfg.MaxTotalBytes), nil),
		stall:    cfg.WriteTimeout,
		log:      log,
		live:     map[*connState]struct{}{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_refused_total",
			Help: "Connections and requests refused because a server-wide bound was reached (conns, open_conns, streams, addr_streams, open_streams, open_watches), and connections closed because an answer stayed unwritten (stalled).",
		}, []string{"bound"}),
	}
	l.refConns = l.refused.WithLabelValues("conns")
	l.refAddr = l.refused.WithLabelValues("addr_streams")
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
// one more closes the oldest unproven connection of the client address that has the most of
// them (of equals, the one whose oldest is oldest). A client that floods with connections that
// show no token therefore has at most that many alive, each with at most Config.MaxStreams
// requests, and cannot keep a newcomer out: the newcomer evicts it. Nor can it evict the fresh
// connections of clients at other addresses before their first request (closing the oldest
// unproven connection, as this did before, closed mostly those: a flood of bare connects reset
// 6-13% of token holders' requests), unless it spreads itself over more addresses than those
// clients have unproven connections each; a client that shares its address shares its fate.
// (Counting from the first request instead came too late on net/http, which starts a handler
// for each of a connection's streams before any of them can refuse it.)

// attach counts a newly accepted connection: under its client address, and on a server with
// tokens as unproven, closing one unproven connection when there are more than MaxOpenConns.
func (l *limits) attach(st *connState) {
	key := peerKey(st.conn.RemoteAddr())
	l.mu.Lock()
	l.live[st] = struct{}{}
	p := l.peers[key]
	if p == nil {
		p = &addrState{key: key}
		l.peers[key] = p
	}
	p.conns++
	st.peer = p
	l.seq++
	st.seq = l.seq
	var evict *connState
	if l.tokens {
		st.anon.Store(1)
		st.elem = p.unproven.PushBack(st)
		l.unprovenN++
		l.crowded[p] = struct{}{}
		if int64(l.unprovenN) > l.maxAnon {
			evict = l.evictLocked()
		}
	}
	l.mu.Unlock()
	if evict != nil && evict.anon.CompareAndSwap(1, 2) {
		l.note(l.refAnon, "closing a connection without a token, the oldest of the client address with the most: bound reached (--max-open-conns)",
			"max", l.maxAnon, "remote", evict.peer.key.String())
		evict.conn.Close()
	}
}

// evictLocked takes off the unproven lists, and returns, the oldest unproven connection of the
// address with the most of them. l.mu is held and some connection is unproven.
func (l *limits) evictLocked() *connState {
	var worst *addrState
	var worstSeq uint64
	for p := range l.crowded {
		n, seq := p.unproven.Len(), p.unproven.Front().Value.(*connState).seq
		if worst == nil || n > worst.unproven.Len() || n == worst.unproven.Len() && seq < worstSeq {
			worst, worstSeq = p, seq
		}
	}
	st := worst.unproven.Front().Value.(*connState)
	l.unlistLocked(st)
	return st
}

// unlistLocked takes st off its address's unproven list; l.mu is held.
func (l *limits) unlistLocked(st *connState) {
	if st.elem == nil {
		return
	}
	p := st.peer
	p.unproven.Remove(st.elem)
	st.elem = nil
	l.unprovenN--
	if p.unproven.Len() == 0 {
		delete(l.crowded, p)
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
	l.unlistLocked(st)
	l.mu.Unlock()
}

// detach forgets a closed connection; its address is forgotten with its last connection (what
// requests of it are still being written count under the old entry).
func (l *limits) detach(st *connState) {
	l.mu.Lock()
	l.unlistLocked(st)
	delete(l.live, st)
	if p := st.peer; p != nil {
		if p.conns--; p.conns == 0 && l.peers[p.key] == p {
			delete(l.peers, p.key)
		}
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
	p           *addrState // its client address; nil outside Serve
	open, watch bool
	probe       bool         // it holds a slot of the probe reserve instead of the others
	refs        atomic.Int32 // grpc-go: the stream, and each answer not yet written
	body        *time.Timer  // grpc-go: ends the stream unless its body has come (BodyTimeout)
}

// admit takes a request's slots: one of MaxTotalStreams and of its address's MaxAddrStreams,
// for a caller without a token (authed false) one of MaxOpenStreams, and one of
// MaxOpenWatches for a long-lived stream; a probe that one of them refuses takes one of the
// probe reserve instead. It returns nil, with the bound that refused it counted and logged,
// when one is full.
func (l *limits) admit(st *connState, authed, long, probe bool) *ticket {
	t := &ticket{l: l}
	if !l.take(t, st, authed, long, probe) {
		return nil
	}
	return t
}

// take is admit into a ticket the caller holds (t.l set).
func (l *limits) take(t *ticket, st *connState, authed, long, probe bool) bool {
	if st != nil {
		t.p = st.peer
	}
	c, msg, max := l.takeMain(t, authed, long)
	if c != nil && !(probe && l.takeProbe(t)) {
		l.note(c, msg, "max", max)
		return false
	}
	t.refs.Store(1)
	return true
}

// takeMain takes the slots of the bounds; when one refuses, it gives back the others and
// returns that bound's counter, log message and size.
func (l *limits) takeMain(t *ticket, authed, long bool) (prometheus.Counter, string, int64) {
	if !l.total.take() {
		return l.refTotal, "refusing requests: server-wide stream bound reached (--max-total-streams)", l.total.max
	}
	if t.p != nil && t.p.streams.Add(1) > l.maxAddr {
		t.p.streams.Add(-1)
		l.total.give()
		return l.refAddr, "refusing requests from one client address: its share of the stream bound reached (--max-addr-streams)", l.maxAddr
	}
	if !authed {
		if !l.open.take() {
			l.giveMain(t)
			return l.refOpen, "refusing requests without a token: bound reached (--max-open-streams)", l.open.max
		}
		t.open = true
		if long {
			if !l.watch.take() {
				l.giveMain(t)
				t.open = false
				return l.refWatch, "refusing streams without a token: bound reached (--max-open-watches)", l.watch.max
			}
			t.watch = true
		}
	}
	return nil, "", 0
}

// takeProbe takes a slot of the probe reserve, within the address's share of it.
func (l *limits) takeProbe(t *ticket) bool {
	if !l.reserve.take() {
		return false
	}
	if t.p != nil && t.p.probes.Add(1) > probeAddrReserve {
		t.p.probes.Add(-1)
		l.reserve.give()
		return false
	}
	t.probe = true
	return true
}

// giveMain gives back what takeMain took.
func (l *limits) giveMain(t *ticket) {
	if t.watch {
		l.watch.give()
	}
	if t.open {
		l.open.give()
	}
	if t.p != nil {
		t.p.streams.Add(-1)
	}
	l.total.give()
}

// release gives the slots back.
func (t *ticket) release() {
	if t.body != nil {
		t.body.Stop()
	}
	if t.probe {
		if t.p != nil {
			t.p.probes.Add(-1)
		}
		t.l.reserve.give()
		return
	}
	t.l.giveMain(t)
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
	elem    *list.Element // on peer.unproven while unproven; under limits.mu
	peer    *addrState    // its client address
	seq     uint64        // its place in the order of accepts
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
	c.anon.Store(2)
	c.l.detach(c)
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
