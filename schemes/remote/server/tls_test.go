package server_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/idkit/idkit/internal/certtest"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
)

// TestTLS serves with --tls-cert/--tls-key: gRPC over HTTP/2 and plain GET over HTTP/1.1 both
// work through TLS, and a cleartext request is refused.
func TestTLS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, pool := certtest.SelfSigned(t, t.TempDir())
	cfg := twoGens()
	cfg.TLSCert, cfg.TLSKey = certPath, keyPath
	r := start(t, cfg)
	base := r.url
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: new(http.Protocols)}
		tr.Protocols.SetHTTP2(h2)
		tr.Protocols.SetHTTP1(!h2)
		hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		if h2 {
			c := idkitv1connect.NewIDServiceClient(hc, base, connect.WithGRPC())
			res, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: "orders", Count: 3}))
			if err != nil || len(res.Msg.Ids64) != 3 {
				t.Fatalf("gRPC over TLS: %v", err)
			}
		}
		res, err := hc.Get(base + "/v1/next/orders?n=2")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.TLS == nil || (res.ProtoMajor == 2) != h2 {
			t.Fatalf("GET over TLS (h2 %v): %s %s %q", h2, res.Status, res.Proto, b)
		}
		tr.CloseIdleConnections()
	}
	res, err := http.Get("http://" + strings.TrimPrefix(base, "https://") + "/healthz")
	if err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("cleartext request to a TLS server: %s", res.Status)
		}
	}
}
