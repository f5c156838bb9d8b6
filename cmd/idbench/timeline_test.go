package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// checkTimeline holds a paced measurement's timeline to its schedule: n rows, failed of
// them failures, due times spaced by spacing from the first, and each request sent no
// earlier than due and answered no earlier than sent.
func checkTimeline(t *testing.T, tl *timeline, n, failed int64, spacing time.Duration) {
	t.Helper()
	var b strings.Builder
	if err := tl.write(&b); err != nil {
		t.Fatal(err)
	}
	rows := parseTimeline(t, b.String())
	if int64(len(rows)) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	var fails int64
	for i, r := range rows {
		if r.failed {
			fails++
		}
		if want := rows[0].due + int64(i)*int64(spacing); r.due != want {
			t.Fatalf("row %d due at %d, want %d (first %d + %d × %v)", i, r.due, want, rows[0].due, i, spacing)
		}
		if r.sent < r.due || r.done < r.sent {
			t.Fatalf("row %d: due %d, sent %d, done %d", i, r.due, r.sent, r.done)
		}
	}
	if fails != failed {
		t.Errorf("%d failures in the timeline, want %d", fails, failed)
	}
}

// parseTimeline reads what timeline.write wrote, checking its header.
func parseTimeline(t *testing.T, text string) []timelineRow {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	var rows []timelineRow
	header := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			header++
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 || (f[3] != "0" && f[3] != "1") {
			t.Fatalf("timeline line %q: want due, sent, done and 0 or 1", line)
		}
		var v [3]int64
		for i := range v {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				t.Fatalf("timeline line %q: %v", line, err)
			}
			v[i] = n
		}
		rows = append(rows, timelineRow{due: v[0], sent: v[1], done: v[2], failed: f[3] == "0"})
	}
	if header != 2 || !strings.Contains(text, "# idbench load --timeline: "+strconv.Itoa(len(rows))+" paced Next requests") {
		t.Fatalf("timeline header: %d comment lines in %.200q", header, text)
	}
	return rows
}

// TestTimelineRecorder checks the recorder in isolation: rows come out in due order whatever
// order the workers record them in, two measurements merge, and a nil recorder records
// nothing.
func TestTimelineRecorder(t *testing.T) {
	tl := newTimeline()
	at := func(ns int64) time.Time { return tl.base.Add(time.Duration(ns)) }
	r := tl.recorder(2)
	r.record(1, at(200), at(250), at(900), false)
	r.record(0, at(100), at(100), at(400), true)
	r.record(1, at(300), at(300), at(301), false)
	r.add()
	r2 := tl.recorder(1)
	r2.record(0, at(150), at(160), at(170), false)
	r2.add()
	var nilRec *timelineRecorder
	nilRec.record(0, at(1), at(2), at(3), false)
	nilRec.add()
	var b strings.Builder
	if err := tl.write(&b); err != nil {
		t.Fatal(err)
	}
	got := parseTimeline(t, b.String())
	want := []timelineRow{{100, 100, 400, true}, {150, 160, 170, false}, {200, 250, 900, false}, {300, 300, 301, false}}
	if len(got) != len(want) {
		t.Fatalf("rows %+v, want %+v", got, want)
	}
	for i := range want {
		w := want[i]
		w.due, w.sent, w.done = w.due+tl.baseNS, w.sent+tl.baseNS, w.done+tl.baseNS
		if got[i] != w {
			t.Errorf("row %d: %+v, want %+v", i, got[i], w)
		}
	}
}

