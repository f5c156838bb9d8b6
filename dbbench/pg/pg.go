package pg

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Names of the engine in Config.DB and in a report's Settings.Engine.
const (
	// Local starts a private throwaway PostgreSQL cluster (package pglocal) for the run and
	// removes it afterwards.
	Local = "pg-local"
	// Server connects to an existing server: the one the libpq environment variables
	// (PGHOST, PGPORT, PGUSER, PGDATABASE, …) describe, or a connection string.
	Server = "pg"
)

// Report is the report dialect of PostgreSQL (pg-local, pg, a connection string).
func Report() engine.ReportText {
	return engine.ReportText{
		Title:       "PostgreSQL",
		Checkpoints: true,
		SettingsLine: func(s engine.Settings) string {
			return fmt.Sprintf("shared_buffers %s, max_wal_size %s, checkpoint_timeout %s, fsync %s, synchronous_commit %s, full_page_writes %s",
				s.SharedBuffers, s.MaxWALSize, s.CheckpointTimeout, s.Fsync, s.SynchronousCommit, s.FullPageWrites)
		},
		ServerSettings: func(row func(k string, v any), s engine.Settings) {
			row("shared_buffers", s.SharedBuffers)
			row("max_wal_size", s.MaxWALSize)
			row("checkpoint_timeout", s.CheckpointTimeout)
			row("fsync", s.Fsync)
			row("synchronous_commit", s.SynchronousCommit)
			row("full_page_writes", s.FullPageWrites)
			row("wal_compression", s.WALCompression)
		},
		AppDriver:   "pgx",
		AppBulkUnit: "COPY",
		AppBaseline: map[string]string{engine.ModeTx: "one transaction of 2 INSERTs per operation", engine.ModeCopy: "COPY of parents, then of children"},
		TextKeyNote: func(r engine.Row) string {
			if r.Col != engine.ColText && r.Col != engine.ColTextICU {
				return ""
			}
			return `ulid-text stores 26 bytes of text plus a length byte per key, against 16 bytes for uuid, and compares with memcmp only because of COLLATE "C". Under a linguistic collation every comparison in the B-tree goes through the collation library instead; the row ulid-text-icu (COLLATE "und-x-icu", whose order matches "C" for upper-case ULID text) measures what that adds. A database whose default collation is linguistic (en_US.UTF-8) puts every text key there unless the column says COLLATE "C".`
		},
	}
}

// pgEngine runs the benchmark on a PostgreSQL server, inside a schema of its
// own (idbench_<random>) that it drops when done.
type pgEngine struct {
	cfg     engine.Options
	kind    string // EnginePGLocal or EnginePGEnv
	connCfg *pgx.ConnConfig
	admin   *pgx.Conn   // measurements and DDL
	loaders []*pgx.Conn // one per client, opened on first use
	schema  string
	batch   int

	statsFn       string // qualified pgstatindex, "" when unavailable
	statsWhy      string
	statsCreated  bool // this run created pgstattuple in ExtSchema
	canCheckpoint bool
	walStats      bool   // pg_stat_wal.wal_fpi exists
	flushStats    bool   // pg_stat_force_next_flush exists
	ckptQuery     string // "" when unknown
	set           engine.Settings
	serverDefault string // the id column's DEFAULT for server-made rows (serverside.go)
	reopen        string // the command that opens the schema Config.Keep leaves
	keep          bool   // close leaves the schema: a successful run with Config.Keep
	keptDir       string // the stopped pg-local cluster's directory, kept with it
}

// appName marks idbench's sessions in pg_stat_activity.
const appName = "idbench"

// ExtSchema is the schema in which a run creates the pgstattuple extension
// when the database does not have it yet. An extension is database-wide:
// created in a run's own schema, it would vanish with that schema under
// every other run using it, so it lives here instead and idbench never drops
// it, nor this schema. Remove both when no run is active with
// DROP EXTENSION pgstattuple; DROP SCHEMA idbench_ext.
const ExtSchema = "idbench_ext"

// extLockKey is the transaction-level advisory lock (pg_advisory_xact_lock)
// that serialises concurrent runs installing pgstattuple: "idbstat" in ASCII.
const extLockKey int64 = 0x6964627374617400

// openPG connects to the server at dsn and creates the benchmark schema.
func openPG(ctx context.Context, cfg engine.Options, kind, dsn string) (*pgEngine, error) {
	connCfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dbbench: bad PostgreSQL connection string: %s", engine.OneLine(err.Error()))
	}
	return openPGConfig(ctx, cfg, kind, connCfg, dsn)
}

// openPGConfig is openPG for a connection string already parsed (connCfg, which it changes);
// dsn is the string, for the command that reopens a kept schema.
func openPGConfig(ctx context.Context, cfg engine.Options, kind string, connCfg *pgx.ConnConfig, dsn string) (*pgEngine, error) {
	connCfg.RuntimeParams["application_name"] = appName
	if connCfg.ConnectTimeout == 0 {
		connCfg.ConnectTimeout = 15 * time.Second
	}
	e := &pgEngine{cfg: cfg, kind: kind, connCfg: connCfg, batch: cfg.BatchFor(false)}
	var err error
	e.admin, err = pgx.ConnectConfig(ctx, connCfg)
	if err != nil {
		return nil, fmt.Errorf("dbbench: connect to PostgreSQL: %s", engine.OneLine(err.Error()))
	}
	var b [4]byte
	if _, err := crand.Read(b[:]); err != nil {
		e.admin.Close(context.Background())
		return nil, fmt.Errorf("dbbench: random schema name: %w", err)
	}
	e.schema = "idbench_" + hex.EncodeToString(b[:])
	e.reopen = pgReopen(dsn, e.schema)
	if _, err := e.admin.Exec(ctx, "CREATE SCHEMA "+e.schema); err != nil {
		e.admin.Close(context.Background())
		return nil, fail(ctx, "create schema "+e.schema+" (the user needs CREATE on the database)", err)
	}
	if err := e.probe(ctx); err != nil {
		_ = e.Close()
		return nil, err
	}
	return e, nil
}

// probe finds out what the server lets us measure.
func (e *pgEngine) probe(ctx context.Context) error {
	s := &e.set
	s.Engine = e.kind
	err := e.admin.QueryRow(ctx, `SELECT version(), current_setting('shared_buffers'), current_setting('max_wal_size'),
		current_setting('checkpoint_timeout'), current_setting('fsync'), current_setting('synchronous_commit'),
		current_setting('full_page_writes'), current_setting('wal_compression')`).Scan(
		&s.ServerVersion, &s.SharedBuffers, &s.MaxWALSize, &s.CheckpointTimeout, &s.Fsync,
		&s.SynchronousCommit, &s.FullPageWrites, &s.WALCompression)
	if err != nil {
		return fail(ctx, "read server settings", err)
	}
	if v, _, ok := strings.Cut(s.ServerVersion, " on "); ok {
		s.ServerVersion = v
	}

	// pgstattuple: use an installed copy, else install it once in a schema
	// of its own that no run drops (see ensureStats).
	if err := e.ensureStats(ctx); err != nil {
		return err
	}
	if e.statsFn != "" {
		s.Statistics = "pgstattuple"
		if e.statsCreated && e.kind != Local { // a pg-local cluster goes whole
			s.LeftBehind = "extension pgstattuple in schema " + ExtSchema + " (database-wide, other sessions may rely on it)"
		}
	} else {
		s.Statistics = "unavailable: " + e.statsWhy
	}

	if e.cfg.Profile == engine.ProfileSteady {
		if _, err := e.admin.Exec(ctx, "CHECKPOINT"); err == nil {
			e.canCheckpoint = true
		} else if ctx.Err() != nil || engine.ConnLost(err) {
			return fail(ctx, "checkpoint", err)
		}
	}
	s.CheckpointBeforeRun = e.canCheckpoint

	var fpi int64
	e.walStats = e.admin.QueryRow(ctx, "SELECT wal_fpi FROM pg_stat_wal").Scan(&fpi) == nil
	_, err = e.admin.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	e.flushStats = err == nil
	for _, q := range []string{
		"SELECT num_timed + num_requested FROM pg_stat_checkpointer",
		"SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter",
	} {
		var n int64
		if e.admin.QueryRow(ctx, q).Scan(&n) == nil {
			e.ckptQuery = q
			break
		}
	}
	if ctx.Err() != nil {
		return fail(ctx, "probe server", ctx.Err())
	}
	return nil
}

