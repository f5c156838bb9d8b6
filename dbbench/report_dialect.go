package dbbench

import "io"

// reportDialect is what the text of a report asks of the database that produced it: its name,
// the settings that shape its figures, what its bulk path and baseline are, and the writers of
// its own table-workload layout. A report is written when Run ends and again from report.json
// with no engine open, so the report's texts ask dialectOf(Settings.Engine) instead of
// comparing engine names; each engine's file holds its own (pgReport in pg.go, innodbReport in
// innodb.go, sqliteReport in sqlite.go).
type reportDialect struct {
	// title names the database for people: "PostgreSQL".
	title string
	// sharedServer: the engine ran on a server idbench did not start, whose log counters are
	// server-wide and count other sessions' work too.
	sharedServer bool
	// checkpoints: the engine checkpoints, and a load may start from a fresh checkpoint.
	checkpoints bool
	// clustered: the table is its primary key's B-tree (InnoDB), so a report's table and
	// primary key are one structure, "clustered".
	clustered bool
	// settingsLine is the table workload's text line of server settings.
	settingsLine func(s Settings) string
	// serverSettings writes the server settings a run pinned or found, those that shape its
	// figures (commit flushing among them), through row.
	serverSettings func(row func(k string, v any), s Settings)
	// appDriver, appBulkUnit and appBaseline describe the app workload: the Go driver, what
	// one batch of the bulk path (ModeCopy) is, and what the bare baseline loop does per mode.
	appDriver   string
	appBulkUnit string
	appBaseline map[string]string
	// textKeyNote explains text keys in a table-workload report; "" when the engine's own
	// notes do (InnoDB's).
	textKeyNote func(r row) string
	// table, markdown and summary write a table-workload report in the engine's own layout;
	// nil for the common one (PostgreSQL's, which SQLite shares).
	table    func(w io.Writer, rep *Report) error
	markdown func(w io.Writer, rep *Report, cs []chart) error
	summary  func(w io.Writer, rep *Report) error
}

// dialectOf returns the report dialect of a report's engine (Settings.Engine): the one place
// a report's text turns an engine's name into what the engine is. An unknown name (a report
// from a later idbench) reads as PostgreSQL's, as reports did before they named engines.
func dialectOf(engine string) reportDialect {
	switch engine {
	case EngineMariaDBLocal, EngineMySQL:
		d := innodbReport()
		d.sharedServer = engine == EngineMySQL
		return d
	case EngineSQLite:
		return sqliteReport()
	}
	d := pgReport()
	d.sharedServer = engine == EnginePGEnv
	return d
}
