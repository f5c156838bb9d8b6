package dbbench

import (
	"io"

	"github.com/idkit/idkit/dbbench/engine"
)

// reportDialect is what the text of a report asks of the database that produced it: the
// engine's report texts (ReportText) and, for an engine with a table-workload layout of its
// own, its writers. A report is written when Run ends and again from report.json with no
// engine open, so the report's texts ask dialectOf(Settings.Engine) instead of comparing
// engine names.
type reportDialect struct {
	engine.ReportText
	// table, markdown and summary write a table-workload report in the engine's own layout;
	// nil for the common one (PostgreSQL's, which SQLite shares).
	table    func(w io.Writer, rep *Report) error
	markdown func(w io.Writer, rep *Report, cs []chart) error
	summary  func(w io.Writer, rep *Report) error
}

// dialectOf returns the report dialect of a report's engine (Settings.Engine): the one place
// a report's text turns an engine's name into what the engine is.
func dialectOf(engine string) reportDialect {
	e := engineNamed(engine)
	d := reportDialect{ReportText: e.report(), table: e.table, markdown: e.markdown, summary: e.summary}
	d.SharedServer = e.shared
	return d
}
