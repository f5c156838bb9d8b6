package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestServiceDocPacedCPU checks what docs/service.md says of the CPU time per request paced
// against unpaced against the committed docs/service/report.md (written by make load-report):
// on each stack, whether the paced figure is above or below the unpaced one.
func TestServiceDocPacedCPU(t *testing.T) {
	report, err := os.ReadFile("../../docs/service/report.md")
	if err != nil {
		t.Skipf("no service report: %v", err)
	}
	doc, err := os.ReadFile("../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	// The CPU time per request of Next in each run, by the run's command.
	cpu := map[string]float64{}
	head := regexp.MustCompile("^#### `(idbench load [^`]*)`$")
	next := regexp.MustCompile(`^CPU time per request.*: next ([0-9.]+) µs`)
	var cmd string
	for _, line := range strings.Split(string(report), "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			cmd = m[1]
		} else if m := next.FindStringSubmatch(line); m != nil && cmd != "" {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			cpu[cmd] = v
		}
	}
	const base = "idbench load --spawn --markdown --duration 12s "
	word := func(unpaced, paced string) string {
		u, ok1 := cpu[base+unpaced]
		p, ok2 := cpu[base+paced]
		if !ok1 || !ok2 {
			t.Fatalf("docs/service/report.md lacks the runs %q and %q", base+unpaced, base+paced)
		}
		if p > u {
			return "above"
		}
		return "below"
	}
	want := "the paced figure is " + word("--clients 4 --stack grpc-go", "--rate 10000 --no-floor --stack grpc-go") +
		" the unpaced one on the grpc-go port and " + word("--clients 4", "--rate 10000 --no-floor") + " it on the main port"
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/service.md should say %q, as docs/service/report.md shows", want)
	}
}
