package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench"
)

const dbHelp = `Usage: idbench db [flags]

Measures what each ID scheme costs a database primary-key B-tree: every scheme loads the same
number of rows into its own table (id PRIMARY KEY, payload bigint), and idbench reports insert
throughput overall and per chunk as the table grows, index and table size, bytes per row,
B-tree leaf density and fragmentation (pgstattuple), WAL bytes per row and full-page images,
checkpoints during the load, and point-lookup and range-scan latency afterwards. Each figure
is the median of --repeat runs after a discarded warm-up.

On PostgreSQL idbench works inside a schema of its own (idbench_<random>) and drops it when
done, on error and on Ctrl-C; it drops nothing it did not create. If the database lacks the
pgstattuple extension, idbench creates it once in schema idbench_ext and leaves it there (an
extension is database-wide, so another run may be using it); the report says so.

Flags:
  --db ENGINE        pg-local: a private throwaway PostgreSQL cluster started from the
                     installed server binaries, on a unix socket, removed afterwards;
                     sqlite: an embedded SQLite database (pure Go) in a temp directory;
                     pebble: Pebble, CockroachDB's LSM storage engine (pure Go), keys laid
                     out as CockroachDB lays out a table, in a temp directory; reports write
                     and space amplification, compactions, L0 sublevels, write stalls and
                     blocks read (table workload; --secondary-index for time-window scans);
                     rocksdb: RocksDB, TiKV's storage engine (the system's librocksdb through
                     cgo: build idbench with -tags rocksdb, needs librocksdb-dev), keys laid
                     out as TiDB lays out a clustered table and TiKV stores it; the same
                     figures as pebble (L0 files for sublevels);
                     pg: the server the libpq variables (PGHOST, PGUSER, …) describe;
                     or a connection string: postgres://user@host/db, "host=… dbname=…";
                     mariadb-local: a private throwaway MariaDB/MySQL server (InnoDB) started
                     from the installed binaries, on a unix socket, removed afterwards;
                     mysql://user:password@host:port/db (?socket=PATH for a unix socket):
                     an existing MariaDB/MySQL server (idbench works in a database of its
                     own, idbench_<random>, and drops it).
                     all-local: every engine available here (pg-local, mariadb-local, sqlite),
                     one after the other, in one report.
                     Default: pg-local when server binaries are found, else sqlite.
  --schemes LIST     rows to compare, separated by commas or semicolons (default
                     "bigserial,snowflake,sonyflake,ulid,uuidv7,uuidv4,ulid-text,typeid,
                     typeid-text"):
                     bigserial (identity column, the database's sequence), ulid-text (ULID
                     as text COLLATE "C"), typeid-text ("typeid:prefix=user" stored as its
                     TypeID text, user_ and 26 characters, compared as bytes: text COLLATE
                     "C", VARBINARY on MariaDB/MySQL; the row typeid stores the same IDs in
                     16 bytes), ulid-text-icu (the same under ICU's linguistic
                     "und-x-icu" collation; PostgreSQL), instagram-plpgsql[:shard=N]
                     (Instagram's next_id() PL/pgSQL as the column default; PostgreSQL),
                     uuidv7-plpgsql (UUIDv7 made by the server; PostgreSQL), segment[:step=N]
                     (the segment scheme, its counter in the benchmark database; PostgreSQL),
                     or any spec of idbench gen, e.g. "ulid:monotonic=false" or
                     "snowflake:layout=discord,node=3".
                     A 128-bit spec may end in -text (text, binary collation), -text-icu,
                     -text-default (MariaDB/MySQL: the database's default collation) or
                     -native (MariaDB's UUID type; UUIDs only); a spec whose IDs show as
                     TypeID text (typeid, or prefix=) takes -text only, and stores that text.
                     On MariaDB/MySQL the default is "auto-increment,snowflake,sonyflake,ulid,
                     uuidv7,uuidv4,uuidv7-native,uuidv4-native,ulid-text,ulid-text-default,
                     uuidv7-text,uuidv7-text-default,typeid,typeid-text"
  --rows N           rows per measured load (default %d)
  --mode MODE        copy (the bulk path, default: binary COPY on PostgreSQL, LOAD DATA LOCAL
                     INFILE from an io.Reader on MariaDB/MySQL), batch (multi-row INSERT,
                     prepared on MariaDB/MySQL), single (one-row INSERTs, autocommitted, from
                     --clients connections); tx (app workload only, its default: one
                     transaction per operation)
  --batch N          rows per COPY / INSERT / SQLite transaction (default: copy one chunk of
                     the throughput curve, batch 1000, sqlite batch 500)
  --clients LIST     concurrent loading connections (default 1); a list such as 1,4,16,64
                     sweeps it: one run per count, in the order given, every other setting
                     the same, and one report (the table, --json or --benchstat of every run;
                     --out DIR: DIR/sweep.md with each scheme's bytes per operation (row) and
                     operations (rows) per second against clients, charted, what the writers
                     did (arrival order, page splits, leaf fill, latency, waits) and the
                     machine's load, and DIR/sweep.json with every run's full report)
  --nodes K          K simulated application servers writing one table (default 1), each
                     with its own generator, node ID and clock (offsets with sd 1ms), issuing
                     100,000/K IDs/s in simulated time; see idbench scale. For segment, K
                     processes each counting through its own block of the shared store
  --profile P        steady (default): CHECKPOINT before each load, no checkpoint inside it;
                     checkpoints: pg-local with max_wal_size=64MB, checkpoint_timeout=30s
  --repeat N         measured loads per scheme; the report gives the median (default %d)
  --warmup N         rows (app workload: operations) of the discarded warm-up load each
                     scheme and the baseline get before their first measured load, on tables
                     dropped afterwards (default: rows/5; -1: none)
  --fillfactor N     primary-key index fillfactor (default 90)
  --pg-setting K=V   pg-local server setting, repeatable (pinned: shared_buffers=128MB,
                     fsync=on, synchronous_commit=off, …)
  --mariadb-setting K=V
                     mariadb-local server option, repeatable (pinned:
                     innodb_buffer_pool_size=128M, innodb_log_file_size=512M,
                     innodb_flush_log_at_trx_commit=2, …)
  --secondary-index  add an index on payload to every table (MariaDB/MySQL), to show what the
                     primary key costs each secondary index, which carries a copy of it
  --points N         chunks in the throughput curve (default 20)
  --lookups N        point lookups and range scans after loading (default %d; -1: none)
  --range N          rows per range scan (default 100)
  --baseline         also time a bare pgx CopyFrom of ascending int64 keys (default true)
  --workload W       table (default): one table (id PRIMARY KEY, payload) per scheme;
                     app: per scheme, tables <label>_parent(id PK, created_at, customer,
                     payload) and <label>_child(id PK, parent_id REFERENCES parent(id),
                     payload) with an index on child(parent_id); each business operation is 1
                     parent and --children children in one transaction (--mode tx, default) or
                     in bulk (--mode copy), from --clients connections. Reports operations/s,
                     bytes per operation by table and index, WAL/redo bytes per operation, "the
                     rows of a --window" through the key's bounds (time-ordered schemes) or the
                     created_at index (the others) with the index EXPLAIN names, and "a parent
                     with its children" through the foreign key; checks that both ways of
                     answering the time query return the same rows on tick-aligned windows;
                     and a bare driver loop with ascending bigint keys as the baseline.
                     Default schemes: bigserial (auto-increment), snowflake, ulid, uuidv7,
                     uuidv4. PostgreSQL, MariaDB/MySQL and SQLite (created_at in Unix µs)
  --children K       app: child rows per operation, 1 to 1000 (default 4)
  --created-at-index P
                     app: needed (default): index parent(created_at) for the schemes whose key
                     cannot answer time ranges (uuidv4, bigserial/auto-increment); all: for
                     every scheme, which also times the time query through created_at
  --window D         app: the time window of the time query (default 100ms), aligned to each
                     scheme's ticks and rounded up to a whole number of them (sonyflake: 10ms,
                     a 1s layout: 1s), which the report says; key bounds are exact on ticks,
                     a created_at query can differ by at most one tick at each window edge
  --ids-in-tx        app, tx mode: make each operation's IDs inside its transaction, just
                     before the parent's INSERT, instead of before the transaction begins
                     (a remedy for keys that reach the table out of order with many clients)
  --client-batch K   app, tx mode: each client writes K operations per transaction (up to
                     1000; 0 or 1: one), the parents as one multi-row INSERT sorted by key, then all their
                     children as one sorted by key, so a client's keys reach each table in
                     order within its transaction (IDs made one operation at a time, as without)
  --client-block K   app, tx mode: each client takes the keys of its next K operations at once
                     (up to 100000; 0 or 1: none), one run of consecutive IDs no other client's interleave,
                     as a segment generator per client takes a block of one store, and spends
                     them one operation per transaction: N clients write N ascending runs.
                     Not with keys the database makes, --ids-in-tx or --ids-per-client
  --ids-per-client   app, tx mode: each client makes its keys with a generator of its own; a
                     Snowflake-family scheme gets the client's number as its node, so with the
                     node above the time (snowflake:fields=node:6/time:41/seq:16) each client
                     writes a key range of its own
  --keep             app: leave the schema (PostgreSQL) or database (MariaDB/MySQL) with the
                     last run's tables and print its name and the command that opens it; with
                     pg-local or mariadb-local the stopped server's directory is kept too
  --json             print JSON instead of the table
  --benchstat        print the Go benchmark format instead of the table
  --out DIR          also write DIR/report.md with SVG charts, report.json, benchstat.txt
  --render DIR       measure nothing: write DIR/report.md, benchstat.txt and the charts again
                     from DIR/report.json (a report of --out), as this idbench renders them,
                     or DIR/sweep.md and its charts from DIR/sweep.json (a --clients sweep);
                     the JSON is left as it is. Takes no other flag
  -v                 print each load's throughput on stderr

A progress bar is drawn on stderr when stderr is a terminal.

Examples:
  idbench db
  idbench db --db sqlite --rows 50000
  idbench db --db pg-local --rows 1000000 --repeat 3 --out report/
  idbench db --db "postgres://app@db.internal/bench" --schemes snowflake,uuidv7,uuidv4
  idbench db --mode single --clients 8 --schemes bigserial,uuidv7,uuidv4
  idbench db --nodes 16 --schemes snowflake,ulid:monotonic=false --json
  idbench db --profile checkpoints --pg-setting shared_buffers=64MB
  idbench db --db mariadb-local --secondary-index --mariadb-setting innodb_buffer_pool_size=16M
  idbench db --db "mysql://bench:secret@db.internal:3306/app" --schemes snowflake,uuidv7,uuidv4
  idbench db --workload app --rows 100000 --clients 4 --keep
  idbench db --workload app --db mariadb-local --clients 1,4,16,64 --out sweep/
  idbench db --workload app --db mariadb-local --clients 1,16 --client-block 200 --schemes snowflake,uuidv7
  idbench db --workload app --db mariadb-local --created-at-index all --mode copy
  idbench db --render docs/report
`

// runDB is "idbench db".
func runDB(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	def := dbbench.DefaultConfig()
	help := fmt.Sprintf(dbHelp, def.Rows, def.Repeat, def.Lookups)
	fs := newFlagSet("db")
	db := fs.String("db", "", "")
	schemes := fs.String("schemes", "", "")
	rows := fs.Int("rows", def.Rows, "")
	mode := fs.String("mode", def.Mode, "")
	batch := fs.Int("batch", 0, "")
	clients := fs.String("clients", strconv.Itoa(def.Clients), "")
	nodes := fs.Int("nodes", def.Nodes, "")
	profile := fs.String("profile", def.Profile, "")
	repeat := fs.Int("repeat", def.Repeat, "")
	warmup := fs.Int("warmup", 0, "")
	fillfactor := fs.Int("fillfactor", def.Fillfactor, "")
	points := fs.Int("points", def.Points, "")
	lookups := fs.Int("lookups", def.Lookups, "")
	rangeN := fs.Int("range", def.RangeN, "")
	baseline := fs.Bool("baseline", def.Baseline, "")
	asJSON := fs.Bool("json", false, "")
	asBench := fs.Bool("benchstat", false, "")
	out := fs.String("out", "", "")
	render := fs.String("render", "", "")
	verbose := fs.Bool("v", false, "")
	secondary := fs.Bool("secondary-index", false, "")
	workload := fs.String("workload", dbbench.WorkloadTable, "")
	children := fs.Int("children", 4, "")
	createdAt := fs.String("created-at-index", dbbench.CreatedAtNeeded, "")
	window := fs.Duration("window", 100*time.Millisecond, "")
	keep := fs.Bool("keep", false, "")
	idsInTx := fs.Bool("ids-in-tx", false, "")
	clientBatch := fs.Int("client-batch", 0, "")
	clientBlock := fs.Int("client-block", 0, "")
	idsPerClient := fs.Bool("ids-per-client", false, "")
	mariadbSettings := settingFlag(fs, "mariadb-setting")
	settings := pgSettingFlag(fs)
	pos, err := parseFlags(fs, "db", help, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("db", "db: unexpected argument %q (db takes only flags)", pos[0])
	}
	if *render != "" {
		var others []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "render" {
				others = append(others, "--"+f.Name)
			}
		})
		if len(others) > 0 {
			return usagef("db", "db: --render takes no other flag (got %s)", strings.Join(others, ", "))
		}
		if _, err := os.Stat(filepath.Join(*render, dbbench.SweepJSON)); err == nil {
			if err := dbbench.RenderSweep(*render); err != nil {
				return fmt.Errorf("db: --render: %w", err)
			}
			fmt.Fprintf(stderr, "idbench: sweep rendered again in %s\n", *render)
			return nil
		}
		if err := dbbench.RenderReport(*render); err != nil {
			return fmt.Errorf("db: --render: %w", err)
		}
		fmt.Fprintf(stderr, "idbench: report rendered again in %s\n", *render)
		return nil
	}
	if *asJSON && *asBench {
		return usagef("db", "db: --json and --benchstat exclude each other")
	}
	if *warmup < -1 {
		return usagef("db", "db: --warmup %d: want rows, or -1 for none", *warmup)
	}

	sweep, err := parseClients(*clients)
	if err != nil {
		return usagef("db", "db: %w", err)
	}
	cfg := def
	cfg.DB = *db
	cfg.Rows = *rows
	cfg.Mode = *mode
	cfg.Batch = *batch
	cfg.Clients = sweep[0]
	cfg.Nodes = *nodes
	cfg.Profile = *profile
	cfg.Repeat = *repeat
	cfg.WarmupRows = *warmup
	cfg.Fillfactor = *fillfactor
	cfg.Points = *points
	cfg.Lookups = *lookups
	cfg.RangeN = *rangeN
	cfg.Baseline = *baseline
	if len(settings) > 0 {
		cfg.PGSettings = settings
	}
	if len(mariadbSettings) > 0 {
		cfg.MariaDBSettings = mariadbSettings
	}
	cfg.SecondaryIndex = *secondary
	cfg.Workload = *workload
	modeSet := false
	fs.Visit(func(f *flag.Flag) { modeSet = modeSet || f.Name == "mode" })
	if cfg.Workload == dbbench.WorkloadApp {
		cfg.Children, cfg.CreatedAtIndex, cfg.Window, cfg.Keep, cfg.IDsInTx = *children, *createdAt, *window, *keep, *idsInTx
		cfg.ClientBatch, cfg.ClientBlock, cfg.IDsPerClient = *clientBatch, *clientBlock, *idsPerClient
		if !modeSet {
			cfg.Mode = dbbench.ModeTx
		}
	} else {
		var appOnly []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "children", "created-at-index", "window", "keep", "ids-in-tx", "client-batch", "client-block", "ids-per-client":
				appOnly = append(appOnly, "--"+f.Name)
			}
		})
		if len(appOnly) > 0 {
			return usagef("db", "db: %s: for --workload app", strings.Join(appOnly, ", "))
		}
	}
	if *schemes != "" {
		if cfg.Schemes, err = splitSchemes(*schemes); err != nil {
			return usagef("db", "db: --schemes: %w", err)
		}
	}
	if err := checkDBFlags(cfg); err != nil {
		return usagef("db", "db: %w", err)
	}
	cfg.Log = stderr
	if !*verbose {
		cfg.Log = &firstLines{w: stderr}
	}
	if dbbench.IsTerminal(stderr) {
		cfg.Progress = stderr
	}
	cfg.Command = commandLine("idbench db", args)

	if len(sweep) > 1 {
		if cfg.DB == dbbench.EngineAllLocal {
			return usagef("db", "db: --clients %s: a sweep runs on one engine at a time, not on --db %s", *clients, cfg.DB)
		}
		return runDBSweep(ctx, stdout, stderr, cfg, sweep, *asJSON, *asBench, *out)
	}
	if cfg.DB == dbbench.EngineAllLocal {
		return runDBAllLocal(ctx, stdout, stderr, cfg, *asJSON, *asBench, *out)
	}
	rep, runErr := dbbench.Run(ctx, cfg)
	if rep == nil {
		return fmt.Errorf("db: %w", runErr)
	}
	// A report with an error (a failed time check) is written as any other, then the error
	// fails the command: the finished loads are not lost.
	switch {
	case *asJSON:
		err = dbbench.WriteJSON(stdout, rep)
	case *asBench:
		err = dbbench.WriteBenchstat(stdout, rep)
	default:
		err = dbbench.WriteTable(stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("db: writing: %w", err)
	}
	if rep.Settings.Kept != "" {
		fmt.Fprintf(stderr, "idbench: kept %s; open it with: %s\n", rep.Settings.Kept, rep.Settings.Reopen)
	}
	if *out != "" {
		if err := dbbench.WriteReport(*out, rep); err != nil {
			return fmt.Errorf("db: %w", err)
		}
		fmt.Fprintf(stderr, "idbench: report written to %s\n", *out)
	}
	if runErr != nil {
		return fmt.Errorf("db: %w", runErr)
	}
	return nil
}

