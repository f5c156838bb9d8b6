package etcdlease_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
)

// TestDurabilityOfLeasedNode: a snowflake node held in etcd reports the cluster's class
// through idkit.DurabilityOf (what idkitd and idbench show), read at the claim: the test etcd
// has one member, so single, with the cluster ID as its epoch.
func TestDurabilityOfLeasedNode(t *testing.T) {
	ep := etcdtest.Endpoint(t)
	url := "etcd://" + strings.TrimPrefix(ep, "http://") + fmt.Sprintf("/idkit-test/durability/%d", time.Now().UnixNano())
	s, err := idkit.NewContext(context.Background(), "snowflake:node="+url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.(interface{ Close() error }).Close()
	ds, ok := idkit.DurabilityOf(s)
	if !ok || len(ds) != 1 {
		t.Fatalf("DurabilityOf = %v, %v", ds, ok)
	}
	d := ds[0]
	if !strings.HasPrefix(d.Store, "lease etcd ") || d.Class != "single" || !strings.HasPrefix(d.Epoch, "cluster ") {
		t.Errorf("durability %+v, want an etcd lease store of class single with the cluster ID", d)
	}
}
