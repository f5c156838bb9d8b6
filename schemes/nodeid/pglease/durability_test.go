package pglease_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
)

// TestDurabilityOfLeasedNode: a snowflake node held in a pglease store reports the store's
// class through idkit.DurabilityOf (what idkitd and idbench show): pgtest's cluster has no
// standby, so single, with the server's epoch.
func TestDurabilityOfLeasedNode(t *testing.T) {
	s, err := idkit.NewContext(context.Background(), "snowflake:node="+storeURL(t, pgtest.Schema(t), "durability"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.(interface{ Close() error }).Close()
	ds, ok := idkit.DurabilityOf(s)
	if !ok || len(ds) != 1 {
		t.Fatalf("DurabilityOf = %v, %v", ds, ok)
	}
	d := ds[0]
	if !strings.HasPrefix(d.Store, "lease ") || d.Class != "single" || d.Epoch == "" || d.AsyncAccepted {
		t.Errorf("durability %+v, want a lease store of class single with an epoch", d)
	}
}
