package innodb

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/idkit/idkit/dbbench/engine"
	"io"
	"log"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Names of the engine in Config.DB and in a report's Settings.Engine.
const (
	// Local starts a private throwaway MariaDB (or MySQL) server (package mariadblocal) for
	// the run and removes it afterwards; its tables are InnoDB.
	Local = "mariadb-local"
	// Server is the name reported for a run against an existing MariaDB or MySQL server,
	// given as a "mysql://user:password@host:port/db" URL.
	Server = "mysql"
)

// mysqlEngine runs the benchmark on a MariaDB or MySQL server, in InnoDB
// tables inside a database of its own (idbench_<random>) that it drops when
// done.
type mysqlEngine struct {
	cfg     engine.Options
	kind    string // EngineMariaDBLocal or EngineMySQL
	db      *sql.DB
	admin   *sql.Conn         // measurements and DDL
	loaders []*sql.Conn       // one per client, opened on first use
	writers []*engine.SQLRows // the row writers RowWriters handed out last, over loaders
	dbName  string
	batch   int

	mariadb    bool
	uuidType   bool   // MariaDB's UUID type exists (10.7+)
	uuidOrder  string // what the UUID type does with v7 and v4 byte order
	charset    string // the database's default character set
	mbMaxLen   int    // its longest character in bytes
	pageSize   int64
	lsnStatus  bool     // SHOW GLOBAL STATUS has Innodb_lsn_current
	indexStats bool     // mysql.innodb_index_stats is readable
	monitors   bool     // the INNODB_METRICS page counters are enabled
	enabled    []string // counters this run enabled, disabled again on close
	canFlush   bool     // SET GLOBAL innodb_max_dirty_pages_pct is allowed
	dirtyPct   string   // its value before the run, restored on close
	statsWhy   string
	// badLeafStats lists loads whose n_leaf_pages cannot hold their rows.
	badLeafStats []string
	set          engine.Settings
	reopen       string // the command that opens the database Config.Keep leaves
	keep         bool   // close leaves the database: a successful run with Config.Keep
	keptDir      string // the stopped mariadb-local server's directory, kept with it
}

// InnoDB page counters the run reads from information_schema.INNODB_METRICS.
var innodbCounters = []string{"index_page_splits", "index_page_merge_successful"}

// loadPathOf names a mode's path in the report.
func loadPathOf(mode string) string {
	switch mode {
	case engine.ModeCopy:
		return "LOAD DATA LOCAL INFILE from an io.Reader (mysql.RegisterReaderHandler), one per batch"
	case engine.ModeSingle:
		return "single-row prepared INSERTs, autocommitted"
	}
	return "prepared multi-row INSERTs (binary protocol), one transaction each"
}

// openMySQL connects to the server and creates the benchmark database.
func openMySQL(ctx context.Context, cfg engine.Options, kind string, c *mysql.Config) (*mysqlEngine, error) {
	c = c.Clone()
	c.DBName = ""
	c.Timeout = 15 * time.Second
	c.ParseTime = false
	c.MultiStatements = false
	// The driver logs broken connections to stderr; Run reports them.
	c.Logger = mysql.Logger(log.New(io.Discard, "", 0))
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	connector, err := mysql.NewConnector(c)
	if err != nil {
		return nil, fmt.Errorf("dbbench: MySQL configuration: %s", engine.RedactDSN(err.Error()))
	}
	e := &mysqlEngine{cfg: cfg, kind: kind, db: sql.OpenDB(connector), batch: cfg.BatchFor(false)}
	e.db.SetMaxOpenConns(cfg.Clients + 2)
	e.db.SetMaxIdleConns(cfg.Clients + 2)
	e.db.SetConnMaxLifetime(0)
	e.admin, err = e.db.Conn(ctx)
	if err != nil {
		e.db.Close()
		if ctx.Err() != nil {
			return nil, fail(ctx, "connect to MySQL", err)
		}
		return nil, fmt.Errorf("dbbench: connect to MySQL at %s: %s", c.Addr, engine.OneLine(engine.RedactDSN(err.Error())))
	}
	var b [4]byte
	if _, err := crand.Read(b[:]); err != nil {
		e.admin.Close()
		e.db.Close()
		return nil, fmt.Errorf("dbbench: random database name: %w", err)
	}
	e.dbName = "idbench_" + hex.EncodeToString(b[:])
	e.reopen = mysqlReopen(c.Addr, c.Net, c.User, c.Passwd != "", e.dbName)
	if _, err := e.admin.ExecContext(ctx, "CREATE DATABASE "+e.dbName); err != nil {
		e.admin.Close()
		e.db.Close()
		e.dbName = ""
		return nil, fail(ctx, "create database (the user needs CREATE and DROP)", err)
	}
	if err := e.probe(ctx); err != nil {
		_ = e.Close()
		return nil, err
	}
	return e, nil
}

