package remote_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/remote"
	"github.com/idkit/idkit/schemes/remote/server"
)

// serve runs an in-process service on addr ("127.0.0.1:0" for any port) until stop is called;
// it returns the address.
func serve(t testing.TB, addr string, gens ...server.Generator) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wait func() error
		err  error
	)
	for i := 0; ; i++ { // a just-closed port can take a moment to come free
		var srv *server.Server
		if srv, err = server.New(server.Config{Listen: addr, Generators: gens, ShutdownDelay: -1}); err != nil {
			t.Fatal(err)
		}
		var addrs server.Addrs
		if addrs, wait, err = srv.Start(ctx); err == nil || i == 50 {
			addr = addrs.HTTP
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := wait(); err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return addr, stop
}

func open(t testing.TB, spec string) idkit.Scheme {
	t.Helper()
	s, err := idkit.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.(io.Closer).Close() })
	return s
}

var gens = []server.Generator{
	{Name: "orders", Spec: "snowflake:layout=twitter,worker=9"},
	{Name: "sessions", Spec: "ulid"},
	{Name: "keys", Spec: "uuidv7"},
}

// TestRemote draws IDs through every protocol, with and without prefetch, from eight
// goroutines at once: all unique, each goroutine's in increasing order, parsed and decoded by
// the local codec.
func TestRemote(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", gens...)
	for _, gen := range []string{"orders", "sessions", "keys"} {
		for _, extra := range []string{"", ",prefetch=100", ",prefetch=1000,protocol=json", ",protocol=connect"} {
			spec := fmt.Sprintf("remote:addr=%s,generator=%s%s", addr, gen, extra)
			t.Run(gen+extra, func(t *testing.T) {
				s := open(t, spec)
				if s.Name() != spec {
					t.Errorf("Name = %q, want %q", s.Name(), spec)
				}
				per := 300
				if extra == "" || strings.Contains(extra, "connect") {
					per = 50
				}
				var mu sync.Mutex
				seen := map[idkit.ID]bool{}
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						var prev idkit.ID
						batch := make([]idkit.ID, 7)
						for i := range per {
							var ids []idkit.ID
							if i%10 == 0 {
								if err := s.(idkit.Batcher).NextBatch(batch); err != nil {
									t.Error(err)
									return
								}
								ids = batch
							} else {
								id, err := s.Next()
								if err != nil {
									t.Error(err)
									return
								}
								ids = []idkit.ID{id}
							}
							mu.Lock()
							for _, id := range ids {
								if seen[id] {
									t.Errorf("duplicate %v", id)
								}
								seen[id] = true
								if !prev.IsZero() && idkit.Compare(prev, id) >= 0 {
									t.Errorf("out of order: %v then %v", prev, id)
								}
								prev = id
							}
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				for id := range seen {
					back, err := s.Parse(id.String())
					if err != nil || back != id {
						t.Fatalf("Parse(%v) = %v, %v", id, back, err)
					}
					if _, err := s.Decode(id); err != nil {
						t.Fatal(err)
					}
					break
				}
			})
		}
	}
}

func TestSpecErrors(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", gens...)
	t.Setenv("IDKIT_TEST_EMPTY_TOKEN", "")
	t.Setenv("IDKIT_TEST_SOME_TOKEN", "s3cret")
	for _, tc := range []struct{ spec, want string }{
		{"remote", "addr=host:port is required"},
		{"remote:generator=orders", "addr=host:port is required"},
		{"remote:addr=nocolon,generator=x", "addr=nocolon: want host:port"},
		{"remote:addr=" + addr, "generator=NAME is required"},
		{"remote:addr=" + addr + ",generator=orders,prefetch=-1", "prefetch=-1"},
		{"remote:addr=" + addr + ",generator=orders,protocol=soap", "protocol=soap: want grpc, connect or json"},
		{"remote:addr=" + addr + ",generator=orders,colour=red", `unknown key "colour"`},
		{"remote:addr=" + addr + ",generator=orders,token_env=IDKIT_TEST_EMPTY_TOKEN", "the variable is not set"},
		{"remote:addr=" + addr + ",generator=nope", `has no generator "nope" (it has: orders, sessions, keys)`},
		{"remote:addr=192.0.2.1:7070,generator=orders,token_env=IDKIT_TEST_SOME_TOKEN", "a bearer token over cleartext to an address that is not loopback"},
		{"remote:addr=idkitd.example:7070,generator=orders,token_env=IDKIT_TEST_SOME_TOKEN,insecure_token=false", "set tls=true, or insecure_token=true"},
		{"remote:addr=" + addr + ",generator=orders,insecure_token=maybe", "insecure_token=maybe"},
		{"remote:addr=idkitd.localhost:7070,generator=orders,token_env=IDKIT_TEST_SOME_TOKEN", "a bearer token over cleartext to an address that is not loopback"},
		// A token pasted where its variable's name belongs is refused and not shown (issue
		// 24, item 7).
		{"remote:addr=" + addr + ",generator=orders,token_env=s3cret-token.value", "token_env= wants the name of an environment variable"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := idkit.New(tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, idkit.ErrSpec) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("err = %v, want ErrSpec with %q", err, tc.want)
			}
		})
	}
}

