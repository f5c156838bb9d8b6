package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, in its own registry:
//
//	idkit_ids_issued_total{generator}              IDs handed out
//	idkit_errors_total{generator,code}             failed requests to a generator, by status
//	idkit_clock_backward_total{generator}          requests refused because the clock stayed
//	                                               behind the last ID longer than the drift policy
//	                                               waits (drift the core absorbed is not counted)
//	idkit_request_duration_seconds{rpc,code}       handler latency per RPC (and http_next)
//	idkit_generate_seconds{generator}              time inside the generator per request: its
//	                                               tail is the waits for the next tick when a
//	                                               tick's sequence is used up, and drift waits
//	idkit_lease_held{generator}                    1 while a lease-backed node is held, 0 while
//	                                               fenced (only for generators that can be fenced)
//	idkit_ready                                    1 while /readyz answers 200
//
// besides the Go runtime's (go_*), the process's (process_*) and go_build_info. The two
// histograms share latencyBuckets.
type metrics struct {
	issued   *prometheus.CounterVec
	errors   *prometheus.CounterVec
	drift    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	generate *prometheus.HistogramVec
	reg      *prometheus.Registry
	ok       map[string]*okSeries // RPC name → its duration series for code "ok"; read only
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		reg: reg,
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_ids_issued_total", Help: "IDs handed out, per generator.",
		}, []string{"generator"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_errors_total", Help: "Requests a generator failed, per status code.",
		}, []string{"generator", "code"}),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_clock_backward_total", Help: "Requests refused because the clock stayed behind the last issued ID.",
		}, []string{"generator"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "idkit_request_duration_seconds",
			Help:    "Time spent in the handler, per RPC and status code.",
			Buckets: latencyBuckets,
		}, []string{"rpc", "code"}),
	}
	m.generate = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "idkit_generate_seconds",
		Help:    "Time inside the generator per request, waits for the next tick included.",
		Buckets: latencyBuckets,
	}, []string{"generator"})
	m.ok = map[string]*okSeries{}
	for _, rpc := range observedRPCs() {
		m.ok[rpc] = new(okSeries)
	}
	reg.MustRegister(m.issued, m.errors, m.drift, m.duration, m.generate,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	return m
}

// latencyBuckets are the upper bounds, in seconds, of the latency histograms: fine from 1 µs to
// 25 µs, where almost every single-ID Next lands (in the handler and in the generator), then
// coarser up to a second, where waits for the next tick, lease stores and drain show.
var latencyBuckets = []float64{
	1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 8e-6, 10e-6, 12.5e-6, 15e-6, 20e-6, 25e-6,
	35e-6, 50e-6, 75e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1,
}

// errorCodes are the codes a generator's failure is counted under (see codeOf); each
// generator's idkit_errors_total series start at 0 for every one of them, so that rate() and
// alerts see an error's first occurrence.
var errorCodes = []connect.Code{
	connect.CodeCanceled, connect.CodeDeadlineExceeded, connect.CodeUnavailable,
	connect.CodeFailedPrecondition, connect.CodeInternal,
}

// watch adds the gauges that read the server's state when scraped.
func (m *metrics) watch(s *Server) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "idkit_ready", Help: "1 while the server is ready to issue IDs from every generator.",
	}, func() float64 { return b2f(s.ready() == nil) }))
	for _, g := range s.order {
		if sr, ok := idkit.As[idkit.StatsReporter](g.s); ok {
			m.watchStats(g.name, sr)
		}
		if _, ok := idkit.As[idkit.Fenced](g.s); !ok {
			continue
		}
		if _, ok := idkit.As[idkit.Noder](g.s); !ok {
			continue // fenced for another reason than a node (a segment whose stores fail): no lease
		}
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "idkit_lease_held", Help: "1 while the generator's node lease is held, 0 while fenced.",
			ConstLabels: prometheus.Labels{"generator": g.name},
		}, func() float64 { return b2f(g.err() == nil) }))
	}
}

// watchStats adds counters that read a generator's own counts when scraped: sequence
// exhaustion, clock drift and lease renewals.
func (m *metrics) watchStats(name string, sr idkit.StatsReporter) {
	labels := prometheus.Labels{"generator": name}
	for _, c := range []struct {
		name, help string
		get        func(idkit.Stats) uint64
	}{
		{"idkit_sequence_exhausted_total", "Ticks whose sequence ran out before the clock moved on, so callers waited for the next tick.", func(s idkit.Stats) uint64 { return s.SeqExhausted }},
		{"idkit_clock_drift_waits_total", "Waits for a clock that read behind the last issued ID.", func(s idkit.Stats) uint64 { return s.DriftWaits }},
		{"idkit_clock_drift_continued_total", "IDs issued ahead of a clock that read behind, within the drift policy.", func(s idkit.Stats) uint64 { return s.DriftContinued }},
		{"idkit_lease_renewals_total", "Successful renewals of the generator's node lease.", func(s idkit.Stats) uint64 { return s.LeaseRenewals }},
		{"idkit_lease_renewal_failures_total", "Failed renewals of the generator's node lease.", func(s idkit.Stats) uint64 { return s.LeaseRenewalFailures }},
	} {
		get := c.get
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: c.name, Help: c.help, ConstLabels: labels,
		}, func() float64 { return float64(get(sr.Stats())) }))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (m *metrics) now() time.Time { return time.Now() }

// observe records one request; code 0 means success.
func (m *metrics) observe(rpc string, code connect.Code, start time.Time) {
	d := time.Since(start).Seconds()
	if code != 0 {
		m.duration.WithLabelValues(rpc, code.String()).Observe(d)
		return
	}
	// A successful request's series, found once per RPC: WithLabelValues checks and hashes
	// both labels and takes a lock on every call. The series is made at the first success,
	// as WithLabelValues would, so /metrics shows no RPC that was never called.
	if c, ok := m.ok[rpc]; ok {
		c.once.Do(func() { c.o = m.duration.WithLabelValues(rpc, "ok") })
		c.o.Observe(d)
		return
	}
	m.duration.WithLabelValues(rpc, "ok").Observe(d)
}

// okSeries is an RPC's duration series for code "ok", made once.
type okSeries struct {
	once sync.Once
	o    prometheus.Observer
}

// observedRPCs are the names observe times: IDService's RPCs and the plain endpoints.
func observedRPCs() []string {
	sd := v1.File_idkit_proto.Services().ByName("IDService")
	out := []string{"http_next", "http_decode", "http_bounds"}
	for i := range sd.Methods().Len() {
		out = append(out, string(sd.Methods().Get(i).Name()))
	}
	return out
}

// interceptor times every unary RPC, and hides the credentials its error message may quote (a
// generator's error can name its lease store's URL), as the plain endpoint and the gRPC server
// do. One interceptor rather than two: each is a frame on every request's stack.
func (m *metrics) interceptor() connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			start := time.Now()
			res, err := next(ctx, req)
			p := req.Spec().Procedure
			var code connect.Code
			if err != nil {
				code = connect.CodeOf(err)
				err = redactError(err)
			}
			m.observe(p[strings.LastIndexByte(p, '/')+1:], code, start)
			return res, err
		}
	})
}