// probe finds out what the server is and lets us measure.
func (e *mysqlEngine) probe(ctx context.Context) error {
	s := &e.set
	s.Engine = e.kind
	s.LoadPath = loadPathOf(e.cfg.Mode)
	s.SecondaryIndex = e.cfg.SecondaryIndex
	var version, comment string
	var bp, logSize int64
	if err := e.admin.QueryRowContext(ctx, `SELECT VERSION(), @@version_comment, @@innodb_buffer_pool_size,
		@@innodb_page_size, @@innodb_flush_log_at_trx_commit, @@innodb_doublewrite`).Scan(
		&version, &comment, &bp, &e.pageSize, &s.InnoDBFlushLogAtTrxCommit, &s.InnoDBDoublewrite); err != nil {
		return fail(ctx, "read server settings", err)
	}
	e.mariadb = strings.Contains(strings.ToLower(version+comment), "mariadb")
	// MySQL 8.0.30+ sizes its redo log with innodb_redo_log_capacity.
	for _, q := range []string{"SELECT @@innodb_log_file_size * @@innodb_log_files_in_group", "SELECT @@innodb_log_file_size", "SELECT @@innodb_redo_log_capacity"} {
		if e.admin.QueryRowContext(ctx, q).Scan(&logSize) == nil {
			break
		}
	}
	if e.mariadb {
		s.ServerVersion = "MariaDB " + strings.SplitN(version, "-MariaDB", 2)[0]
	} else {
		s.ServerVersion = "MySQL " + version
	}
	s.InnoDBBufferPoolSize = sizeString(bp)
	s.InnoDBLogFileSize = sizeString(logSize)
	s.InnoDBPageSize = int(e.pageSize)
	if err := e.admin.QueryRowContext(ctx, `SELECT s.DEFAULT_CHARACTER_SET_NAME, s.DEFAULT_COLLATION_NAME, c.MAXLEN
		FROM information_schema.SCHEMATA s JOIN information_schema.CHARACTER_SETS c ON c.CHARACTER_SET_NAME = s.DEFAULT_CHARACTER_SET_NAME
		WHERE s.SCHEMA_NAME = ?`, e.dbName).Scan(&e.charset, &s.Collation, &e.mbMaxLen); err != nil {
		return fail(ctx, "read the database's character set", err)
	}
	var lsn string
	e.lsnStatus = e.admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'").Scan(new(string), &lsn) == nil
	if _, err := e.lsn(ctx); err != nil {
		return err
	}

	var n int64
	err := e.admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.innodb_index_stats WHERE database_name = ?", e.dbName).Scan(&n)
	switch {
	case err == nil:
		e.indexStats = true
		s.Statistics = "mysql.innodb_index_stats"
	case ctx.Err() != nil || engine.ConnLost(err):
		return fail(ctx, "read mysql.innodb_index_stats", err)
	default:
		e.statsWhy = "cannot read mysql.innodb_index_stats: " + engine.OneLine(err.Error())
		s.Statistics = "information_schema.TABLES (" + e.statsWhy + ")"
	}
	if err := e.enableMonitors(ctx); err != nil {
		return err
	}
	if e.mariadb {
		if err := e.probeUUID(ctx); err != nil {
			return err
		}
	}
	if e.cfg.Profile == engine.ProfileSteady {
		if err := e.admin.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct").Scan(&e.dirtyPct); err != nil {
			return fail(ctx, "read innodb_max_dirty_pages_pct", err)
		}
		e.canFlush = true
		if err := e.flushDirty(ctx); err != nil {
			if ctx.Err() != nil || engine.ConnLost(err) {
				return err
			}
			e.canFlush = false
		}
	}
	s.CheckpointBeforeRun = e.canFlush
	return nil
}

