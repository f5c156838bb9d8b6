package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/idkit/idkit/schemes"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// issued reads idkit_ids_issued_total for a generator from /metrics.
func issued(t *testing.T, r *running, gen string) string {
	t.Helper()
	m := regexp.MustCompile(`idkit_ids_issued_total\{generator="` + gen + `"\} (\d+)`).FindStringSubmatch(get(t, r, "/metrics"))
	if m == nil {
		return "0"
	}
	return m[1]
}

// TestNoStore: every answer that issues IDs says Cache-Control: no-store, on every protocol
// and both stacks, and Next cannot be called with GET (which caches may store and replay).
func TestNoStore(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	req := &v1.NextRequest{Generator: "orders", Count: 2}
	for _, p := range protocols {
		c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
		res, err := c.Next(context.Background(), connect.NewRequest(req))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control %q", p.name, got)
		}
	}
	for _, st := range stacks(r) {
		var hdr metadata.MD
		if _, err := v1.NewIDServiceClient(stockAt(t, st.addr)).Next(context.Background(), req, grpc.Header(&hdr)); err != nil {
			t.Fatal(err)
		}
		if got := hdr.Get("cache-control"); len(got) != 1 || got[0] != "no-store" {
			t.Errorf("stock gRPC client on %s: cache-control %q", st.name, got)
		}
	}
	res, err := r.client.Get(r.url + "/v1/next/orders?n=2")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Cache-Control"); res.StatusCode != 200 || got != "no-store" {
		t.Errorf("GET /v1/next: %s, Cache-Control %q", res.Status, got)
	}
	// Connect's GET form is for RPCs without side effects; Next has them.
	before := issued(t, r, "orders")
	q := url.Values{"connect": {"v1"}, "encoding": {"json"}, "message": {`{"generator":"orders","count":3}`}}
	res, err = r.client.Get(r.url + idkitv1connect.IDServiceNextProcedure + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || issued(t, r, "orders") != before {
		t.Errorf("Connect GET of Next: %s %s, and the issued count went from %s to %s", res.Status, b, before, issued(t, r, "orders"))
	}
	// Ping, free of side effects, keeps its GET form.
	q.Set("message", "{}")
	res, err = r.client.Get(r.url + idkitv1connect.IDServicePingProcedure + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("Connect GET of Ping: %s", res.Status)
	}
}

// TestHead: HEAD /v1/next checks the request as GET does and answers its status, but issues
// no ID.
func TestHead(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	before := issued(t, r, "orders")
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v1/next/orders?n=5000", 200},
		{"/v1/next/orders", 200},
		{"/v1/next/orders?n=0", 400},
		{"/v1/next/orders?n=5001", 400},
		{"/v1/next/nope", 404},
	} {
		res, err := r.client.Head(r.url + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("HEAD %s: %s, Cache-Control %q; want %d, no-store", tc.path, res.Status, res.Header.Get("Cache-Control"), tc.status)
		}
	}
	if after := issued(t, r, "orders"); after != before {
		t.Errorf("HEAD issued IDs: idkit_ids_issued_total went from %s to %s", before, after)
	}
}

// TestQueryStrict: a query string that does not parse whole is refused with a reason, never
// answered as if the part dropped had not been sent.
func TestQueryStrict(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, tc := range []struct {
		path string
		want string
	}{
		{"/v1/next/orders?n=5;", "semicolon"},
		{"/v1/next/orders?n=5;n=7", "semicolon"},
		{"/v1/next/orders?n=%zz", "invalid URL escape"},
		{"/v1/next/orders?n=2&x%zz=1", "invalid URL escape"},
		{"/readyz?;", "semicolon"},
		{idkitv1connect.IDServicePingProcedure + "?connect=v1&encoding=json&message=%7B%7D;", "semicolon"},
	} {
		res, err := r.client.Get(r.url + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 400 || !strings.Contains(string(b), tc.want) {
			t.Errorf("GET %s: %s %q; want 400 naming %q", tc.path, res.Status, b, tc.want)
		}
	}
}

// TestTooLarge: a body over the limit is 413, whether its length is declared or found while
// reading, in the Connect protocol's error form; gRPC says RESOURCE_EXHAUSTED.
func TestTooLarge(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	big := `{"generator":"` + strings.Repeat("a", 70<<10) + `","count":1}`
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(body) // hides the length: sent without Content-Length
		}
		for _, c := range []*http.Client{r.client, h2()} {
			req, _ := http.NewRequest("POST", r.url+idkitv1connect.IDServiceNextProcedure, body)
			req.Header.Set("Content-Type", "application/json")
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "resource_exhausted") {
				t.Errorf("chunked %v, HTTP/%d: %s %s; want 413 with resource_exhausted", chunked, res.ProtoMajor, res.Status, b)
			}
			body = strings.NewReader(big)
			if chunked {
				body = io.MultiReader(body)
			}
		}
	}
}

// TestErrorsRedacted: a generator whose error quotes a connection string with a password (a
// lease store's, say) is reported on every protocol and stack without the password.
func TestErrorsRedacted(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-Sekr1t"
	cfg := twoGens()
	cfg.Generators = append(cfg.Generators, server.Generator{Name: "leaky", Spec: "toyseq:key=leaky"})
	r := start(t, cfg)
	lost := fmt.Errorf("%w: lease store postgres://idkit:%s@db:5432/ids?sslmode=disable unreachable", schemes.ErrFenced, pw)
	toyOf("leaky").fenced.Store(&lost)
	req := &v1.NextRequest{Generator: "leaky", Count: 1}
	for _, p := range protocols {
		_, err := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...).Next(context.Background(), connect.NewRequest(req))
		if err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	for _, st := range stacks(r) {
		_, err := v1.NewIDServiceClient(stockAt(t, st.addr)).Next(context.Background(), req)
		if msg := status.Convert(err).Message(); err == nil || strings.Contains(msg, pw) || !strings.Contains(msg, "xxxxx") {
			t.Errorf("stock gRPC client on %s: %v", st.name, err)
		}
	}
	for _, path := range []string{"/v1/next/leaky", "/readyz"} {
		b := get(t, r, path)
		if strings.Contains(b, pw) || !strings.Contains(b, "xxxxx") {
			t.Errorf("%s: %s", path, b)
		}
	}
	c := idkitv1connect.NewIDServiceClient(h2(), r.url, connect.WithProtoJSON())
	g, err := c.Generators(context.Background(), connect.NewRequest(&v1.GeneratorsRequest{}))
	if err != nil || bytes.Contains([]byte(g.Msg.String()), []byte(pw)) {
		t.Errorf("Generators: %v, %v", g, err)
	}
}
