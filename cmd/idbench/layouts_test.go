package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idkit/idkit/layouts"
)

func TestLayoutsGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		golden string
	}{
		{[]string{"layouts"}, "layouts.golden"},
		{[]string{"layouts", "--json"}, "layouts_json.golden"},
		{[]string{"layouts", "--markdown"}, "layouts_markdown.golden"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", tt.args...)
			if r.err != nil || r.stderr != "" {
				t.Fatalf("err %v, stderr %q", r.err, r.stderr)
			}
			golden(t, tt.golden, r.stdout)
		})
	}
}

// TestLayoutsDoc keeps docs/layouts.md equal to "idbench layouts --markdown", which writes it;
// -update rewrites it.
func TestLayoutsDoc(t *testing.T) {
	t.Parallel()
	r := idbench(t, "", "layouts", "--markdown")
	if r.err != nil {
		t.Fatal(r.err)
	}
	path := filepath.Join("..", "..", "docs", "layouts.md")
	if *update {
		if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != r.stdout {
		t.Errorf("docs/layouts.md is out of date: run go run ./cmd/idbench layouts --markdown > docs/layouts.md")
	}
}

// TestLayoutsJSON checks the JSON against the layouts package, so the figures cannot drift
// from the library.
func TestLayoutsJSON(t *testing.T) {
	t.Parallel()
	r := idbench(t, "", "layouts", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var got []layoutJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	ps := layouts.Presets()
	if len(got) != len(ps) {
		t.Fatalf("%d layouts, want %d", len(got), len(ps))
	}
	for i, l := range ps {
		g := got[i]
		if g.Name != l.Name || g.Bits != l.Bits() || g.IDsPerSecond != l.IDsPerSecond() || g.Nodes != l.Nodes() || len(g.Fields) != len(l.Fields) {
			t.Errorf("%s: got %+v", l.Name, g)
		}
	}
	byName := map[string]layoutJSON{}
	for _, g := range got {
		byName[g.Name] = g
	}
	if tw := byName["twitter"]; tw.Bits != "41/5+5/12" || tw.IDsPerSecond != 4096000 || tw.Nodes != 1024 || tw.Epoch != "2010-11-04T01:42:54.657Z" || !tw.AlwaysFitsInt64 {
		t.Errorf("twitter: %+v", tw)
	}
	if d := byName["discord"]; d.Int64Until >= d.RunsOut || d.AlwaysFitsInt64 {
		t.Errorf("discord should stop fitting int64 before it runs out: %+v", d)
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for in, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 4096000: "4,096,000", 18446744073709551615: "18,446,744,073,709,551,615"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %q, want %q", in, got, want)
		}
	}
}
