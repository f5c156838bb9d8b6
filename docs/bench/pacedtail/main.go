// Command pacedtail lays the slow requests of a paced idbench load run beside a perf trace of
// the same seconds and says what each one coincided with: a garbage collection in idkitd or
// in the load generator, a thread of either waiting for a CPU (and what ran on that CPU
// instead), or either process busy on its CPU throughout. docs/bench/paced-tail.sh records
// the inputs and runs it; docs/bench/paced-tail.txt is its output.
//
// Inputs: the load generator's --timeline (due, send and answer times of every request on
// CLOCK_MONOTONIC), and `perf script -F comm,pid,tid,cpu,time,event,trace --ns` of a
// `perf record -k mono -a` that took sched:sched_switch, sched:sched_wakeup and uprobes on
// runtime.gcStart and runtime.gcMarkTermination in both binaries (GROUP:gcstart and
// GROUP:gcmarkterm, the group named by -server-probe and -client-probe).
//
// A request's window is from its send to its answer (the latency the target is set on). For
// each kind of event the report counts the requests whose window overlaps it by at least
// -min (100 µs), among the slow ones and among all, so that a cause shows as a share of the
// slow requests well above its share of all requests.
package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pacedtail:", err)
		os.Exit(1)
	}
}

// span is a half-open interval of CLOCK_MONOTONIC nanoseconds.
type span struct{ from, to int64 }

// spans is a set of intervals sorted by start, not overlapping once merged.
type spans []span

// merged returns s sorted and with overlapping intervals joined.
func (s spans) merged() spans {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var out spans
	for _, x := range s {
		if n := len(out); n > 0 && x.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, x.to)
			continue
		}
		out = append(out, x)
	}
	return out
}

// overlap returns how much of w the merged set s covers.
func (s spans) overlap(w span) int64 {
	i, _ := slices.BinarySearchFunc(s, w.from, func(x span, t int64) int { return cmp.Compare(x.to, t) })
	var sum int64
	for ; i < len(s) && s[i].from < w.to; i++ {
		sum += max(0, min(s[i].to, w.to)-max(s[i].from, w.from))
	}
	return sum
}

// who classifies a task: the server, the client, idle or another process.
type who int

const (
	whoServer who = iota
	whoClient
	whoIdle
	whoOther
)

// machine is what the perf trace says about the two processes.
type machine struct {
	gc      [2][]span   // GC cycles (gcStart to gcMarkTermination) of the server and the client
	wait    [2]spans    // times a thread of the process was runnable and its CPU ran another process or nothing
	waitBy  [2][4]spans // wait, by what the CPU ran meanwhile (whoServer … whoOther)
	running [2]spans    // times a thread of the process was on a CPU
	others  map[string]int64
}

type event struct {
	ts        int64
	cpu       int
	pid, tid  int
	name      string
	fields    map[string]string
	gcProbeOf int // -1, or the process whose probe fired
}

func parseTime(s string) (int64, error) {
	sec, frac, ok := strings.Cut(strings.TrimSuffix(s, ":"), ".")
	if !ok || len(frac) != 9 {
		return 0, fmt.Errorf("time %q: want seconds with nanoseconds (perf script --ns)", s)
	}
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, err
	}
	b, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	return a*1e9 + b, nil
}

