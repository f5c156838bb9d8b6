package main

import (
	"fmt"
	"math"
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
		" the unpaced one on the grpc-go port and " + word("--clients 4 --stack net-http", "--rate 10000 --no-floor --stack net-http") + " it on the main port"
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

// TestServiceDocPacedTailCauses holds what docs/service.md says of where the paced tail goes
// to the committed runs: the medians lines of docs/bench/paced-tail.txt (sh
// docs/bench/paced-tail.sh) and docs/bench/paced-tail-gc.txt (sh docs/bench/paced-tail-gc.sh),
// quoted whole, with the totals tables paced-tail.txt ends with; the most requests idkitd's own Next handler took over 1 ms in any fifo round;
// and the median CPU time per request of the load generator with Go's default GC.
func TestServiceDocPacedTailCauses(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tail, gc, doc := read("docs/bench/paced-tail.txt"), read("docs/bench/paced-tail-gc.txt"), read("docs/service.md")
	flat := strings.Join(strings.Fields(doc), " ")
	var want []string
	for _, run := range []struct{ name, text, after string }{
		{"docs/bench/paced-tail.txt", tail, "Medians over the rounds (latency from send, µs):"},
		{"docs/bench/paced-tail-gc.txt", gc, "Medians over the rounds (µs from send):"},
	} {
		_, meds, ok := strings.Cut(run.text, run.after)
		if !ok {
			t.Fatalf("%s has no line %q", run.name, run.after)
		}
		meds, _, _ = strings.Cut(meds, "\nLoad average after")
		n := 0
		for _, line := range strings.Split(meds, "\n") {
			// The medians, and the totals tables that paced-tail.txt ends with, line by line.
			if strings.Contains(line, "p99.9") || strings.Contains(line, " | ") || strings.HasPrefix(line, "Totals, ") {
				want = append(want, strings.Join(strings.Fields(line), " "))
				n++
			}
		}
		if n == 0 {
			t.Fatalf("%s: no medians under %q", run.name, run.after)
		}
	}
	// The most Next requests over 1 ms in idkitd's handler in a fifo round.
	round := regexp.MustCompile(`^## round \d+ \S+ (plain|fifo)`)
	handler := regexp.MustCompile(`^idkitd's Next handler .*: ([0-9]+) requests, .* ([0-9]+) over 1 ms`)
	mode, most, total := "", -1, 0
	for _, line := range strings.Split(tail, "\n") {
		if m := round.FindStringSubmatch(line); m != nil {
			mode = m[1]
		} else if m := handler.FindStringSubmatch(line); m != nil && mode == "fifo" {
			over, _ := strconv.Atoi(m[2])
			total, _ = strconv.Atoi(m[1])
			most = max(most, over)
		}
	}
	if most < 0 {
		t.Fatal("docs/bench/paced-tail.txt: no fifo round with idkitd's handler histogram")
	}
	want = append(want, fmt.Sprintf("idkitd's own Next handler took over 1 ms for at most %d of the %s requests of a fifo round", most, thousandsInt(total)))
	// The load generator's CPU time per request with Go's default GC.
	cpuRe := regexp.MustCompile(`^round \d+ client default: .* load generator: ([0-9]+) µs CPU per request`)
	var cpu []float64
	for _, line := range strings.Split(gc, "\n") {
		if m := cpuRe.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			cpu = append(cpu, v)
		}
	}
	if len(cpu) == 0 {
		t.Fatal("docs/bench/paced-tail-gc.txt: no client default rounds")
	}
	slices.Sort(cpu)
	med := cpu[len(cpu)/2]
	if len(cpu)%2 == 0 {
		med = (cpu[len(cpu)/2-1] + cpu[len(cpu)/2]) / 2
	}
	want = append(want, fmt.Sprintf("the load generator spent a median of %.0f µs of CPU per request", med))
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("docs/service.md should say %q, as the committed runs show", w)
		}
	}
}

// thousandsInt writes n with thousands separators, as docs/service.md does.
func thousandsInt(n int) string { return thousands(uint64(max(n, 0))) }

