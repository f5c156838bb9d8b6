package dbbench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/idkit/idkit/dbbench/engine"
)

// commitFlushed reports whether a run's commits waited for their log to be flushed to disk
// (durable), and whether the report says (known): synchronous_commit on PostgreSQL (every
// value but off waits for the local flush; fsync off flushes nothing), and
// innodb_flush_log_at_trx_commit on InnoDB (1 and MariaDB's 3 wait; 0 and 2 do not).
func commitFlushed(s Settings) (durable, known bool) {
	switch {
	case s.SynchronousCommit != "":
		return s.SynchronousCommit != "off" && s.Fsync != "off", true
	case s.InnoDBFlushLogAtTrxCommit != "":
		return s.InnoDBFlushLogAtTrxCommit == "1" || s.InnoDBFlushLogAtTrxCommit == "3", true
	}
	return false, false
}

// commitSetting names the setting that decides whether a commit waits for a flush, with its
// value in the run, or "" when the report has none.
func commitSetting(s Settings) string {
	switch {
	case s.SynchronousCommit != "":
		return "synchronous_commit " + s.SynchronousCommit
	case s.InnoDBFlushLogAtTrxCommit != "":
		return "innodb_flush_log_at_trx_commit " + s.InnoDBFlushLogAtTrxCommit
	}
	return ""
}

// cacheSetting names the server's page cache and its size in the run, or "".
func cacheSetting(s Settings) string {
	switch {
	case s.SharedBuffers != "":
		return "shared_buffers " + s.SharedBuffers
	case s.InnoDBBufferPoolSize != "":
		return "innodb_buffer_pool_size " + s.InnoDBBufferPoolSize
	}
	return ""
}

