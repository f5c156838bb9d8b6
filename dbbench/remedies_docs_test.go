package dbbench_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench"
)

// remedySweeps are the committed sweeps of docs/report-remedies (made by its run.sh) that
// the guide's remedies table quotes, in the table's order.
var remedySweeps = []string{
	"docs/report-remedies/innodb-none/sweep.json",
	"docs/report-remedies/innodb-ids-in-tx/sweep.json",
	"docs/report-remedies/innodb-client-batch/sweep.json",
	"docs/report-remedies/innodb-client-block/sweep.json",
	"docs/report-remedies/innodb-client-block-1000/sweep.json",
	"docs/report-remedies/innodb-ids-per-client/sweep.json",
	"docs/report-remedies/innodb-60k-none/sweep.json",
	"docs/report-remedies/innodb-60k-client-block-1000/sweep.json",
	"docs/report-remedies/innodb-60k-ids-per-client/sweep.json",
	"docs/report-remedies/pg-none/sweep.json",
	"docs/report-remedies/pg-client-block-1000/sweep.json",
	"docs/report-remedies/pg-ids-per-client/sweep.json",
}

const remediesBegin = "<!-- BEGIN idbench remedies: generated from docs/report-remedies/*/sweep.json by `go test ./dbbench -run TestRemediesTable -update`; do not edit -->\n"

// TestRemediesTable holds the guide's remedies table (dbbench.WriteRemedies) to the committed
// remedies sweeps, so that none of its figures is typed by hand.
func TestRemediesTable(t *testing.T) {
	doc, err := os.ReadFile(choosingDoc)
	if err != nil {
		t.Fatal(err)
	}
	var sweeps []*dbbench.Sweep
	for _, f := range remedySweeps {
		s, err := dbbench.ReadSweep("../" + f)
		if err != nil {
			t.Fatalf("the guide quotes a remedies sweep that is not committed: %v", err)
		}
		sweeps = append(sweeps, s)
	}
	var want bytes.Buffer
	if err := dbbench.WriteRemedies(&want, sweeps); err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, remediesBegin)
	if i < 0 {
		t.Fatalf("%s lacks the remedies block", choosingDoc)
	}
	j := strings.Index(text[i:], figuresEnd)
	if j < 0 {
		t.Fatalf("%s: the remedies block has no end marker", choosingDoc)
	}
	j += i
	got := text[i+len(remediesBegin) : j]
	if got == "\n"+want.String()+"\n" {
		return
	}
	if !*update {
		t.Fatalf("the remedies table in %s differs from the committed sweeps (run go test ./dbbench -run TestRemediesTable -update):\n--- got\n%s\n--- want\n%s", choosingDoc, got, want.String())
	}
	text = text[:i+len(remediesBegin)] + "\n" + want.String() + "\n" + text[j:]
	if err := os.WriteFile(choosingDoc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
