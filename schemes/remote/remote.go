// Package remote is the Go client of the idkit ID service (cmd/idkitd): importing it registers
// the scheme "remote" with idkit, so that an application moves between generating IDs in
// process and asking the service by changing one spec string:
//
//	import _ "github.com/idkit/idkit/schemes/remote"
//
//	s, err := idkit.New("remote:addr=127.0.0.1:7070,generator=orders,prefetch=1000")
//	id, err := s.Next()
//
// Settings:
//
//	addr=host:port        the service (required): its main port, or for protocol=grpc its
//	                      --grpc-listen port, served by grpc-go's own server, the service's
//	                      cheapest and steadiest path
//	generator=NAME        one of its generators (required)
//	prefetch=N            keep up to N IDs fetched ahead and refill in the background once half
//	                      are used, so that Next is a local operation (default 0: one request
//	                      per Next); a buffer above max_count fills a chunk at a time. IDs wait in the buffer, so their time fields lag the
//	                      moment Next returns them by up to the buffer's age, and a batch
//	                      larger than N (fetched directly) can sort above IDs still buffered.
//	protocol=grpc|connect|json  wire protocol (default grpc): gRPC through google.golang.org/grpc;
//	                      the Connect protocol and its JSON form through connect-go
//	tls=true              HTTPS with the system roots (default false: cleartext HTTP/2)
//	token_env=VAR         send the bearer token held in environment variable VAR; without
//	                      tls=true only to a loopback address (localhost, 127.0.0.0/8, ::1;
//	                      not other names under .localhost, which Go resolves through DNS),
//	                      since anyone on the path reads a token sent in cleartext
//	insecure_token=true   send the token over cleartext to other addresses too (a network
//	                      you trust, or a sidecar that adds TLS)
//	timeout=5s            deadline of one request
//	retry_for=10s         how long to retry while the service is UNAVAILABLE or out of reach,
//	                      with exponential backoff (10 ms doubling to 500 ms, with jitter);
//	                      an answer no retry can change (HTTP 415 or 405, an HTML page other
//	                      than a proxy's 429/502/503/504) fails at once with ErrRefused
//	max_count=10000       the largest batch one request asks for (the server's limit)
//	prefix=NAME, mask=env:NAME|file:PATH
//	                      the public text of the IDs, as idkit.New gives every scheme: the
//	                      service's scheme's text form with this prefix and mask, whatever the
//	                      service's own (the IDs that arrive are its generator's stored IDs)
//
// The scheme is a Batcher (NextBatch asks for the whole batch in one request, a chunk of
// max_count at a time; the server reserves it a tick or a block at a time), a ContextScheme and
// ContextBatcher (NextContext and NextBatchContext end with the context) and an io.Closer.
// Parse and Decode work locally with the codec of the scheme the service reports (for any
// scheme registered in this program too) and otherwise ask the service.
//
// Why a leaf adapter may import the root package: the root registers schemes by name and must
// not link a network stack (deps_test.go enforces it); this package is the network half,
// imported only by programs that want it, like the lease stores in schemes/nodeid.
package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/redact"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
)

// ErrUnavailable reports a service that stayed out of reach (or answered UNAVAILABLE) for the
// whole retry_for period.
var ErrUnavailable = errors.New("remote: service unavailable")

// ErrRefused reports an answer that no retry can change: the address does not take the
// protocol or method (HTTP 415 or 405), or answered with an HTML page, as a proxy, load
// balancer or login portal in front of the service does, with a status other than the ones a
// proxy sends while the service is away (429, 502, 503, 504, which are retried). The error
// names the status and the content type; it is returned after the first such answer.
var ErrRefused = errors.New("remote: the address answered with something no retry can change")

var errClosed = errors.New("remote: scheme closed")

var keys = []string{"addr", "generator", "prefetch", "protocol", "tls", "token_env", "insecure_token", "timeout", "retry_for", "max_count"}