// flushDirty writes every dirty page of the buffer pool to disk, as
// PostgreSQL's CHECKPOINT does before each load of the steady profile, so
// that a load does not pay for flushing its predecessors' pages: it sets
// innodb_max_dirty_pages_pct to 0, waits until Innodb_buffer_pool_pages_dirty
// is 0 (at most a minute) and restores the setting.
func (e *mysqlEngine) flushDirty(ctx context.Context) (err error) {
	if _, err := e.admin.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
		return fail(ctx, "set innodb_max_dirty_pages_pct", err)
	}
	defer func() {
		if _, rerr := e.admin.ExecContext(context.WithoutCancel(ctx), "SET GLOBAL innodb_max_dirty_pages_pct = "+e.dirtyPct); rerr != nil && err == nil {
			err = fail(ctx, "restore innodb_max_dirty_pages_pct", rerr)
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		var name string
		var dirty int64
		if err := e.admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'").Scan(&name, &dirty); err != nil {
			return fail(ctx, "read Innodb_buffer_pool_pages_dirty", err)
		}
		if dirty == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fail(ctx, "wait for dirty pages to be flushed", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// enableMonitors turns on the INNODB_METRICS page counters this run reads,
// remembering which it changed so that close can restore them. They are
// server-global: a shared server's figures include other sessions' splits.
func (e *mysqlEngine) enableMonitors(ctx context.Context) error {
	for _, name := range innodbCounters {
		var on string
		err := e.admin.QueryRowContext(ctx, "SELECT "+e.enabledColumn()+" FROM information_schema.INNODB_METRICS WHERE NAME = ?", name).Scan(&on)
		if err != nil {
			if ctx.Err() != nil || engine.ConnLost(err) {
				return fail(ctx, "read INNODB_METRICS", err)
			}
			e.set.Statistics += "; page splits unavailable: " + engine.OneLine(err.Error())
			return nil
		}
		if on == "1" || strings.EqualFold(on, "enabled") {
			continue
		}
		if _, err := e.admin.ExecContext(ctx, "SET GLOBAL innodb_monitor_enable = '"+name+"'"); err != nil {
			if ctx.Err() != nil || engine.ConnLost(err) {
				return fail(ctx, "enable "+name, err)
			}
			e.set.Statistics += "; page splits unavailable: cannot enable " + name + ": " + engine.OneLine(err.Error())
			return nil
		}
		e.enabled = append(e.enabled, name)
	}
	e.monitors = true
	return nil
}

// enabledColumn is INNODB_METRICS's on/off column: ENABLED on MariaDB,
// STATUS on MySQL.
func (e *mysqlEngine) enabledColumn() string {
	if e.mariadb {
		return "ENABLED"
	}
	return "STATUS"
}

// probeUUID measures how MariaDB's UUID type orders version-7 and version-4
// values: by their bytes as written, or with the groups swapped (time_low
// last), as MariaDB stores versions 1 to 5 and, before 10.11.5, every
// version.
func (e *mysqlEngine) probeUUID(ctx context.Context) error {
	tbl := e.dbName + ".uuid_probe"
	if _, err := e.admin.ExecContext(ctx, "CREATE TABLE "+tbl+" (v CHAR(1) NOT NULL, id UUID NOT NULL, PRIMARY KEY (v, id))"); err != nil {
		if ctx.Err() != nil || engine.ConnLost(err) {
			return fail(ctx, "probe the UUID type", err)
		}
		e.uuidOrder = "no UUID type on this server (" + engine.OneLine(err.Error()) + ")"
		return nil
	}
	defer e.admin.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+tbl)
	e.uuidType = true
	var parts []string
	for _, v := range []string{"7", "4"} {
		// a < b in byte order; b < a when the last group is compared first.
		a := "00000000-0000-" + v + "000-8000-000000000001"
		b := "00000001-0000-" + v + "000-8000-000000000000"
		if _, err := e.admin.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES (?, ?), (?, ?)", v, a, v, b); err != nil {
			return fail(ctx, "probe the UUID type", err)
		}
		var first string
		if err := e.admin.QueryRowContext(ctx, "SELECT id FROM "+tbl+" WHERE v = ? ORDER BY id LIMIT 1", v).Scan(&first); err != nil {
			return fail(ctx, "probe the UUID type", err)
		}
		order := "sorted by its bytes as written"
		if first == b {
			order = "stored with its groups swapped (sorted from the last group)"
		}
		parts = append(parts, "version "+v+" "+order)
	}
	e.uuidOrder = strings.Join(parts, "; ")
	return nil
}