// TestServiceDocPacedTailOnCPU holds what docs/service.md says of two rows of the fifo totals
// of docs/bench/paced-tail.txt ("idkitd on CPU ≥ 90% of it" and the load generator's late
// wake-ups) to the file: their shares of all requests, of those over 1 ms and of those over
// p99.9, and that each is more common over 1 ms than among all and within 3 points of it over
// p99.9, as the sentence says.
func TestServiceDocPacedTailOnCPU(t *testing.T) {
	run, err := os.ReadFile("../../docs/bench/paced-tail.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	_, fifo, ok := strings.Cut(string(run), "Totals, head fifo")
	if !ok {
		t.Fatal("docs/bench/paced-tail.txt has no fifo totals")
	}
	shares := func(label string) [3]int {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + ` *\| *\d+ \((\d+)%\) *\| *\d+ \((\d+)%\) *\| *\d+ \((\d+)%\)`)
		m := re.FindStringSubmatch(fifo)
		if m == nil {
			t.Fatalf("docs/bench/paced-tail.txt: no fifo totals row %q", label)
		}
		var s [3]int
		for i := range s {
			s[i], _ = strconv.Atoi(m[i+1])
		}
		return s
	}
	onCPU := shares("idkitd on CPU ≥ 90% of it")
	late := shares("load gen waits for CPU: CPU idle (late wake-up)")
	for _, s := range [][3]int{onCPU, late} {
		if s[1] <= s[0] || s[2] > s[0]+3 || s[2] < s[0]-3 {
			t.Errorf("fifo shares %v (all, > 1 ms, > p99.9) no longer fit docs/service.md's sentence", s)
		}
	}
	want := fmt.Sprintf("idkitd on its CPU through the window is more common among the requests over 1 ms than among all (%d%% against %d%%), and so is a late wake-up of the load generator's idle CPU (%d%% against %d%%); among those over p99.9 both are about as common as among all (%d%% and %d%%).",
		onCPU[1], onCPU[0], late[1], late[0], onCPU[2], late[2])
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/service.md should say %q, as docs/bench/paced-tail.txt shows", want)
	}
}

// TestServiceDocGRPCPort holds docs/service.md's figures of the port comparison to the rounds
// of docs/bench/grpc-port.txt (sh docs/bench/grpc-port.sh 5): per stack on the main port, the
// median over the rounds of its CPU per request divided by the gRPC port's in the same round,
// for this commit's binaries and the base rows; and the medians of the paced rounds' p99 and
// p99.9 from send, in ms.
func TestServiceDocGRPCPort(t *testing.T) {
	run, err := os.ReadFile("../../docs/bench/grpc-port.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	round := regexp.MustCompile(`^round (\d+) ([\w-]+)( \(base\))?: [0-9.]+ req/s, ([0-9.]+) µs CPU`)
	paced := regexp.MustCompile(`p99 ([0-9.]+) µs p99\.9 ([0-9.]+) µs from send`)
	cpu := map[string]float64{}        // "round stack base" -> CPU µs
	ratios := map[string][]float64{}   // "stack base" -> CPU ratios over the rounds
	tails := map[string][2][]float64{} // "base" or "" -> p99s, p99.9s in µs
	for _, line := range strings.Split(string(run), "\n") {
		m := round.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[4], 64)
		cpu[m[1]+" "+m[2]+m[3]] = v
		if m[2] == "grpc-port-paced-10k" {
			p := paced.FindStringSubmatch(line)
			if p == nil {
				t.Fatalf("no tail in %q", line)
			}
			p99, _ := strconv.ParseFloat(p[1], 64)
			p999, _ := strconv.ParseFloat(p[2], 64)
			tl := tails[m[3]]
			tl[0], tl[1] = append(tl[0], p99), append(tl[1], p999)
			tails[m[3]] = tl
		}
	}
	for key, v := range cpu {
		r, stack, _ := strings.Cut(key, " ")
		if base, ok := cpu[r+" grpc-port"+strings.TrimPrefix(stack, strings.Fields(stack)[0])]; ok && strings.HasPrefix(stack, "main-port-") {
			ratios[stack] = append(ratios[stack], v/base)
		}
	}
	// med returns the median, rounded half up to d decimals.
	med := func(v []float64, d int) string {
		if len(v) == 0 {
			t.Fatal("docs/bench/grpc-port.txt: no rounds")
		}
		s := slices.Clone(v)
		slices.Sort(s)
		m := s[len(s)/2]
		if len(s)%2 == 0 {
			m = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		p := math.Pow10(d)
		return strconv.FormatFloat(math.Floor(m*p+0.5)/p, 'f', d, 64)
	}
	ms := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x / 1000
		}
		return out
	}
	want := []string{
		"| gRPC, grpc-go client → main port (net/http + Connect) | 12,004 | 97.3 | 0.46 | " + med(ratios["main-port-grpc"], 2) + " |",
		"| Connect binary, connect-go client → main port | 13,209 | 89.5 | 0.507 | " + med(ratios["main-port-connect"], 2) + " |",
		"| gRPC-Web, connect-go client → main port | 11,223 | 108.6 | 0.406 | " + med(ratios["main-port-grpc-web"], 2) + " |",
		"/ " + med(ratios["main-port-grpc (base)"], 2) + " (main port gRPC), 0.42 / " + med(ratios["main-port-connect (base)"], 2) +
			" (Connect) and 0.37 / " + med(ratios["main-port-grpc-web (base)"], 2) + " (gRPC-Web)",
		fmt.Sprintf("p99 %s ms and p99.9 %s ms from send, medians of %s (9264733's: %s and %s ms)",
			med(ms(tails[""][0]), 1), med(ms(tails[""][1]), 1), numberWord(len(tails[""][0])), med(ms(tails[" (base)"][0]), 1), med(ms(tails[" (base)"][1]), 1)),
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("docs/service.md should say %q, as docs/bench/grpc-port.txt shows", w)
		}
	}
}