// TestTimelineGrows: a recorder takes memory as requests are recorded, not for the whole run
// up front (a run of --rate 10000 --duration 1h reserved 1.15 GB before its first request,
// one of --rate 1e7 --duration 100h died of it): 20,000 rows over 32 workers allocate a few
// MB, and every row is kept past the chunk size.
func TestTimelineGrows(t *testing.T) {
	tl := newTimeline()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	r := tl.recorder(32)
	const n = 20000
	for i := range n {
		due := tl.base.Add(time.Duration(i) * 100 * time.Microsecond)
		r.record(i%32, due, due, due, false)
	}
	runtime.ReadMemStats(&m1)
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 8<<20 {
		t.Errorf("recording %d rows allocated %d bytes, want at most 8 MB", n, grew)
	}
	r.add()
	var b strings.Builder
	if err := tl.write(&b); err != nil {
		t.Fatal(err)
	}
	if rows := parseTimeline(t, b.String()); len(rows) != n {
		t.Errorf("%d rows, want %d", len(rows), n)
	}
}

// TestTimelineClock checks that on Linux the timeline's times are CLOCK_MONOTONIC, the clock
// of perf record -k mono: a time.Now taken between two clock_gettime readings falls between
// them on the timeline.
func TestTimelineClock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the timeline is on CLOCK_MONOTONIC on Linux only")
	}
	tl := newTimeline()
	var before, after unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &before); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &after); err != nil {
		t.Fatal(err)
	}
	// The base pair is read between two readings of the clock, slack apart at most.
	if got := tl.ns(now); got < before.Nano()-tl.slack || got > after.Nano()+tl.slack {
		t.Errorf("time.Now at %d on the timeline (slack %d ns), outside CLOCK_MONOTONIC's %d…%d", got, tl.slack, before.Nano(), after.Nano())
	}
	if tl.slack > int64(time.Millisecond) {
		t.Errorf("base pair read %d ns apart at best of 8 tries", 2*tl.slack)
	}
}

// TestLoadTimeline runs idbench load --timeline against an in-process idkitd: the file has
// one row per measured request (warm-up and floor excluded), and --timeline without --rate
// is a usage error.
func TestLoadTimeline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "timeline.txt")
	r := idbench(t, "", "load", "--spawn", "--stack", "grpc-go", "--rate", "2000", "--requests", "90", "--rounds", "3", "--warmup", "50ms", "--clients", "2", "--json", "--timeline", path)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	var rep loadReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, r.stdout)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := parseTimeline(t, string(b))
	if next := rep.Results[0]; int64(len(rows)) != next.Sent || next.Sent != 90 {
		t.Errorf("%d rows in the timeline for %d requests sent, want 90", len(rows), next.Sent)
	}
	for i, row := range rows {
		if row.failed || row.sent < row.due || row.done < row.sent || (i > 0 && row.due < rows[i-1].due) {
			t.Fatalf("row %d %+v (previous %+v)", i, row, rows[max(i-1, 0)])
		}
	}
	if r := idbench(t, "", "load", "--spawn", "--timeline", path); r.code != 2 || !strings.Contains(r.stderr, "--timeline needs --rate") {
		t.Errorf("--timeline without --rate: exit %d, stderr %s; want 2 (usage)", r.code, r.stderr)
	}
	// A run whose rows cannot fit is refused before it starts (before the fix: an
	// out-of-memory death and a makeslice panic); one that fits is not.
	for _, tc := range []struct{ rate, duration, want string }{
		{"1e7", "100h", "the 3,600,000,000,000 requests --rate and --duration (or --requests) plan would need 115.2 TB"},
		{"1e7", "1000000h", "would need"},
		{"100000", "2h", "would need 23.0 GB"},
	} {
		r := idbench(t, "", "load", "--spawn", "--rate", tc.rate, "--duration", tc.duration, "--timeline", path)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "shorten --duration") {
			t.Errorf("--rate %s --duration %s --timeline: exit %d, stderr %s; want 2 (usage) saying %q", tc.rate, tc.duration, r.code, r.stderr, tc.want)
		}
	}
	if got := int64(unsafe.Sizeof(timelineRow{})); got != timelineRowBytes {
		t.Errorf("a timeline row holds %d bytes, timelineRowBytes says %d", got, timelineRowBytes)
	}
	if err := checkTimelineRows(newSchedule(10000, time.Hour, 0).total); err != nil {
		t.Errorf("--rate 10000 --duration 1h: %v; want it run (1.15 GB as it goes)", err)
	}
}