func sizeString(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return strconv.FormatInt(b>>30, 10) + "G"
	case b >= 1<<20 && b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + "M"
	}
	return strconv.FormatInt(b, 10)
}

func (e *mysqlEngine) Settings(s *engine.Settings) {
	v := e.set
	s.Engine = v.Engine
	s.ServerVersion = v.ServerVersion
	s.Statistics = v.Statistics
	s.InnoDBBufferPoolSize = v.InnoDBBufferPoolSize
	s.InnoDBLogFileSize = v.InnoDBLogFileSize
	s.InnoDBFlushLogAtTrxCommit = v.InnoDBFlushLogAtTrxCommit
	s.InnoDBDoublewrite = v.InnoDBDoublewrite
	s.InnoDBPageSize = v.InnoDBPageSize
	s.Collation = v.Collation
	s.LoadPath = v.LoadPath
	s.SecondaryIndex = v.SecondaryIndex
	s.Batch = e.batch
}

func (e *mysqlEngine) BatchSize() int { return e.batch }

func (e *mysqlEngine) HasBaseline() bool { return true }

func (e *mysqlEngine) columnType(c engine.Column) string {
	return e.ColumnTypeOf(engine.Row{Col: c})
}

// ColumnTypeOf is the SQL type of a row's id column.
func (e *mysqlEngine) ColumnTypeOf(r engine.Row) string {
	switch r.Col {
	case engine.ColIdentity:
		return "BIGINT AUTO_INCREMENT"
	case engine.ColBigint:
		if r.Unsigned {
			return "BIGINT UNSIGNED"
		}
		return "BIGINT"
	case engine.ColUUID:
		return "BINARY(16)"
	case engine.ColUUIDNative:
		return "UUID"
	case engine.ColText:
		return fmt.Sprintf("CHAR(%d) COLLATE %s_bin", r.TextLen, e.charset)
	case engine.ColTextDefault:
		return fmt.Sprintf("CHAR(%d) COLLATE %s", r.TextLen, e.set.Collation)
	case engine.ColPublicText:
		// TypeID text is ASCII: bytes, one a character, whatever the character set.
		return fmt.Sprintf("VARBINARY(%d)", r.TextLen)
	}
	return "unsupported"
}

// keyBytes is what a row's key occupies in an InnoDB record (COMPACT or
// DYNAMIC format): the value, plus a length byte for VARBINARY and for CHAR
// in a multi-byte character set, which InnoDB stores as variable-length.
func (e *mysqlEngine) keyBytes(r engine.Row) int {
	switch r.Col {
	case engine.ColIdentity, engine.ColBigint:
		return 8
	case engine.ColUUID, engine.ColUUIDNative:
		return 16
	case engine.ColPublicText:
		return r.TextLen + 1
	}
	if e.mbMaxLen > 1 {
		return r.TextLen + 1
	}
	return r.TextLen
}

// InnoDB record and page overheads, from the COMPACT/DYNAMIC record format:
// every record has a 5-byte header; a clustered-index leaf record carries
// the 6-byte transaction id and 7-byte roll pointer; a page loses 38 bytes
// of file header, 56 of page header, 26 of infimum and supremum records and
// 8 of file trailer.
const (
	innodbRecHeader   = 5
	innodbTrxRollPtr  = 6 + 7
	innodbPageOverhed = 38 + 56 + 26 + 8
)

// leafFill returns the average leaf fill in percent that rows records of
// recBytes each imply in leaves pages: the records' bytes over the pages'
// usable bytes. The page directory (2 bytes per 4 to 8 records) is left
// out, so full pages read a little under 100.
func (e *mysqlEngine) leafFill(rows, recBytes, leaves int64) *float64 {
	if leaves <= 0 {
		return nil
	}
	f := 100 * float64(rows*recBytes) / float64(leaves*(e.pageSize-innodbPageOverhed))
	return &f
}

// loaderConns returns the loading connections, opening them on first use.
func (e *mysqlEngine) loaderConns(ctx context.Context) ([]*sql.Conn, error) {
	for len(e.loaders) < e.cfg.Clients {
		c, err := e.db.Conn(ctx)
		if err != nil {
			return nil, fail(ctx, "open loading connection", err)
		}
		e.loaders = append(e.loaders, c)
	}
	return e.loaders, nil
}

// innodbSnap is the server's counters at one moment.
type innodbSnap struct {
	lsn     int64
	bpReads int64
	splits  int64
	merges  int64
}

// lsn returns the log sequence number: Innodb_lsn_current on MariaDB, else
// the "Log sequence number" line of SHOW ENGINE INNODB STATUS.
func (e *mysqlEngine) lsn(ctx context.Context) (int64, error) {
	if e.lsnStatus {
		var name string
		var v int64
		if err := e.admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'").Scan(&name, &v); err != nil {
			return 0, fail(ctx, "read Innodb_lsn_current", err)
		}
		return v, nil
	}
	var typ, name, status string
	if err := e.admin.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return 0, fail(ctx, "read the log sequence number (SHOW ENGINE INNODB STATUS needs the PROCESS privilege)", err)
	}
	for _, l := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(l, "Log sequence number"); ok {
			if v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				return v, nil
			}
		}
	}
	return 0, fmt.Errorf("dbbench: no log sequence number in SHOW ENGINE INNODB STATUS")
}

func (e *mysqlEngine) snap(ctx context.Context) (innodbSnap, error) {
	var s innodbSnap
	var err error
	if s.lsn, err = e.lsn(ctx); err != nil {
		return s, err
	}
	var name string
	if err := e.admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'").Scan(&name, &s.bpReads); err != nil {
		return s, fail(ctx, "read Innodb_buffer_pool_reads", err)
	}
	if e.monitors {
		if err := e.admin.QueryRowContext(ctx, `SELECT
			SUM(CASE WHEN NAME = 'index_page_splits' THEN COUNT ELSE 0 END),
			SUM(CASE WHEN NAME = 'index_page_merge_successful' THEN COUNT ELSE 0 END)
			FROM information_schema.INNODB_METRICS WHERE NAME IN ('index_page_splits', 'index_page_merge_successful')`).Scan(&s.splits, &s.merges); err != nil {
			return s, fail(ctx, "read INNODB_METRICS", err)
		}
	}
	return s, nil
}