// parsePerf reads perf script's lines: "COMM PID/TID [CPU] SEC.NSEC: EVENT: FIELDS". COMM may
// hold spaces, so the line is read from the PID/TID field on.
func parsePerf(r io.Reader, probes [2]string) ([]event, error) {
	var evs []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		k := slices.IndexFunc(f, func(s string) bool { return strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") })
		if k < 1 || len(f) < k+3 {
			continue
		}
		p, t, ok := strings.Cut(f[k-1], "/")
		if !ok {
			continue
		}
		pid, err1 := strconv.Atoi(p)
		tid, err2 := strconv.Atoi(t)
		cpu, err3 := strconv.Atoi(strings.Trim(f[k], "[]"))
		ts, err4 := parseTime(f[k+1])
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("perf line %q: %w", sc.Text(), err)
		}
		e := event{ts: ts, cpu: cpu, pid: pid, tid: tid, name: strings.TrimSuffix(f[k+2], ":"), gcProbeOf: -1}
		for i, g := range probes {
			if strings.HasPrefix(e.name, g+":") {
				e.gcProbeOf = i
			}
		}
		if e.gcProbeOf < 0 {
			e.fields = map[string]string{}
			for _, kv := range f[k+3:] {
				if a, b, ok := strings.Cut(kv, "="); ok {
					e.fields[a] = b
				}
			}
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

// build reconstructs the threads' states from the events.
func build(evs []event, pids [2]int) (*machine, error) {
	tgid := map[int]int{0: 0}
	for _, e := range evs {
		tgid[e.tid] = e.pid
	}
	class := func(tid int) who {
		switch g, ok := tgid[tid]; {
		case tid == 0:
			return whoIdle
		case ok && g == pids[0]:
			return whoServer
		case ok && g == pids[1]:
			return whoClient
		}
		return whoOther
	}
	m := &machine{others: map[string]int64{}}
	gcStart := [2]int64{-1, -1}
	runnable := map[int]int64{} // tid → since when it waits for a CPU
	type waitOn struct {
		s   span
		cpu int
	}
	var waits [2][]waitOn
	type onCPU struct {
		tid   int
		comm  string
		since int64
	}
	cur := map[int]onCPU{}
	var cpuRuns []struct {
		cpu  int
		s    span
		w    who
		comm string
	}
	var first int64 = -1
	for _, e := range evs {
		if first < 0 {
			first = e.ts
		}
		if i := e.gcProbeOf; i >= 0 {
			switch {
			case strings.HasSuffix(e.name, "gcstart"):
				gcStart[i] = e.ts
			case strings.HasSuffix(e.name, "gcmarkterm") && gcStart[i] >= 0:
				m.gc[i] = append(m.gc[i], span{gcStart[i], e.ts})
				gcStart[i] = -1
			}
			continue
		}
		switch e.name {
		case "sched:sched_wakeup", "sched:sched_waking":
			tid, err := strconv.Atoi(e.fields["pid"])
			if err != nil {
				return nil, fmt.Errorf("%s: pid %q", e.name, e.fields["pid"])
			}
			if _, ok := runnable[tid]; !ok {
				runnable[tid] = e.ts
			}
		case "sched:sched_switch":
			prev, err1 := strconv.Atoi(e.fields["prev_pid"])
			next, err2 := strconv.Atoi(e.fields["next_pid"])
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("sched_switch: %w", err)
			}
			if c, ok := cur[e.cpu]; ok {
				cpuRuns = append(cpuRuns, struct {
					cpu  int
					s    span
					w    who
					comm string
				}{e.cpu, span{c.since, e.ts}, class(c.tid), c.comm})
			}
			if strings.HasPrefix(e.fields["prev_state"], "R") && prev != 0 {
				runnable[prev] = e.ts // preempted: it waits for a CPU again
			} else {
				delete(runnable, prev)
			}
			if since, ok := runnable[next]; ok {
				if w := class(next); w == whoServer || w == whoClient {
					waits[w] = append(waits[w], waitOn{span{since, e.ts}, e.cpu})
				}
				delete(runnable, next)
			}
			cur[e.cpu] = onCPU{tid: next, comm: e.fields["next_comm"], since: e.ts}
		}
	}
	if first < 0 {
		return nil, errors.New("no events in the perf trace")
	}
	// What ran on each CPU while a thread of the pair waited: the waits are attributed to
	// the CPU's tasks in the same instants.
	byCPU := map[int][]struct {
		s    span
		w    who
		comm string
	}{}
	for _, r := range cpuRuns {
		byCPU[r.cpu] = append(byCPU[r.cpu], struct {
			s    span
			w    who
			comm string
		}{r.s, r.w, r.comm})
		if r.w == whoServer || r.w == whoClient {
			m.running[r.w] = append(m.running[r.w], r.s)
		}
	}
	for i := range waits {
		m.running[i] = m.running[i].merged()
		// A wait is charged to whatever ran on the CPU the thread then ran on, over the same
		// instants: another process, the other of the pair, or nothing (the CPU idle: the
		// wake-up itself was late). Instants when another thread of the same process ran
		// are not a wait of the process.
		for _, w := range waits[i] {
			runs := byCPU[w.cpu]
			j, _ := slices.BinarySearchFunc(runs, w.s.from, func(x struct {
				s    span
				w    who
				comm string
			}, t int64) int {
				return cmp.Compare(x.s.to, t)
			})
			for ; j < len(runs) && runs[j].s.from < w.s.to; j++ {
				o := span{max(runs[j].s.from, w.s.from), min(runs[j].s.to, w.s.to)}
				if o.to <= o.from || runs[j].w == who(i) {
					continue
				}
				m.waitBy[i][runs[j].w] = append(m.waitBy[i][runs[j].w], o)
				m.wait[i] = append(m.wait[i], o)
				if runs[j].w == whoOther {
					m.others[runs[j].comm] += o.to - o.from
				}
			}
		}
		m.wait[i] = m.wait[i].merged()
		for k := range m.waitBy[i] {
			m.waitBy[i][k] = m.waitBy[i][k].merged()
		}
	}
	return m, nil
}

// request is one line of the timeline.
type request struct {
	due, sent, done int64
}

func readTimeline(r io.Reader) ([]request, error) {
	var out []request
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("timeline line %q", line)
		}
		if f[3] != "1" {
			continue // a failed request has no latency
		}
		var v [3]int64
		for i := range v {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("timeline line %q: %w", line, err)
			}
			v[i] = n
		}
		out = append(out, request{v[0], v[1], v[2]})
	}
	return out, sc.Err()
}

