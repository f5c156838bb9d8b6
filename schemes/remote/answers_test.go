package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/remote"
)

// TestFinalAnswers points the scheme at a real HTTP server (cleartext HTTP/2 and HTTP/1, as a
// proxy in front of the service would be) that answers what no retry can change: 415 and 405
// (the address does not take this protocol or method) and an HTML page (a proxy's or login
// page). The scheme must give up at once, after one request, naming the status and the content
// type, for every protocol. The control is a 503 page, which a proxy sends while the service
// restarts: it is retried until retry_for ends.
func TestFinalAnswers(t *testing.T) {
	const retryFor = time.Second
	for _, tc := range []struct {
		name   string
		status int
		ctype  string
		final  bool
	}{
		{"415", http.StatusUnsupportedMediaType, "text/plain; charset=utf-8", true},
		{"405", http.StatusMethodNotAllowed, "text/plain; charset=utf-8", true},
		{"html200", http.StatusOK, "text/html; charset=utf-8", true},
		{"html403", http.StatusForbidden, "text/html", true},
		{"html404", http.StatusNotFound, "text/html", true},
		{"control503", http.StatusServiceUnavailable, "text/plain; charset=utf-8", false},
		{"control503html", http.StatusServiceUnavailable, "text/html", false},
		{"control502html", http.StatusBadGateway, "text/html", false},
	} {
		var requests atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			w.Header().Set("Content-Type", tc.ctype)
			if tc.status == http.StatusMethodNotAllowed {
				w.Header().Set("Allow", "GET")
			}
			w.WriteHeader(tc.status)
			fmt.Fprintf(w, "<html><body>%d %s</body></html>\n", tc.status, http.StatusText(tc.status))
		}))
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		addr := strings.TrimPrefix(srv.URL, "http://")
		for _, proto := range []string{"grpc", "connect", "json"} {
			t.Run(tc.name+"/protocol="+proto, func(t *testing.T) {
				requests.Store(0)
				start := time.Now()
				_, err := remote.Dial(context.Background(), remote.Config{Addr: addr, Generator: "orders", Protocol: proto, RetryFor: retryFor, Timeout: time.Second})
				took := time.Since(start)
				if err == nil {
					t.Fatal("Dial succeeded")
				}
				n := requests.Load()
				if !tc.final {
					if !errors.Is(err, remote.ErrUnavailable) || n < 2 {
						t.Errorf("after %d requests in %v: %v; want retries ending in ErrUnavailable", n, took, err)
					}
					return
				}
				mediaType, _, _ := strings.Cut(tc.ctype, ";")
				if !errors.Is(err, remote.ErrRefused) || !strings.Contains(err.Error(), fmt.Sprint(tc.status)) || !strings.Contains(err.Error(), mediaType) {
					t.Errorf("Dial: %v; want ErrRefused naming %d and %s", err, tc.status, mediaType)
				}
				if n != 1 || took > retryFor/2 {
					t.Errorf("%d requests in %v; want one, answered at once", n, took)
				}
				t.Log(err)
			})
		}
		srv.Close()
	}
}

// ExampleErrRefused: an address that answers with a proxy's HTML page (or 415, 405) is not the
// service, and no retry will change that: Dial fails at once, naming the status and content
// type, instead of retrying until retry_for ends.
func ExampleErrRefused() {
	portal := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintln(w, "<html><body>Please sign in</body></html>")
	}))
	portal.Config.Protocols = new(http.Protocols)
	portal.Config.Protocols.SetHTTP1(true)
	portal.Config.Protocols.SetUnencryptedHTTP2(true)
	portal.Start()
	defer portal.Close()
	addr := strings.TrimPrefix(portal.URL, "http://")
	start := time.Now()
	_, err := remote.Dial(context.Background(), remote.Config{Addr: addr, Generator: "orders", Protocol: "connect", RetryFor: time.Minute})
	fmt.Println(errors.Is(err, remote.ErrRefused), time.Since(start) < 10*time.Second)
	fmt.Println(strings.Replace(err.Error(), addr, "ADDR", 1))
	// Output:
	// true true
	// remote: generator "orders": failed_precondition: remote: the address answered with something no retry can change: ADDR answered HTTP 200 OK with content type "text/html": an HTML page, from a proxy, load balancer or portal rather than the service
}
