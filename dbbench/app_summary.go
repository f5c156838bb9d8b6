package dbbench

import (
	"fmt"
	"io"
	"strings"

	"github.com/idkit/idkit/dbbench/engine"
)

// structBytes returns the bytes per operation of the structures of r whose role starts with
// role, and whether there is one.
func structBytes(r AppResult, role string) (float64, bool) {
	var sum float64
	found := false
	for _, s := range r.Structures {
		if strings.HasPrefix(s.Role, role) {
			sum += s.BytesPerOp
			found = true
		}
	}
	return sum, found
}

func optBytes(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

// verdict says in words what a measured ratio r (with the created_at index against
// without) makes of what: whether the index doubles it.
func verdict(r float64, what string) string {
	switch {
	case r >= 1.8:
		return "doubles " + what + ", or nearly"
	case r >= 1.25:
		return "adds to " + what + " but does not double it"
	default:
		return "adds little to " + what
	}
}

// WriteAppSummary writes an app-workload report's key figures as a compact Markdown block for
// docs/choosing-an-id.md: the command and settings, a table of bytes per operation by
// structure, WAL and throughput per scheme, and sentences, built from the figures, on what
// the foreign key and its index cost per key width and order, what the created_at index costs
// the schemes that need it, how the time query compares both ways, and whether a created_at
// index doubles the writes.
func WriteAppSummary(w io.Writer, rep *Report) error {
	s := rep.Settings
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if s.Command != "" {
		p("Command: `%s`\n\n", s.Command)
	}
	p("%s; %s operations per scheme (1 parent + %s), %s mode, %d client(s), created_at index %s%s; median of %d runs%s; %s.\n\n",
		s.ServerVersion, thousands(int64(s.Rows)), engine.Children(s.Children), s.Mode, s.Clients, s.CreatedAtIndex, serverPinned(s), s.Repeat, appWarmup(s), s.Started.Format("2006-01-02"))
	if len(rep.App) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	p("| scheme | key | ops/s | parent table B/op | parent PK B/op | created_at index B/op | child table B/op | child PK B/op | FK index B/op | all B/op | WAL B/op | time query p50 µs (via) |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	innodb := dialectOf(s.Engine).Clustered
	for _, r := range rep.App {
		pt, pk := structBytes(r, "parent table")
		ppk, ppkOK := structBytes(r, "parent primary key")
		if innodb {
			pt, pk = structBytes(r, "parent clustered")
			ppk, ppkOK = 0, false
		}
		ct, ctOK := structBytes(r, "child table")
		cpk, cpkOK := structBytes(r, "child primary key")
		if innodb {
			ct, ctOK = structBytes(r, "child clustered")
			cpk, cpkOK = 0, false
		}
		ca, caOK := structBytes(r, "parent created_at")
		fk, fkOK := structBytes(r, "child foreign-key")
		tq := "n/a"
		if r.TimeQuery != nil {
			tq = fmt.Sprintf("%.0f (%s)", r.TimeQuery.Latency.P50Micros, r.TimeQuery.Via)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s |\n", mdEscape(r.Scheme), mdEscape(r.KeyType), thousands(int64(r.OpsPerSec+0.5)),
			optBytes(pt, pk), optBytes(ppk, ppkOK), optBytes(ca, caOK), optBytes(ct, ctOK), optBytes(cpk, cpkOK), optBytes(fk, fkOK),
			r.BytesPerOp, r.WALBytesPerOp, tq)
	}
	if innodb {
		p("\nOn InnoDB the rows live in the primary key's clustered index, so the table columns hold the clustered index and there is no separate primary-key column.\n")
	}

	// Claim 2: the foreign key and its index, per key width and order.
	ref := rep.App[0]
	refFK, _ := structBytes(ref, "child foreign-key")
	p("\n**The foreign key.** Every child row carries its parent's key, and the index on child(parent_id) holds it once more. ")
	var parts []string
	for _, r := range rep.App[1:] {
		fk, ok := structBytes(r, "child foreign-key")
		if !ok || refFK == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s) %.1f B (%.2f×)", r.Scheme, r.KeyType, orderWord(r), fk, fk/refFK))
	}
	p("Per operation (%s), that index takes %.1f B with %s's %s keys; ", engine.Children(s.Children), refFK, ref.Scheme, ref.KeyType)
	p("%s.", strings.Join(parts, "; "))
	refAll := ref.BytesPerOp
	var all []string
	for _, r := range rep.App[1:] {
		all = append(all, fmt.Sprintf("%s %.2f×", r.Scheme, ratio(r.BytesPerOp, refAll)))
	}
	p(" Counting every table and index, an operation takes %.1f B with %s; relative to that: %s.\n", refAll, ref.Scheme, strings.Join(all, ", "))

	// Claim 3: the created_at index.
	p("\n**The created_at index.** ")
	var costs []string
	for _, r := range rep.App {
		ca, ok := structBytes(r, "parent created_at")
		if !ok {
			continue
		}
		costs = append(costs, fmt.Sprintf("%s %.1f B per operation (%.0f%% of its %.1f B)", r.Scheme, ca, 100*ratio(ca, r.BytesPerOp), r.BytesPerOp))
	}
	if len(costs) > 0 {
		p("It takes %s. ", strings.Join(costs, ", "))
	}
	for _, r := range rep.App {
		if !r.CreatedAtIndex || r.TimeOrdered {
			continue
		}
		o, ok := pairOf(rep, r)
		if !ok {
			continue
		}
		wr := ratio(r.WALBytesPerOp, o.WALBytesPerOp)
		tr := ratio(o.OpsPerSec, r.OpsPerSec)
		p("%s, which needs it, writes %.1f WAL/redo B per operation against %.1f for %s, which answers time ranges from a key of the same width: %.2f× the log volume at %.2f× the time per operation, so the created_at index %s",
			r.Scheme, r.WALBytesPerOp, o.WALBytesPerOp, o.Scheme, wr, tr, verdict(max(wr, tr), "the writes of a whole operation (parent and "+engine.Children(s.Children)+")"))
		if durable, known := commitFlushed(s); known && !durable {
			p(" (in log volume; the time is that of commits that did not wait for a flush, %s, and does not tell what a server that flushes each commit would show)", commitSetting(s))
		}
		p(". ")
		if orderWord(r) != orderWord(o) {
			p("The two keys differ in order too (%s's are %s, %s's %s), so these ratios also hold what %s keys cost the other indexes and tables, not the created_at index alone. ",
				r.Scheme, orderWord(r), o.Scheme, orderWord(o), orderWord(r))
		}
		ca, _ := structBytes(r, "parent created_at")
		if innodb {
			cl, _ := structBytes(r, "parent clustered")
			p("On the parent table alone it %s: the created_at index adds %.0f%% to the bytes of the parent's clustered index (the table), and each of its entries carries a copy of the %s primary key. ",
				verdict(1+ratio(ca, cl), "the bytes"), 100*ratio(ca, cl), r.KeyType)
		} else {
			ppk, _ := structBytes(r, "parent primary key")
			p("On the parent table's indexes alone it %s: the created_at index is %.2f× the size of the parent's primary key, the one index the parent would have without it. ",
				verdict(1+ratio(ca, ppk), "their bytes"), ratio(ca, ppk))
		}
	}
	var viaKey, viaTime []string
	for _, r := range rep.App {
		if q := r.TimeQuery; q != nil {
			cell := fmt.Sprintf("%s %.0f µs (%s)", r.Scheme, q.Latency.P50Micros, q.Plan)
			if q.Via == "key bounds" {
				viaKey = append(viaKey, cell)
			} else {
				viaTime = append(viaTime, cell)
			}
		}
		if q := r.TimeQueryCreatedAt; q != nil {
			viaTime = append(viaTime, fmt.Sprintf("%s %.0f µs (%s)", r.Scheme, q.Latency.P50Micros, q.Plan))
		}
	}
	if len(viaKey) > 0 || len(viaTime) > 0 {
		p("\n\n**The time query** (the parent rows of a %s window, %s), p50: through the key's bounds %s; through a created_at index %s.",
			s.Window, windowRows(rep), orNone(strings.Join(viaKey, ", ")), orNone(strings.Join(viaTime, ", ")))
	}
	var rows, edge, bad int64
	wins := 0
	for _, r := range rep.App {
		if c := r.Check; c != nil {
			rows, edge, bad, wins = rows+c.Rows, edge+c.EdgeRows, bad+c.Mismatches, wins+c.Windows
		}
	}
	if wins > 0 {
		p(" Both ways (key bounds and created_at) returned the same rows on %d tick-aligned windows of the time-ordered schemes: %s rows, %d of them within a tick of a window edge, %d unexplained.", wins, thousands(rows), edge, bad)
	}
	if bl := rep.AppBaseline; bl != nil {
		p("\n\nHarness check: %s reached %.2f× the operations/s of %s (%s ops/s) in the same run.", bl.Scheme, bl.Ratio, appBaselineWhat(s), thousands(int64(bl.OpsPerSec+0.5)))
	}
	p("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// orderWord says whether a result's keys arrive in time order.
func orderWord(r AppResult) string {
	if r.TimeOrdered || strings.Contains(r.KeyType, "identity") || strings.Contains(r.KeyType, "AUTO_INCREMENT") {
		return "ordered"
	}
	return "random"
}

// pairOf returns the first time-ordered result without a created_at index whose key has
// the same width as r's (8 bytes for bigint, 16 for uuid/BINARY(16)).
func pairOf(rep *Report, r AppResult) (AppResult, bool) {
	width := func(t string) string {
		t = strings.ToLower(t)
		if strings.HasPrefix(t, "bigint") {
			return "8"
		}
		return t
	}
	for _, o := range rep.App {
		if o.TimeOrdered && !o.CreatedAtIndex && width(o.KeyType) == width(r.KeyType) {
			return o, true
		}
	}
	return AppResult{}, false
}
