package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir and returns their paths
// and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "idkitd test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool
}

// TestTLS serves with --tls-cert/--tls-key: gRPC over HTTP/2 and plain GET over HTTP/1.1 both
// work through TLS, and a cleartext request is refused.
func TestTLS(t *testing.T) {
	certPath, keyPath, pool := selfSigned(t, t.TempDir())
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