// ensureStats finds pgstatindex: in an installed pgstattuple, wherever it
// is, or else in one this run creates in ExtSchema. Creating is serialised
// with an advisory lock, so that two runs starting together do not both try,
// and done in a transaction, so that a failure leaves nothing. When the
// extension cannot be created (no privilege, not installed on the server),
// the statistics are reported unavailable with the reason.
func (e *pgEngine) ensureStats(ctx context.Context) error {
	const find = `SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
		WHERE x.extname = 'pgstattuple'`
	var nsp string
	err := e.admin.QueryRow(ctx, find).Scan(&nsp)
	if err == nil {
		e.statsFn = pgx.Identifier{nsp, "pgstatindex"}.Sanitize()
		return nil
	}
	if err != pgx.ErrNoRows {
		return fail(ctx, "look for pgstattuple", err)
	}
	err = pgx.BeginFunc(ctx, e.admin, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", extLockKey); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, find).Scan(&nsp) // another run may have been first
		if err == nil || err != pgx.ErrNoRows {
			return err
		}
		nsp = ExtSchema
		for _, q := range []string{
			"CREATE SCHEMA IF NOT EXISTS " + ExtSchema,
			"CREATE EXTENSION pgstattuple WITH SCHEMA " + ExtSchema,
			"GRANT USAGE ON SCHEMA " + ExtSchema + " TO PUBLIC",
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		e.statsCreated = true
		return nil
	})
	switch {
	case err == nil:
		e.statsFn = pgx.Identifier{nsp, "pgstatindex"}.Sanitize()
		return nil
	case ctx.Err() != nil || engine.ConnLost(err):
		e.statsCreated = false
		return fail(ctx, "create extension pgstattuple", err)
	}
	e.statsCreated = false
	// A session other than idbench may have created it meanwhile.
	if e.admin.QueryRow(ctx, find).Scan(&nsp) == nil {
		e.statsFn = pgx.Identifier{nsp, "pgstatindex"}.Sanitize()
		return nil
	}
	e.statsWhy = "cannot create extension pgstattuple: " + engine.OneLine(err.Error())
	return nil
}

func (e *pgEngine) Settings(s *engine.Settings) {
	v := e.set
	v.Fillfactor, v.Rows, v.Mode = s.Fillfactor, s.Rows, s.Mode
	*s = mergeSettings(*s, v)
	s.Batch = e.batch
}

// mergeSettings copies the engine fields of e into s.
func mergeSettings(s, e engine.Settings) engine.Settings {
	s.Engine = e.Engine
	s.ServerVersion = e.ServerVersion
	s.SharedBuffers = e.SharedBuffers
	s.MaxWALSize = e.MaxWALSize
	s.CheckpointTimeout = e.CheckpointTimeout
	s.Fsync = e.Fsync
	s.SynchronousCommit = e.SynchronousCommit
	s.FullPageWrites = e.FullPageWrites
	s.WALCompression = e.WALCompression
	s.Statistics = e.Statistics
	s.CheckpointBeforeRun = e.CheckpointBeforeRun
	s.LeftBehind = e.LeftBehind
	s.OtherRuns = e.OtherRuns
	s.SQLitePageSize = e.SQLitePageSize
	s.SQLiteCacheSize = e.SQLiteCacheSize
	return s
}

func (e *pgEngine) BatchSize() int { return e.batch }

func (e *pgEngine) HasBaseline() bool { return true }

func (e *pgEngine) ColumnTypeOf(r engine.Row) string { return e.columnType(r.Col) }

// TableRows: PostgreSQL runs every row Run accepted.
func (e *pgEngine) TableRows(rows []engine.Row, _ []string) ([]engine.Row, []string) {
	return rows, nil
}

// TableNotes: run.go's notes cover PostgreSQL.
func (e *pgEngine) TableNotes(*engine.Report, []engine.Row, []string) []string { return nil }