// TestServiceAway: a service that never answers gives ErrUnavailable after retry_for, and a
// context ends the wait sooner.
func TestServiceAway(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	start := time.Now()
	_, err = idkit.New("remote:addr=" + addr + ",generator=orders,retry_for=300ms")
	if !errors.Is(err, remote.ErrUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v, want ErrUnavailable naming %s", err, addr)
	}
	// It gives up once the next backoff would end past retry_for.
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %v, want about 300ms", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = idkit.NewContext(ctx, "remote:addr="+addr+",generator=orders,retry_for=1m")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v, want the context's deadline", err, time.Since(start))
	}
}

// TestRetryAcrossRestart stops the service while a client draws IDs and starts it again on the
// same port with the same node and a mark file: the client retries through the gap and no ID
// repeats.
func TestRetryAcrossRestart(t *testing.T) {
	marks := filepath.Join(t.TempDir(), "marks")
	g := server.Generator{Name: "orders", Spec: "snowflake:layout=twitter,worker=9,marks=file:" + marks}
	addr, stop := serve(t, "127.0.0.1:0", g)
	for _, extra := range []string{"", ",prefetch=50"} {
		s := open(t, "remote:addr="+addr+",generator=orders,retry_for=20s"+extra)
		seen := map[idkit.ID]bool{}
		draw := func(n int) {
			for range n {
				id, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if seen[id] {
					t.Fatalf("duplicate %v", id)
				}
				seen[id] = true
			}
		}
		draw(500)
		stop()
		restarted := make(chan func())
		go func() {
			time.Sleep(200 * time.Millisecond)
			_, st := serve(t, addr, g)
			restarted <- st
		}()
		draw(500) // waits through the gap
		stop = <-restarted
		draw(500)
	}
}