func run(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("pacedtail", flag.ContinueOnError)
	tlPath := fs.String("timeline", "", "idbench load --timeline file")
	perfPath := fs.String("perf", "", "perf script output")
	srvPID := fs.Int("server-pid", 0, "idkitd's process id (the load generator's with --spawn)")
	cliPID := fs.Int("client-pid", 0, "the load generator's process id")
	srvProbe := fs.String("server-probe", "ptsrv", "perf probe group of idkitd's GC uprobes")
	cliProbe := fs.String("client-probe", "ptcli", "perf probe group of the load generator's GC uprobes")
	minOverlap := fs.Duration("min", 100*time.Microsecond, "overlap that counts as coinciding")
	label := fs.String("label", "", "name of the run in the report")
	note := fs.String("note", "", "a line to print under the summary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tf, err := os.Open(*tlPath)
	if err != nil {
		return err
	}
	defer tf.Close()
	reqs, err := readTimeline(tf)
	if err != nil {
		return err
	}
	pf, err := os.Open(*perfPath)
	if err != nil {
		return err
	}
	defer pf.Close()
	evs, err := parsePerf(pf, [2]string{*srvProbe, *cliProbe})
	if err != nil {
		return err
	}
	m, err := build(evs, [2]int{*srvPID, *cliPID})
	if err != nil {
		return err
	}
	if len(reqs) == 0 {
		return errors.New("no answered request in the timeline")
	}
	// Only requests inside the perf trace count.
	lat := make([]int64, len(reqs))
	for i, r := range reqs {
		lat[i] = r.done - r.sent
	}
	sorted := slices.Sorted(slices.Values(lat))
	q := func(p float64) int64 { return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))] }
	p50, p99, p999 := q(0.50), q(0.99), q(0.999)
	fmt.Fprintf(w, "## %s\n", *label)
	fmt.Fprintf(w, "%d requests answered; from send p50 %d µs, p99 %d µs, p99.9 %d µs, max %d µs\n",
		len(reqs), p50/1e3, p99/1e3, p999/1e3, sorted[len(sorted)-1]/1e3)
	lagOver := 0
	for _, r := range reqs {
		if r.sent-r.due > int64(time.Millisecond) {
			lagOver++
		}
	}
	if *note != "" {
		fmt.Fprintln(w, *note)
	}
	fmt.Fprintf(w, "send lag over 1 ms (sent late after its due time; not in the latency from send): %d requests\n", lagOver)
	for i, name := range []string{"idkitd", "load generator"} {
		var gcTime int64
		for _, g := range m.gc[i] {
			gcTime += g.to - g.from
		}
		fmt.Fprintf(w, "%s: %d GC cycles (gcStart to gcMarkTermination) taking %.1f%% of the time; threads waiting for a CPU %.1f%% of the time\n",
			name, len(m.gc[i]), 100*float64(gcTime)/float64(reqs[len(reqs)-1].done-reqs[0].sent), 100*float64(total(m.wait[i]))/float64(reqs[len(reqs)-1].done-reqs[0].sent))
	}
	gc := [2]spans{spans(m.gc[0]).merged(), spans(m.gc[1]).merged()}
	type col struct {
		name string
		s    spans
	}
	cols := []col{
		{"GC in idkitd", gc[0]},
		{"GC in load gen", gc[1]},
		{"idkitd waits for CPU", m.wait[0]},
		{"  … behind other processes", m.waitBy[0][whoOther]},
		{"  … behind the load gen", m.waitBy[0][whoClient]},
		{"  … CPU idle (late wake-up)", m.waitBy[0][whoIdle]},
		{"load gen waits for CPU", m.wait[1]},
		{"  … behind other processes", m.waitBy[1][whoOther]},
		{"  … behind idkitd", m.waitBy[1][whoServer]},
		{"  … CPU idle (late wake-up)", m.waitBy[1][whoIdle]},
		{"idkitd on CPU ≥ 90% of it", nil},
		{"load gen on CPU ≥ 90% of it", nil},
	}
	groups := []struct {
		name string
		keep func(int64) bool
	}{
		{"all", func(int64) bool { return true }},
		{fmt.Sprintf("> 1 ms"), func(l int64) bool { return l > int64(time.Millisecond) }},
		{fmt.Sprintf("> p99.9 (%d µs)", p999/1e3), func(l int64) bool { return l > p999 }},
	}
	fmt.Fprintf(w, "\nrequests whose send-to-answer window overlaps each kind of event by ≥ %v (share of overlap time in the windows' total in brackets)\n", *minOverlap)
	fmt.Fprintf(w, "%-30s", "window overlaps")
	for _, g := range groups {
		n := 0
		for _, l := range lat {
			if g.keep(l) {
				n++
			}
		}
		fmt.Fprintf(w, " | %-24s", fmt.Sprintf("%s: %d", g.name, n))
	}
	fmt.Fprintln(w)
	none := make([]int, len(groups))
	explained := make([][]bool, len(groups))
	for gi := range groups {
		explained[gi] = make([]bool, len(reqs))
	}
	for ci, c := range cols {
		fmt.Fprintf(w, "%-30s", c.name)
		for gi, g := range groups {
			n, cnt := 0, 0
			var ov, tot int64
			for i, r := range reqs {
				if !g.keep(lat[i]) {
					continue
				}
				cnt++
				win := span{r.sent, r.done}
				var o int64
				switch ci {
				case 10, 11:
					o = m.running[ci-10].overlap(win)
					if float64(o) < 0.9*float64(win.to-win.from) {
						o = 0
					}
				default:
					o = c.s.overlap(win)
				}
				ov += o
				tot += win.to - win.from
				if o >= int64(*minOverlap) || (ci >= 10 && o > 0) {
					n++
					if !strings.HasPrefix(c.name, "  ") {
						explained[gi][i] = true
					}
				}
			}
			fmt.Fprintf(w, " | %-24s", fmt.Sprintf("%d (%.0f%%) [%.0f%%]", n, pct(n, cnt), 100*float64(ov)/float64(max(tot, 1))))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-30s", "none of these")
	for gi, g := range groups {
		cnt := 0
		for i := range reqs {
			if g.keep(lat[i]) {
				cnt++
				if !explained[gi][i] {
					none[gi]++
				}
			}
		}
		fmt.Fprintf(w, " | %-24s", fmt.Sprintf("%d (%.0f%%)", none[gi], pct(none[gi], cnt)))
	}
	fmt.Fprintln(w)
	type kv struct {
		k string
		v int64
	}
	var top []kv
	for k, v := range m.others {
		top = append(top, kv{k, v})
	}
	slices.SortFunc(top, func(a, b kv) int { return cmp.Compare(b.v, a.v) })
	var parts []string
	for _, t := range top[:min(len(top), 6)] {
		parts = append(parts, fmt.Sprintf("%s %.1f ms", t.k, float64(t.v)/1e6))
	}
	fmt.Fprintf(w, "other processes on the CPU while idkitd or the load generator waited: %s\n\n", strings.Join(parts, ", "))
	return nil
}

func total(s spans) int64 {
	var t int64
	for _, x := range s {
		t += x.to - x.from
	}
	return t
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }
