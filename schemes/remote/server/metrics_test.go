package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs /metrics with an optional bearer token and returns the status and body.
func scrape(t *testing.T, r *running, auth string) (int, []byte) {
	t.Helper()
	return getAuth(t, r, "/metrics", auth)
}

// getAuth GETs path with an optional Authorization header and returns the status and body.
func getAuth(t *testing.T, r *running, path, auth string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.url+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// families parses a scrape in the text format.
func families(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return mf
}

// TestMetricsScrape scrapes /metrics as Prometheus does: it parses, passes promlint (the check
// `promtool check metrics` runs), has the Go runtime, process and build-info series, every
// generator's error counters at 0 before any error, and latency buckets from 1 µs with at
// least eight bounds up to 25 µs.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	if _, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})); err != nil {
		t.Fatal(err)
	}
	code, b := scrape(t, r, "")
	if code != 200 {
		t.Fatalf("status %d: %s", code, b)
	}
	problems, err := promlint.New(bytes.NewReader(b)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "idkit_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	mf := families(t, b)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if mf[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	errs := map[string]float64{}
	for _, m := range mf["idkit_errors_total"].GetMetric() {
		var gen, code string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "generator":
				gen = l.GetValue()
			case "code":
				code = l.GetValue()
			}
		}
		errs[gen+"/"+code] = m.GetCounter().GetValue()
	}
	for _, gen := range []string{"orders", "sessions", "toy"} {
		for _, code := range []string{"unavailable", "deadline_exceeded", "canceled", "failed_precondition", "internal"} {
			if v, ok := errs[gen+"/"+code]; !ok || v != 0 {
				t.Errorf("idkit_errors_total{generator=%q,code=%q} = %v, present %v; want 0 from the start", gen, code, v, ok)
			}
		}
	}
	for _, name := range []string{"idkit_request_duration_seconds", "idkit_generate_seconds"} {
		f := mf[name]
		if f == nil || len(f.GetMetric()) == 0 {
			t.Fatalf("/metrics lacks %s", name)
		}
		var fine int
		bk := f.GetMetric()[0].GetHistogram().GetBucket()
		for _, b := range bk {
			if b.GetUpperBound() <= 25e-6 {
				fine++
			}
		}
		if bk[0].GetUpperBound() != 1e-6 || fine < 8 {
			t.Errorf("%s: first bound %v, %d bounds up to 25 µs; want 1e-06 and at least 8", name, bk[0].GetUpperBound(), fine)
		}
	}
}

// TestMetricsToken: with Config.MetricsTokens, /metrics takes a scrape token (with the scheme
// in any case) and refuses the service's tokens, and the scrape token issues no IDs; without
// it, /metrics takes the service's tokens.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"ids-token"}
	cfg.MetricsTokens = []string{"scrape-token"}
	r := start(t, cfg)
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", 401},
		{"Bearer ids-token", 401},
		{"Bearer scrape-token", 200},
		{"bearer scrape-token", 200},
		{"BEARER scrape-token", 200},
		{"Basic scrape-token", 401},
	} {
		if code, b := scrape(t, r, tc.auth); code != tc.want {
			t.Errorf("/metrics with %q: %d %s, want %d", tc.auth, code, b, tc.want)
		}
	}
	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	req := connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})
	req.Header().Set("Authorization", "Bearer scrape-token")
	if _, err := c.Next(context.Background(), req); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Next with the scrape token: %v, want unauthenticated", err)
	}

	cfg.MetricsTokens = nil
	r = start(t, cfg)
	if code, _ := scrape(t, r, "Bearer ids-token"); code != 200 {
		t.Errorf("/metrics with the service token and no scrape token configured: %d", code)
	}
	if code, _ := scrape(t, r, ""); code != 401 {
		t.Errorf("/metrics without a token: %d", code)
	}
}
