package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pgtest"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/jackc/pgx/v5"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// cutProxy forwards TCP connections on a loopback port to a PostgreSQL server (its unix
// socket or TCP address) until cut, which closes the port and every connection through it,
// as a server that stopped: new connections are refused. mend opens the same port again.
type cutProxy struct {
	t       *testing.T
	addr    string // the loopback port
	network string // of the server: unix or tcp
	target  string
	mu      sync.Mutex
	ln      net.Listener
	conns   []net.Conn
}

func newCutProxy(t *testing.T, cfg *pgx.ConnConfig) *cutProxy {
	p := &cutProxy{t: t, network: "tcp", target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	if strings.HasPrefix(cfg.Host, "/") {
		p.network, p.target = "unix", filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	p.mend("127.0.0.1:0")
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) mend(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial(p.network, p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestSegmentStoreDown serves a segment generator whose PostgreSQL store then stops answering
// (its port closed, connections cut) beside a snowflake one. Once its blocks are used up, the
// segment generator is answered at once (not after the 5 s wait) with 503 and Retry-After on
// GET /v1/next and UNAVAILABLE with a RetryInfo detail over gRPC (before: 500 and INTERNAL
// after 5 s); /readyz is 503 naming it, gRPC health NOT_SERVING for the server and for
// idkit.v1.IDService/ids, SERVING for idkit.v1.IDService/sf, whose IDs still flow. When the
// store answers again, the server is ready again and issues IDs, without a restart.
func TestSegmentStoreDown(t *testing.T) {
	cfg, err := pgx.ParseConfig(pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newCutProxy(t, cfg)
	host, port, _ := net.SplitHostPort(p.addr)
	q := url.Values{"host": {host}, "port": {port}, "sslmode": {"disable"}, "unsafe": {"true"}}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	store := url.URL{Scheme: "pg", User: url.UserPassword(cfg.User, cfg.Password), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password == "" {
		store.User = url.User(cfg.User)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcAddr := ln.Addr().String()
	ln.Close()
	addr := serveInProcess(t, "--grpc-listen", grpcAddr,
		"--gen", "ids=segment:store="+store.String()+",key=down,step=20,timeout=500ms",
		"--gen", "sf=snowflake:layout=twitter,node=1")
	nextIDs(t, addr, "ids", 5)
	cc, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	health := func(svc string) healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		res, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("health %q: %v", svc, err)
		}
		return res.GetStatus()
	}
	get := func(path string) (*http.Response, string, time.Duration) {
		t.Helper()
		start := time.Now()
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b), time.Since(start)
	}

	t0 := time.Now()
	t.Logf("%v: serving", time.Since(t0))
	p.cut()
	var res *http.Response
	var body string
	var took time.Duration
	for deadline := time.Now().Add(20 * time.Second); ; {
		if res, body, took = get("/v1/next/ids?n=10"); res.StatusCode != 200 && took < time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store down: GET /v1/next/ids is %d after %v (%q); want 503 at once", res.StatusCode, took, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "no block available") {
		t.Errorf("store down: GET /v1/next/ids: %d, Retry-After %q, %q; want 503 with Retry-After and the reason", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	t.Logf("store down: %d in %v, Retry-After %s: %s", res.StatusCode, took, res.Header.Get("Retry-After"), strings.TrimSpace(body))
	_, err = v1.NewIDServiceClient(cc).Next(context.Background(), &v1.NextRequest{Generator: "ids", Count: 1})
	st := status.Convert(err)
	hasHint := false
	for _, d := range st.Details() {
		_, ok := d.(*errdetails.RetryInfo)
		hasHint = hasHint || ok
	}
	if st.Code() != codes.Unavailable || !hasHint {
		t.Errorf("store down: gRPC Next: %v, details %v; want UNAVAILABLE with a RetryInfo", err, st.Details())
	}
	if res, body, _ := get("/readyz"); res.StatusCode != 503 || !strings.Contains(body, `generator "ids"`) {
		t.Errorf("store down: /readyz %d %q; want 503 naming the generator", res.StatusCode, body)
	}
	if health("") != healthpb.HealthCheckResponse_NOT_SERVING || health("idkit.v1.IDService/ids") != healthpb.HealthCheckResponse_NOT_SERVING || health("idkit.v1.IDService/sf") != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("store down: health \"\" %v, ids %v, sf %v; want NOT_SERVING, NOT_SERVING, SERVING", health(""), health("idkit.v1.IDService/ids"), health("idkit.v1.IDService/sf"))
	}
	nextIDs(t, addr, "sf", 5)

	t.Logf("%v: checked the store down", time.Since(t0))
	p.mend(p.addr)
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, _, _ := get("/readyz")
		if res.StatusCode == 200 && health("idkit.v1.IDService/ids") == healthpb.HealthCheckResponse_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("store back: the server did not become ready again")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%v: ready again", time.Since(t0))
	nextIDs(t, addr, "ids", 5)
}
