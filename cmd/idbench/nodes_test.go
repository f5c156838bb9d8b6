package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
)

func TestNodesHelp(t *testing.T) {
	for _, args := range [][]string{{"nodes", "--help"}, {"help", "nodes"}} {
		r := idbench(t, "", args...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		golden(t, "help_nodes.golden", r.stdout)
	}
}

func TestNodesUsage(t *testing.T) {
	for _, args := range [][]string{{"nodes"}, {"nodes", "--store", "http://x"}, {"nodes", "--store", "etcd://a:1/x", "extra"}} {
		if r := idbench(t, "", args...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage); stderr %s", args, r.code, r.stderr)
		}
	}
}

func TestNodesEtcd(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	prefix := fmt.Sprintf("/idkit-test/nodes/%d", time.Now().UnixNano())
	url := "etcd://" + strings.TrimPrefix(ep, "http://") + prefix
	var leases []*nodeid.Lease
	for _, owner := range []string{"alpha", "beta", "gamma"} {
		s, err := etcdlease.Open(etcdlease.Settings{Endpoints: []string{ep}, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		l, err := nodeid.Hold(context.Background(), s, nodeid.LeaseSettings{Nodes: 1024, TTL: 5 * time.Second, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		leases = append(leases, l)
	}
	if err := leases[1].Marks().SaveMark(context.Background(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	leases[1].Close() // released: listed only with --all

	r := idbench(t, "", "nodes", "--store", url)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stdout, "2 slots held, 3 known") || !strings.Contains(r.stdout, "alpha") || !strings.Contains(r.stdout, "gamma") || strings.Contains(r.stdout, "beta") {
		t.Errorf("nodes:\n%s", r.stdout)
	}
	r = idbench(t, "", "nodes", "--store", url, "--all", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got []nodeSlot
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got) != 3 || got[1].Held || got[1].Owner != "beta" || got[1].Mark == nil || !got[0].Held || got[0].Expires == nil {
		t.Errorf("nodes --all --json:\n%s", r.stdout)
	}
}