func (e *pgEngine) columnType(c engine.Column) string {
	switch c {
	case engine.ColIdentity:
		return "bigint identity"
	case engine.ColBigint:
		return "bigint"
	case engine.ColUint64:
		return "numeric(20,0)"
	case engine.ColUUID:
		return "uuid"
	case engine.ColTextICU:
		return `text COLLATE "und-x-icu"`
	case engine.ColServerBigint:
		return "bigint DEFAULT next_id()"
	case engine.ColServerUUID:
		return "uuid DEFAULT uuidv7()"
	default:
		return `text COLLATE "C"`
	}
}

// loaderConns returns the loading connections, opening them on first use.
func (e *pgEngine) loaderConns(ctx context.Context) ([]*pgx.Conn, error) {
	for len(e.loaders) < e.cfg.Clients {
		c, err := pgx.ConnectConfig(ctx, e.connCfg)
		if err != nil {
			return nil, fail(ctx, "open loading connection", err)
		}
		e.loaders = append(e.loaders, c)
	}
	return e.loaders, nil
}

// keyDDL is the definition of a key column of type c, NOT NULL: a server-made key takes its
// DEFAULT (serverside.go); identity is the caller's (CreateTables).
func (e *pgEngine) keyDDL(c engine.Column) string {
	switch c {
	case engine.ColServerBigint:
		return "bigint NOT NULL DEFAULT " + e.serverDefault
	case engine.ColServerUUID:
		return "uuid NOT NULL DEFAULT " + e.serverDefault
	}
	return e.columnType(c) + " NOT NULL"
}

// snapshot is the server's counters at one moment.
type snapshot struct {
	lsn   string
	fpi   int64
	ckpts int64
}

func (e *pgEngine) snap(ctx context.Context) (snapshot, error) {
	var s snapshot
	if err := e.admin.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&s.lsn); err != nil {
		return s, fail(ctx, "read WAL position", err)
	}
	// Other idbench runs on the server share its WAL and checkpoint counters.
	pids := []uint32{e.admin.PgConn().PID()}
	for _, c := range e.loaders {
		pids = append(pids, c.PgConn().PID())
	}
	var others int
	if err := e.admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> ALL($2::int4[])",
		appName, pids).Scan(&others); err != nil {
		return s, fail(ctx, "read pg_stat_activity", err)
	}
	e.set.OtherRuns = max(e.set.OtherRuns, others)
	if e.walStats {
		if err := e.admin.QueryRow(ctx, "SELECT wal_fpi FROM pg_stat_wal").Scan(&s.fpi); err != nil {
			return s, fail(ctx, "read pg_stat_wal", err)
		}
	}
	if e.ckptQuery != "" {
		if err := e.admin.QueryRow(ctx, e.ckptQuery).Scan(&s.ckpts); err != nil {
			return s, fail(ctx, "read checkpoint count", err)
		}
	}
	return s, nil
}

// FillTable writes n rows into t with insert, or the bare baseline with bareCopy when src is
// nil.
func (e *pgEngine) FillTable(ctx context.Context, t engine.TableDef, src *engine.Source, n int, rec *engine.Recorder) error {
	conns, err := e.loaderConns(ctx)
	if err != nil {
		return err
	}
	tbl := pgx.Identifier{e.schema, t.Name}
	if src == nil {
		_, err := bareCopy(ctx, conns[0], tbl, n, rec)
		return err
	}
	return e.insert(ctx, tbl, t.Key.Col, src, n, conns, rec)
}

// SourceRow gives a segment row its store in the benchmark schema (prepareServerSide).
func (e *pgEngine) SourceRow(r engine.Row) (engine.Row, error) {
	if r.StoreStep == 0 {
		return r, nil
	}
	return e.segmentRow(r)
}

// bareCopy is the baseline: the simplest pgx CopyFrom of ascending int64
// keys.
func bareCopy(ctx context.Context, conn *pgx.Conn, tbl pgx.Identifier, n int, rec *engine.Recorder) (int64, error) {
	i := 0
	c, err := conn.CopyFrom(ctx, tbl, []string{"id", "payload"}, pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		return []any{int64(i), int64(i)}, nil
	}))
	rec.Add(c)
	return c, err
}

