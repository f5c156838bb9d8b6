package main

import (
	"encoding/json"
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// TestQuietGC checks when idbench load turns its garbage collector off under loadGCLimit:
// against --addr with neither GOGC nor GOMEMLIMIT set, and never with --spawn (the
// collector is idkitd's too) or when the environment sets either; restore puts back the
// settings from before.
func TestQuietGC(t *testing.T) {
	for _, tt := range []struct {
		name  string
		c     loadConfig
		env   map[string]string
		quiet bool
	}{
		{"addr", loadConfig{addr: "127.0.0.1:1"}, nil, true},
		{"spawn", loadConfig{spawn: true}, nil, false},
		{"GOGC set", loadConfig{addr: "127.0.0.1:1"}, map[string]string{"GOGC": "200"}, false},
		{"GOMEMLIMIT set", loadConfig{addr: "127.0.0.1:1"}, map[string]string{"GOMEMLIMIT": "2GiB"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
			defer func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) }()
			restore, note := quietGC(tt.c, func(k string) string { return tt.env[k] })
			gotPercent, gotLimit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
			debug.SetGCPercent(gotPercent) // put back what quietGC set, for restore to undo
			if tt.quiet {
				if gotPercent != -1 || gotLimit != loadGCLimit || !strings.Contains(note, "garbage collector off under a 1024 MiB soft memory limit") {
					t.Errorf("GC percent %d, memory limit %d, note %q; want -1, %d and a note", gotPercent, gotLimit, note, loadGCLimit)
				}
			} else if gotPercent != 100 || gotLimit != math.MaxInt64 || note != "" {
				t.Errorf("GC percent %d, memory limit %d, note %q; want them untouched (100, no limit) and no note", gotPercent, gotLimit, note)
			}
			restore()
			if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
				t.Errorf("after restore: GC percent %d, memory limit %d; want 100 and no limit", p, l)
			}
		})
	}
}

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
	for _, n := range rep.Notes {
		if strings.Contains(n, "garbage collector off") {
			t.Errorf("note %q with --spawn", n)
		}
	}
}
