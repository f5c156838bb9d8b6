package dbbench_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	"docs/report-server-side/report.json", "docs/report-nodes/report.json",
	"docs/report-innodb/report.json", "docs/report-innodb-small-pool/report.json", "docs/report-pebble-layouts/report.json",
	"docs/report-rocksdb/report.json"}

// appBlocks are the generated blocks of the guide that quote a committed app-workload report.
var appBlocks = []string{"docs/report-app/report.json", "docs/report-app-all/report.json", "docs/report-app-innodb/report.json"}

// appCacheBlocks are the generated blocks of the guide that compare an app-workload run whose
// tables fit the server's cache with one whose tables outgrow it: {small, large}.
var appCacheBlocks = [][]string{
	{"docs/report-app/report.json", "docs/report-app-large/report.json"},
	{"docs/report-app-innodb/report.json", "docs/report-app-innodb-large-r3/report.json"},
}

// appClientsBlocks are the generated blocks of the guide that compare app-workload runs that
// differ in --clients only, with commits that wait for a flush.
var appClientsBlocks = [][]string{
	{"docs/report-app-durable-c1/report.json", "docs/report-app-durable-c4/report.json", "docs/report-app-durable-c16/report.json"},
	{"docs/report-app-innodb-durable-c1/report.json", "docs/report-app-innodb-durable-c4/report.json", "docs/report-app-innodb-durable-c16/report.json"},
}

// sweepBlocks are the generated blocks of the guide that quote a committed sweep of
// concurrent clients (idbench db --clients LIST), through dbbench.WriteSweepSummary.
var sweepBlocks = []string{"docs/report-clients-app/sweep.json", "docs/report-clients-app-innodb/sweep.json",
	"docs/report-clients/sweep.json", "docs/report-clients-innodb/sweep.json", "docs/report-clients-app-innodb-large/sweep.json",
	"docs/report-clients-past-cache/sweep.json", "docs/report-clients-innodb-past-cache/sweep.json"}

// adviceBlocks are the generated blocks of the guide's opening advice (The trade-offs): per
// engine, what a committed sweep of concurrent clients says of each claim of the one-server
// advice and under which conditions (dbbench.WriteSweepAdvice).
var adviceBlocks = []string{"docs/report-clients-app-past-cache/sweep.json", "docs/report-clients-app-innodb-past-cache/sweep.json"}

// remedyBlocks are the generated blocks of the guide that compare a sweep with a remedy with
// the sweep without it (dbbench.WriteSweepRemedy): {without, with, what the remedy is}.
var remedyBlocks = [][3]string{
	{"docs/report-clients-app-innodb/sweep.json", "docs/report-clients-app-innodb-idsintx/sweep.json", "IDs made inside the transaction"},
	{"docs/report-clients-app/sweep.json", "docs/report-clients-app-idsintx/sweep.json", "IDs made inside the transaction"},
	{"docs/report-clients-app/sweep.json", "docs/report-clients-app-ff70/sweep.json", "primary keys at fillfactor 70 (default 90)"},
}