// insert loads n rows of keys from src in the configured mode.
func (e *pgEngine) insert(ctx context.Context, tbl pgx.Identifier, c engine.Column, src *engine.Source, n int,
	conns []*pgx.Conn, rec *engine.Recorder) error {
	cl := &engine.Claimer{Total: int64(n), Batch: int64(e.batch)}
	var pre *engine.Prefetch
	if len(conns) == 1 && e.cfg.Mode != engine.ModeSingle && !c.ServerMade() {
		pre = engine.NewPrefetch(ctx, src, n)
		defer pre.Stop()
	}
	cols := []string{"id", "payload"}
	if c.ServerMade() {
		cols = []string{"payload"}
	}
	return engine.Workers(ctx, len(conns), func(ctx context.Context, w int) error {
		conn := conns[w]
		var local engine.Value
		// sent holds the keys of the insert in flight, for rec.Arrived once it commits.
		var sent []engine.Value
		key := func() (*engine.Value, error) {
			if pre != nil {
				return pre.Next()
			}
			return &local, src.NextContext(ctx, &local)
		}
		args := func(dst []any, payload int64) ([]any, error) {
			if c.ServerMade() {
				return append(dst, payload), nil
			}
			v, err := key()
			if err != nil {
				return nil, err
			}
			if rec.Watching() {
				sent = append(sent, *v)
			}
			return append(dst, pgKey(c, v), payload), nil
		}
		committed := func(n int64) {
			rec.Arrived(sent...)
			sent = sent[:0]
			rec.Add(n)
		}
		switch e.cfg.Mode {
		case engine.ModeCopy:
			row := make([]any, 0, 2)
			for {
				start, count, ok := cl.Claim()
				if !ok {
					return nil
				}
				var i int64
				_, err := conn.CopyFrom(ctx, tbl, cols, pgx.CopyFromFunc(func() ([]any, error) {
					if i == count {
						return nil, nil
					}
					r, err := args(row[:0], start+i+1)
					if err != nil {
						return nil, err
					}
					i++
					return r, nil
				}))
				if err != nil {
					return err
				}
				// Counted when the server has committed the COPY: the
				// encoder runs ahead of the server by a buffer's worth.
				committed(count)
			}
		case engine.ModeBatch:
			stmts := map[int64]string{}
			var buf []any
			for {
				start, count, ok := cl.Claim()
				if !ok {
					return nil
				}
				sql, ok := stmts[count]
				if !ok {
					sql = insertSQL(tbl.Sanitize(), cols, int(count))
					stmts[count] = sql
				}
				buf = buf[:0]
				for i := int64(0); i < count; i++ {
					var err error
					if buf, err = args(buf, start+i+1); err != nil {
						return err
					}
				}
				if _, err := conn.Exec(ctx, sql, buf...); err != nil {
					return err
				}
				committed(count)
			}
		default: // ModeSingle
			sql := insertSQL(tbl.Sanitize(), cols, 1)
			buf := make([]any, 0, 2)
			for {
				start, _, ok := cl.Claim()
				if !ok {
					return nil
				}
				var err error
				if buf, err = args(buf[:0], start+1); err != nil {
					return err
				}
				if _, err := conn.Exec(ctx, sql, buf...); err != nil {
					return err
				}
				committed(1)
			}
		}
	})
}

// pgKey returns the value handed to pgx for a key: int64 for bigint,
// pgtype.Numeric for numeric(20,0) (IDs with bit 63 set), pgtype.UUID (16 raw
// bytes) for uuid and the canonical string for text, so that pgx encodes each
// in binary without a detour through text.
func pgKey(c engine.Column, v *engine.Value) any {
	switch c {
	case engine.ColIdentity, engine.ColBigint:
		return v.I64
	case engine.ColUint64:
		return pgtype.Numeric{Int: new(big.Int).SetUint64(v.U64), Valid: true}
	case engine.ColUUID:
		return pgtype.UUID{Bytes: v.B16, Valid: true}
	default:
		return v.Str
	}
}

