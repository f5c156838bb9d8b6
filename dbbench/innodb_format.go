package dbbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// baselineName describes the bare load an InnoDB report's baseline ran.
func baselineName(s Settings) string {
	if s.Mode == ModeCopy {
		return "bare LOAD DATA LOCAL INFILE of ascending BIGINT keys (19 digits, as Snowflake IDs)"
	}
	return fmt.Sprintf("bare prepared %d-row INSERT of ascending BIGINT keys", s.Batch)
}

// innodbSettingsLine is the one-line summary of the InnoDB settings.
func innodbSettingsLine(s Settings) string {
	return fmt.Sprintf("innodb_buffer_pool_size %s, redo log %s, innodb_flush_log_at_trx_commit %s, innodb_doublewrite %s, page size %d, collation %s",
		s.InnoDBBufferPoolSize, s.InnoDBLogFileSize, s.InnoDBFlushLogAtTrxCommit, s.InnoDBDoublewrite, s.InnoDBPageSize, s.Collation)
}

func optPer1k(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *p)
}

// writeInnoDBTable is WriteTable for MariaDB/MySQL reports.
func writeInnoDBTable(w io.Writer, rep *Report) error {
	s := rep.Settings
	var b strings.Builder
	fmt.Fprintf(&b, "engine %s, %s\n%s\n", s.Engine, s.ServerVersion, innodbSettingsLine(s))
	fmt.Fprintf(&b, "rows %d, mode %s, batch %d, clients %d, nodes %d, profile %s, secondary index %v, median of %d runs (+%d-row warm-up)\n\n",
		s.Rows, s.Mode, s.Batch, s.Clients, s.Nodes, s.Profile, s.SecondaryIndex, s.Repeat, s.WarmupRows)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "scheme\tcolumn\trows/s\tclustered MB\tclustered B/row\t"
	if s.SecondaryIndex {
		head += "secondary MB\tsecondary B/row\t"
	}
	fmt.Fprintln(tw, head+"leaf pages\tleaf fill %\tsplits\tmerges\tredo B/row\tpool reads/1k rows\tlookup p50 µs\trange p50 µs\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f\t%.1f\t", r.Scheme, r.ColumnType, r.RowsPerSec, mb(r.IndexBytes), r.IndexBytesPerRow)
		if s.SecondaryIndex {
			fmt.Fprintf(tw, "%.2f\t%.1f\t", mb(r.SecondaryIndexBytes), r.SecondaryIndexBytesPerRow)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t\n", optInt(r.LeafPages), optFloat(r.AvgLeafDensity), optInt(r.PageSplits),
			optInt(r.PageMerges), r.WALBytesPerRow, optPer1k(r.BufferPoolReadsPer1k), optLatency(r.PointLookup), optLatency(r.RangeScan))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bl := rep.Baseline; bl != nil {
		fmt.Fprintf(&b, "\nbaseline: %s: %.0f rows/s", baselineName(s), bl.RowsPerSec)
		if bl.Scheme != "" {
			fmt.Fprintf(&b, "; %s reaches %.2f× of it", bl.Scheme, bl.Ratio)
		}
		b.WriteByte('\n')
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeInnoDBMarkdown is writeMarkdown for MariaDB/MySQL reports.
func writeInnoDBMarkdown(w io.Writer, rep *Report, cs []chart) error {
	s := rep.Settings
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# What each ID scheme costs an InnoDB clustered primary key\n\n")
	if s.Command != "" {
		p("Produced by `%s` on %s (took %s).\n\n", s.Command, s.Started.Format("2006-01-02 15:04 MST"), s.Duration)
	}
	sec := ""
	if s.SecondaryIndex {
		sec = " and a secondary index on payload"
	}
	p("Every scheme loads %d rows into its own InnoDB table `(id PRIMARY KEY, payload BIGINT)`%s, in %s mode "+
		"(batch %d, %d client(s)), with IDs from %d generator(s) made while loading. "+
		"Each figure is the median of %d runs after a discarded %d-row warm-up.\n\n",
		s.Rows, sec, s.Mode, s.Batch, s.Clients, s.Nodes, s.Repeat, s.WarmupRows)

	p("## Results\n\n")
	head := "| scheme | column | rows/s | clustered MB | clustered B/row |"
	align := "|---|---|--:|--:|--:|"
	if s.SecondaryIndex {
		head += " secondary MB | secondary B/row |"
		align += "--:|--:|"
	}
	p("%s leaf pages | leaf fill %% | page splits | page merges | redo B/row | buffer-pool reads per 1,000 rows | lookup p50 µs | range scan p50 µs |\n", head)
	p("%s--:|--:|--:|--:|--:|--:|--:|--:|\n", align)
	for _, r := range rep.Results {
		p("| %s | %s | %.0f | %.2f | %.1f |", mdEscape(r.Scheme), mdEscape(r.ColumnType), r.RowsPerSec, mb(r.IndexBytes), r.IndexBytesPerRow)
		if s.SecondaryIndex {
			p(" %.2f | %.1f |", mb(r.SecondaryIndexBytes), r.SecondaryIndexBytesPerRow)
		}
		p(" %s | %s | %s | %s | %.1f | %s | %s | %s |\n", optInt(r.LeafPages), optFloat(r.AvgLeafDensity), optInt(r.PageSplits),
			optInt(r.PageMerges), r.WALBytesPerRow, optPer1k(r.BufferPoolReadsPer1k), optLatency(r.PointLookup), optLatency(r.RangeScan))
	}
	writeRunTail(p, rep, cs, "?", baselineName(s))
	p("\n## How to read this\n\n")
	p("- **clustered MB, B/row**: InnoDB stores the rows in the primary-key B-tree itself (the clustered index); its size is the table's size. " +
		"Sizes are the `size` of each index in `mysql.innodb_index_stats` after `ANALYZE TABLE` (persistent statistics) times the page size: " +
		"pages allocated to the index, counted rather than sampled, including pages reserved in the index's extents but not yet used, so small tables round up to whole extents.\n")
	if s.SecondaryIndex {
		p("- **secondary MB, B/row**: the index on payload. Each of its entries carries a copy of the primary key, so a wider key makes every secondary index larger too.\n")
	}
	p("- **leaf pages, leaf fill**: leaf pages in use (`n_leaf_pages`) of the clustered index, and the fill they imply: rows × record bytes ÷ (leaf pages × usable page bytes), "+
		"with record bytes from the COMPACT/DYNAMIC format (5-byte header, key, 6-byte transaction id, 7-byte roll pointer, 8-byte payload, a length byte for VARBINARY and for CHAR in a multi-byte character set) "+
		"and %d − 128 usable bytes a page. The page directory is left out, so full pages read a little under 100. "+
		"InnoDB leaves 1/16 of a page free when it appends at the right edge; random keys split pages in the middle and leave them about half to three-quarters full.\n", s.InnoDBPageSize)
	p("- **page splits, merges**: deltas of `index_page_splits` and `index_page_merge_successful` in `information_schema.INNODB_METRICS` over the load (server-wide counters). " +
		"InnoDB counts appending a new right-most page as a split too, so ordered keys show about one split per new page; random keys split more often and leave emptier pages.\n")
	p("- **redo B/row**: the growth of the log sequence number (`Innodb_lsn_current`) during the load, per row. InnoDB writes no full-page images to its redo log (it has the doublewrite buffer instead), so unlike PostgreSQL's WAL this does not jump after a checkpoint.\n")
	p("- **buffer-pool reads per 1,000 rows**: `Innodb_buffer_pool_reads` (pages read from disk because they were not in the buffer pool) during the load. Ordered keys keep writing the right-most pages, which stay in the pool; random keys need pages all over the index, which stops fitting once the table outgrows the pool.\n")
	p("- **rows/s per chunk** (chart): throughput of each chunk as the table grows.\n")

	row := settingsTable(p, s)
	row("load path (copy mode)", s.LoadPath)
	row("statistics", s.Statistics)
	row("dirty pages flushed before each load", s.CheckpointBeforeRun)
	row("secondary index on payload", s.SecondaryIndex)
	row("profile", s.Profile)
	row("rows", s.Rows)
	row("insert mode", s.Mode)
	row("batch", s.Batch)
	row("clients", s.Clients)
	row("nodes", s.Nodes)
	row("repeat", s.Repeat)
	row("warm-up rows", s.WarmupRows)
	row("Go", goSetting(s))
	p("\nMachine-readable: [%s](%s), [%s](%s) (compare runs with `benchstat -col /scheme %s`).\n",
		ReportJSON, ReportJSON, ReportBenchstat, ReportBenchstat, ReportBenchstat)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeInnoDBSummary is WriteSummary for MariaDB/MySQL reports.
func writeInnoDBSummary(w io.Writer, rep *Report) error {
	s := rep.Settings
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if s.Command != "" {
		p("Command: `%s`\n\n", s.Command)
	}
	p("%s, InnoDB; %s rows per scheme, %s mode, %d client(s), %d node(s), %s profile, innodb_buffer_pool_size %s, page size %d",
		s.ServerVersion, thousands(int64(s.Rows)), s.Mode, s.Clients, s.Nodes, s.Profile, s.InnoDBBufferPoolSize, s.InnoDBPageSize)
	if s.SecondaryIndex {
		p(", secondary index on payload")
	}
	p("; median of %d runs; %s.\n\n", s.Repeat, s.Started.Format("2006-01-02"))
	if len(rep.Results) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	ref := rep.Results[0]
	head := fmt.Sprintf("| scheme | column | rows/s | vs %s | clustered B/row | vs %s |", ref.Scheme, ref.Scheme)
	align := "|---|---|--:|--:|--:|--:|"
	if s.SecondaryIndex {
		head += fmt.Sprintf(" secondary B/row | vs %s |", ref.Scheme)
		align += "--:|--:|"
	}
	p("%s leaf fill %% | page splits | redo B/row | buffer-pool reads per 1,000 rows |\n%s--:|--:|--:|--:|\n", head, align)
	for _, r := range rep.Results {
		p("| %s | %s | %s | %.2f× | %.1f | %.2f× |", mdEscape(r.Scheme), mdEscape(r.ColumnType), thousands(int64(r.RowsPerSec+0.5)),
			ratio(r.RowsPerSec, ref.RowsPerSec), r.IndexBytesPerRow, ratio(r.IndexBytesPerRow, ref.IndexBytesPerRow))
		if s.SecondaryIndex {
			p(" %.1f | %.2f× |", r.SecondaryIndexBytesPerRow, ratio(r.SecondaryIndexBytesPerRow, ref.SecondaryIndexBytesPerRow))
		}
		p(" %s | %s | %.1f | %s |\n", optFloat(r.AvgLeafDensity), optCount(r.PageSplits), r.WALBytesPerRow, optPer1k(r.BufferPoolReadsPer1k))
	}
	if bl := rep.Baseline; bl != nil && bl.Scheme != "" {
		p("\nHarness check: %s reached %.2f× the rows/s of a %s (%s rows/s) in the same run.\n",
			bl.Scheme, bl.Ratio, baselineName(s), thousands(int64(bl.RowsPerSec+0.5)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