// scaleBlocks are the generated blocks of the guide that quote a committed scale report.
var scaleBlocks = []string{"docs/report-fleet/scale.json", "docs/report-fleet-synced/scale.json", "docs/report-fleet-slow/scale.json", "docs/report-size/scale.json"}

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
	var blocks []figuresBlock
	for _, report := range figuresBlocks {
		blocks = append(blocks, figuresBlock{reports: []string{report}, summary: func(reps []*dbbench.Report, w io.Writer) error {
			return dbbench.WriteSummary(w, reps[0])
		}})
	}
	for _, report := range appBlocks {
		blocks = append(blocks, figuresBlock{reports: []string{report}, summary: func(reps []*dbbench.Report, w io.Writer) error {
			return dbbench.WriteAppSummary(w, reps[0])
		}})
	}
	for _, reports := range appCacheBlocks {
		blocks = append(blocks, figuresBlock{reports: reports, summary: func(reps []*dbbench.Report, w io.Writer) error {
			return dbbench.WriteAppCacheSummary(w, reps[0], reps[1])
		}})
	}
	for _, reports := range appClientsBlocks {
		blocks = append(blocks, figuresBlock{reports: reports, summary: func(reps []*dbbench.Report, w io.Writer) error {
			return dbbench.WriteAppClientsSummary(w, reps)
		}})
	}
	for _, report := range scaleBlocks {
		blocks = append(blocks, figuresBlock{reports: []string{report}})
	}
	for _, report := range sweepBlocks {
		blocks = append(blocks, figuresBlock{reports: []string{report}, sweep: true})
	}
	for _, report := range adviceBlocks {
		blocks = append(blocks, figuresBlock{reports: []string{report}, sweep: true, advice: true})
	}
	for _, rb := range remedyBlocks {
		blocks = append(blocks, figuresBlock{reports: []string{rb[0], rb[1]}, remedy: rb[2]})
	}
	for _, blk := range blocks {
		c, err := blk.check(&text)
		if err != nil {
			t.Error(err)
		}
		changed = changed || c
	}
	if changed {
		if err := os.WriteFile(choosingDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// figuresBlock is one generated block of the guide: the committed reports it quotes and the
// summary writer that renders them; a nil summary marks a scale report (scale.json), which
// WriteScaleSummary renders.
type figuresBlock struct {
	reports []string
	summary func(reps []*dbbench.Report, w io.Writer) error
	// sweep marks a sweep of concurrent clients (sweep.json), which WriteSweepSummary renders;
	// remedy names the remedy of a pair of sweeps {without, with} (WriteSweepRemedy).
	sweep  bool
	remedy string
	// advice marks a sweep's block in the guide's opening advice (WriteSweepAdvice).
	advice bool
}

// check compares the block in *text with the summary of its reports, rewriting it under
// -update (and then reporting a change).
func (b figuresBlock) check(text *string) (changed bool, err error) {
	name := strings.Join(b.reports, " and ")
	if b.advice {
		name += " (opening advice)"
	}
	var want bytes.Buffer
	var reps []*dbbench.Report
	if b.remedy != "" {
		var ss [2]*dbbench.Sweep
		for i, report := range b.reports {
			s, err := dbbench.ReadSweep("../" + report)
			if err != nil {
				return false, fmt.Errorf("the guide quotes a sweep that is not committed: %w", err)
			}
			ss[i] = s
		}
		if err := dbbench.WriteSweepRemedy(&want, ss[0], ss[1], b.remedy); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, report := range b.reports {
		if b.remedy != "" {
			break
		}
		js, err := os.ReadFile("../" + report)
		if err != nil {
			return false, fmt.Errorf("the guide quotes a report that is not committed: %w", err)
		}
		if b.sweep {
			var s dbbench.Sweep
			if err := json.Unmarshal(js, &s); err != nil {
				return false, fmt.Errorf("%s: %w", report, err)
			}
			write := dbbench.WriteSweepSummary
			if b.advice {
				write = dbbench.WriteSweepAdvice
			}
			if err := write(&want, &s); err != nil {
				return false, fmt.Errorf("%s: %w", report, err)
			}
			continue
		}
		if b.summary == nil {
			var s dbbench.Scale
			if err := json.Unmarshal(js, &s); err != nil {
				return false, fmt.Errorf("%s: %w", report, err)
			}
			if err := dbbench.WriteScaleSummary(&want, &s); err != nil {
				return false, fmt.Errorf("%s: %w", report, err)
			}
			continue
		}
		rep := new(dbbench.Report)
		if err := json.Unmarshal(js, rep); err != nil {
			return false, fmt.Errorf("%s: %w", report, err)
		}
		reps = append(reps, rep)
	}
	if b.summary != nil && !b.sweep && b.remedy == "" {
		if err := b.summary(reps, &want); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
	}
	begin := figuresBegin(name)
	i := strings.Index(*text, begin)
	if i < 0 {
		return false, fmt.Errorf("%s lacks the figures block of %s", choosingDoc, name)
	}
	j := strings.Index((*text)[i:], figuresEnd)
	if j < 0 {
		return false, fmt.Errorf("%s: the figures block of %s has no end marker", choosingDoc, name)
	}
	j += i
	got := (*text)[i+len(begin) : j]
	if got == "\n"+want.String()+"\n" {
		return false, nil
	}
	if *update {
		*text = (*text)[:i+len(begin)] + "\n" + want.String() + "\n" + (*text)[j:]
		return true, nil
	}
	return false, fmt.Errorf("figures in %s differ from %s (run go test ./dbbench -run TestChoosingAnIDFigures -update):\n--- got\n%s\n--- want\n%s",
		choosingDoc, name, got, want.String())
}

// readmeWritersBegin opens README.md's generated summary of the sweeps of adviceBlocks.
const readmeWritersBegin = "<!-- BEGIN idbench writers: generated from the sweeps of the guide's opening advice by `go test ./dbbench -run TestReadmeWriters -update`; do not edit -->\n"

// TestReadmeWriters: README.md's summary of how many concurrent writers the one-server advice
// holds for is exactly dbbench.WriteSweepHeadline of the sweeps the guide's opening advice
// quotes (adviceBlocks), so the README says what the guide says and no figure is typed by hand.
func TestReadmeWriters(t *testing.T) {
	const readme = "../README.md"
	doc, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, report := range adviceBlocks {
		s, err := dbbench.ReadSweep("../" + report)
		if err != nil {
			t.Fatalf("README.md quotes a sweep that is not committed: %v", err)
		}
		if err := dbbench.WriteSweepHeadline(&want, s); err != nil {
			t.Fatal(err)
		}
	}
	holdBlock(t, readme, string(doc), readmeWritersBegin, want.String(), "the writers block", "go test ./dbbench -run TestReadmeWriters -update")
}

// holdBlock checks that the generated block of text (the contents of path) opening with begin
// and closing with figuresEnd holds exactly want, and rewrites path under -update; what names
// the block and regen the command that rewrites it.
func holdBlock(t *testing.T, path, text, begin, want, what, regen string) {
	t.Helper()
	i := strings.Index(text, begin)
	if i < 0 {
		t.Fatalf("%s lacks %s:\n%s", path, what, begin)
	}
	j := strings.Index(text[i:], figuresEnd)
	if j < 0 {
		t.Fatalf("%s: %s has no end marker", path, what)
	}
	j += i
	if got := text[i+len(begin) : j]; got != "\n"+want+"\n" {
		if !*update {
			t.Fatalf("%s of %s differs from what the committed reports give (run %s):\n--- got\n%s\n--- want\n%s", what, path, regen, got, want)
		}
		if err := os.WriteFile(path, []byte(text[:i+len(begin)]+"\n"+want+"\n"+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