// BenchmarkNext compares Next in process, through the service with prefetch and through the
// service one request per ID, for the twitter layout (capped at 4,096,000 IDs/s, 244 ns/ID)
// and a layout whose 21 sequence bits put its cap out of reach (2^21 IDs per millisecond).
func BenchmarkNext(b *testing.B) {
	wide := server.Generator{Name: "wide", Spec: "snowflake:fields=time:41/node:1/seq:21"}
	addr, _ := serve(b, "127.0.0.1:0", gens[0], wide)
	for _, g := range []server.Generator{gens[0], wide} {
		layout := map[string]string{"orders": "twitter", "wide": "seq21"}[g.Name]
		for _, bc := range []struct{ name, spec string }{
			{"inprocess", g.Spec},
			{"remote-prefetch", "remote:addr=" + addr + ",generator=" + g.Name + ",prefetch=10000"},
			{"remote", "remote:addr=" + addr + ",generator=" + g.Name},
		} {
			b.Run("layout="+layout+"/scheme="+bc.name, func(b *testing.B) {
				s := open(b, bc.spec)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.Next(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkNextBatch(b *testing.B) {
	addr, _ := serve(b, "127.0.0.1:0", gens[0])
	for _, n := range []int{1000, 10000} {
		for _, bc := range []struct{ name, spec string }{
			{"inprocess", gens[0].Spec},
			{"remote", "remote:addr=" + addr + ",generator=orders"},
		} {
			b.Run(fmt.Sprintf("scheme=%s/batch=%d", bc.name, n), func(b *testing.B) {
				s := open(b, bc.spec).(idkit.Batcher)
				buf := make([]idkit.ID, n)
				b.ReportAllocs()
				for b.Loop() {
					if err := s.NextBatch(buf); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/ID")
			})
		}
	}
}

// TestDialDefaults builds the scheme from a Config with only the address and generator set.
func TestDialDefaults(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", gens...)
	s, err := remote.Dial(context.Background(), remote.Config{Addr: addr, Generator: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Dial(context.Background(), remote.Config{Addr: addr}); !errors.Is(err, idkit.ErrSpec) {
		t.Errorf("Dial without a generator: %v", err)
	}
	if _, err := remote.Dial(context.Background(), remote.Config{Addr: addr, Generator: "keys", Protocol: "soap"}); !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), `"soap"`) {
		t.Errorf("Dial with an unknown protocol: %v", err)
	}
	// After Close, every protocol says so at once instead of retrying or naming its transport.
	for _, proto := range []string{"grpc", "connect", "json"} {
		s, err := remote.Dial(context.Background(), remote.Config{Addr: addr, Generator: "keys", Protocol: proto})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: second Close: %v", proto, err)
		}
		if _, err := s.Next(); err == nil || !strings.Contains(err.Error(), "remote: scheme closed") {
			t.Errorf("%s: Next after Close: %v", proto, err)
		}
	}
}

// TestClosedServesNothing: after Close no ID comes out of the scheme, not even one still
// waiting in the prefetch buffer, through Next or NextBatch, and a batch larger than the
// buffer fails too.
func TestClosedServesNothing(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", gens...)
	s := open(t, "remote:addr="+addr+",generator=orders,prefetch=100")
	if _, err := s.Next(); err != nil { // fills the buffer
		t.Fatal(err)
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	served := 0
	for i := range 200 {
		var err error
		if i%2 == 0 {
			_, err = s.Next()
		} else {
			err = s.(idkit.Batcher).NextBatch(make([]idkit.ID, 1+i%150))
		}
		if err == nil {
			served++
		} else if !strings.Contains(err.Error(), "remote: scheme closed") {
			t.Fatalf("call %d after Close: %v, want the scheme closed", i, err)
		}
	}
	if served > 0 {
		t.Fatalf("%d of 200 calls after Close returned IDs", served)
	}
}

// TestPrefetchAboveMaxCount: a prefetch buffer larger than what one request may ask for is
// filled a chunk of max_count at a time, with IDs in order and none repeated.
func TestPrefetchAboveMaxCount(t *testing.T) {
	addr, _ := serve(t, "127.0.0.1:0", gens...) // the server's limit: 10,000 a request
	for _, spec := range []string{
		"remote:addr=" + addr + ",generator=orders,prefetch=25000",
		"remote:addr=" + addr + ",generator=keys,prefetch=250,max_count=100",
	} {
		t.Run(spec, func(t *testing.T) {
			s := open(t, spec)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var prev idkit.ID
			for i := range 30_000 {
				id, err := s.(idkit.ContextScheme).NextContext(ctx)
				if err != nil {
					t.Fatalf("ID %d: %v", i, err)
				}
				if i > 0 && idkit.Compare(prev, id) >= 0 {
					t.Fatalf("ID %d out of order: %v then %v", i, prev, id)
				}
				prev = id
			}
		})
	}
}

// TestGRPCListener: protocol=grpc works against the service's grpc-go listener too, with
// prefetch and without.
func TestGRPCListener(t *testing.T) {
	srv, err := server.New(server.Config{Listen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", Generators: gens, ShutdownDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs, wait, err := srv.Start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })
	for _, extra := range []string{"", ",prefetch=100"} {
		s := open(t, "remote:addr="+addrs.GRPC+",generator=keys"+extra)
		var prev idkit.ID
		for i := range 300 {
			id, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && idkit.Compare(prev, id) >= 0 {
				t.Fatalf("%v after %v", id, prev)
			}
			prev = id
		}
	}
}