// serverPinned lists, after "; ", the cache and commit-flush settings the run pinned, and
// what the commit setting means; "" when the report names neither (SQLite).
func serverPinned(s Settings) string {
	var parts []string
	if c := cacheSetting(s); c != "" {
		parts = append(parts, c)
	}
	if c := commitSetting(s); c != "" {
		if durable, _ := commitFlushed(s); durable {
			c += " (a commit waits for its log to reach disk)"
		} else {
			c += " (a commit does not wait for its log to reach disk)"
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// windowRows says how many rows a window of the time query returned: the median per
// window, which follows each scheme's load rate.
func windowRows(rep *Report) string {
	lo, hi := -1.0, -1.0
	for _, r := range rep.App {
		if q := r.TimeQuery; q != nil {
			if lo < 0 || q.RowsP50 < lo {
				lo = q.RowsP50
			}
			hi = max(hi, q.RowsP50)
		}
	}
	if fmt.Sprintf("%.0f", lo) == fmt.Sprintf("%.0f", hi) {
		return fmt.Sprintf("a median of %.0f rows per window", lo)
	}
	return fmt.Sprintf("a median of %.0f to %.0f rows per window, as each scheme's load rate gave", lo, hi)
}

// parseSize reads a server setting's size ("128MB", "128M", "16384kB") as bytes.
func parseSize(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n * mult, true
}

// cacheBytes is the size of the run's page cache, if the report names it.
func cacheBytes(s Settings) (int64, bool) {
	if s.SharedBuffers != "" {
		return parseSize(s.SharedBuffers)
	}
	return parseSize(s.InnoDBBufferPoolSize)
}

// totalBytes is what every table and index of one scheme took after the last run.
func totalBytes(r AppResult) int64 {
	var n int64
	for _, s := range r.Structures {
		n += s.Bytes
	}
	return n
}

// appResult returns the result of scheme in rep.
func appResult(rep *Report, scheme string) (AppResult, bool) {
	for _, r := range rep.App {
		if r.Scheme == scheme {
			return r, true
		}
	}
	return AppResult{}, false
}

// childKey is the bytes per operation of the child table's primary key, the structure whose
// fill depends on the order keys arrive in: the clustered index (which is the table) on
// InnoDB, the primary-key index on PostgreSQL (whose heap fills in arrival order whatever
// the key).
func childKey(r AppResult) (float64, bool) {
	if v, ok := structBytes(r, "child clustered"); ok {
		return v, true
	}
	return structBytes(r, "child primary key")
}

// runsWord says how a report's figures were taken: "median of N runs" or "1 run".
func runsWord(s Settings) string {
	if s.Repeat == 1 {
		return "1 run"
	}
	return fmt.Sprintf("median of %d runs", s.Repeat)
}

// ErrAppCompare is returned by the comparison summaries when their reports cannot be
// compared: not app-workload reports, other engines, other schemes, or settings that differ
// in more than the one the comparison is about.
var ErrAppCompare = errors.New("dbbench: app reports cannot be compared")

// sameSchemes checks that every report is an app report with the schemes of the first, in
// the same order, on the same engine.
func sameSchemes(reps []*Report) error {
	if len(reps) < 2 {
		return fmt.Errorf("%w: want at least 2 reports, have %d", ErrAppCompare, len(reps))
	}
	for _, rep := range reps {
		if rep.Workload != "app" || len(rep.App) == 0 {
			return fmt.Errorf("%w: %q is not an app-workload report", ErrAppCompare, rep.Settings.Command)
		}
		if rep.Settings.Engine != reps[0].Settings.Engine || len(rep.App) != len(reps[0].App) {
			return fmt.Errorf("%w: %q and %q ran other engines or schemes", ErrAppCompare, reps[0].Settings.Command, rep.Settings.Command)
		}
		for i, r := range rep.App {
			if r.Scheme != reps[0].App[i].Scheme {
				return fmt.Errorf("%w: %q has %s where %q has %s", ErrAppCompare, rep.Settings.Command, r.Scheme, reps[0].Settings.Command, reps[0].App[i].Scheme)
			}
		}
	}
	return nil
}

// firstOrdered is the first time-ordered result of rep, the reference of the comparisons.
func firstOrdered(rep *Report) (AppResult, bool) {
	for _, r := range rep.App {
		if r.TimeOrdered {
			return r, true
		}
	}
	return AppResult{}, false
}

// WriteAppCacheSummary writes, for docs/choosing-an-id.md, how the cost of each scheme, and of
// a random key against the ordered key of its width, changes between an app-workload run whose
// tables fit the server's cache (small) and one whose tables outgrow it (large): operations/s,
// bytes and WAL/redo bytes per operation, and the time query, with both runs' commands and the
// cache and commit-flush settings they pinned. The two runs must differ in their operations
// only: the same engine, schemes, cache, commit setting and clients.
func WriteAppCacheSummary(w io.Writer, small, large *Report) error {
	if err := sameSchemes([]*Report{small, large}); err != nil {
		return err
	}
	ss, ls := small.Settings, large.Settings
	if cacheSetting(ss) != cacheSetting(ls) || commitSetting(ss) != commitSetting(ls) || ss.Clients != ls.Clients || ss.Children != ls.Children {
		return fmt.Errorf("%w: %q and %q differ in cache, commit flushing, clients or children", ErrAppCompare, ss.Command, ls.Command)
	}
	cache, cacheOK := cacheBytes(ss)
	ref, refOK := firstOrdered(small)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	rows := func(s Settings) string { return thousands(int64(s.Rows) * int64(1+s.Children)) }
	p("Small: `%s` (%s operations, %s rows, %s%s, %s). Large: `%s` (%s operations, %s rows, %s%s, %s). Both on %s, %d client(s)%s.\n\n",
		ss.Command, thousands(int64(ss.Rows)), rows(ss), runsWord(ss), appWarmup(ss), ss.Started.Format("2006-01-02"),
		ls.Command, thousands(int64(ls.Rows)), rows(ls), runsWord(ls), appWarmup(ls), ls.Started.Format("2006-01-02"),
		ss.ServerVersion, ss.Clients, serverPinned(ss))
	vs := ""
	if refOK {
		vs = " | vs " + ref.Scheme + " small | vs " + ref.Scheme + " large"
	}
	p("| scheme | key | tables + indexes MB, small → large | ops/s small | ops/s large | large ÷ small%s | B/op | WAL B/op | time query p50 µs (via) |\n", vs)
	p("|---|---|--:|--:|--:|--:|%s--:|--:|---|\n", strings.Repeat("--:|", 2*boolInt(refOK)))
	for i, r := range small.App {
		l := large.App[i]
		p("| %s | %s | %.1f → %.1f | %s | %s | %.2f× |", mdEscape(r.Scheme), mdEscape(r.KeyType),
			float64(totalBytes(r))/(1<<20), float64(totalBytes(l))/(1<<20),
			thousands(int64(r.OpsPerSec+0.5)), thousands(int64(l.OpsPerSec+0.5)), ratio(l.OpsPerSec, r.OpsPerSec))
		if refOK {
			lref, _ := appResult(large, ref.Scheme)
			p(" %.2f× | %.2f× |", ratio(r.OpsPerSec, ref.OpsPerSec), ratio(l.OpsPerSec, lref.OpsPerSec))
		}
		tq := "n/a"
		if r.TimeQuery != nil && l.TimeQuery != nil {
			tq = fmt.Sprintf("%.0f → %.0f (%s)", r.TimeQuery.Latency.P50Micros, l.TimeQuery.Latency.P50Micros, r.TimeQuery.Via)
		}
		p(" %.1f → %.1f | %.1f → %.1f | %s |\n", r.BytesPerOp, l.BytesPerOp, r.WALBytesPerOp, l.WALBytesPerOp, tq)
	}
	for i, r := range small.App {
		if orderWord(r) != "random" {
			continue
		}
		o, ok := pairOf(small, r)
		if !ok {
			continue
		}
		l := large.App[i]
		lo, _ := appResult(large, o.Scheme)
		size := func(res AppResult) string {
			mb := float64(totalBytes(res)) / (1 << 20)
			if !cacheOK {
				return fmt.Sprintf("%.1f MB", mb)
			}
			return fmt.Sprintf("%.1f MB, %.2f× the cache", mb, float64(totalBytes(res))/float64(cache))
		}
		p("\n**%s past the cache.** With %s rows %s's tables and indexes took %s, and it ran at %.2f× the operations/s of %s, the ordered key of its width; with %s rows they took %s, and it ran at %.2f× %s's. ",
			r.Scheme, rows(ss), r.Scheme, size(r), ratio(r.OpsPerSec, o.OpsPerSec), o.Scheme, rows(ls), size(l), ratio(l.OpsPerSec, lo.OpsPerSec), o.Scheme)
		p("Its bytes per operation went from %.1f to %.1f (%s: %.1f to %.1f) and its WAL/redo bytes per operation from %.1f to %.1f (%s: %.1f to %.1f). ",
			r.BytesPerOp, l.BytesPerOp, o.Scheme, o.BytesPerOp, lo.BytesPerOp, r.WALBytesPerOp, l.WALBytesPerOp, o.Scheme, o.WALBytesPerOp, lo.WALBytesPerOp)
		if r.TimeQuery != nil && l.TimeQuery != nil && o.TimeQuery != nil && lo.TimeQuery != nil {
			p("Its time query, through the %s, went from p50 %.0f µs to %.0f µs (%.2f×); %s's, through the %s, from %.0f µs to %.0f µs (%.2f×).",
				r.TimeQuery.Via, r.TimeQuery.Latency.P50Micros, l.TimeQuery.Latency.P50Micros, ratio(l.TimeQuery.Latency.P50Micros, r.TimeQuery.Latency.P50Micros),
				o.Scheme, o.TimeQuery.Via, o.TimeQuery.Latency.P50Micros, lo.TimeQuery.Latency.P50Micros, ratio(lo.TimeQuery.Latency.P50Micros, o.TimeQuery.Latency.P50Micros))
		}
		p("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteAppClientsSummary writes, for docs/choosing-an-id.md, what the number of concurrent
// clients does to each scheme in app-workload runs that differ in --clients only: operations/s,
// the bytes per operation of the child table's primary key (childKey: the structure most rows
// go to whose fill depends on the order keys arrive in), all bytes and WAL/redo bytes per
// operation, against the first scheme of the reports.
func WriteAppClientsSummary(w io.Writer, reps []*Report) error {
	if err := sameSchemes(reps); err != nil {
		return err
	}
	s0 := reps[0].Settings
	for _, rep := range reps[1:] {
		s := rep.Settings
		if cacheSetting(s) != cacheSetting(s0) || commitSetting(s) != commitSetting(s0) || s.Rows != s0.Rows || s.Children != s0.Children || s.Mode != s0.Mode || s.WarmupRows != s0.WarmupRows {
			return fmt.Errorf("%w: %q and %q differ in more than their clients", ErrAppCompare, s0.Command, s.Command)
		}
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	for _, rep := range reps {
		s := rep.Settings
		p("%d client(s): `%s` (%s%s, %s).\n\n", s.Clients, s.Command, runsWord(s), appWarmup(s), s.Started.Format("2006-01-02"))
	}
	p("All: %s, %s operations per scheme (1 parent + %s), %s mode%s.\n\n", s0.ServerVersion, thousands(int64(s0.Rows)), engine.Children(s0.Children), s0.Mode, serverPinned(s0))
	ref := reps[0].App[0]
	p("| clients | scheme | key | ops/s | vs %s | child PK B/op | vs %s | all B/op | WAL B/op |\n", ref.Scheme, ref.Scheme)
	p("|--:|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, rep := range reps {
		rf := rep.App[0]
		rc, _ := childKey(rf)
		for _, r := range rep.App {
			c, _ := childKey(r)
			p("| %d | %s | %s | %s | %.2f× | %.1f | %.2f× | %.1f | %.1f |\n", rep.Settings.Clients, mdEscape(r.Scheme), mdEscape(r.KeyType),
				thousands(int64(r.OpsPerSec+0.5)), ratio(r.OpsPerSec, rf.OpsPerSec), c, ratio(c, rc), r.BytesPerOp, r.WALBytesPerOp)
		}
	}
	p("\nChild PK: the child table's primary key, the clustered index (the table itself) on InnoDB and the primary-key index on PostgreSQL, whose heap fills in arrival order whatever the key.")
	for i, r := range reps[0].App[1:] {
		var cells []string
		for _, rep := range reps {
			c, _ := childKey(rep.App[i+1])
			rc, _ := childKey(rep.App[0])
			cells = append(cells, fmt.Sprintf("%.2f× with %d", ratio(c, rc), rep.Settings.Clients))
		}
		if i == 0 {
			p(" Child PK per operation against %s's: ", ref.Scheme)
		} else {
			p("; ")
		}
		p("%s (%s, %s) %s client(s)", r.Scheme, r.KeyType, orderWord(r), strings.Join(cells, ", "))
	}
	p(".")
	// The reference's own child PK can move with the clients too; the ratios would hide it.
	var refSizes, refClients []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, rep := range reps {
		rc, _ := childKey(rep.App[0])
		lo, hi = min(lo, rc), max(hi, rc)
		refSizes = append(refSizes, fmt.Sprintf("%.1f", rc))
		refClients = append(refClients, strconv.Itoa(rep.Settings.Clients))
	}
	if len(reps) > 1 && hi > lo*1.01 {
		p(" The reference moves too: %s's own child PK took %s B per operation with %s client(s), so each ratio is against the reference at its own client count and leaves out what the reference itself grew.",
			ref.Scheme, andList(refSizes), andList(refClients))
	}
	for _, r := range reps[0].App {
		if orderWord(r) != "random" {
			continue
		}
		o, ok := pairOf(reps[0], r)
		if !ok {
			continue
		}
		var sizes, speeds []string
		for _, rep := range reps {
			rr, _ := appResult(rep, r.Scheme)
			oo, _ := appResult(rep, o.Scheme)
			rc, _ := childKey(rr)
			oc, _ := childKey(oo)
			sizes = append(sizes, fmt.Sprintf("%.2f× with %d", ratio(rc, oc), rep.Settings.Clients))
			speeds = append(speeds, fmt.Sprintf("%.2f× with %d", ratio(rr.OpsPerSec, oo.OpsPerSec), rep.Settings.Clients))
		}
		p(" %s against %s, the ordered key of its width: child PK %s client(s); operations/s %s client(s).", r.Scheme, o.Scheme, strings.Join(sizes, ", "), strings.Join(speeds, ", "))
	}
	// The created_at index's time, where a scheme that needs it has an ordered pair of its
	// width that answers time ranges from the key (the pair differs in nothing else).
	for _, r := range reps[0].App {
		if !r.CreatedAtIndex || r.TimeOrdered {
			continue
		}
		o, ok := pairOf(reps[0], r)
		if !ok || orderWord(o) != orderWord(r) {
			continue
		}
		var times []string
		for _, rep := range reps {
			rr, _ := appResult(rep, r.Scheme)
			oo, _ := appResult(rep, o.Scheme)
			times = append(times, fmt.Sprintf("%.2f× with %d", ratio(oo.OpsPerSec, rr.OpsPerSec), rep.Settings.Clients))
		}
		p(" %s, which needs the created_at index, against %s, which answers time ranges from its key: time per operation %s client(s).", r.Scheme, o.Scheme, strings.Join(times, ", "))
	}
	p("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// andList joins words as prose does: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
