package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/server"
	"google.golang.org/protobuf/encoding/protojson"
)

// FuzzHandler sends arbitrary methods, paths, content types and bodies to the service's
// handler: it must never panic, never answer 500, and every error it sends names a problem.
func FuzzHandler(f *testing.F) {
	key := filepath.Join(f.TempDir(), "mask.key")
	if err := os.WriteFile(key, []byte("0123456789abcdef:fedcba9876543210\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	srv, err := server.New(server.Config{Generators: []server.Generator{
		{Name: "orders", Spec: "snowflake:layout=twitter,worker=1"},
		{Name: "sessions", Spec: "uuidv7"},
		{Name: "users", Spec: "typeid:prefix=user"},
		{Name: "v4", Spec: "uuidv4"},
		{Name: "hidden", Spec: "snowflake:layout=twitter,worker=2,mask=file:" + key},
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
		{"GET", "/v1/decode/orders/1541815603606036480", "", ""},
		{"GET", "/v1/decode/users/user_01h455vb4pex5vsknk084sn02q", "", ""},
		{"GET", "/v1/decode/users/01890a5d-ac96-774b-bcce-b302099a8057", "", ""},
		{"GET", "/v1/decode/hidden/1541815603606036480", "", ""},
		{"GET", "/v1/decode/orders/12x4?n=1", "", ""},
		{"GET", "/v1/decode/sessions/%00", "", ""},
		{"GET", "/v1/bounds/orders?from=2026-01-01T09:30:00Z&to=2026-01-01T09:31:00.5Z", "", ""},
		{"GET", "/v1/bounds/sessions?at=1767259800000", "", ""},
		{"GET", "/v1/bounds/users?to=1999-12-31", "", ""},
		{"GET", "/v1/bounds/v4", "", ""},
		{"GET", "/v1/bounds/orders?from=&to=x&at=", "", ""},
		{"GET", "/v1/bounds/orders?from=9999-12-31T23:59:59.999999999Z", "", ""},
		{"POST", "/idkit.v1.IDService/Bounds", "application/json", `{"generator":"orders","from":"2026-01-01","to":"2026-01-02"}`},
		{"POST", "/idkit.v1.IDService/Bounds", "application/json", `{"generator":"sessions","at":"-1"}`},
		{"POST", "/idkit.v1.IDService/Decode", "application/json", `{"generator":"hidden","id":"5"}`},
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
		if rec.Code == http.StatusOK && strings.HasPrefix(req.URL.Path, "/v1/bounds/") {
			// A range's bounds are IDs of the scheme, in order.
			var b v1.BoundsResponse
			if err := protojson.Unmarshal(rec.Body.Bytes(), &b); err != nil {
				t.Fatalf("GET %s: answer %q: %v", target, rec.Body, err)
			}
			lo, err1 := idkit.Parse(b.LoText)
			hi, err2 := idkit.Parse(b.HiText)
			if err1 != nil || err2 != nil || idkit.Compare(lo, hi) > 0 {
				t.Fatalf("GET %s: bounds %s..%s (%v %v)", target, b.LoText, b.HiText, err1, err2)
			}
		}
		if rec.Code >= 400 && rec.Code != 405 && rec.Body.Len() == 0 && rec.Header().Get("Grpc-Message") == "" {
			t.Fatalf("%s %s: status %d with no reason", method, target, rec.Code)
		}
	})
}