// insertSQL returns a multi-row INSERT for rows rows.
func insertSQL(table string, cols []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	p := 1
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for i := range cols {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("$" + strconv.Itoa(p))
			p++
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Close drops the schema with everything in it and closes the connections.
func (e *pgEngine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range e.loaders {
		c.Close(ctx)
	}
	e.loaders = nil
	if e.keep {
		if e.admin != nil {
			e.admin.Close(ctx)
			e.admin = nil
		}
		return nil
	}
	drop := "DROP SCHEMA IF EXISTS " + e.schema + " CASCADE"
	if e.admin != nil {
		_, err := e.admin.Exec(ctx, drop)
		e.admin.Close(ctx)
		e.admin = nil
		if err == nil {
			return nil
		}
	}
	// The connection broke (or was never made): clean up over a new one.
	admin, err := pgx.ConnectConfig(ctx, e.connCfg)
	if err != nil {
		return fmt.Errorf("dbbench: cannot drop schema %s: connect: %s", e.schema, engine.OneLine(err.Error()))
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, drop); err != nil {
		return fmt.Errorf("dbbench: drop schema %s: %w", e.schema, err)
	}
	return nil
}

// LocalSettings returns the server settings dbbench pins for a pg-local
// cluster under the given profile, before Config.PGSettings is applied.
func LocalSettings(profile string) map[string]string {
	s := map[string]string{
		"shared_buffers":     "128MB",
		"fsync":              "on",
		"synchronous_commit": "off",
		"full_page_writes":   "on",
		"autovacuum":         "off",
		"max_connections":    "300",
		"wal_compression":    "off",
		"checkpoint_timeout": "1h",
		"max_wal_size":       "8GB",
		"min_wal_size":       "80MB",
	}
	if profile == engine.ProfileCheckpoints {
		s["checkpoint_timeout"] = "30s"
		s["max_wal_size"] = "64MB"
		s["min_wal_size"] = "32MB"
	}
	return s
}

// Columns is PostgreSQL's column rule: it has no MariaDB/MySQL column types, and a layout
// that may reach bit 63 later stays in a signed bigint (ColUint64 covers those that set it
// now or within a day).
func Columns(r engine.Row) (engine.Row, error) {
	if r.Col == engine.ColTextDefault || r.Col == engine.ColUUIDNative {
		return r, engine.ErrForInnoDB(r.Label)
	}
	r.Unsigned = false
	return r, nil
}

// OpenLocal starts a private cluster with LocalSettings(o.Profile) and settings over
// them, and opens the engine on it; the function it returns drops the schema and removes the
// cluster, or stops it and keeps its directory when the run keeps its tables.
func OpenLocal(ctx context.Context, o engine.Options, settings map[string]string) (engine.Engine, func() error, error) {
	all := LocalSettings(o.Profile)
	for k, v := range settings {
		all[k] = v
	}
	o.Logf("dbbench: starting a private PostgreSQL cluster")
	cl, err := pglocal.Start(ctx, pglocal.Options{Settings: all})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%w: %w", engine.ErrInterrupted, err)
		}
		return nil, nil, fmt.Errorf("dbbench: pg-local: %w", err)
	}
	e, err := openPG(ctx, o, Local, cl.DSN())
	if err != nil {
		return nil, nil, errors.Join(err, cl.Close())
	}
	return e, func() error {
		if !e.keep {
			return errors.Join(e.Close(), cl.Close())
		}
		err := e.Close()
		start, kerr := cl.Keep(context.Background())
		if kerr != nil {
			return errors.Join(err, kerr, cl.Close())
		}
		e.reopen, e.keptDir = start+" && "+e.reopen, cl.Dir()
		return err
	}, nil
}

// OpenServer opens the engine on an existing server: connCfg parsed from dsn (empty: the
// libpq environment variables).
func OpenServer(ctx context.Context, o engine.Options, connCfg *pgx.ConnConfig, dsn string) (engine.Engine, func() error, error) {
	e, err := openPGConfig(ctx, o, Server, connCfg, dsn)
	if err != nil {
		return nil, nil, err
	}
	return e, e.Close, nil
}

// pgConnLost reports whether err means the connection to PostgreSQL is gone: a server error
// of class 08 (connection exception), 57P01 admin_shutdown (pg_terminate_backend), 57P02
// crash_shutdown or 57P03 cannot_connect_now, else what ConnLost finds.
func pgConnLost(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" ||
			strings.HasPrefix(pgErr.Code, "08")
	}
	return engine.ConnLost(err)
}

func (e *pgEngine) ConnLost(err error) bool { return pgConnLost(err) }

// fail is fail with PostgreSQL's errors (pgConnLost).
func fail(ctx context.Context, what string, err error) error {
	return engine.FailLost(ctx, what, err, pgConnLost)
}
