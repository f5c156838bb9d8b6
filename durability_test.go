package idkit_test

import (
	"fmt"
	"testing"

	"github.com/idkit/idkit"
)

// TestDurabilityOf finds the segment scheme's durability (one entry per store) also through
// the wrapper the prefix setting puts around a registered scheme (Unwrap), and none for
// schemes without a store. A store is named by its URL, credentials redacted, as
// docs/service.md shows it (it was "store 1 PostgreSQL table idkit_segments").
func TestDurabilityOf(t *testing.T) {
	n := memSegRuns.Add(1)
	url := fmt.Sprintf("memseg://dur%d", n)
	secret := fmt.Sprintf("memseg://ids:hunter2@dur%d", n)
	s, err := idkit.New("segment:store=" + secret + ",key=c")
	if err != nil {
		t.Fatal(err)
	}
	defer s.(interface{ Close() error }).Close()
	if ds, _ := idkit.DurabilityOf(s); len(ds) != 1 || ds[0].Store != fmt.Sprintf("store 1 memseg://ids:xxxxx@dur%d", n) {
		t.Errorf("a store URL with a password: DurabilityOf = %v; want store 1 and the URL, redacted", ds)
	}
	for _, spec := range []string{"segment:store=" + url + ",key=a", "segment:store=" + url + ",key=b,prefix=ord"} {
		s, err := idkit.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		ds, ok := idkit.DurabilityOf(s)
		want := "store 1 " + url + ": unknown: the store does not report its durability"
		if !ok || len(ds) != 1 || ds[0].String() != want {
			t.Errorf("%s: DurabilityOf = %v, %v; want %q", spec, ds, ok, want)
		}
		if c, ok := s.(interface{ Close() error }); ok {
			c.Close()
		}
	}
	for _, spec := range []string{"snowflake:node=3", "ulid", "counter:prefix=c"} {
		s, err := idkit.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		if ds, ok := idkit.DurabilityOf(s); ok || ds != nil {
			t.Errorf("%s: DurabilityOf = %v, %v; want none", spec, ds, ok)
		}
	}
}

func TestDurabilityString(t *testing.T) {
	for _, tc := range []struct {
		d    idkit.Durability
		want string
	}{
		{idkit.Durability{}, "unknown"},
		{idkit.Durability{Store: "store 1 pg://db/ids", Class: "sync", Reason: "synchronous_standby_names = 's1'", Epoch: "7/2"},
			"store 1 pg://db/ids: sync: synchronous_standby_names = 's1'; epoch 7/2"},
		{idkit.Durability{Store: "store 2 redis://r", Class: "async", AsyncAccepted: true, Reason: "connected_slaves 1", Epoch: "ab12", Failovers: 3},
			"store 2 redis://r: async (accepted by durability=async: failover fencing is the only protection): connected_slaves 1; epoch ab12; failovers seen 3"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}
