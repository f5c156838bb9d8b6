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

var update = flag.Bool("update", false, "rewrite the figures block of docs/choosing-an-id.md from docs/report/report.json")

const (
	choosingDoc  = "../docs/choosing-an-id.md"
	choosingJSON = "../docs/report/report.json"
	figuresBegin = "<!-- BEGIN idbench figures: generated from docs/report/report.json by `go test ./dbbench -run TestChoosingAnIDFigures -update`; do not edit -->\n"
	figuresEnd   = "<!-- END idbench figures -->\n"
)

// TestChoosingAnIDFigures checks that the figures quoted in
// docs/choosing-an-id.md are exactly those of the committed report, so no
// figure in the guide is typed by hand.
func TestChoosingAnIDFigures(t *testing.T) {
	doc, err := os.ReadFile(choosingDoc)
	if err != nil {
		t.Skipf("no guide yet: %v", err)
	}
	js, err := os.ReadFile(choosingJSON)
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
	text := string(doc)
	i := strings.Index(text, figuresBegin)
	j := strings.Index(text, figuresEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the figures markers", choosingDoc)
	}
	got := text[i+len(figuresBegin) : j]
	if got == "\n"+want.String()+"\n" {
		return
	}
	if *update {
		text = text[:i+len(figuresBegin)] + "\n" + want.String() + "\n" + text[j:]
		if err := os.WriteFile(choosingDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("figures in %s differ from %s (run go test ./dbbench -run TestChoosingAnIDFigures -update):\n--- got\n%s\n--- want\n%s",
		choosingDoc, choosingJSON, got, want.String())
}
