package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idkit/idkit/schemes/remote/server"
)

// FuzzHandler sends arbitrary methods, paths, content types and bodies to the service's
// handler: it must never panic, never answer 500, and every error it sends names a problem.
func FuzzHandler(f *testing.F) {
	srv, err := server.New(server.Config{Generators: []server.Generator{
		{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"},
		{Name: "sessions", Spec: "uuidv7"},
	}, MaxCount: 100})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	h := srv.Handler()
	for _, s := range []struct{ method, target, ct, body string }{
		{"GET", "/v1/next/orders?n=3", "", ""},
		{"GET", "/v1/next/orders?n=abc", "", ""},
		{"GET", "/v1/next/sessions?n=0", "", ""},
		{"GET", "/v1/next/x%00y?n=1", "", ""},
		{"POST", "/idkit.v1.IDService/Next", "application/json", `{"generator":"orders","count":3,"text":true}`},
		{"POST", "/idkit.v1.IDService/Next", "application/json", `{"generator":"orders","count":4294967295}`},
		{"POST", "/idkit.v1.IDService/Decode", "application/json", `{"generator":"sessions","id":"0190b6b5-0000-7000-8000-000000000000"}`},
		{"POST", "/idkit.v1.IDService/Decode", "application/json", `{"generator":"orders","id":"99999999999999999999999"}`},
		{"POST", "/idkit.v1.IDService/Decode", "application/proto", "\x0a\x06orders\x12\x03123"},
		{"POST", "/idkit.v1.IDService/Generators", "application/json", `{}`},
		{"POST", "/idkit.v1.IDService/Next", "application/grpc", "\x00\x00\x00\x00\x02\x10\x01"},
		{"POST", "/grpc.health.v1.Health/Check", "application/json", `{"service":""}`},
		{"GET", "/idkit.v1.IDService/Next?encoding=json&message=%7B%7D", "", ""},
		{"GET", "/readyz", "", ""},
		{"GET", "/metrics", "", ""},
		{"GET", "/v1/next/orders?n=5;", "", ""},
		{"GET", "/v1/next/orders?n=%zz", "", ""},
		{"HEAD", "/v1/next/orders?n=100", "", ""},
		{"GET", "/idkit.v1.IDService/Ping?connect=v1&encoding=json&message=%7B%7D;", "", ""},
		{"POST", "/idkit.v1.IDService/Next", "application/connect+json", "\x00\x00\x00\x00\x02{}"},
		{"POST", "/grpc.health.v1.Health/Watch", "application/connect+json", "\x00\x00\x00\x00\x02{}"},
		{"POST", "/grpc.health.v1.Health/List", "application/json", `{}`},
		{"POST", "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "application/grpc", "\x00\x00\x00\x00\x02\x3a\x00"},
		{"POST", "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", "application/connect+json", "\x00\x00\x00\x00\x02{}"},
		{"POST", "/idkit.v1.IDService/Next", "", `{"generator":"orders","count":1}`},
		{"POST", "/idkit.v1.IDService/Next", "application/json", `{"generator":"orders","cuont":1}`},
		{"POST", "/idkit.v1.IDService/Nope", "application/grpc-web+proto", "\x00\x00\x00\x00\x00"},
		{"OPTIONS", "/idkit.v1.IDService/Next", "", ""},
		{"DELETE", "/healthz", "", ""},
		{"GET", "/nowhere", "", ""},
	} {
		f.Add(s.method, s.target, s.ct, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, target, ct string, body []byte) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://127.0.0.1"+target, strings.NewReader(string(body)))
		if err != nil {
			return // not a request a client could send
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if strings.HasSuffix(req.URL.Path, "/Watch") {
			return // a stream that lasts until the server stops: not for a recorder
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented && (rec.Code != http.StatusHTTPVersionNotSupported || rec.Body.Len() == 0) {
			t.Fatalf("%s %s (%s) %q: status %d %q", method, target, ct, body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 && rec.Code != 405 && rec.Body.Len() == 0 && rec.Header().Get("Grpc-Message") == "" {
			t.Fatalf("%s %s: status %d with no reason", method, target, rec.Code)
		}
	})
}
