package server_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
)

// TestCORS sends what a browser sends (request headers lowercase and sorted, as browsers list
// them), preflight then the call, with net/http: an allowed
// origin's preflight is answered with the methods and headers Connect and gRPC-Web use (a
// bearer token included, no token needed for the preflight itself), and its calls carry
// Access-Control-Allow-Origin and expose gRPC-Web's status headers; another origin gets no
// permission, and neither does any origin by default.
func TestCORS(t *testing.T) {
	t.Parallel()
	const allowed, other = "https://app.example.com", "https://evil.example.net"
	cfg := twoGens()
	cfg.CORSOrigins = []string{allowed, "https://*.example.org"}
	cfg.Tokens = []string{"s3cret"}
	on := start(t, cfg)
	off := start(t, twoGens())
	next := idkitv1connect.IDServiceNextProcedure
	do := func(r *running, method, path, origin string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := r.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	preflight := map[string]string{
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "authorization,connect-protocol-version,connect-timeout-ms,content-type",
	}
	webPreflight := map[string]string{
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "content-type,grpc-timeout,x-grpc-web,x-user-agent",
	}
	for _, tc := range []struct {
		name, origin string
		r            *running
		hdr          map[string]string
		allow        bool
	}{
		{"connect preflight, allowed", allowed, on, preflight, true},
		{"grpc-web preflight, allowed", allowed, on, webPreflight, true},
		{"preflight, allowed by wildcard", "https://shop.example.org", on, preflight, true},
		{"preflight, other origin", other, on, preflight, false},
		{"preflight, CORS off", allowed, off, preflight, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(tc.r, http.MethodOptions, next, tc.origin, tc.hdr, "")
			got := res.Header.Get("Access-Control-Allow-Origin")
			if !tc.allow {
				if got != "" || res.Header.Get("Access-Control-Allow-Headers") != "" {
					t.Fatalf("status %d, allow-origin %q, allow-headers %q: want no permission", res.StatusCode, got, res.Header.Get("Access-Control-Allow-Headers"))
				}
				return
			}
			if res.StatusCode/100 != 2 || got != tc.origin {
				t.Fatalf("status %d, allow-origin %q: want 2xx and %q", res.StatusCode, got, tc.origin)
			}
			if m := res.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") {
				t.Errorf("allow-methods %q lacks POST", m)
			}
			h := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			for want := range strings.SplitSeq(tc.hdr["Access-Control-Request-Headers"], ",") {
				if !strings.Contains(h, want) {
					t.Errorf("allow-headers %q lacks %s", h, want)
				}
			}
			if a := res.Header.Get("Access-Control-Max-Age"); a != "7200" {
				t.Errorf("max-age %q", a)
			}
		})
	}
	for _, tc := range []struct {
		name, origin, ct, body string
		r                      *running
		allow                  bool
	}{
		{"connect call, allowed", allowed, "application/json", `{"generator":"orders","count":1}`, on, true},
		{"grpc-web call, allowed", allowed, "application/grpc-web+proto", "\x00\x00\x00\x00\x0a\x0a\x06orders\x10\x01", on, true},
		{"connect call, other origin", other, "application/json", `{"generator":"orders","count":1}`, on, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(tc.r, http.MethodPost, next, tc.origin, map[string]string{"Content-Type": tc.ct, "Authorization": "Bearer s3cret", "X-Grpc-Web": "1"}, tc.body)
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			got := res.Header.Get("Access-Control-Allow-Origin")
			if !tc.allow {
				if got != "" {
					t.Fatalf("allow-origin %q for an origin not allowed", got)
				}
				return
			}
			if got != tc.origin {
				t.Fatalf("allow-origin %q, want %q", got, tc.origin)
			}
			if e := res.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(e, "Grpc-Status") || !strings.Contains(e, "Grpc-Message") {
				t.Errorf("expose-headers %q lacks gRPC-Web's status", e)
			}
		})
	}
}

func TestCORSOriginsChecked(t *testing.T) {
	t.Parallel()
	for _, o := range []string{"app.example.com", "https://app.example.com/path", "ftp://x", "", "https://*.*.example.com"} {
		cfg := twoGens()
		cfg.CORSOrigins = []string{o}
		if _, err := server.New(cfg); !errors.Is(err, server.ErrConfig) {
			t.Errorf("origin %q: %v, want ErrConfig", o, err)
		}
	}
}

// TestCORSExposesWWWAuthenticate: browser code can read the WWW-Authenticate of a 401.
func TestCORSExposesWWWAuthenticate(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.CORSOrigins = []string{"https://app.example.com"}
	cfg.Tokens = []string{"s3cret"}
	r := start(t, cfg)
	req, _ := http.NewRequest("POST", r.url+idkitv1connect.IDServiceNextProcedure, strings.NewReader(`{"generator":"orders","count":1}`))
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Content-Type", "application/json")
	res, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	exposed := strings.ToLower(res.Header.Get("Access-Control-Expose-Headers"))
	if res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") == "" || !strings.Contains(exposed, "www-authenticate") {
		t.Errorf("401 %d, WWW-Authenticate %q, exposed %q", res.StatusCode, res.Header.Get("WWW-Authenticate"), exposed)
	}
}
