package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
)

// batchContexter and nextContexter are idkit's ContextBatcher and ContextScheme, spelled out
// here so that the server honours a request's deadline with schemes that offer it.
type batchContexter interface {
	NextBatchContext(ctx context.Context, dst []idkit.ID) error
}

type nextContexter interface {
	NextContext(ctx context.Context) (idkit.ID, error)
}

// generator is one named scheme and its metrics.
type generator struct {
	name, spec string
	s          idkit.Scheme
	maskRef    string       // the spec's mask= reference (never a key), empty when it masks nothing
	textExtra  int64        // bytes a public text may add to the canonical text: the prefix and '_', twice
	bits       atomic.Int32 // 64 or 128 once known
	issued     prometheus.Counter
	errs       *prometheus.CounterVec
	drift      prometheus.Counter
	generate   prometheus.Observer
	bufs       sync.Pool // *[]idkit.ID
	closeOnce  sync.Once
	closeErr   error
}

func newGenerator(name, spec string, s idkit.Scheme, m *metrics) *generator {
	g := &generator{
		name:     name,
		spec:     spec,
		s:        s,
		issued:   m.issued.WithLabelValues(name),
		errs:     m.errors.MustCurryWith(prometheus.Labels{"generator": name}),
		drift:    m.drift.WithLabelValues(name),
		generate: m.generate.WithLabelValues(name),
	}
	for _, c := range errorCodes {
		g.errs.WithLabelValues(c.String()) // present at 0 from the start
	}
	g.bits.Store(widthOf(s))
	g.maskRef = setting("mask", spec, s.Name())
	if p := setting("prefix", spec, s.Name()); p != "" {
		g.textExtra = 2 * int64(len(p)+1) // in the text and in its encoding, as heldBytes counts
	}
	return g
}

// widthOf is the width of a scheme's IDs as far as it is known before the first one: 64 for a
// layout (snowflake, sonyflake) or a Widther (segment), 128 for the built-in 128-bit schemes,
// 0 for the rest (a registered scheme, such as remote, may issue either), which next fills in
// from the first ID.
func widthOf(s idkit.Scheme) int32 {
	if _, ok := idkit.As[idkit.Layouter](s); ok {
		return 64
	}
	if _, ok := idkit.As[idkit.Widther](s); ok {
		return 64
	}
	base, _, _ := strings.Cut(s.Name(), ":")
	switch base {
	case "ulid", "uuidv7", "uuidv4", "typeid":
		return 128
	}
	return 0
}

// setting returns the value of a text setting (mask=, prefix=) in a generator's spec or in its
// scheme's canonical name (which carries both for every built-in scheme), empty when neither
// sets it.
func setting(key string, specs ...string) string {
	for _, spec := range specs {
		if sp, err := idkit.ParseSpec(spec); err == nil {
			if v, ok := sp.Lookup(key); ok && v != "" {
				return v
			}
		}
	}
	return ""
}

// err is the scheme's Fenced error, nil for schemes that cannot be fenced.
func (g *generator) err() error {
	if f, ok := idkit.As[idkit.Fenced](g.s); ok {
		return f.Err()
	}
	return nil
}

func (g *generator) close() error {
	g.closeOnce.Do(func() {
		if c, ok := g.s.(io.Closer); ok {
			g.closeErr = c.Close()
		}
	})
	return g.closeErr
}

// next fills a pooled buffer with n new IDs, through the scheme's Batcher when it has one (one
// reservation for the whole request), and calls use with it before returning it to the pool.
func (g *generator) next(ctx context.Context, n int, use func([]idkit.ID)) error {
	bp, _ := g.bufs.Get().(*[]idkit.ID)
	if bp == nil || cap(*bp) < n {
		b := make([]idkit.ID, n)
		bp = &b
	}
	buf := (*bp)[:n]
	start := time.Now()
	err := g.fill(ctx, buf)
	g.generate.Observe(time.Since(start).Seconds())
	if err == nil {
		g.issued.Add(float64(n))
		if n > 0 && g.bits.Load() == 0 {
			g.bits.Store(int32(buf[0].Bits()))
		}
		use(buf)
	}
	g.bufs.Put(bp)
	if err != nil {
		code := codeOf(err)
		if code == connect.CodeInternal && g.err() != nil {
			// The scheme says it cannot issue now (a segment whose stores refuse or are
			// down): a condition that passes, which a client should retry.
			code = connect.CodeUnavailable
		}
		g.errs.WithLabelValues(code.String()).Inc()
		if errors.Is(err, schemes.ErrClockBackward) {
			g.drift.Inc()
		}
		ce := connect.NewError(code, fmt.Errorf("generator %q: %w", g.name, err))
		if code == connect.CodeUnavailable {
			withRetryHint(ce, retryAfter(err))
		}
		return ce
	}
	return nil
}

// retryAfter is how long a client should wait before it retries a request that failed with
// err: what err says (a RetryAfter method, as a segment's unavailable error has), else 1 s.
func retryAfter(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		return ra.RetryAfter()
	}
	return time.Second
}

// withRetryHint adds to an UNAVAILABLE answer when to retry: a google.rpc.RetryInfo detail
// (gRPC's grpc-status-details-bin, the Connect protocol's error details) and a Retry-After
// header in whole seconds, at least 1 (HTTP; Connect unary puts it among the headers, gRPC
// among the trailers).
func withRetryHint(ce *connect.Error, d time.Duration) {
	ce.Meta().Set("Retry-After", strconv.FormatInt(int64(max((d+time.Second-1)/time.Second, 1)), 10))
	if det, err := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)}); err == nil {
		ce.AddDetail(det)
	}
}

func (g *generator) fill(ctx context.Context, buf []idkit.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch s := g.s.(type) {
	case batchContexter:
		return s.NextBatchContext(ctx, buf)
	case idkit.Batcher:
		return s.NextBatch(buf)
	}
	nc, hasCtx := g.s.(nextContexter)
	for i := range buf {
		var err error
		if hasCtx {
			buf[i], err = nc.NextContext(ctx)
		} else {
			buf[i], err = g.s.Next()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// codeOf maps a generator's error to the status a client sees: UNAVAILABLE for conditions that
// pass (a fenced node, the clock behind, a mark store out of reach, an error with a retry
// hint such as a segment's whose stores refuse or are down) so that clients retry,
// FAILED_PRECONDITION for a layout out of time, the context's own code for a cancelled or
// expired request, INTERNAL for the rest.
func codeOf(err error) connect.Code {
	switch {
	case errors.Is(err, context.Canceled):
		return connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return connect.CodeDeadlineExceeded
	case errors.Is(err, schemes.ErrFenced), errors.Is(err, schemes.ErrClockBackward), errors.Is(err, schemes.ErrMark), errors.Is(err, errClosed):
		return connect.CodeUnavailable
	case errors.Is(err, schemes.ErrTimeOverflow):
		return connect.CodeFailedPrecondition
	}
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return connect.CodeUnavailable
	}
	return connect.CodeInternal
}

// errClosed reports a request that reached a generator after the server closed it.
var errClosed = errors.New("server: shutting down")
