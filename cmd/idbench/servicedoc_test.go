package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
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

// TestServiceDocPacedTail holds docs/service.md's paced figures to the committed
// docs/bench/grpc-port-paced.txt (sh docs/bench/grpc-port-paced.sh 10): the medians of the
// rounds' p99 and p99.9 from send, in process (spawn) and with a CPU each (cpus), and how many
// rounds met each target.
func TestServiceDocPacedTail(t *testing.T) {
	run, err := os.ReadFile("../../docs/bench/grpc-port-paced.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	round := regexp.MustCompile(`^round \d+ (spawn|cpus): .* p50 ([0-9.]+) µs, p99 ([0-9.]+) µs, p99\.9 ([0-9.]+) µs from send`)
	type rounds struct{ p50, p99, p999 []float64 }
	got := map[string]*rounds{"spawn": {}, "cpus": {}}
	for _, line := range strings.Split(string(run), "\n") {
		m := round.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		r := got[m[1]]
		for i, dst := range []*[]float64{&r.p50, &r.p99, &r.p999} {
			v, err := strconv.ParseFloat(m[i+2], 64)
			if err != nil {
				t.Fatal(err)
			}
			*dst = append(*dst, v)
		}
	}
	median := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		if len(s) == 0 {
			t.Fatal("no rounds in docs/bench/grpc-port-paced.txt")
		}
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	under := func(v []float64, limit float64) int {
		n := 0
		for _, x := range v {
			if x < limit {
				n++
			}
		}
		return n
	}
	sp, cp := got["spawn"], got["cpus"]
	count := func(n int) string {
		if n == 0 {
			return "none"
		}
		return strconv.Itoa(n)
	}
	want := []string{
		fmt.Sprintf("medians of %s rounds p99 %.2f and %.2f ms, p99.9 %.1f and %.1f ms from send (p50 %.0f and %.0f µs)",
			numberWord(len(cp.p99)), median(sp.p99)/1000, median(cp.p99)/1000, median(sp.p999)/1000, median(cp.p999)/1000, median(sp.p50), median(cp.p50)),
		fmt.Sprintf("p99 was under 1 ms in %s of the %d rounds with a CPU each and in %s in process",
			count(under(cp.p99, 1000)), len(cp.p99), count(under(sp.p99, 1000))),
	}
	if n := under(sp.p999, 2000) + under(cp.p999, 2000); n == 0 {
		want = append(want, "the p99.9 target was met in no round")
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("docs/service.md should say %q, as docs/bench/grpc-port-paced.txt shows", w)
		}
	}
}

// numberWord spells n for prose ("ten rounds"), as docs/service.md writes small counts.
func numberWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