// FillTable writes n rows into t with insert, or the bare baseline with bareLoad when src is
// nil.
func (e *mysqlEngine) FillTable(ctx context.Context, t engine.TableDef, src *engine.Source, n int, rec *engine.Recorder) error {
	conns, err := e.loaderConns(ctx)
	if err != nil {
		return err
	}
	tbl := e.dbName + "." + t.Name
	if src == nil {
		return bareLoad(ctx, conns[0], tbl, n, e.cfg.Mode, e.batch, rec)
	}
	return e.insert(ctx, tbl, t.Key, src, n, conns, rec)
}

// SourceRow: keys come from the row's own generators.
func (e *mysqlEngine) SourceRow(r engine.Row) (engine.Row, error) { return r, nil }

// readerSeq makes reader names unique within the process: the driver's
// reader registry is process-global.
var readerSeq atomic.Uint64

// loadData runs LOAD DATA LOCAL INFILE for tbl reading r, under a reader
// name unique to this call that it deregisters afterwards. set is the
// column list and SET clause.
func loadData(ctx context.Context, conn *sql.Conn, tbl, cols string, r io.Reader) error {
	name := "idbench-" + strconv.FormatUint(readerSeq.Add(1), 10) + "-" + tbl
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	_, err := conn.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+tbl+
		" CHARACTER SET ascii FIELDS TERMINATED BY '\\t' ESCAPED BY '' LINES TERMINATED BY '\\n' "+cols)
	return err
}

// lineReader is an io.Reader over lines made on demand by next, which
// appends one line to its argument and reports false after the last one.
// Its memory is one buffer of about 64 KiB, whatever the row count.
type lineReader struct {
	next func(dst []byte) ([]byte, bool, error)
	buf  []byte
	pos  int
	done bool
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.pos == len(l.buf) {
		if l.done {
			return 0, io.EOF
		}
		l.buf, l.pos = l.buf[:0], 0
		for len(l.buf) < 64<<10 {
			var more bool
			var err error
			l.buf, more, err = l.next(l.buf)
			if err != nil {
				return 0, err
			}
			if !more {
				l.done = true
				break
			}
		}
		if len(l.buf) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, l.buf[l.pos:])
	l.pos += n
	return n, nil
}

// bareLoad is the baseline: ascending BIGINT keys by the same path as the
// schemes (one LOAD DATA of all rows in copy mode, prepared multi-row
// INSERTs of batch rows otherwise), with no key generator behind it.
func bareLoad(ctx context.Context, conn *sql.Conn, tbl string, n int, mode string, batch int, rec *engine.Recorder) error {
	if mode == engine.ModeCopy {
		i := 0
		r := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
			if i == n {
				return dst, false, nil
			}
			i++
			dst = strconv.AppendInt(dst, engine.BareKeyBase+int64(i), 10)
			dst = append(dst, '\t')
			dst = strconv.AppendInt(dst, int64(i), 10)
			return append(dst, '\n'), true, nil
		}}
		if err := loadData(ctx, conn, tbl, "(id, payload)", r); err != nil {
			return err
		}
		rec.Add(int64(n))
		return nil
	}
	stmts := map[int64]*sql.Stmt{}
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	args := make([]any, 0, 2*batch)
	for start := int64(0); start < int64(n); start += int64(batch) {
		count := min(int64(batch), int64(n)-start)
		st, ok := stmts[count]
		if !ok {
			var err error
			if st, err = conn.PrepareContext(ctx, mysqlInsertSQL(tbl, 2, int(count))); err != nil {
				return err
			}
			stmts[count] = st
		}
		args = args[:0]
		for i := start + 1; i <= start+count; i++ {
			args = append(args, engine.BareKeyBase+i, i)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
		rec.Add(count)
	}
	return nil
}

