package dbbench_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
)

var update = flag.Bool("update", false, "rewrite the generated figures blocks of docs/choosing-an-id.md from the committed reports")

const (
	choosingDoc = "../docs/choosing-an-id.md"
	figuresEnd  = "<!-- END idbench figures -->\n"
)

// figuresBlocks are the generated blocks of the guide, each from one committed report.
var figuresBlocks = []string{"docs/report/report.json", "docs/report-small-cache/report.json", "docs/report-checkpoints/report.json",
	"docs/report-innodb/report.json", "docs/report-innodb-small-pool/report.json"}

func figuresBegin(report string) string {
	return "<!-- BEGIN idbench figures: generated from " + report + " by `go test ./dbbench -run TestChoosingAnIDFigures -update`; do not edit -->\n"
}

// TestChoosingAnIDFigures checks that the figures quoted in
// docs/choosing-an-id.md are exactly those of the committed reports, so no
// figure in the guide is typed by hand.
func TestChoosingAnIDFigures(t *testing.T) {
	doc, err := os.ReadFile(choosingDoc)
	if err != nil {
		t.Skipf("no guide yet: %v", err)
	}
	text := string(doc)
	changed := false
	for _, report := range figuresBlocks {
		js, err := os.ReadFile("../" + report)
		if err != nil {
			t.Fatalf("the guide quotes a report that is not committed: %v", err)
		}
		var rep dbbench.Report
		if err := json.Unmarshal(js, &rep); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := dbbench.WriteSummary(&want, &rep); err != nil {
			t.Fatal(err)
		}
		begin := figuresBegin(report)
		i := strings.Index(text, begin)
		if i < 0 {
			t.Errorf("%s lacks the figures block of %s", choosingDoc, report)
			continue
		}
		j := strings.Index(text[i:], figuresEnd)
		if j < 0 {
			t.Errorf("%s: the figures block of %s has no end marker", choosingDoc, report)
			continue
		}
		j += i
		got := text[i+len(begin) : j]
		if got == "\n"+want.String()+"\n" {
			continue
		}
		if *update {
			text = text[:i+len(begin)] + "\n" + want.String() + "\n" + text[j:]
			changed = true
			continue
		}
		t.Errorf("figures in %s differ from %s (run go test ./dbbench -run TestChoosingAnIDFigures -update):\n--- got\n%s\n--- want\n%s",
			choosingDoc, report, got, want.String())
	}
	if changed {
		if err := os.WriteFile(choosingDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
