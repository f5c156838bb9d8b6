package etcdlease_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	"github.com/idkit/idkit/schemes/nodeid/internal/proctest"
	"github.com/idkit/idkit/schemes/nodeid/internal/storetest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.Run(m)) }

// target gives each check its own prefix on the shared test etcd.
func target(t *testing.T) storetest.Target {
	ep := etcdtest.Endpoint(t)
	prefix := fmt.Sprintf("/idkit-test/%s/%d", t.Name(), time.Now().UnixNano())
	host := strings.TrimPrefix(ep, "http://")
	return storetest.Target{
		Network: "tcp", Address: host, TTL: 2 * time.Second,
		Open: func(t *testing.T, via string) nodeid.Store {
			e := ep
			if via != "" {
				e = "http://" + via
			}
			s, err := etcdlease.Open(etcdlease.Settings{Endpoints: []string{e}, Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

func TestStore(t *testing.T) { storetest.Run(t, target) }

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in        string
		endpoints string
		prefix    string
		err       bool
	}{
		{in: "etcd://127.0.0.1:2379/idkit/orders", endpoints: "http://127.0.0.1:2379", prefix: "/idkit/orders"},
		{in: "etcd://a:1,b:2/x/", endpoints: "http://a:1 http://b:2", prefix: "/x"},
		{in: "etcd://a:1+[::1]:2/x/y", endpoints: "http://a:1 http://[::1]:2", prefix: "/x/y"},
		{in: "etcd://a:1", endpoints: "http://a:1", prefix: ""},
		{in: "etcd://a:1/", endpoints: "http://a:1", prefix: ""},
		{in: "etcd://a/x", err: true},
		{in: "etcd://a:0/x", err: true},
		{in: "etcd://a:1/x//y", err: true},
		{in: "http://a:1/x", err: true},
		{in: "etcd:///x", err: true},
		{in: "etcd://a:1/x?y=1", err: true},
		{in: "etcd://u:p@a:1/x", err: true},
		{in: "etcd://a:1,,b:2/x", err: true},
		// A query is refused whole, whatever it holds.
		{in: "etcd://a:1/x?prefix=a&prefix=b", err: true},
		{in: "etcd://a:1/x?y=1;z=2", err: true},
		{in: "etcd://a:1/x?y=%zz", err: true},
	} {
		s, err := etcdlease.ParseURL(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseURL(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if got := strings.Join(s.Endpoints, " "); got != tc.endpoints || s.Prefix != tc.prefix {
			t.Errorf("ParseURL(%q) = %q %q, want %q %q", tc.in, got, s.Prefix, tc.endpoints, tc.prefix)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"etcd://127.0.0.1:2379/idkit/orders", "etcd://a:1,b:2/x/", "etcd://a:1", "http://a:1/x", "etcd:///x", "etcd://a:1/x?y=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := etcdlease.ParseURL(in)
		if err != nil {
			return
		}
		if len(s.Endpoints) == 0 {
			t.Fatalf("ParseURL(%q) succeeded without endpoints", in)
		}
		for _, e := range s.Endpoints {
			if !strings.HasPrefix(e, "http://") || len(e) == len("http://") {
				t.Fatalf("ParseURL(%q): bad endpoint %q", in, e)
			}
		}
	})
}

func TestFleet(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	proctest.Fleet(t, "etcd://"+strings.TrimPrefix(ep, "http://")+fmt.Sprintf("/idkit-test/fleet/%d", time.Now().UnixNano()), 2*time.Second)
}

// TestEtcdDown kills the etcd server under a running generator and starts it again.
func TestEtcdDown(t *testing.T) {
	srv := etcdtest.Start(t)
	tg := storetest.Target{
		Network: "tcp", Address: srv.HostPort(), TTL: 2 * time.Second,
		Open: func(t *testing.T, via string) nodeid.Store {
			s, err := etcdlease.Open(etcdlease.Settings{Endpoints: []string{srv.URL()}, Prefix: "/idkit-test/down"})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	storetest.Outage(t, tg, srv.Stop, func() {
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
	})
}
