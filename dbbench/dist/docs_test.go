package dist_test

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/dist"
)

var update = flag.Bool("update", false, "rewrite the model's generated blocks of docs/choosing-an-id.md from the committed reports")

const (
	choosingDoc = "../../docs/choosing-an-id.md"
	distEnd     = "<!-- END idbench dist -->\n"
)

// distReports are the committed model reports the guide quotes, each in a block of its own.
var distReports = []string{"docs/report-dist/dist.json", "docs/report-dist-flat/dist.json", "docs/report-dist-yugabyte/dist.json", "docs/report-dist-pebble-cockroachdb/dist.json"}

func distBegin(report string) string {
	return "<!-- BEGIN idbench dist: generated from " + report + " by `go test ./dbbench/dist -run TestChoosingAnIDDist -update`; do not edit -->\n"
}

// TestChoosingAnIDDist checks that the model's figures in docs/choosing-an-id.md are exactly
// those of the committed reports (WriteSummary of each), so none is typed by hand.
func TestChoosingAnIDDist(t *testing.T) {
	doc, err := os.ReadFile(choosingDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	changed := false
	for _, name := range distReports {
		js, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatalf("the guide quotes a report that is not committed: %v", err)
		}
		var rep dist.Report
		if err := json.Unmarshal(js, &rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep.Label != dist.Label {
			t.Errorf("%s is not labelled as a model: %q", name, rep.Label)
		}
		var want strings.Builder
		if err := dist.WriteSummary(&want, &rep); err != nil {
			t.Fatal(err)
		}
		begin := distBegin(name)
		i := strings.Index(text, begin)
		if i < 0 {
			t.Errorf("%s lacks the block of %s:\n%s", choosingDoc, name, begin)
			continue
		}
		j := strings.Index(text[i:], distEnd)
		if j < 0 {
			t.Errorf("%s: the block of %s has no end marker", choosingDoc, name)
			continue
		}
		j += i
		got := text[i+len(begin) : j]
		if got == "\n"+want.String()+"\n" {
			continue
		}
		if !*update {
			t.Errorf("the block of %s in %s differs (run go test ./dbbench/dist -run TestChoosingAnIDDist -update):\n--- got\n%s\n--- want\n%s", name, choosingDoc, got, want.String())
			continue
		}
		text = text[:i+len(begin)] + "\n" + want.String() + "\n" + text[j:]
		changed = true
	}
	if changed {
		if err := os.WriteFile(choosingDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
