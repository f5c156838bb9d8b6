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
	// LSM is the texts of a report of an engine whose rows live in an LSM tree (LSMEngine);
	// nil for the B-tree engines.
	LSM *LSMText
}

// LSMText is what a report of an LSM engine says about its layout and its figures; the
// report's tables and its other sentences are common to the LSM engines.
type LSMText struct {
	// Engine names the engine in a sentence: "Pebble".
	Engine string
	// Layout says how a table's rows are keyed, after "Every scheme loads N rows into a
	// table of its own, "; IndexLayout how the secondary index on payload is.
	Layout, IndexLayout string
	// Counters names the counters the bytes of the write amplification come from.
	Counters string
	// Events names where the compactions, L0 figure and write stalls come from.
	Events string
	// L0Name is the column heading of LSM.L0SublevelsMax: "L0 sublevels max".
	L0Name string
	// PointRead says what a point read's blocks are and how the read is made.
	PointRead string
	// IndexJoin says whose index join the time-window scan reads the rows as.
	IndexJoin string
}