// maxClients is the largest --clients count (dbbench's limit).
const maxClients = 256

// parseClients reads --clients: one count, or a comma-separated list of distinct counts
// from 1 to maxClients. Errors name the bad item.
func parseClients(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		item := strings.TrimSpace(part)
		if item == "" {
			return nil, fmt.Errorf("--clients %q: empty item (want counts separated by commas, such as 1,4,16)", s)
		}
		n, err := strconv.Atoi(item)
		if err != nil || n < 1 || n > maxClients {
			return nil, fmt.Errorf("--clients %q: %q is not a whole number from 1 to %d", s, item, maxClients)
		}
		if seen[n] {
			return nil, fmt.Errorf("--clients %q: %d given twice", s, n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// runDBSweep is "idbench db --clients LIST": one run of cfg per client count, printed run
// after run (--json: the sweep as one object), and with --out the sweep's report.
func runDBSweep(ctx context.Context, stdout, stderr io.Writer, cfg dbbench.Config, clients []int, asJSON, asBench bool, out string) error {
	s, runErr := dbbench.RunSweep(ctx, cfg, clients, nil)
	if s == nil || len(s.Runs) == 0 {
		return fmt.Errorf("db: %w", runErr)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("db: writing: %w", err)
		}
	} else {
		for i, r := range s.Runs {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			write := dbbench.WriteTable
			if asBench {
				write = dbbench.WriteBenchstat
			} else {
				fmt.Fprintf(stdout, "%d client(s):\n", r.Clients)
			}
			if err := write(stdout, r.Report); err != nil {
				return fmt.Errorf("db: writing: %w", err)
			}
		}
	}
	if out != "" {
		if err := dbbench.WriteSweep(out, s); err != nil {
			return fmt.Errorf("db: %w", err)
		}
		fmt.Fprintf(stderr, "idbench: sweep written to %s\n", out)
	}
	if runErr != nil {
		return fmt.Errorf("db: %w", runErr)
	}
	return nil
}

// pgSettingFlag defines the repeatable --pg-setting NAME=VALUE flag on fs and returns the map
// it fills.
func pgSettingFlag(fs *flag.FlagSet) map[string]string { return settingFlag(fs, "pg-setting") }

// settingFlag defines a repeatable NAME=VALUE flag and returns the map it fills.
func settingFlag(fs *flag.FlagSet, name string) map[string]string {
	settings := map[string]string{}
	fs.Func(name, "", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", s)
		}
		settings[strings.TrimSpace(k)] = strings.TrimSpace(v)
		return nil
	})
	return settings
}