// mysqlInsertSQL returns a multi-row INSERT of rows rows of cols columns
// into tbl (id, payload; payload alone for cols == 1).
func mysqlInsertSQL(tbl string, cols, rows int) string {
	var b strings.Builder
	if cols == 1 {
		b.WriteString("INSERT INTO " + tbl + " (payload) VALUES ")
	} else {
		b.WriteString("INSERT INTO " + tbl + " (id, payload) VALUES ")
	}
	one := "(?)"
	if cols == 2 {
		one = "(?,?)"
	}
	b.Grow(rows * (len(one) + 1))
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	return b.String()
}

// maxPlaceholders is the protocol's limit on parameters per prepared
// statement.
const maxPlaceholders = 65535

// insert loads n rows of keys from src in the configured mode.
func (e *mysqlEngine) insert(ctx context.Context, tbl string, r engine.Row, src *engine.Source, n int,
	conns []*sql.Conn, rec *engine.Recorder) error {
	cl := &engine.Claimer{Total: int64(n), Batch: int64(e.batch)}
	var pre *engine.Prefetch
	if len(conns) == 1 && e.cfg.Mode != engine.ModeSingle && r.Col != engine.ColIdentity {
		pre = engine.NewPrefetch(ctx, src, n)
		defer pre.Stop()
	}
	c := r.Col
	return engine.Workers(ctx, len(conns), func(ctx context.Context, w int) error {
		conn := conns[w]
		var local engine.Value
		// sent holds the keys of the insert in flight, for rec.Arrived once it commits.
		var sent []engine.Value
		key := func() (*engine.Value, error) {
			v := &local
			var err error
			if pre != nil {
				v, err = pre.Next()
			} else {
				err = src.Next(&local)
			}
			if err == nil && rec.Watching() {
				sent = append(sent, *v)
			}
			return v, err
		}
		committed := func(n int64) {
			rec.Arrived(sent...)
			sent = sent[:0]
			rec.Add(n)
		}
		switch e.cfg.Mode {
		case engine.ModeCopy:
			cols := "(id, payload)"
			switch c {
			case engine.ColIdentity:
				cols = "(payload)"
			case engine.ColUUID:
				cols = "(@id, payload) SET id = UNHEX(@id)"
			}
			for {
				start, count, ok := cl.Claim()
				if !ok {
					return nil
				}
				var i int64
				lr := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
					if i == count {
						return dst, false, nil
					}
					i++
					if c != engine.ColIdentity {
						v, err := key()
						if err != nil {
							return dst, false, err
						}
						dst = appendKeyText(dst, c, r.Unsigned, v)
						dst = append(dst, '\t')
					}
					dst = strconv.AppendInt(dst, start+i, 10)
					return append(dst, '\n'), true, nil
				}}
				if err := loadData(ctx, conn, tbl, cols, lr); err != nil {
					return err
				}
				committed(count)
			}
		default: // ModeBatch, ModeSingle
			ncols := 2
			if c == engine.ColIdentity {
				ncols = 1
			}
			stmts := map[int64]*sql.Stmt{}
			defer func() {
				for _, s := range stmts {
					s.Close()
				}
			}()
			var buf []any
			for {
				start, count, ok := cl.Claim()
				if !ok {
					return nil
				}
				if count*int64(ncols) > maxPlaceholders {
					return fmt.Errorf("dbbench: batch of %d rows needs %d placeholders, more than MySQL's %d; use a smaller --batch", count, count*int64(ncols), maxPlaceholders)
				}
				st, ok := stmts[count]
				if !ok {
					var err error
					if st, err = conn.PrepareContext(ctx, mysqlInsertSQL(tbl, ncols, int(count))); err != nil {
						return err
					}
					stmts[count] = st
				}
				buf = buf[:0]
				for i := int64(0); i < count; i++ {
					if c != engine.ColIdentity {
						v, err := key()
						if err != nil {
							return err
						}
						buf = append(buf, mysqlKey(c, r.Unsigned, v))
					}
					buf = append(buf, start+i+1)
				}
				if _, err := st.ExecContext(ctx, buf...); err != nil {
					return err
				}
				committed(count)
			}
		}
	})
}

