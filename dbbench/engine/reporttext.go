package engine

// ReportText is what an engine tells a report about itself: its name, the settings that
// shape its figures, what its bulk path and baseline are. Each engine returns its own
// (pgReport, innodbReport, sqliteReport); the report writers never compare engine names.
type ReportText struct {
	// Title names the database for people: "PostgreSQL".
	Title string
	// SharedServer: the engine ran on a server idbench did not start, whose log counters are
	// server-wide and count other sessions' work too. Set by dialectOf from the engine's
	// name.
	SharedServer bool
	// Checkpoints: the engine checkpoints, and a load may start from a fresh checkpoint.
	Checkpoints bool
	// Clustered: the table is its primary key's B-tree (InnoDB), so a report's table and
	// primary key are one structure, "clustered".
	Clustered bool
	// SettingsLine is the table workload's text line of server settings.
	SettingsLine func(s Settings) string
	// ServerSettings writes the server settings a run pinned or found, those that shape its
	// figures (commit flushing among them), through row.
	ServerSettings func(row func(k string, v any), s Settings)
	// AppDriver, appBulkUnit and appBaseline describe the app workload: the Go driver, what
	// one batch of the bulk path (ModeCopy) is, and what the bare baseline loop does per mode.
	AppDriver   string
	AppBulkUnit string
	AppBaseline map[string]string
	// TextKeyNote explains text keys in a table-workload report; "" when the engine's own
	// notes do (InnoDB's).
	TextKeyNote func(r Row) string
}