// checkDBFlags rejects flag values that are mistakes on the command line, so
// they exit with status 2 before anything starts.
func checkDBFlags(c dbbench.Config) error {
	switch {
	case c.Rows < 1:
		return fmt.Errorf("--rows %d: want at least 1", c.Rows)
	case c.Repeat < 1:
		return fmt.Errorf("--repeat %d: want at least 1", c.Repeat)
	case c.Clients < 1:
		return fmt.Errorf("--clients %d: want at least 1", c.Clients)
	case c.Nodes < 1:
		return fmt.Errorf("--nodes %d: want at least 1", c.Nodes)
	case c.Batch < 0:
		return fmt.Errorf("--batch %d: want 1 or more", c.Batch)
	case c.Points < 1:
		return fmt.Errorf("--points %d: want at least 1", c.Points)
	case c.RangeN < 1:
		return fmt.Errorf("--range %d: want at least 1", c.RangeN)
	}
	switch {
	case c.Workload == dbbench.WorkloadApp:
		switch {
		case c.DB == dbbench.EngineAllLocal:
			return fmt.Errorf("--workload app runs on one engine at a time, not on --db %s", c.DB)
		case c.Mode != dbbench.ModeTx && c.Mode != dbbench.ModeCopy:
			return fmt.Errorf("--mode %q: the app workload takes tx or copy", c.Mode)
		case c.Children < 1 || c.Children > 1000:
			return fmt.Errorf("--children %d: want 1 to 1000 (an operation is a parent and its children; for keys without a child table, use --workload table)", c.Children)
		case c.CreatedAtIndex != dbbench.CreatedAtNeeded && c.CreatedAtIndex != dbbench.CreatedAtAll:
			return fmt.Errorf("--created-at-index %q: want needed or all", c.CreatedAtIndex)
		case c.Window <= 0:
			return fmt.Errorf("--window %v: want a positive duration", c.Window)
		case c.IDsInTx && c.Mode != dbbench.ModeTx:
			return fmt.Errorf("--ids-in-tx: for --mode tx (a bulk load has no transaction per operation)")
		}
		if err := c.CheckRemedies(); err != nil {
			return err
		}
	case c.Workload != dbbench.WorkloadTable:
		return fmt.Errorf("--workload %q: want table or app", c.Workload)
	default:
		switch c.Mode {
		case dbbench.ModeCopy, dbbench.ModeBatch, dbbench.ModeSingle:
		default:
			return fmt.Errorf("--mode %q: want copy, batch or single", c.Mode)
		}
	}
	switch c.Profile {
	case dbbench.ProfileSteady, dbbench.ProfileCheckpoints:
	default:
		return fmt.Errorf("--profile %q: want steady or checkpoints", c.Profile)
	}
	if len(c.Schemes) == 0 {
		return errors.New("--schemes: empty list")
	}
	return nil
}

// commandLine renders the command for the report, quoting arguments a shell
// would split and hiding passwords (idkit.Redact, one argument at a time, so
// a password with blanks in a key=value DSN is hidden whole).
func commandLine(prefix string, args []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, a := range args {
		a = idkit.Redact(a)
		b.WriteByte(' ')
		a = idkit.Redact(a) // a --db connection string may carry a password
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?[]{}()<>|&;#~") {
			b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}

// firstLines passes on only dbbench's engine lines (those that say which
// engine runs) and drops the per-load lines, which -v shows.
type firstLines struct{ w io.Writer }

// Write passes p on unless it is a per-load line.
func (f *firstLines) Write(p []byte) (int, error) {
	s := string(p)
	if strings.Contains(s, " rows/s") || strings.Contains(s, " ops/s") {
		return len(p), nil
	}
	return f.w.Write(p)
}
