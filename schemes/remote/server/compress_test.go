package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// envelope frames a gRPC (or gRPC-Web) message, flagged compressed or not.
func envelope(msg []byte, compressed bool) []byte {
	out := make([]byte, 5, 5+len(msg))
	if compressed {
		out[0] = 1
	}
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// TestCompressedRequests sends a gzipped Next request on every protocol, over a real listener
// with net/http's client (HTTP/2 for gRPC), as a client that also accepts gzip answers: each is
// served, and its answer is compressed only when Config.CompressResponses says so. gRPC goes
// to both listeners.
func TestCompressedRequests(t *testing.T) {
	t.Parallel()
	req, _ := proto.Marshal(&v1.NextRequest{Generator: "orders", Count: 3})
	for _, compress := range []bool{false, true} {
		cfg := twoGens()
		cfg.CompressResponses = compress
		r := start(t, cfg)
		hc := h2()
		main := r.url
		for _, tc := range []struct {
			name, url, ct string
			body          []byte
			hdr           map[string]string
		}{
			{"grpc/net-http", main, "application/grpc", envelope(gzipped(t, req), true), map[string]string{"Grpc-Encoding": "gzip", "Grpc-Accept-Encoding": "gzip", "Te": "trailers"}},
			{"grpc/grpc-go", "http://" + r.grpc, "application/grpc", envelope(gzipped(t, req), true), map[string]string{"Grpc-Encoding": "gzip", "Grpc-Accept-Encoding": "gzip", "Te": "trailers"}},
			{"grpc-web", main, "application/grpc-web+proto", envelope(gzipped(t, req), true), map[string]string{"Grpc-Encoding": "gzip", "Grpc-Accept-Encoding": "gzip"}},
			{"connect-proto", main, "application/proto", gzipped(t, req), map[string]string{"Content-Encoding": "gzip", "Accept-Encoding": "gzip"}},
			{"connect-json", main, "application/json", gzipped(t, []byte(`{"generator":"orders","count":3}`)), map[string]string{"Content-Encoding": "gzip", "Accept-Encoding": "gzip"}},
		} {
			t.Run(tc.name+map[bool]string{false: "/default", true: "/compress-responses"}[compress], func(t *testing.T) {
				hr, err := http.NewRequest(http.MethodPost, tc.url+idkitv1connect.IDServiceNextProcedure, bytes.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				hr.Header.Set("Content-Type", tc.ct)
				for k, v := range tc.hdr {
					hr.Header.Set(k, v)
				}
				res, err := hc.Do(hr)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if res.StatusCode != 200 {
					t.Fatalf("status %d: %s", res.StatusCode, body)
				}
				var msg []byte
				var compressed bool
				if strings.HasPrefix(tc.ct, "application/grpc") {
					if st := res.Header.Get("Grpc-Status") + res.Trailer.Get("Grpc-Status"); st != "0" && tc.ct == "application/grpc" {
						t.Fatalf("grpc-status %q: %s%s", st, res.Header.Get("Grpc-Message"), res.Trailer.Get("Grpc-Message"))
					}
					if len(body) < 5 {
						t.Fatalf("answer %q: no message", body)
					}
					n := binary.BigEndian.Uint32(body[1:5])
					compressed = body[0]&1 == 1
					msg = body[5 : 5+n]
					if compressed {
						if enc := res.Header.Get("Grpc-Encoding"); enc != "gzip" {
							t.Fatalf("compressed message with grpc-encoding %q", enc)
						}
						msg = gunzip(t, msg)
					}
				} else {
					compressed = res.Header.Get("Content-Encoding") == "gzip"
					msg = body
					if compressed {
						msg = gunzip(t, body)
					}
				}
				if compressed != compress {
					t.Fatalf("answer compressed: %v, want %v", compressed, compress)
				}
				var out v1.NextResponse
				if tc.ct == "application/json" {
					var j struct{ Ids64 []string }
					if err := json.Unmarshal(msg, &j); err != nil || len(j.Ids64) != 3 {
						t.Fatalf("answer %s: %v", msg, err)
					}
					return
				}
				if err := proto.Unmarshal(msg, &out); err != nil || len(out.Ids64) != 3 {
					t.Fatalf("answer %x: %v, %d IDs", msg, err, len(out.Ids64))
				}
			})
		}
	}
}

// TestCompressedStockGRPC: grpc-go's client sending gzip is served by both listeners.
func TestCompressedStockGRPC(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			res, err := v1.NewIDServiceClient(stockAt(t, st.addr)).Next(ctx, &v1.NextRequest{Generator: "orders", Count: 100}, grpc.UseCompressor(grpcgzip.Name))
			if err != nil || len(res.Ids64) != 100 {
				t.Fatalf("Next with gzip: %v, %v", res, err)
			}
		})
	}
}

