package dbbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idkit/idkit/dbbench/engine"
)

// appHeader is the settings lines of an app-workload report.
func appHeader(p func(string, ...any), s Settings) {
	p("engine %s, %s\n", s.Engine, s.ServerVersion)
	p("operations %d per scheme (1 parent + %s each), mode %s, clients %d, created_at index %s, time window %s, median of %d runs%s\n",
		s.Rows, engine.Children(s.Children), s.Mode, s.Clients, s.CreatedAtIndex, s.Window, s.Repeat, appWarmup(s))
}

// appWarmup says whether an app-workload report's loads had a warm-up: ", after a discarded
// N-operation warm-up per scheme", or ", no warm-up" (--warmup -1, and every report made
// before the app workload had warm-ups, when it ignored --warmup: their warmup_rows is 0). It
// is said even when there was none, since the same command now warms up by default.
func appWarmup(s Settings) string {
	if s.WarmupRows <= 0 {
		return ", no warm-up"
	}
	return fmt.Sprintf(", after a discarded %s-operation warm-up per scheme", thousands(int64(s.WarmupRows)))
}

// childRows is "1 child row" or "n child rows".
func childRows(n int) string {
	if n == 1 {
		return "1 child row"
	}
	return fmt.Sprintf("%d child rows", n)
}

// timeCell is a time query's p50/p99 and plan, or n/a.
func timeCell(q *TimeQuery) (lat, plan string) {
	if q == nil || q.Latency.Count == 0 {
		return "n/a", "n/a"
	}
	return fmt.Sprintf("%.0f / %.0f", q.Latency.P50Micros, q.Latency.P99Micros), q.Via + ": " + q.Plan
}

func checkCell(c *TimeCheck) string {
	if c == nil {
		return "n/a (no time order)"
	}
	if c.Mismatches > 0 {
		return fmt.Sprintf("MISMATCH: %d of %d rows", c.Mismatches, c.Rows)
	}
	return fmt.Sprintf("same rows (%d rows, %d windows, %d at an edge)", c.Rows, c.Windows, c.EdgeRows)
}

