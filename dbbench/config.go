package dbbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// Config describes one benchmark run. Zero fields take the defaults noted;
// DefaultConfig returns the configuration of the default idbench run.
type Config struct {
	// DB selects the engine: EngineAuto (""), EnginePGLocal, EngineSQLite,
	// EnginePGEnv, EngineMariaDBLocal, a MariaDB/MySQL URL
	// ("mysql://user:password@host:port/db", "?socket=PATH" for a unix
	// socket) or a PostgreSQL connection string (URL or key=value).
	// Its password never appears in the report, the log or an error.
	DB string

	// Schemes lists the rows to compare, in order: RowBigserial (or
	// RowAutoIncrement), RowULIDText or any idkit spec ("snowflake",
	// "ulid:monotonic=false", …), optionally followed by a storage suffix
	// ("uuidv7-text", "uuidv4-native"; see the idbench db help). Empty, or
	// DefaultSchemes() on a MariaDB/MySQL engine, means the engine's
	// default list (InnoDBSchemes() there).
	Schemes []string

	// Rows is the number of rows loaded per measured run. Zero means 100000.
	Rows int

	// Batch is the number of rows per COPY, per multi-row INSERT or per SQLite
	// transaction. Zero means one chunk of the throughput curve (Rows/Points)
	// for ModeCopy and 1000 for ModeBatch (500 on SQLite). ModeSingle ignores
	// it.
	Batch int

	// Mode is ModeCopy (default: the engine's bulk path; LOAD DATA LOCAL
	// INFILE from an io.Reader on MariaDB/MySQL), ModeBatch or ModeSingle.
	Mode string

	// Clients is the number of concurrent connections loading the table.
	// Zero means 1.
	Clients int

	// Nodes is the number of simulated application servers writing one
	// table, each with its own generator, node value (Snowflake family) and
	// clock; their IDs interleave as their clocks order them (see FleetRate
	// and ClockSkew). Zero means 1.
	Nodes int

	// FleetRate is the rate, in IDs per second across all nodes, of the
	// simulated fleet: each node issues FleetRate/Nodes IDs per second as a
	// Poisson process in simulated time, and rows reach the table in the order
	// of issue. Zero means DefaultFleetRate when Nodes > 1 and, with one node,
	// no simulation: the generator runs on the real clock as fast as the
	// database takes rows. Set it to simulate one node as well, so that K = 1
	// compares with larger fleets.
	FleetRate float64

	// ClockSkew is the standard deviation of the simulated nodes' clock
	// offsets (normal, fixed per node). Zero means DefaultClockSkew; negative
	// means clocks in perfect agreement.
	ClockSkew time.Duration

	// Profile is ProfileSteady (default) or ProfileCheckpoints.
	Profile string

	// Repeat is the number of measured runs per scheme; the report gives
	// their median. Zero means 3.
	Repeat int

	// WarmupRows is the size of the discarded warm-up run made for each
	// scheme (and the baseline) before its measured runs, on tables dropped
	// afterwards: rows, or operations under WorkloadApp. Zero means Rows/5;
	// negative disables warm-up.
	WarmupRows int

	// Fillfactor is the primary-key index fillfactor. Zero means 90,
	// PostgreSQL's B-tree default.
	Fillfactor int

	// PGSettings are server settings for EnginePGLocal, applied over the
	// pinned defaults (shared_buffers=128MB, …; see PGLocalSettings).
	PGSettings map[string]string

	// MariaDBSettings are server options for EngineMariaDBLocal, applied
	// over the pinned defaults (see MariaDBLocalSettings).
	MariaDBSettings map[string]string

	// SecondaryIndex adds a secondary index on payload to every table
	// (MariaDB/MySQL only), so the report shows what the primary key's size
	// costs in a secondary index, which InnoDB makes carry a copy of it.
	SecondaryIndex bool

	// Points is the number of chunks in the throughput curve. Zero means 20.
	Points int

	// Lookups is the number of point lookups and of range scans measured
	// after loading. Zero means 500; negative disables them.
	Lookups int

	// RangeN is the number of rows each range scan returns. Zero means 100.
	RangeN int

	// Baseline adds a bare load of ascending int64 keys into the same table
	// shape by the same path (pgx CopyFrom on PostgreSQL, LOAD DATA LOCAL
	// INFILE or prepared INSERTs on MariaDB/MySQL), to show the harness's own
	// overhead. SQLite has none.
	Baseline bool

	// Progress, when non-nil, receives a progress bar. Pass a terminal only.
	Progress io.Writer

	// Log, when non-nil, receives one line per step (engine chosen, scheme
	// started, …).
	Log io.Writer

	// Workload is WorkloadTable (default) or WorkloadApp.
	Workload string

	// Children is the number of child rows per business operation of WorkloadApp. Zero
	// means 4.
	Children int

	// CreatedAtIndex is CreatedAtNeeded (default) or CreatedAtAll (WorkloadApp).
	CreatedAtIndex string

	// Window is the length of the time window WorkloadApp's time query asks for. Zero means
	// 100 milliseconds.
	Window time.Duration

	// Keep leaves the benchmark schema (PostgreSQL) or database (MariaDB/MySQL) with the
	// last run's tables in place, and with pg-local or mariadb-local the stopped server's
	// directory; Settings.Kept and Settings.Reopen say what and how to open it. WorkloadApp
	// only.
	Keep bool

	// IDsInTx makes each operation's IDs inside its transaction, just before the parent's
	// INSERT, instead of before the transaction begins (WorkloadApp, ModeTx): the gap in which
	// another client's later ID can reach the table first is then shorter by the BEGIN.
	IDsInTx bool

	// ClientBatch groups each client's next ClientBatch operations into one transaction
	// (WorkloadApp, ModeTx), sorted: the parents as one multi-row INSERT in ascending key
	// order, then all their children as one in ascending key order, so that a client's keys
	// reach each table in order within its transaction. The IDs are made as without it, one
	// operation at a time. Zero or 1: one operation per transaction. At most 1000.
	ClientBatch int

	// ClientBlock makes each client take the keys of its next ClientBlock operations at once,
	// as one run of consecutive IDs of the scheme's generator that no other client's IDs
	// interleave (the block a segment generator per client takes from one store), and spend
	// them in order, one operation per transaction: N clients then write N ascending runs.
	// Zero or 1: each operation's IDs are made just before it. At most 100000. Not with keys
	// the database makes (there is no block to take) nor with IDsInTx or IDsPerClient.
	ClientBlock int

	// IDsPerClient gives each client its own generator (WorkloadApp): a Snowflake-family
	// scheme gets the client's number as its node (engine.NodeSpec), so a layout with the node
	// field above the time ("snowflake:fields=node:6/time:41/seq:16") puts each client's keys
	// in a key range of its own; other schemes get an independent generator each.
	IDsPerClient bool

	// Command is recorded in the report's settings, so the report says how
	// it was produced, with any password hidden (idkit.Redact). Optional.
	Command string

	// to is where DB points, parsed by withDefaults.
	to target

	// beforeQueries, set by tests only, runs in the app workload after a scheme's last load
	// and before its queries and time check (a test moves a row's created_at in it).
	beforeQueries func(ctx context.Context, d engine.Engine, sc appScheme) error
}

// DefaultConfig returns the configuration of the default idbench run: every
// default scheme on the automatically chosen engine, sized to finish in well
// under three minutes on a 2-core machine.
func DefaultConfig() Config {
	return Config{
		Schemes:    DefaultSchemes(),
		Rows:       200000,
		Mode:       ModeCopy,
		Clients:    1,
		Nodes:      1,
		Profile:    ProfileSteady,
		Repeat:     3,
		WarmupRows: 20000,
		Fillfactor: 90,
		Points:     20,
		Lookups:    300,
		RangeN:     100,
		Baseline:   true,
	}
}

// withDefaults returns c with zero fields replaced by their defaults, DB parsed (c.to) and
// the passwords in Command hidden, or an error naming the first invalid field. Run calls it
// once; nothing after it parses or redacts a connection string again.
func (c Config) withDefaults() (Config, error) {
	to, err := resolveTarget(c.DB)
	if err != nil {
		return c, err
	}
	c.to = to
	if isDefaultSchemes(c.Schemes) {
		w := c.Workload
		if w == "" {
			w = WorkloadTable
		}
		c.Schemes = engineNamed(to.engine).schemes(w)
	}
	// The DB string as given first (its password may hold any character), then any other
	// URL or password= setting in the command.
	if c.DB != "" {
		c.Command = strings.ReplaceAll(c.Command, c.DB, to.shown)
	}
	c.Command = RedactDSN(c.Command)
	if len(c.Schemes) == 0 {
		c.Schemes = DefaultSchemes()
	}
	if c.Rows == 0 {
		c.Rows = 100000
	}
	if c.Mode == "" {
		c.Mode = ModeCopy
		if c.Workload == WorkloadApp {
			c.Mode = ModeTx
		}
	}
	if c.Clients == 0 {
		c.Clients = 1
	}
	if c.Nodes == 0 {
		c.Nodes = 1
	}
	if c.Profile == "" {
		c.Profile = ProfileSteady
	}
	if c.Repeat == 0 {
		c.Repeat = 3
	}
	if c.WarmupRows == 0 {
		c.WarmupRows = c.Rows / 5
	}
	if c.WarmupRows < 0 {
		c.WarmupRows = 0
	}
	if c.Fillfactor == 0 {
		c.Fillfactor = 90
	}
	if c.Points == 0 {
		c.Points = 20
	}
	if c.Lookups == 0 {
		c.Lookups = 500
	}
	if c.Lookups < 0 {
		c.Lookups = 0
	}
	if c.RangeN == 0 {
		c.RangeN = 100
	}
	switch {
	case c.Rows < 1:
		return c, fmt.Errorf("dbbench: rows must be at least 1, got %d", c.Rows)
	case c.Batch < 0:
		return c, fmt.Errorf("dbbench: batch must not be negative, got %d", c.Batch)
	case c.Clients < 1:
		return c, fmt.Errorf("dbbench: clients must be at least 1, got %d", c.Clients)
	case c.Clients > 256:
		return c, fmt.Errorf("dbbench: clients must be at most 256, got %d", c.Clients)
	case c.Nodes < 1 || c.Nodes > 1024:
		return c, fmt.Errorf("dbbench: nodes must be between 1 and 1024, got %d", c.Nodes)
	case c.FleetRate < 0 || math.IsNaN(c.FleetRate) || math.IsInf(c.FleetRate, 0):
		return c, fmt.Errorf("dbbench: fleet rate must be a positive number of IDs per second, got %v", c.FleetRate)
	case c.Repeat < 1:
		return c, fmt.Errorf("dbbench: repeat must be at least 1, got %d", c.Repeat)
	case c.Fillfactor < 10 || c.Fillfactor > 100:
		return c, fmt.Errorf("dbbench: fillfactor must be between 10 and 100, got %d", c.Fillfactor)
	case c.Points < 1:
		return c, fmt.Errorf("dbbench: points must be at least 1, got %d", c.Points)
	case c.RangeN < 1:
		return c, fmt.Errorf("dbbench: range size must be at least 1, got %d", c.RangeN)
	}
	switch c.Workload {
	case "", WorkloadTable:
		c.Workload = WorkloadTable
	case WorkloadApp:
		if c.Children == 0 {
			c.Children = 4
		}
		if c.CreatedAtIndex == "" {
			c.CreatedAtIndex = CreatedAtNeeded
		}
		if c.Window == 0 {
			c.Window = 100 * time.Millisecond
		}
		switch {
		case c.Children < 1 || c.Children > 1000:
			return c, fmt.Errorf("dbbench: children must be between 1 and 1000, got %d", c.Children)
		case c.Window < 0:
			return c, fmt.Errorf("dbbench: window must be positive, got %v", c.Window)
		case c.CreatedAtIndex != CreatedAtNeeded && c.CreatedAtIndex != CreatedAtAll:
			return c, fmt.Errorf("dbbench: unknown created_at index policy %q (want %s or %s)", c.CreatedAtIndex, CreatedAtNeeded, CreatedAtAll)
		case c.Mode != ModeTx && c.Mode != ModeCopy:
			return c, fmt.Errorf("dbbench: the app workload takes mode %s or %s, got %q", ModeTx, ModeCopy, c.Mode)
		case c.Nodes > 1:
			return c, fmt.Errorf("dbbench: the app workload runs one generator per scheme; --nodes is for the table workload")
		}
	default:
		return c, fmt.Errorf("dbbench: unknown workload %q (want %s or %s)", c.Workload, WorkloadTable, WorkloadApp)
	}
	if c.IDsInTx && (c.Workload != WorkloadApp || c.Mode != ModeTx) {
		return c, fmt.Errorf("dbbench: ids-in-tx is for the app workload in mode %s", ModeTx)
	}
	if err := c.CheckRemedies(); err != nil {
		return c, err
	}
	if c.Keep && c.Workload != WorkloadApp {
		return c, fmt.Errorf("dbbench: keep is for the app workload")
	}
	switch c.Mode {
	case ModeCopy, ModeBatch, ModeSingle:
	case ModeTx:
		if c.Workload != WorkloadApp {
			return c, fmt.Errorf("dbbench: mode %s is for the app workload", ModeTx)
		}
	default:
		return c, fmt.Errorf("dbbench: unknown insert mode %q (want %s, %s or %s)", c.Mode, ModeCopy, ModeBatch, ModeSingle)
	}
	switch c.Profile {
	case ProfileSteady, ProfileCheckpoints:
	default:
		return c, fmt.Errorf("dbbench: unknown profile %q (want %s or %s)", c.Profile, ProfileSteady, ProfileCheckpoints)
	}
	seen := map[string]bool{}
	for _, s := range c.Schemes {
		s = strings.TrimSpace(s)
		if s == "" {
			return c, fmt.Errorf("dbbench: empty scheme in list")
		}
		if seen[s] {
			return c, fmt.Errorf("dbbench: scheme %q listed twice", s)
		}
		seen[s] = true
	}
	return c, nil
}

