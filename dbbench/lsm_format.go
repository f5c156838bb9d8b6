package dbbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/pebble"
)

// The table-workload report of an LSM engine (pebble, rocksdb): the common figures that mean
// something on an LSM tree (rows/s, bytes per row on disk, WAL, lookups), then its LSM
// figures (engine.LSM): write and space amplification, flushes and compactions by level, L0
// sublevels (or files), write stalls, and the blocks a point read and a time-window scan
// touch. What differs between the engines (their layout and where each figure comes from) is
// the engine's engine.LSMText.

// lsmLevels writes the compactions by output level as "L0 n, L1 n, …", leaving out zeros.
func lsmLevels(c []int64) string {
	var parts []string
	for i, n := range c {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("L%d %d", i, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func writeLSMTable(w io.Writer, rep *Report) error {
	s := rep.Settings
	var b strings.Builder
	d := dialectOf(s.Engine)
	lt := lsmText(d)
	fmt.Fprintf(&b, "engine %s, %s\n%s\nload average at start, end: %s\n", s.Engine, s.ServerVersion, d.SettingsLine(s), s.LoadAverage)
	fmt.Fprintf(&b, "rows %d, mode %s, batch %d, clients %d, nodes %d, secondary index %v, median of %d runs (+%d-row warm-up)\n\n",
		s.Rows, s.Mode, s.Batch, s.Clients, s.Nodes, s.SecondaryIndex, s.Repeat, s.WarmupRows)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "scheme\tcolumn\trows/s\tdisk B/row\twrite amp\tspace amp\tflushes\tcompactions\t%s\tstalls\tpoint blocks\twindow blocks\tlookup p50 µs\t\n", lsmShortL0(lt))
	for _, r := range rep.Results {
		l := r.LSM
		if l == nil {
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t\t\t\t\t\t\t\t\t\t%s\t\n", r.Scheme, r.ColumnType, r.RowsPerSec, optLatency(r.PointLookup))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%d\t%s\t%d\t%d\t%.1f\t%s\t%s\t\n",
			r.Scheme, r.ColumnType, r.RowsPerSec, perRow(l.LiveBytes, r.Rows), l.WriteAmp, l.SpaceAmp, l.Flushes,
			lsmLevels(l.Compactions), l.L0SublevelsMax, l.WriteStalls, l.PointBlocks, windowBlocks(l), optLatency(r.PointLookup))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func windowBlocks(l *engine.LSM) string {
	if l.WindowScans == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", l.WindowBlocks)
}

func writeLSMMarkdown(w io.Writer, rep *Report, cs []chart) error {
	s := rep.Settings
	lt := lsmText(dialectOf(s.Engine))
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# What each ID scheme costs %s\n\n", dialectOf(s.Engine).Title)
	if s.Command != "" {
		load := s.LoadAverage + " at start, end" // reports before run.go wrote "start …, end …"
		if strings.HasPrefix(s.LoadAverage, "start ") {
			load = s.LoadAverage
		}
		p("Produced by `%s` on %s (took %s; load average %s, on a machine of %d CPUs shared with other work).\n\n",
			s.Command, s.Started.Format("2006-01-02 15:04 MST"), s.Duration, load, s.NumCPU)
	}
	p("Every scheme loads %d rows into a table of its own, %s", s.Rows, lt.Layout)
	if s.SecondaryIndex {
		p(", and %s", lt.IndexLayout)
	}
	p(". Rows go through %s batches of %d committed with the WAL synced (%d client(s), %d generator(s)), into a fresh %s database per load "+
		"with a %s memtable and a %s block cache. Each figure is from the median of %d run(s) after a discarded %d-row warm-up.\n\n",
		lt.Engine, s.Batch, s.Clients, s.Nodes, lt.Engine, s.LSMMemTable, s.LSMBlockCache, s.Repeat, s.WarmupRows)

	p("## Results\n\n")
	p("| scheme | column | rows/s | disk B/row | write amp | space amp | WAL B/row | flushes | compactions by output level | %s | write stalls | blocks per point read | blocks per time-window scan | lookup p50 µs |\n", lt.L0Name)
	p("|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|\n")
	for _, r := range rep.Results {
		l := r.LSM
		if l == nil {
			p("| %s | %s | %.0f | | | | %.1f | | | | | | | %s |\n", mdEscape(r.Scheme), mdEscape(r.ColumnType), r.RowsPerSec, r.WALBytesPerRow, optLatency(r.PointLookup))
			continue
		}
		p("| %s | %s | %.0f | %.1f | %.2f | %.2f | %.1f | %d | %s | %d | %d (%.1f s) | %.1f | %s | %s |\n",
			mdEscape(r.Scheme), mdEscape(r.ColumnType), r.RowsPerSec, perRow(l.LiveBytes, r.Rows), l.WriteAmp, l.SpaceAmp,
			r.WALBytesPerRow, l.Flushes, lsmLevels(l.Compactions), l.L0SublevelsMax, l.WriteStalls, l.StallSeconds,
			l.PointBlocks, windowBlocks(l), optLatency(r.PointLookup))
	}
	writeRunTail(p, rep, cs, "$1", "")

	p("\n## How to read this\n\n")
	p("- **write amp**: bytes written to the WAL, by flushes and by compactions (%s), from the mark before the load until the load's last flush and compactions finished, over the bytes of keys and values the load wrote. A sequential key lands in a key range no other table overlaps, so its sstables move down the levels without being rewritten; a random key overlaps every table of the next level and is rewritten at each.\n", lt.Counters)
	p("- **space amp**: the live sstables after settling over the bytes of keys and values written (compression brings it below 1).\n")
	p("- **compactions by output level**, **%s** (sampled every 100 ms while loading) and **write stalls** come from %s; a stall is %s delaying writes while L0 or the memtables are full.\n", lt.L0Name, lt.Events, lt.Engine)
	p("- **blocks per point read**: %s, averaged over the lookups; bloom filters skip the sstables that lack the key.\n", lt.PointRead)
	p("- **blocks per time-window scan**: a window of %d rows written one after another, found through the payload index (payload numbers rows in the order written) and each row read from the primary index, %s; averaged over 100 windows. Time-ordered keys find the window's rows in a few adjacent blocks; random keys in one block per row.\n", s.RangeN, lt.IndexJoin)

	row := settingsTable(p, s)
	row("statistics", s.Statistics)
	row("rows", s.Rows)
	row("insert mode", s.Mode)
	row("batch", s.Batch)
	row("clients", s.Clients)
	row("nodes", s.Nodes)
	row("secondary index", s.SecondaryIndex)
	row("repeat", s.Repeat)
	row("warm-up rows", s.WarmupRows)
	row("Go", goSetting(s))
	p("\nMachine-readable: [%s](%s), [%s](%s).\n", ReportJSON, ReportJSON, ReportBenchstat, ReportBenchstat)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLSMSummary is the block a document quotes from an LSM engine's report: per scheme the
// figures that do not depend on the machine's load (bytes written and stored per row, write
// and space amplification, compactions, L0 sublevels, blocks read), and rows/s with the load
// average it was measured under.
func writeLSMSummary(w io.Writer, rep *Report) error {
	s := rep.Settings
	lt := lsmText(dialectOf(s.Engine))
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if s.Command != "" {
		p("Command: `%s`\n\n", s.Command)
	}
	load := s.LoadAverage + " at start, end" // reports before run.go wrote "start …, end …"
	if strings.HasPrefix(s.LoadAverage, "start ") {
		load = s.LoadAverage
	}
	p("%s; %s rows per scheme, secondary index on payload %v, batches of %d with the WAL synced, memtable %s, block cache %s; %d run(s); load average %s on %d shared CPUs; %s.\n\n",
		s.ServerVersion, thousands(int64(s.Rows)), s.SecondaryIndex, s.Batch, s.LSMMemTable, s.LSMBlockCache, s.Repeat, load, s.NumCPU, s.Started.Format("2006-01-02"))
	p("| scheme | column | bytes written per row (WAL + flush + compaction) | write amp | disk B/row | space amp | compactions by output level | %s | write stalls | blocks per point read | blocks per %d-row time window | rows/s (loaded machine) |\n", lt.L0Name, s.RangeN)
	p("|---|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|\n")
	for _, r := range rep.Results {
		l := r.LSM
		if l == nil {
			continue
		}
		p("| %s | %s | %.1f | %.2f | %.1f | %.2f | %s | %d | %d | %.1f | %s | %s |\n", mdEscape(r.Scheme), mdEscape(r.ColumnType),
			perRow(l.WALBytes+l.FlushBytes+l.CompactionBytes, r.Rows), l.WriteAmp, perRow(l.LiveBytes, r.Rows), l.SpaceAmp,
			lsmLevels(l.Compactions), l.L0SublevelsMax, l.WriteStalls, l.PointBlocks, windowBlocks(l), thousands(int64(r.RowsPerSec+0.5)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lsmText is the LSM texts of a report's engine; an engine without them (a report whose
// engine is unknown here) reads as Pebble's, the first LSM engine.
func lsmText(d reportDialect) *engine.LSMText {
	if d.LSM != nil {
		return d.LSM
	}
	return pebble.Report().LSM
}

// lsmShortL0 is the text table's narrow heading of the L0 figure.
func lsmShortL0(lt *engine.LSMText) string {
	return strings.Replace(lt.L0Name, "sublevels", "subl", 1)
}