func init() {
	idkit.Register("remote", func(ctx context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
		c, err := parse(sp)
		if err != nil {
			return nil, err
		}
		return Dial(ctx, c)
	})
}

// Config is a remote scheme's settings, as the spec gives them (see the package doc); Dial
// takes it directly, for programs that build the scheme without a spec.
type Config struct {
	// Addr is the service's host:port; Generator the name of one of its generators.
	Addr, Generator string
	// Prefetch is how many IDs to keep fetched ahead; 0 fetches on demand.
	Prefetch int
	// Protocol is grpc (the default when empty), connect or json. gRPC goes through
	// google.golang.org/grpc, unless HTTPClient is set; the others through connect-go.
	Protocol string
	// TLS selects HTTPS with the system roots.
	TLS bool
	// Token, when set, is sent as a bearer token. Without TLS, Dial refuses to send it to an
	// address other than loopback unless InsecureToken is set.
	Token string
	// InsecureToken allows Token over cleartext to any address.
	InsecureToken bool
	// Timeout bounds one request (default 5s); RetryFor the retrying of transient failures
	// (default 10s).
	Timeout, RetryFor time.Duration
	// MaxCount is the largest batch one request asks for (default 10,000).
	MaxCount int
	// HTTPClient, when set, carries the requests instead of the client Dial builds. grpc-go
	// cannot send requests through an HTTP client, so with protocol grpc setting it selects
	// connect-go's gRPC over this client instead of grpc-go's.
	HTTPClient connect.HTTPClient
	// Prefix and Mask are the public text settings, prefix=NAME and mask=env:NAME|file:PATH
	// (see idkit.New; Mask names where the key is kept, never the key). The scheme still
	// issues the service generator's stored IDs; their public text (AppendID, Parse) is the
	// service's scheme's with this prefix and mask, whatever the service's own are, as
	// idkit.NewCodec of the service's scheme with them would show it. They need that scheme to
	// be known in this program (built in, or registered by an import).
	Prefix, Mask string
}

func parse(sp *idkit.Settings) (Config, error) {
	c := Config{Protocol: "grpc", Timeout: 5 * time.Second, RetryFor: 10 * time.Second, MaxCount: 10_000}
	var ok bool
	if c.Addr, ok = sp.Lookup("addr"); !ok {
		return c, sp.Errorf("addr=host:port is required")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, sp.Errorf("addr=%s: want host:port", c.Addr)
	}
	if c.Generator, ok = sp.Lookup("generator"); !ok {
		return c, sp.Errorf("generator=NAME is required")
	}
	n, _, err := sp.Uint("prefetch", 1<<24)
	if err != nil {
		return c, err
	}
	c.Prefetch = int(n)
	if n, ok, err = sp.Uint("max_count", 1<<24); err != nil {
		return c, err
	} else if ok {
		if n == 0 {
			return c, sp.Errorf("max_count=0: want at least 1")
		}
		c.MaxCount = int(n)
	}
	if v, ok := sp.Lookup("protocol"); ok {
		switch v = strings.ToLower(v); v {
		case "grpc", "connect", "json":
			c.Protocol = v
		default:
			return c, sp.Errorf("protocol=%s: want grpc, connect or json", v)
		}
	}
	if c.TLS, err = sp.Bool("tls", false); err != nil {
		return c, err
	}
	if c.InsecureToken, err = sp.Bool("insecure_token", false); err != nil {
		return c, err
	}
	if v, ok := sp.Lookup("token_env"); ok {
		if !redact.EnvName(v) {
			// Perhaps the token itself, pasted where its variable's name belongs: not shown
			// (Errorf's quoted spec hides such token_env values too).
			return c, sp.Errorf("token_env= wants the name of an environment variable (a letter or '_', then letters, digits and '_'); the %d characters given are not one and are not shown: they may be the token", len(v))
		}
		c.Token, ok = os.LookupEnv(v)
		if !ok || c.Token == "" {
			return c, sp.Errorf("token_env=%s: the variable is not set", v)
		}
	}
	if d, ok, err := sp.Duration("timeout"); err != nil {
		return c, err
	} else if ok {
		c.Timeout = d
	}
	if d, ok, err := sp.Duration("retry_for"); err != nil {
		return c, err
	} else if ok {
		c.RetryFor = d
	}
	// The scheme applies prefix= and mask= itself, the way the service's scheme would.
	c.Prefix, c.Mask = sp.TakeText()
	return c, sp.Done(keys...)
}

