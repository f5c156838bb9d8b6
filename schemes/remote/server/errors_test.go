package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// goTypeNames are what what connect-go's and grpc-go's own codecs put in their messages.
var goTypeNames = []string{"*idkitv1.", "idkitv1.", "proto:\u00a0", "%C2%A0"}

func noGoTypes(t *testing.T, what, msg string) {
	t.Helper()
	for _, g := range goTypeNames {
		if strings.Contains(msg, g) {
			t.Errorf("%s: message %q shows %q", what, msg, g)
		}
	}
}

// TestReadableErrorsHTTP sends what people type with curl, through net/http: each answer says
// what was wrong in the words of the protocol and the .proto, names an unknown field, tells a
// POST without a content type what to send, and answers an unknown path in the caller's
// protocol.
func TestReadableErrorsHTTP(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	hc := h2()
	next := idkitv1connect.IDServiceNextProcedure
	for _, tc := range []struct {
		name, method, path, ct, body string
		status                       int
		wantCT                       string // the answer's content type, by prefix
		want                         []string
	}{
		{"malformed JSON", "POST", next, "application/json", `{"generator":`, 400, "application/json",
			[]string{`"invalid_argument"`, "not a valid idkit.v1.NextRequest in JSON"}},
		{"wrong JSON type", "POST", next, "application/json", `{"generator":5}`, 400, "application/json",
			[]string{"invalid value for string field generator: 5"}},
		{"unknown JSON field", "POST", next, "application/json", `{"generator":"orders","cuont":3}`, 400, "application/json",
			[]string{`unknown field \"cuont\"`}},
		{"empty JSON body", "POST", next, "application/json", ``, 400, "application/json",
			[]string{"the body is empty"}},
		{"malformed protobuf", "POST", next, "application/proto", "\xff\xff\xff", 400, "application/json",
			[]string{"not a valid idkit.v1.NextRequest in protobuf binary"}},
		{"no content type", "POST", next, "", `{"generator":"orders","count":1}`, 415, "text/plain",
			[]string{"no Content-Type: send application/json"}},
		{"form content type (curl -d)", "POST", next, "application/x-www-form-urlencoded", `{"generator":"orders","count":1}`, 415, "text/plain",
			[]string{`Content-Type "application/x-www-form-urlencoded": send application/json`}},
		{"unknown method, Connect", "POST", "/idkit.v1.IDService/Nxet", "application/json", `{}`, 404, "application/json",
			[]string{`"unimplemented"`, "/idkit.v1.IDService/Nxet is not served here", "idkit.v1.IDService"}},
		{"unknown service, Connect", "POST", "/shop.v1.Orders/Get", "application/proto", ``, 404, "application/json",
			[]string{`"unimplemented"`}},
		{"unknown path, plain", "GET", "/v1/nxet/orders", "", ``, 404, "text/plain",
			[]string{"GET /v1/nxet/orders is not served here", "/v1/next/{generator}"}},
		{"GET of an RPC served by POST", "GET", next, "", ``, 405, "text/plain",
			[]string{"send a POST with application/json"}},
		{"Connect streaming form on a unary RPC", "POST", next, "application/connect+json", "\x00\x00\x00\x00\x02{}", 415, "text/plain",
			[]string{`Content-Type "application/connect+json"`}},
		{"plain endpoint, wrong method", "POST", "/v1/next/orders", "", ``, 405, "text/plain",
			[]string{"use GET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, r.url+tc.path, strings.NewReader(tc.body))
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.wantCT) {
				t.Fatalf("status %d, %s: %s; want %d, %s", res.StatusCode, res.Header.Get("Content-Type"), b, tc.status, tc.wantCT)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("answer %s lacks %s", b, w)
				}
			}
			noGoTypes(t, tc.name, string(b))
		})
	}
}

// TestReadableErrorsClients calls through the clients people use, connect-go on every protocol
// and grpc-go on both listeners: an unknown method is UNIMPLEMENTED, a request without a token
// is UNAUTHENTICATED with a message the client shows, the token's scheme may be written in any
// case, and no message shows a Go type.
func TestReadableErrorsClients(t *testing.T) {
	t.Parallel()
	cfg := twoGens()
	cfg.Tokens = []string{"s3cret"}
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range protocols {
		t.Run("connect-go/"+p.name, func(t *testing.T) {
			bogus := connect.NewClient[v1.PingRequest, v1.PingResponse](h2(), r.url+"/idkit.v1.IDService/Pong", p.opts...)
			req := connect.NewRequest(&v1.PingRequest{})
			req.Header().Set("Authorization", "Bearer s3cret")
			_, err := bogus.CallUnary(ctx, req)
			if connect.CodeOf(err) != connect.CodeUnimplemented {
				t.Errorf("unknown method: %v, want unimplemented", err)
			}
			c := idkitv1connect.NewIDServiceClient(h2(), r.url, p.opts...)
			for _, tc := range []struct {
				auth string
				want connect.Code
			}{{"", connect.CodeUnauthenticated}, {"Bearer wrong", connect.CodeUnauthenticated}, {"bearer s3cret", 0}, {"BEARER s3cret", 0}} {
				req := connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 1})
				if tc.auth != "" {
					req.Header().Set("Authorization", tc.auth)
				}
				_, err := c.Next(ctx, req)
				if tc.want == 0 {
					if err != nil {
						t.Errorf("with %q: %v", tc.auth, err)
					}
					continue
				}
				var ce *connect.Error
				if !errors.As(err, &ce) || ce.Code() != tc.want || ce.Message() != "missing or unknown bearer token" {
					t.Errorf("with %q: %v, want %v with the reason", tc.auth, err, tc.want)
				}
			}
		})
	}
	for _, st := range stacks(r) {
		t.Run("grpc-go/"+st.name, func(t *testing.T) {
			cc := stockAt(t, st.addr)
			authed := metadata.AppendToOutgoingContext(ctx, "authorization", "bearer s3cret")
			for _, method := range []string{"/idkit.v1.IDService/Pong", "/shop.v1.Orders/Get"} {
				err := cc.Invoke(authed, method, &v1.PingRequest{}, &v1.PingResponse{})
				if status.Code(err) != codes.Unimplemented {
					t.Errorf("%s: %v, want Unimplemented", method, err)
				}
			}
			c := v1.NewIDServiceClient(cc)
			if _, err := c.Next(authed, &v1.NextRequest{Generator: "orders", Count: 1}); err != nil {
				t.Errorf("lowercase bearer: %v", err)
			}
			_, err := c.Next(ctx, &v1.NextRequest{Generator: "orders", Count: 1})
			if s := status.Convert(err); s.Code() != codes.Unauthenticated || s.Message() != "missing or unknown bearer token" {
				t.Errorf("no token: %v", err)
			}
			// A malformed message, as a client with another .proto would send.
			err = cc.Invoke(authed, idkitv1connect.IDServiceNextProcedure, []byte{0xff, 0xff, 0xff}, new([]byte), grpc.ForceCodecV2(rawCodec{}))
			if s := status.Convert(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "not a valid idkit.v1.NextRequest") {
				t.Errorf("malformed: %v", err)
			}
			noGoTypes(t, "malformed", status.Convert(err).Message())
		})
	}
}