// appendKeyText appends a key as LOAD DATA reads it: decimal for BIGINT,
// hex for BINARY(16) (the statement UNHEXes it), the canonical form for
// the UUID type and for text.
func appendKeyText(dst []byte, c engine.Column, unsigned bool, v *engine.Value) []byte {
	switch c {
	case engine.ColBigint:
		if unsigned {
			return strconv.AppendUint(dst, v.U64, 10)
		}
		return strconv.AppendInt(dst, v.I64, 10)
	case engine.ColUUID:
		return hex.AppendEncode(dst, v.B16[:])
	case engine.ColUUIDNative:
		return appendUUID(dst, v.B16)
	}
	return append(dst, v.Str...)
}

// appendUUID appends b in the canonical 8-4-4-4-12 form.
func appendUUID(dst []byte, b [16]byte) []byte {
	for i, g := range [][]byte{b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]} {
		if i > 0 {
			dst = append(dst, '-')
		}
		dst = hex.AppendEncode(dst, g)
	}
	return dst
}

// mysqlKey returns the parameter for a key in a prepared INSERT.
func mysqlKey(c engine.Column, unsigned bool, v *engine.Value) any {
	switch c {
	case engine.ColBigint:
		if unsigned {
			return v.U64
		}
		return v.I64
	case engine.ColUUID:
		b := v.B16
		return b[:]
	case engine.ColUUIDNative:
		return string(appendUUID(nil, v.B16))
	}
	return v.Str
}

// Close drops the database with everything in it, restores the counters it
// enabled and closes the connections.
func (e *mysqlEngine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range e.loaders {
		c.Close()
	}
	e.loaders = nil
	var errs []error
	exec := func(q string) error {
		if e.admin != nil {
			if _, err := e.admin.ExecContext(ctx, q); err == nil {
				return nil
			}
			// The connection broke: clean up over a new one.
			e.admin.Close()
			e.admin = nil
		}
		_, err := e.db.ExecContext(ctx, q)
		return err
	}
	if e.dbName != "" && !e.keep {
		if err := exec("DROP DATABASE IF EXISTS " + e.dbName); err != nil {
			errs = append(errs, fmt.Errorf("dbbench: drop database %s: %s", e.dbName, engine.OneLine(err.Error())))
		}
	}
	for _, name := range e.enabled {
		if err := exec("SET GLOBAL innodb_monitor_disable = '" + name + "'"); err != nil {
			errs = append(errs, fmt.Errorf("dbbench: restore %s: %s", name, engine.OneLine(err.Error())))
		}
	}
	e.enabled = nil
	if e.admin != nil {
		e.admin.Close()
		e.admin = nil
	}
	e.db.Close()
	return errors.Join(errs...)
}

// mysqlConnLost reports whether err from the MySQL driver means the
// connection is gone: the driver's invalid-connection errors, and server
// errors 1053 (shutdown in progress), 1927 (connection killed), 2006 (gone
// away) and 2013 (lost during query), else what ConnLost finds.
func mysqlConnLost(err error) bool {
	if errors.Is(err, mysql.ErrInvalidConn) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1053, 1927, 2006, 2013:
			return true
		}
	}
	return engine.ConnLost(err)
}

func (e *mysqlEngine) ConnLost(err error) bool { return mysqlConnLost(err) }

// fail is fail with the MySQL driver's errors (mysqlConnLost).
func fail(ctx context.Context, what string, err error) error {
	return engine.FailLost(ctx, what, err, mysqlConnLost)
}

// Finding: no load error of this engine is a finding.
func (e *mysqlEngine) Finding(error, engine.Row) (string, bool) { return "", false }