// TestCompressedTooLarge: the request limit holds for the message once decompressed, so a
// small gzip body that inflates past it is refused on both listeners.
func TestCompressedTooLarge(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	for _, st := range stacks(r) {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := v1.NewIDServiceClient(stockAt(t, st.addr)).Next(ctx, &v1.NextRequest{Generator: strings.Repeat("a", 1<<20), Count: 1}, grpc.UseCompressor(grpcgzip.Name))
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("1 MiB message in a small gzip body: %v, want ResourceExhausted", err)
			}
		})
	}
}

// TestCompressedTooLargeIs413: a small gzip message that inflates past the limit is 413 (not
// 429, which clients retry) in the Connect protocol, whether POSTed with a declared length, in
// JSON or binary, or sent as a GET with compression=gzip; gRPC-Web carries
// RESOURCE_EXHAUSTED in its body with HTTP 200, as gRPC does in its trailers.
func TestCompressedTooLargeIs413(t *testing.T) {
	t.Parallel()
	r := start(t, twoGens())
	huge := strings.Repeat("a", 1<<20)
	bin, _ := proto.Marshal(&v1.DecodeRequest{Generator: huge, Id: "1"})
	get := r.url + idkitv1connect.IDServiceDecodeProcedure + "?connect=v1&encoding=proto&compression=gzip&base64=1&message=" +
		base64.RawURLEncoding.EncodeToString(gzipped(t, bin))
	for _, tc := range []struct {
		name, method, url, ct string
		body                  []byte
		hdr                   map[string]string
		status                int
	}{
		{"connect-proto", "POST", r.url + idkitv1connect.IDServiceDecodeProcedure, "application/proto", gzipped(t, bin), map[string]string{"Content-Encoding": "gzip"}, 413},
		{"connect-json", "POST", r.url + idkitv1connect.IDServiceDecodeProcedure, "application/json", gzipped(t, []byte(`{"generator":"`+huge+`"}`)), map[string]string{"Content-Encoding": "gzip"}, 413},
		{"connect-get", "GET", get, "", nil, nil, 413},
		{"grpc-web", "POST", r.url + idkitv1connect.IDServiceDecodeProcedure, "application/grpc-web+proto", envelope(gzipped(t, bin), true), map[string]string{"Grpc-Encoding": "gzip"}, 200},
	} {
		var body io.Reader
		if tc.body != nil {
			body = bytes.NewReader(tc.body)
		}
		req, err := http.NewRequest(tc.method, tc.url, body)
		if err != nil {
			t.Fatal(err)
		}
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		res, err := h2().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		exhausted := strings.Contains(string(b), "resource_exhausted") || res.Header.Get("Grpc-Status")+res.Trailer.Get("Grpc-Status") == "8" ||
			strings.Contains(string(b), "grpc-status:8")
		if res.StatusCode != tc.status || !exhausted {
			t.Errorf("%s: %s %q (grpc-status %q%q); want %d, resource exhausted", tc.name, res.Status, cut(b), res.Header.Get("Grpc-Status"), res.Trailer.Get("Grpc-Status"), tc.status)
		}
	}
}

func cut(b []byte) []byte { return b[:min(len(b), 200)] }