// options returns what an engine reads of c.
func (c Config) options() engine.Options {
	return engine.Options{Rows: c.Rows, Batch: c.Batch, Points: c.Points, Mode: c.Mode, Clients: c.Clients,
		Nodes: c.Nodes, Profile: c.Profile, Fillfactor: c.Fillfactor, Lookups: c.Lookups, RangeN: c.RangeN,
		SecondaryIndex: c.SecondaryIndex, Log: c.Log}
}

// fleet returns the simulation settings of c (rate 0: no simulation).
func (c Config) fleet() engine.FleetSettings {
	fs := engine.FleetSettings{Rate: c.FleetRate, Skew: c.ClockSkew, Seed: 1}
	if fs.Rate == 0 && c.Nodes > 1 {
		fs.Rate = DefaultFleetRate
	}
	switch {
	case fs.Skew == 0:
		fs.Skew = DefaultClockSkew
	case fs.Skew < 0:
		fs.Skew = 0
	}
	return fs
}

// CheckRemedies checks the client remedies of the app workload (ClientBatch, ClientBlock,
// IDsPerClient) of c as given, before defaults: their range, their workload and mode, and the
// pairs that contradict. Run checks them too; idbench checks them before it starts a server.
func (c Config) CheckRemedies() error {
	switch {
	case c.ClientBatch < 0 || c.ClientBatch > maxClientBatch:
		return fmt.Errorf("dbbench: client batch must be between 1 and %d operations, got %d", maxClientBatch, c.ClientBatch)
	case c.ClientBlock < 0 || c.ClientBlock > maxClientBlock:
		return fmt.Errorf("dbbench: client block must be between 1 and %d operations, got %d", maxClientBlock, c.ClientBlock)
	}
	var on []string
	if c.ClientBatch > 1 {
		on = append(on, "client-batch")
	}
	if c.ClientBlock > 1 {
		on = append(on, "client-block")
	}
	if c.IDsPerClient {
		on = append(on, "ids-per-client")
	}
	if len(on) == 0 {
		return nil
	}
	switch {
	case c.Workload != WorkloadApp || (c.Mode != ModeTx && c.Mode != ""):
		return fmt.Errorf("dbbench: %s is for the app workload in mode %s", on[0], ModeTx)
	case c.IDsInTx && (c.ClientBatch > 1 || c.ClientBlock > 1):
		return fmt.Errorf("dbbench: ids-in-tx makes one operation's IDs inside its transaction; %s makes them for several operations, so they exclude each other", on[0])
	case c.ClientBlock > 1 && c.IDsPerClient:
		return fmt.Errorf("dbbench: client-block and ids-per-client exclude each other (a client's own generator already writes one ascending run)")
	}
	return nil
}

// The largest client batch and client block.
const (
	maxClientBatch = 1000
	maxClientBlock = 100000
)