// Scheme is the remote scheme. It is safe for concurrent use.
type Scheme struct {
	cfg    Config
	name   string
	client rpc
	codec  idkit.Codec // local codec, or nil
	uuid   bool        // 128-bit IDs are UUIDs (else ULIDs)
	pf     *prefetcher // nil without prefetch
	closed atomic.Bool
}

var (
	_ idkit.Scheme    = (*Scheme)(nil)
	_ idkit.Batcher   = (*Scheme)(nil)
	_ idkit.Formatter = (*Scheme)(nil)
)

// Dial connects to the service and checks that it serves the generator: it asks for the
// generator list (retrying as requests do) and builds the local codec. Errors wrap
// ErrUnavailable when the service stays away, and idkit.ErrSpec when it has no such generator.
func Dial(ctx context.Context, c Config) (*Scheme, error) {
	if c.Addr == "" || c.Generator == "" {
		return nil, fmt.Errorf("%w: remote: Config needs Addr and Generator", idkit.ErrSpec)
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	if c.RetryFor <= 0 {
		c.RetryFor = 10 * time.Second
	}
	if c.MaxCount <= 0 {
		c.MaxCount = 10_000
	}
	switch c.Protocol {
	case "":
		c.Protocol = "grpc"
	case "grpc", "connect", "json":
	default:
		return nil, fmt.Errorf("%w: remote: Config.Protocol %q: want grpc, connect or json", idkit.ErrSpec, c.Protocol)
	}
	if c.Token != "" && !c.TLS && !c.InsecureToken && !loopback(c.Addr) {
		return nil, fmt.Errorf("%w: remote: addr=%s: a bearer token over cleartext to an address that is not loopback would be readable on the network; set tls=true, or insecure_token=true on a network you trust", idkit.ErrSpec, c.Addr)
	}
	s := &Scheme{cfg: c}
	s.name = fmt.Sprintf("remote:addr=%s,generator=%s", c.Addr, c.Generator)
	if c.Prefetch > 0 {
		s.name += fmt.Sprintf(",prefetch=%d", c.Prefetch)
	}
	if c.Protocol != "grpc" {
		s.name += ",protocol=" + c.Protocol
	}
	if c.Prefix != "" {
		s.name += ",prefix=" + c.Prefix
	}
	if c.Mask != "" {
		s.name += ",mask=" + c.Mask
	}
	var err error
	if s.client, err = dialRPC(c); err != nil {
		return nil, err
	}
	var gens *v1.GeneratorsResponse
	err = s.retry(ctx, func(ctx context.Context) error {
		var err error
		gens, err = s.client.generators(ctx)
		return err
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	var g *v1.Generator
	var names []string
	for _, x := range gens.Generators {
		names = append(names, x.Name)
		if x.Name == c.Generator {
			g = x
		}
	}
	if g == nil {
		s.Close()
		return nil, fmt.Errorf("%w: remote: %s has no generator %q (it has: %s)", idkit.ErrSpec, c.Addr, c.Generator, strings.Join(names, ", "))
	}
	s.uuid = strings.HasPrefix(g.Scheme, "uuid")
	// The IDs come in their stored form: read them with the service's scheme without its own
	// prefix and mask, and show them with this scheme's.
	spec, err := textSpec(g.Scheme, c.Prefix, c.Mask)
	if err == nil {
		s.codec, err = idkit.NewCodec(spec)
	}
	if err != nil && (c.Prefix != "" || c.Mask != "") {
		s.Close()
		return nil, fmt.Errorf("%w: remote: %s generator %q: prefix and mask apply the text form of its scheme %q, which this program cannot read: %w", idkit.ErrSpec, c.Addr, c.Generator, g.Scheme, err)
	}
	if c.Prefetch > 0 {
		s.pf = newPrefetcher(c.Prefetch, s.fetchAll) // a buffer above max_count fills in chunks
	}
	return s, nil
}

// loopback reports whether addr's host is a literal loopback address or the name localhost.
// Names under .localhost are not exempt: RFC 6761 lets resolvers answer them with loopback,
// but Go's resolver asks the network's DNS for them (only "localhost" itself is answered from
// /etc/hosts on every system), so a DNS server could send the token anywhere.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Name returns the scheme's canonical spec (without credentials).
func (s *Scheme) Name() string { return s.name }

// Next returns a new ID: from the prefetch buffer, or from one request.
func (s *Scheme) Next() (idkit.ID, error) { return s.NextContext(context.Background()) }

// NextContext is Next that gives up when ctx ends.
func (s *Scheme) NextContext(ctx context.Context) (idkit.ID, error) {
	var one [1]idkit.ID
	if err := s.NextBatchContext(ctx, one[:]); err != nil {
		return idkit.ID{}, err
	}
	return one[0], nil
}

// NextBatch fills dst with new IDs in the order the origin generator issued them (see
// idkit.Batcher and the service's Next): increasing for time-ordered schemes, issue order for
// the layouts that spread their IDs (shard_bits, reverse=true, reverse=time).
func (s *Scheme) NextBatch(dst []idkit.ID) error {
	return s.NextBatchContext(context.Background(), dst)
}

// NextBatchContext is NextBatch that gives up when ctx ends.
func (s *Scheme) NextBatchContext(ctx context.Context, dst []idkit.ID) error {
	if s.closed.Load() {
		return errClosed
	}
	if s.pf != nil && len(dst) <= s.cfg.Prefetch {
		return s.pf.take(ctx, dst)
	}
	return s.fetchAll(ctx, dst)
}

// fetchAll fills dst with new IDs, one request per max_count of them.
func (s *Scheme) fetchAll(ctx context.Context, dst []idkit.ID) error {
	for len(dst) > 0 {
		n := min(len(dst), s.cfg.MaxCount)
		if err := s.fetch(ctx, dst[:n]); err != nil {
			return err
		}
		dst = dst[n:]
	}
	return nil
}

// fetch fills dst with new IDs from one request, retrying while the service is unavailable.
func (s *Scheme) fetch(ctx context.Context, dst []idkit.ID) error {
	return s.retry(ctx, func(ctx context.Context) error {
		res, err := s.client.next(ctx, &v1.NextRequest{Generator: s.cfg.Generator, Count: uint32(len(dst))})
		if err != nil {
			return err
		}
		return s.ids(res, dst)
	})
}

// ids converts a response into dst, checking it holds len(dst) IDs.
func (s *Scheme) ids(m *v1.NextResponse, dst []idkit.ID) error {
	if got := len(m.Ids64) + len(m.Ids128); got != len(dst) {
		return fmt.Errorf("remote: %s sent %d IDs for %d asked", s.cfg.Addr, got, len(dst))
	}
	if len(m.Ids64) > 0 {
		for i, v := range m.Ids64 {
			dst[i] = idkit.FromUint64(v)
		}
		return nil
	}
	for i, b := range m.Ids128 {
		if len(b) != 16 {
			return fmt.Errorf("remote: %s sent a 128-bit ID of %d bytes", s.cfg.Addr, len(b))
		}
		if s.uuid {
			dst[i] = idkit.FromUUID([16]byte(b))
		} else {
			dst[i] = idkit.FromULID([16]byte(b))
		}
	}
	return nil
}

// retry runs call with a per-attempt deadline until it succeeds, fails with an error retrying
// cannot help, ctx ends, or RetryFor passes; transient errors (see transient) are retried with
// exponential backoff and jitter.
func (s *Scheme) retry(ctx context.Context, call func(context.Context) error) error {
	deadline := time.Now().Add(s.cfg.RetryFor)
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if s.closed.Load() {
			return errClosed
		}
		actx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		err := call(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("remote: %s: %w", s.cfg.Addr, ctx.Err())
		}
		if rerr := grpcRefusal(s.cfg.Addr, err); rerr != nil {
			err = rerr
		}
		if refused(err) { // the error names the address
			return fmt.Errorf("remote: generator %q: %w", s.cfg.Generator, err)
		}
		if !transient(err) {
			return fmt.Errorf("remote: %s generator %q: %w", s.cfg.Addr, s.cfg.Generator, err)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%w: %s generator %q after %d attempts in %v: %w", ErrUnavailable, s.cfg.Addr, s.cfg.Generator, attempt, s.cfg.RetryFor, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("remote: %s: %w", s.cfg.Addr, ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// textSpec returns scheme, a service generator's canonical spec, with its prefix and mask
// settings replaced by prefix and mask (left out when empty).
func textSpec(scheme, prefix, mask string) (string, error) {
	sp, err := idkit.ParseSpec(scheme)
	if err != nil {
		return "", err
	}
	var kv []string
	for _, k := range sp.Keys() {
		if k != "prefix" && k != "mask" {
			v, _ := sp.Lookup(k)
			kv = append(kv, k+"="+v)
		}
	}
	if prefix != "" {
		kv = append(kv, "prefix="+prefix)
	}
	if mask != "" {
		kv = append(kv, "mask="+mask)
	}
	if len(kv) == 0 {
		return sp.Scheme(), nil
	}
	return sp.Scheme() + ":" + strings.Join(kv, ","), nil
}

// AppendID appends id's public text (idkit.Formatter): the service's scheme's text with this
// scheme's prefix and mask, or the canonical text when this program cannot read that scheme.
// Errors wrap idkit.ErrScheme.
func (s *Scheme) AppendID(b []byte, id idkit.ID) ([]byte, error) {
	if s.codec != nil {
		return idkit.AppendID(s.codec, b, id)
	}
	return id.AppendText(b)
}

// Parse reads an ID's text (its public text, with a prefix or mask), with the local codec when
// there is one.
func (s *Scheme) Parse(text string) (idkit.ID, error) {
	if s.codec != nil {
		return s.codec.Parse(text)
	}
	id, err := idkit.Parse(text)
	if err != nil {
		return idkit.ID{}, err
	}
	if _, err := s.remoteDecode(text); err != nil {
		return idkit.ID{}, err
	}
	return id, nil
}

// Decode takes an ID apart, locally when possible and otherwise through the service.
func (s *Scheme) Decode(id idkit.ID) (idkit.Parts, error) {
	if s.codec != nil {
		return s.codec.Decode(id)
	}
	return s.remoteDecode(id.String())
}

func (s *Scheme) remoteDecode(text string) (idkit.Parts, error) {
	var d *v1.DecodeResponse
	err := s.retry(context.Background(), func(ctx context.Context) error {
		var err error
		d, err = s.client.decode(ctx, &v1.DecodeRequest{Generator: s.cfg.Generator, Id: text, Stored: true})
		return err
	})
	if err != nil {
		if codeOf(err) == connect.CodeInvalidArgument {
			return idkit.Parts{}, fmt.Errorf("%w: %w", idkit.ErrScheme, err)
		}
		return idkit.Parts{}, err
	}
	p := idkit.Parts{Version: int(d.Version)}
	if d.UnixNanos != 0 || d.Time != "" {
		p.Time = time.Unix(0, d.UnixNanos).UTC()
	}
	if d.Node != nil {
		p.Node, p.HasNode = *d.Node, true
	}
	if d.Seq != nil {
		p.Seq, p.HasSeq = *d.Seq, true
	}
	for _, f := range d.Fields {
		p.Fields = append(p.Fields, idkit.Field{Name: f.Name, Value: f.Value})
	}
	return p, nil
}

// Close stops the background refill and closes the connections: the gRPC connection or the
// idle connections of the HTTP client Dial built (a caller's HTTPClient stays the caller's).
// IDs still in the prefetch buffer are dropped (lost, never reissued). Requests after Close
// fail with an error saying the scheme is closed; a second Close does nothing.
func (s *Scheme) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.pf != nil {
		s.pf.close()
	}
	return s.client.close()
}

// prefetcher is a double buffer of IDs: takers use cur, and once half of it is used a
// background fill fetches the next batch, so that takers rarely wait for the network.
type prefetcher struct {
	size  int
	fetch func(context.Context, []idkit.ID) error
	ctx   context.Context
	stop  context.CancelFunc

	mu      sync.Mutex
	cur     []idkit.ID
	pos     int
	next    []idkit.ID
	spare   []idkit.ID    // a used-up buffer for the next fill to reuse
	err     error         // the last fill's error, given to one taker
	filling chan struct{} // non-nil while a fill runs; closed when it ends
}

func newPrefetcher(size int, fetch func(context.Context, []idkit.ID) error) *prefetcher {
	ctx, stop := context.WithCancel(context.Background())
	return &prefetcher{size: size, fetch: fetch, ctx: ctx, stop: stop}
}

// take fills dst from the buffer, waiting for fills as needed.
func (p *prefetcher) take(ctx context.Context, dst []idkit.ID) error {
	for len(dst) > 0 {
		p.mu.Lock()
		if p.ctx.Err() != nil { // closed: what the buffer holds is dropped, never served
			p.mu.Unlock()
			return errClosed
		}
		if p.pos < len(p.cur) {
			n := copy(dst, p.cur[p.pos:])
			p.pos += n
			dst = dst[n:]
			if len(p.cur)-p.pos <= p.size/2 && p.next == nil {
				p.startFill()
			}
			p.mu.Unlock()
			continue
		}
		if p.next != nil {
			p.spare = p.cur[:0]
			p.cur, p.pos, p.next = p.next, 0, nil
			p.startFill()
			p.mu.Unlock()
			continue
		}
		if err := p.err; err != nil {
			p.err = nil
			p.mu.Unlock()
			return err
		}
		p.startFill()
		wait := p.filling
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return fmt.Errorf("remote: waiting for IDs: %w", ctx.Err())
		}
	}
	return nil
}

// startFill starts a background fill unless one runs or the pool is closed; p.mu is held.
func (p *prefetcher) startFill() {
	if p.filling != nil || p.ctx.Err() != nil {
		return
	}
	done := make(chan struct{})
	p.filling = done
	ids := p.spare
	p.spare = nil
	if cap(ids) < p.size {
		ids = make([]idkit.ID, p.size)
	}
	ids = ids[:p.size]
	go func() {
		err := p.fetch(p.ctx, ids)
		p.mu.Lock()
		switch {
		case p.ctx.Err() != nil: // closed while the fill ran: drop it
		case err != nil:
			p.err = err
		default:
			p.next = ids
		}
		p.filling = nil
		close(done)
		p.mu.Unlock()
	}()
}

// close stops the refill and drops what the buffers hold: takers see the pool closed (under
// p.mu, so a take that has not copied yet never will).
func (p *prefetcher) close() {
	p.mu.Lock()
	p.stop()
	p.cur, p.pos, p.next, p.spare = nil, 0, nil, nil
	w := p.filling
	p.mu.Unlock()
	if w != nil {
		<-w
	}
}
