package main

import (
	"encoding/json"
	"testing"
)

// TestLoadGCCycles checks that a load run counts its garbage collections: a spawned idkitd
// answering a thousand requests allocates enough for the collector, under Go's defaults, to
// run at least once.
func TestLoadGCCycles(t *testing.T) {
	r := idbench(t, "", "load", "--spawn", "--stack", "grpc-go", "--requests", "3000", "--rounds", "1", "--warmup", "0s", "--no-floor", "--json")
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	var rep loadReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, r.stdout)
	}
	if got := rep.Results[0].GCCycles; got < 1 {
		t.Errorf("%d GC cycles over 3,000 requests with a spawned idkitd", got)
	}
}
