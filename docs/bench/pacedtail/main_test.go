package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSpans checks merging and overlap on a table of intervals.
func TestSpans(t *testing.T) {
	s := spans{{50, 60}, {10, 20}, {15, 30}, {40, 45}}.merged()
	if want := (spans{{10, 30}, {40, 45}, {50, 60}}); len(s) != len(want) || s[0] != want[0] || s[1] != want[1] || s[2] != want[2] {
		t.Fatalf("merged %v, want %v", s, want)
	}
	for _, tt := range []struct {
		w    span
		want int64
	}{
		{span{0, 10}, 0},
		{span{0, 100}, 20 + 5 + 10},
		{span{25, 42}, 5 + 2},
		{span{44, 55}, 1 + 5},
		{span{60, 70}, 0},
	} {
		if got := s.overlap(tt.w); got != tt.want {
			t.Errorf("overlap %v = %d, want %d", tt.w, got, tt.want)
		}
	}
}

// perfLine writes one line as perf script -F comm,pid,tid,cpu,time,event,trace --ns does.
func perfLine(comm string, pid, tid, cpu int, ns int64, event, trace string) string {
	return strings.Join([]string{comm, itoa(pid) + "/" + itoa(tid), "[00" + itoa(cpu) + "]", secs(ns) + ":", event + ":", trace}, " ")
}

func itoa(n int) string { return strconv.Itoa(n) }

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

func secs(ns int64) string {
	frac := fmtInt(ns % 1e9)
	return fmtInt(ns/1e9) + "." + strings.Repeat("0", 9-len(frac)) + frac
}

// TestRun builds a small trace by hand: idkitd (pid 100, CPU 0) waits 300 µs for its CPU
// behind another process while one request is in flight, and the load generator (pid 200, CPU
// 1) collects garbage during another; the report must charge each request to its cause and
// leave a third, fast one to none.
func TestRun(t *testing.T) {
	const s = int64(1_000_000_000_000) // 1000 s on CLOCK_MONOTONIC
	us := func(n int64) int64 { return s + n*1000 }
	lines := []string{
		perfLine("idkitd", 100, 101, 0, us(0), "sched:sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=other next_pid=300 next_prio=120"),
		perfLine("other", 300, 300, 0, us(100), "sched:sched_wakeup", "comm=idkitd pid=101 prio=120 target_cpu=000"),
		perfLine("other", 300, 300, 0, us(400), "sched:sched_switch", "prev_comm=other prev_pid=300 prev_prio=120 prev_state=R ==> next_comm=idkitd next_pid=101 next_prio=120"),
		perfLine("idkitd", 100, 101, 0, us(450), "sched:sched_switch", "prev_comm=idkitd prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"),
		perfLine("idbench", 200, 201, 1, us(2000), "ptcli:cligcstart", "(431340)"),
		perfLine("idbench", 200, 201, 1, us(3500), "ptcli:cligcmarkterm", "(432660)"),
		perfLine("idbench", 200, 201, 1, us(9000), "sched:sched_switch", "prev_comm=idbench prev_pid=201 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120"),
	}
	dir := t.TempDir()
	perf := filepath.Join(dir, "perf.txt")
	timeline := filepath.Join(dir, "timeline.txt")
	if err := os.WriteFile(perf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := "# header\n" +
		fmtInt(us(0)) + " " + fmtInt(us(10)) + " " + fmtInt(us(1200)) + " 1\n" + // over 1 ms, idkitd waited
		fmtInt(us(1900)) + " " + fmtInt(us(1900)) + " " + fmtInt(us(3300)) + " 1\n" + // over 1 ms, client GC
		fmtInt(us(5000)) + " " + fmtInt(us(5000)) + " " + fmtInt(us(5100)) + " 1\n" + // fast
		fmtInt(us(6000)) + " " + fmtInt(us(6000)) + " " + fmtInt(us(6100)) + " 0\n" // failed: left out
	if err := os.WriteFile(timeline, []byte(tl), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(&out, []string{"-timeline", timeline, "-perf", perf, "-server-pid", "100", "-client-pid", "200", "-label", "t"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	row := func(name string) string {
		for _, line := range strings.Split(got, "\n") {
			if strings.HasPrefix(line, name) {
				return strings.Join(strings.Fields(line), " ")
			}
		}
		t.Fatalf("no row %q in\n%s", name, got)
		return ""
	}
	for _, tt := range []struct{ row, want string }{
		{"window overlaps", "all: 3 | > 1 ms: 2 |"},
		{"GC in load gen", "GC in load gen | 1 (33%)"},
		{"GC in idkitd", "GC in idkitd | 0 (0%)"},
		{"idkitd waits for CPU", "idkitd waits for CPU | 1 (33%)"},
		{"  … behind other processes", "… behind other processes | 1 (33%)"},
		{"none of these", "none of these | 1 (33%) | 0 (0%)"},
	} {
		if r := row(tt.row); !strings.Contains(r, tt.want) {
			t.Errorf("row %q, want it to contain %q", r, tt.want)
		}
	}
	if !strings.Contains(got, "3 requests answered") || !strings.Contains(got, "other 0.3 ms") {
		t.Errorf("report:\n%s", got)
	}
}