// writeAppTable is WriteTable for WorkloadApp.
func writeAppTable(w io.Writer, rep *Report) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	appHeader(p, rep.Settings)
	p("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scheme\tlabel\tkey\tops/s\tB/op\tWAL B/op\ttime query p50/p99 µs\tplan\tcreated_at p50/p99 µs\tparent+children p50/p99 µs\tboth ways")
	for _, r := range rep.App {
		lat, plan := timeCell(r.TimeQuery)
		clat, _ := timeCell(r.TimeQueryCreatedAt)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.1f\t%.1f\t%s\t%s\t%s\t%.0f / %.0f\t%s\n", r.Scheme, r.Label, r.KeyType, r.OpsPerSec, r.BytesPerOp,
			r.WALBytesPerOp, lat, plan, clat, r.ParentWithChildren.P50Micros, r.ParentWithChildren.P99Micros, checkCell(r.Check))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scheme\tstructure\trole\tMB\tB/op")
	for _, r := range rep.App {
		for _, s := range r.Structures {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.1f\n", r.Scheme, s.Name, s.Role, mb(s.Bytes), s.BytesPerOp)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bl := rep.AppBaseline; bl != nil {
		p("\nbaseline: %s: %.0f ops/s, %.1f WAL B/op; %s reaches %.2f× of it\n", appBaselineWhat(rep.Settings), bl.OpsPerSec, bl.WALBytesPerOp, bl.Scheme, bl.Ratio)
	}
	if s := rep.Settings; s.Kept != "" {
		p("\nkept: %s; open it with: %s\n", s.Kept, s.Reopen)
	}
	for _, n := range rep.Notes {
		p("\nnote: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// appBaselineWhat says what the baseline loop is on the report's engine.
func appBaselineWhat(s Settings) string {
	d := dialectOf(s.Engine)
	return fmt.Sprintf("a bare %s loop (%s) writing the same schema with ascending bigint keys", d.AppDriver, d.AppBaseline[s.Mode])
}

// writeAppBenchstat is WriteBenchstat for WorkloadApp: one line per measured run.
func writeAppBenchstat(w io.Writer, rep *Report) error {
	s := rep.Settings
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/idkit/idkit/dbbench\n", s.GOOS, s.GOARCH)
	fmt.Fprintf(&b, "engine: %s\nserver: %s\nmode: %s\n", s.Engine, s.ServerVersion, s.Mode)
	line := func(name string, rate float64) {
		fmt.Fprintf(&b, "BenchmarkApp/%s/ops=%d/children=%d/clients=%d \t%d\t%.1f ns/op\t%.0f ops/s\n", name, s.Rows, s.Children, s.Clients, s.Rows, 1e9/rate, rate)
	}
	for _, r := range rep.App {
		for _, rate := range r.RunsOpsPerSec {
			line("scheme="+benchName(r.Scheme), rate)
		}
	}
	if bl := rep.AppBaseline; bl != nil {
		for _, rate := range bl.RunsOpsPerSec {
			line("scheme=baseline", rate)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAppMarkdown is writeMarkdown for WorkloadApp.
func writeAppMarkdown(w io.Writer, rep *Report) error {
	s := rep.Settings
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# What each ID scheme costs an application schema on %s\n\n", dialectOf(s.Engine).Title)
	if s.Command != "" {
		p("Produced by `%s` on %s (took %s).\n\n", s.Command, s.Started.Format("2006-01-02 15:04 UTC"), s.Duration)
	}
	p("%s. Every scheme writes %s business operations into its own tables `<label>_parent(id PRIMARY KEY, created_at, customer, payload)` and `<label>_child(id PRIMARY KEY, parent_id REFERENCES parent(id), payload)` with an index on child(parent_id); each operation is 1 parent and %s, ", s.ServerVersion, thousands(int64(s.Rows)), engine.Children(s.Children))
	if s.Mode == ModeCopy {
		p("written in bulk (%d operations per %s)", s.Batch, dialectOf(s.Engine).AppBulkUnit)
	} else {
		p("one transaction")
	}
	if s.IDsInTx {
		p(" whose IDs are made inside it, just before the parent's INSERT")
	}
	if clientRemedy(s) {
		p(" (remedy: %s)", RemedyName(s))
	}
	p(", from %d client(s). parent(created_at) has an index for %s. Throughput and WAL are medians of %d runs%s; sizes and queries come from the last run.\n\n",
		s.Clients, map[string]string{CreatedAtAll: "every scheme", CreatedAtNeeded: "the schemes whose key cannot answer time ranges"}[s.CreatedAtIndex], s.Repeat, appWarmup(s))
	p("## Results\n\n| scheme | label | key | ops/s | bytes/op | WAL B/op | time query p50 / p99 µs | plan | via created_at p50 / p99 µs | parent + children p50 / p99 µs | both ways |\n|---|---|---|--:|--:|--:|--:|---|--:|--:|---|\n")
	for _, r := range rep.App {
		lat, plan := timeCell(r.TimeQuery)
		clat, _ := timeCell(r.TimeQueryCreatedAt)
		p("| %s | %s | %s | %s | %.1f | %.1f | %s | %s | %s | %.0f / %.0f | %s |\n", mdEscape(r.Scheme), r.Label, mdEscape(r.KeyType), thousands(int64(r.OpsPerSec+0.5)),
			r.BytesPerOp, r.WALBytesPerOp, lat, mdEscape(plan), clat, r.ParentWithChildren.P50Micros, r.ParentWithChildren.P99Micros, checkCell(r.Check))
	}
	p("\n## Bytes per operation by structure\n\n| scheme | structure | role | MB | B/op |\n|---|---|---|--:|--:|\n")
	for _, r := range rep.App {
		for _, st := range r.Structures {
			p("| %s | %s | %s | %.2f | %.1f |\n", mdEscape(r.Scheme), st.Name, st.Role, mb(st.Bytes), st.BytesPerOp)
		}
	}
	p("\n## Labels\n\n| label | scheme | spec |\n|---|---|---|\n")
	for _, r := range rep.App {
		p("| %s | %s | %s |\n", r.Label, mdEscape(r.Scheme), mdEscape(r.Spec))
	}
	if bl := rep.AppBaseline; bl != nil {
		p("\nHarness check: %s ran at %s ops/s (%.1f WAL B/op) in the same run; %s reached %s ops/s, **%.2f×** of it.\n",
			appBaselineWhat(s), thousands(int64(bl.OpsPerSec+0.5)), bl.WALBytesPerOp, bl.Scheme, thousands(int64(rep.App[indexOfScheme(rep, bl.Scheme)].OpsPerSec+0.5)), bl.Ratio)
	}
	if s.MaxRSSBytes > 0 {
		p("\nLargest resident set of the idbench process: %.1f MB.\n", mb(s.MaxRSSBytes))
	}
	if s.Kept != "" {
		p("\nKept: %s; open it with `%s`.\n", s.Kept, s.Reopen)
	}
	if len(rep.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range rep.Notes {
			p("- %s\n", n)
		}
	}
	p("\n## How to read this\n\n")
	p("- **bytes/op**: the size of every table and index after the load (PostgreSQL: `pg_relation_size`; InnoDB: `size` pages in `mysql.innodb_index_stats` after `ANALYZE TABLE`) over the operations written.\n")
	p("- **WAL B/op**: WAL (PostgreSQL, `pg_current_wal_insert_lsn`) or redo (InnoDB, the log sequence number) written during the load, per operation.\n")
	p("- **time query**: `SELECT … FROM parent` for the rows of a %s window, through the key's bounds (`idkit.Bounds`, `WHERE id >= lo AND id <= hi`) for time-ordered schemes, else through `created_at`; **plan** is the index EXPLAIN named. **both ways**: the same windows answered through the key and through created_at return the same rows, save rows within a tick of a window edge.\n", s.Window)
	p("- **parent + children**: one parent and its children through the foreign-key index, for parents sampled over the load.\n")

	row := settingsTable(p, s)
	row("operations", s.Rows)
	row("children per operation", s.Children)
	row("insert mode", s.Mode)
	if s.Mode == ModeCopy {
		row("batch (operations)", s.Batch)
	}
	row("clients", s.Clients)
	row("created_at index", s.CreatedAtIndex)
	row("time window", s.Window)
	row("lookups", s.Lookups)
	row("repeat", s.Repeat)
	if s.WarmupRows > 0 {
		row("warm-up operations", s.WarmupRows)
	} else {
		row("warm-up operations", "none")
	}
	row("Go", goSetting(s))
	p("\nMachine-readable: [%s](%s), [%s](%s).\n", ReportJSON, ReportJSON, ReportBenchstat, ReportBenchstat)
	_, err := io.WriteString(w, b.String())
	return err
}

func indexOfScheme(rep *Report, scheme string) int {
	for i, r := range rep.App {
		if r.Scheme == scheme {
			return i
		}
	}
	return 0
}
