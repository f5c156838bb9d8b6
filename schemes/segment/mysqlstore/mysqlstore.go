// Package mysqlstore keeps segment counters in a MariaDB or MySQL (InnoDB) table, for the
// segment scheme of idkit (store=mysql://…, store=mariadb://…). It uses
// github.com/go-sql-driver/mysql. Importing it registers both URL schemes with
// segment.RegisterStore.
//
// The table (idkit_segments unless ?table= says otherwise, created on first use) has the
// columns of pgstore's: biz_tag, max_id, step, store_index, store_count, updated_at. A block
// is taken in one transaction on one connection, as Meituan Leaf does: the row is created if
// missing (INSERT … ON DUPLICATE KEY UPDATE that changes nothing), then UPDATE … SET max_id =
// max_id + step locks it until COMMIT, and SELECT max_id in the same transaction reads the
// value this transaction wrote.
//
// # Durability
//
// A counter that a crash sets back hands its numbers out again, and IDs repeat. InnoDB makes
// a commit durable only under some global settings, which no session can override, so Open
// refuses, with an error wrapping ErrNotDurable that names the setting:
//
//   - innodb_flush_log_at_trx_commit other than 1 (or MariaDB's 3): 0 loses up to a second of
//     commits when mariadbd/mysqld crashes, 2 when the machine does;
//   - with the binary log on (log_bin), sync_binlog other than 1: crash recovery rolls back a
//     commit whose binlog event the machine lost; and a session with sql_log_bin = 0 (a DSN
//     parameter can set it), whose increments a replica never sees, so a failover repeats them;
//   - innodb_doublewrite off (or MySQL's DETECT_ONLY), innodb_flush_method nosync or
//     littlesync: a crash of the machine can corrupt or lose the row;
//   - on a Galera node (wsrep_on), pc.ignore_sb or pc.ignore_quorum in wsrep_provider_options:
//     both halves of a split cluster keep taking blocks from the same counter;
//   - a table that is not InnoDB (an existing MyISAM or MEMORY table named by table=, or
//     InnoDB missing and the engine substituted).
//
// Every Take reads innodb_flush_log_at_trx_commit, log_bin, sync_binlog and sql_log_bin (and on
// a Galera node wsrep_provider_options, which SET GLOBAL can change) again on both sides of
// the write it vouches for: in its transaction before the UPDATE, and on the
// same connection after COMMIT, before the block is handed out; it drops the block if one of
// them was wrong at either read (SET GLOBAL innodb_flush_log_at_trx_commit = 2 for a bulk load
// is common, and one made while the take ran is seen): its numbers are lost, never used. The
// store URL's unsafe=true accepts all of these but the engine, for tests and throwaway data.
//
// # Replication
//
// A commit the primary acknowledged survives a failover only if the promoted replica held it.
// Open and every Take read the durability class, at the same two points:
//
//   - single: the binary log is off, or no replica reads it (MariaDB's Slaves_connected
//     status, which counts the binary log dump threads and needs no privilege; on MySQL the
//     Binlog Dump threads in performance_schema.threads, which the store's user needs the
//     PROCESS privilege to see);
//   - sync: a Galera node in the Primary component (wsrep_on; with the writer guard below,
//     since Galera alone can let two nodes commit the same increment), or one
//     replica, a semi-sync client, with Rpl_semi_sync_master_status ON and
//     rpl_semi_sync_master_wait_point AFTER_SYNC (the commit becomes visible only once the
//     replica acknowledged it), and
//     Rpl_semi_sync_master_no_tx not risen across the take: MariaDB falls back to
//     asynchronous replication when rpl_semi_sync_master_timeout expires, and still answers
//     the COMMIT that waited in vain with success;
//   - async: anything else with a replica attached (semi-sync off or fallen back, AFTER_COMMIT,
//     more replicas than the one acknowledgement MariaDB waits for).
//
// async is refused, naming the setting or status, unless durability=async is in the store URL
// (Settings.AcceptAsync); failover fencing is then the only protection: each row records the
// epoch it was last written in (the primary's server_id and gtid_domain_id; a Galera
// cluster's state UUID), a take in another epoch first adds Request.Gap blocks, and under
// durability=async a new row starts after the gap. A server with read_only on (a replica) is
// refused. Any error at or after COMMIT drops the block.
//
// The gap does not protect a key whose row never reached the replica that is promoted (its
// first take came less than the replication lag before the failover, or while the replica
// was stopped, cut off or lagging): MariaDB and MySQL count no promotions (the epoch tells
// that the primary changed, not how often), so the promoted replica makes the row again at
// the same start, Step × (1 + Gap), and hands out the lost primary's first block again, then
// its later blocks (TestNewRowRepeatsAfterPromotion). Under durability=async, take each key
// once on the primary and check that the replica holds its row before relying on it, and add
// no key while a replica is away or lagging; pgstore, whose new rows start past the gap for
// each PostgreSQL timeline, has no such limit.
//
// # One writer node per key
//
// Galera's certification does not keep two nodes from committing the same read-modify-write
// of a row: Jepsen reports Lost Update in MariaDB Galera Cluster 12.1.2 even without faults,
// and TestFaultPartitionGalera saw two nodes of the Primary component commit the same
// increment about a second after a membership change, in four runs of five, when every node
// had takers of the key. So on a Galera node each key's row records its writer node
// (wsrep_gcomm_uuid, new at each start of the node, in column writer), and a take goes
// through only on that node; on any other node it is refused with an error wrapping
// ErrNotWriter and writes nothing. Another node takes the key over only once it has seen the
// row unchanged for the hand-over delay (Settings.Handover, handover= in the URL, 5 s by
// default, at least 1 s; twice that for a writer it had not seen before, which may be
// settling a claim of its own): it claims the row, moving max_id on by a failover gap (at least
// segment.DefaultFailoverGap blocks) and handing nothing out, and takes blocks from a
// hand-over delay after its claim if it is still the writer then. A writer cut off, stopped
// or idle thus hands its keys over after about twice the delay; while a writer takes, the
// other nodes' Segments cannot issue (idkitd reports them not ready). Send all takes of a key
// to one node (a proxy with one writer, as HAProxy or ProxySQL do) to avoid the wait. Stores of
// versions before the guard do not record a writer: stop them before the new ones start.
// A Galera take's first read waits for the node to apply what the cluster committed before it
// (wsrep_sync_wait = 1 for that statement).
package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/internal/urlquery"
	"github.com/idkit/idkit/schemes/segment"
)

// DefaultTable is the counter table's name when the URL gives none.
const DefaultTable = "idkit_segments"

// The hand-over delay of a key between Galera nodes (Settings.Handover).
const (
	DefaultHandover = 5 * time.Second
	MinHandover     = time.Second
	MaxHandover     = time.Hour
)

// ErrNotDurable reports a server or table that could lose a committed increment in a crash or
// in a failover to a replica that lacked it, and so hand its numbers out again.
var ErrNotDurable = errors.New("mysqlstore: the server can lose a committed write in a crash or a failover")

// ErrNotWriter reports a take refused on a Galera node that is not the key's writer node, or
// that claimed the key less than the hand-over delay ago (see the package doc, "One writer
// node per key"). Nothing was taken; a later take may succeed.
var ErrNotWriter = errors.New("mysqlstore: another Galera node writes this key")

func init() {
	for _, s := range []string{"mysql", "mariadb"} {
		segment.RegisterStore(s, driver{})
	}
}

type driver struct{}

func (driver) OpenStore(ctx context.Context, url string) (segment.Store, error) {
	s, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return Open(ctx, s)
}

func (driver) DescribeStore(url string) string {
	s, err := ParseURL(url)
	if err != nil {
		return "MariaDB/MySQL store (unreadable URL)"
	}
	return "MariaDB/MySQL table " + s.Table
}

// Settings configures Open.
type Settings struct {
	// DSN is a go-sql-driver/mysql data source name.
	DSN string
	// Table is the counter table, optionally db.table; DefaultTable when empty.
	Table string
	// Unsafe accepts a server whose settings can lose a commit in a crash (see the package
	// doc): for tests and throwaway data.
	Unsafe bool
	// AcceptAsync runs the store although a replica could be promoted without its takes
	// (durability=async in the URL): failover fencing is then the only protection.
	AcceptAsync bool
	// Handover is how long a Galera node waits before it takes a key over from the node that
	// wrote it last (see the package doc, "One writer node per key"): it must have seen the
	// key's row unchanged for this long, and it serves the key this long after its claim.
	// DefaultHandover when 0; between MinHandover and MaxHandover (handover= in the URL).
	Handover time.Duration

	// allowSplitBrain, set by the Galera partition test's control only, accepts a node with
	// pc.ignore_sb or pc.ignore_quorum: no URL, DSN or Settings field a program can set
	// reaches it.
	allowSplitBrain bool
}

// ParseURL reads mysql://user:password@host:port/database?table=T&socket=/path/mysqld.sock
// (also mariadb://) into Settings. socket= connects over a unix socket instead of TCP;
// unsafe=true sets Settings.Unsafe; durability=async sets Settings.AcceptAsync (sync, the
// default, refuses an asynchronous replica); every other query parameter must be one of
// go-sql-driver/mysql's DSN parameters (tls, timeout, …) and is passed to the driver. The
// query is read strictly (internal/urlquery): a pair that does not parse (';', %zz), a key
// given twice and an unknown key are errors naming the parameter. Errors never show the
// password.
func ParseURL(raw string) (Settings, error) {
	s, err := parseURL(raw)
	return s, redact.Error(err)
}

func parseURL(raw string) (Settings, error) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		raw = strings.ToLower(scheme) + "://" + rest
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Settings{}, fmt.Errorf("mysqlstore: store URL: %w", err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" || u.Opaque != "" {
		return Settings{}, fmt.Errorf("mysqlstore: store URL: want mysql://user:password@host:port/database")
	}
	q, err := urlquery.Parse(u.RawQuery, knownParam, knownHint)
	if err != nil {
		return Settings{}, fmt.Errorf("mysqlstore: store URL: %w", err)
	}
	set := Settings{Table: DefaultTable}
	if v, ok := q["table"]; ok {
		set.Table = v
		if !validTable(set.Table) {
			return Settings{}, fmt.Errorf("mysqlstore: table %q: want letters, digits and '_', optionally db.table", set.Table)
		}
	}
	if v, ok := q["unsafe"]; ok {
		if set.Unsafe, err = strconv.ParseBool(v); err != nil {
			return Settings{}, fmt.Errorf("mysqlstore: store URL: unsafe=%.20s: want true or false", v)
		}
	}
	if v, ok := q["durability"]; ok {
		if set.AcceptAsync, err = segment.ParseDurability(v); err != nil {
			return Settings{}, fmt.Errorf("mysqlstore: store URL: %w", err)
		}
	}
	if v, ok := q["handover"]; ok {
		if set.Handover, err = parseHandover(v); err != nil {
			return Settings{}, err
		}
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	switch sock := q["socket"]; {
	case sock != "":
		cfg.Net, cfg.Addr = "unix", sock
	case u.Host != "":
		cfg.Net, cfg.Addr = "tcp", u.Host
		if u.Port() == "" {
			cfg.Addr += ":3306"
		}
	default:
		return Settings{}, errors.New("mysqlstore: store URL: no host and no socket=")
	}
	delete(q, "table")
	delete(q, "socket")
	delete(q, "unsafe")
	delete(q, "durability")
	delete(q, "handover")
	set.DSN = cfg.FormatDSN()
	if len(q) > 0 {
		sep := "?"
		if strings.Contains(set.DSN, "?") {
			sep = "&"
		}
		set.DSN += sep + urlquery.Encode(q)
	}
	if _, err := mysql.ParseDSN(set.DSN); err != nil {
		return Settings{}, fmt.Errorf("mysqlstore: store URL parameters: %w", err)
	}
	return set, nil
}

// knownParam reports whether a store URL may hold the query parameter key: the store's own
// and go-sql-driver/mysql's. The driver would send any other key to the server as a session
// variable, so a misspelt one (tabel=) would fail only when the server refused it.
var knownParam = urlquery.Known(
	"table", "socket", "unsafe", "durability", "handover",
	"allowAllFiles", "allowCleartextPasswords", "allowFallbackToPlaintext", "allowNativePasswords",
	"allowOldPasswords", "checkConnLiveness", "clientFoundRows", "charset", "collation",
	"columnsWithAlias", "compress", "interpolateParams", "loc", "multiStatements", "parseTime",
	"timeTruncate", "readTimeout", "rejectReadOnly", "serverPubKey", "strict", "timeout", "tls",
	"writeTimeout", "maxAllowedPacket", "connectionAttributes",
)

const knownHint = "the store takes table, socket, unsafe, durability, handover and go-sql-driver/mysql's parameters (tls, timeout, charset, …)"

// parseHandover reads handover=, a Go duration between MinHandover and MaxHandover.
func parseHandover(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("mysqlstore: store URL: handover=%.20q: want a duration such as 5s", v)
	}
	if d < MinHandover || d > MaxHandover {
		return 0, fmt.Errorf("mysqlstore: store URL: handover=%v: want between %v and %v (a shorter hand-over lets two Galera nodes write a key at once)", d, MinHandover, MaxHandover)
	}
	return d, nil
}

func validTable(t string) bool {
	parts := strings.Split(t, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 64 {
			return false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
				return false
			}
		}
	}
	return true
}

// Store is a segment.Store in a MariaDB/MySQL table. It is safe for concurrent use.
type Store struct {
	db     *sql.DB
	table  string
	server string // the address, for messages
	unsafe bool
	async  bool   // Settings.AcceptAsync
	facts  string // the query that reads factsOf

	// allowSplitBrain is Settings.allowSplitBrain.
	allowSplitBrain bool
	// unprotected, set by the fault tests' controls only, takes blocks as before failover
	// fencing: no epoch, no gap, no replication check.
	unprotected bool
	// beforeCommit, set by tests only, runs between the take's UPDATE and its COMMIT.
	beforeCommit func()
	// galera: the server was a Galera node (wsrep_on) at Open; its takes go through the
	// writer guard (guarded).
	galera bool
	// handover is Settings.Handover.
	handover time.Duration
	// noWriterGuard, set by the Galera partition test's control only, takes on any node as
	// before the writer guard: no writer recorded or checked.
	noWriterGuard bool

	mu   sync.Mutex
	dur  segment.Durability
	seen map[string]sighting // per key: the row as this store last saw it on a node not its writer
}

var _ segment.Store = (*Store)(nil)

// Open connects with set.DSN and creates set.Table if it does not exist. It refuses, with an
// error wrapping ErrNotDurable, a server or table that can lose a committed increment in a
// crash, unless set.Unsafe (see the package doc); a table that is not InnoDB always.
func Open(ctx context.Context, set Settings) (*Store, error) {
	if set.Table == "" {
		set.Table = DefaultTable
	}
	switch {
	case set.Handover == 0:
		set.Handover = DefaultHandover
	case set.Handover < MinHandover || set.Handover > MaxHandover:
		return nil, fmt.Errorf("mysqlstore: Settings.Handover %v: want between %v and %v (a shorter hand-over lets two Galera nodes write a key at once)", set.Handover, MinHandover, MaxHandover)
	}
	table := set.Table
	cfg, err := mysql.ParseDSN(set.DSN)
	if err != nil {
		return nil, fmt.Errorf("mysqlstore: %w", err)
	}
	db, err := sql.Open("mysql", set.DSN)
	if err != nil {
		return nil, fmt.Errorf("mysqlstore: %w", err)
	}
	db.SetMaxOpenConns(2)
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
		biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
		max_id      BIGINT       NOT NULL,
		step        BIGINT       NOT NULL,
		store_index INT          NOT NULL,
		store_count INT          NOT NULL,
		updated_at  DATETIME(6)  NOT NULL
	) ENGINE=InnoDB`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mysqlstore: creating table %s: %w", table, err)
	}
	// epoch came with failover fencing, writer and writer_since with the Galera writer guard:
	// tables made before get them here.
	if _, err = db.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN IF NOT EXISTS epoch VARCHAR(80) NULL,
		ADD COLUMN IF NOT EXISTS writer VARCHAR(80) NULL, ADD COLUMN IF NOT EXISTS writer_since DATETIME(6) NULL`); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysqlstore: adding columns epoch, writer and writer_since to %s: %w", table, err)
	}
	s := &Store{db: db, table: table, server: cfg.Net + "(" + cfg.Addr + ")", unsafe: set.Unsafe, async: set.AcceptAsync,
		allowSplitBrain: set.allowSplitBrain, handover: set.Handover, seen: map[string]sighting{}}
	if err := s.checkDurable(ctx); err != nil {
		db.Close()
		return nil, err
	}
	s.facts = factsQuery(ctx, db)
	f, err := s.readFacts(ctx, db)
	if err == nil {
		_, err = s.checkReplication(f, f)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	s.galera = on(f.wsrepOn)
	return s, nil
}

// facts are the settings and replication state a take reads before its write and after its
// COMMIT.
type facts struct {
	flush, logBin, syncBinlog, sqlLogBin string
	readOnly                             string
	serverID, domain                     string
	dumps                                int    // Binlog Dump threads: replicas reading the binary log
	semiEnabled, semiStatus, waitPoint   string // rpl_semi_sync_master_* ("" without semi-sync)
	semiClients, semiNoTx                int64
	wsrepOn, wsrepStatus, wsrepUUID      string
	wsrepSession                         string // the session's wsrep_on
	wsrepNode                            string // wsrep_gcomm_uuid: this node's, new at each start
}

// factsQuery returns the statement that reads facts: from information_schema on MariaDB, from
// performance_schema on MySQL, which names its semi-sync settings rpl_semi_sync_source_* since
// 8.0.26 (both names are looked for).
//
// On MariaDB the replicas are counted by the Slaves_connected status, not by reading
// information_schema.PROCESSLIST: that table is materialised in an Aria temporary table, and
// MariaDB 10.11.19 crashed (signal 11 in ha_maria::drop_table, freeing it) on this statement
// run just after the server was promoted with STOP SLAVE and RESET SLAVE ALL, in three of three
// runs of TestFaultFailoverMariaDB's async row. A status read materialises nothing on disk.
func factsQuery(ctx context.Context, db *sql.DB) string {
	status, vars, session, domain := "information_schema.GLOBAL_STATUS", "information_schema.GLOBAL_VARIABLES", "information_schema.SESSION_VARIABLES", "@@GLOBAL.gtid_domain_id"
	dumps := `CAST(COALESCE((SELECT MAX(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'SLAVES_CONNECTED'), '0') AS SIGNED)`
	var version string
	if db.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); !strings.Contains(strings.ToLower(version), "mariadb") {
		status, vars, session, domain = "performance_schema.global_status", "performance_schema.global_variables", "performance_schema.session_variables", "@@GLOBAL.server_uuid"
		dumps = `(SELECT COUNT(*) FROM performance_schema.threads WHERE PROCESSLIST_COMMAND LIKE 'Binlog Dump%')`
	}
	pick := func(table string, names ...string) string {
		return `COALESCE((SELECT MAX(VARIABLE_VALUE) FROM ` + table + ` WHERE UPPER(VARIABLE_NAME) IN ('` + strings.Join(names, "', '") + `')), '')`
	}
	return `SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog, @@SESSION.sql_log_bin,
		@@GLOBAL.read_only, @@GLOBAL.server_id, ` + domain + `,
		` + dumps + `,
		` + pick(vars, "RPL_SEMI_SYNC_MASTER_ENABLED", "RPL_SEMI_SYNC_SOURCE_ENABLED") + `,
		` + pick(status, "RPL_SEMI_SYNC_MASTER_STATUS", "RPL_SEMI_SYNC_SOURCE_STATUS") + `,
		` + pick(vars, "RPL_SEMI_SYNC_MASTER_WAIT_POINT", "RPL_SEMI_SYNC_SOURCE_WAIT_POINT") + `,
		` + pick(status, "RPL_SEMI_SYNC_MASTER_CLIENTS", "RPL_SEMI_SYNC_SOURCE_CLIENTS") + `,
		` + pick(status, "RPL_SEMI_SYNC_MASTER_NO_TX", "RPL_SEMI_SYNC_SOURCE_NO_TX") + `,
		` + pick(vars, "WSREP_ON") + `, ` + pick(status, "WSREP_CLUSTER_STATUS") + `, ` + pick(status, "WSREP_CLUSTER_STATE_UUID") + `,
		` + pick(session, "WSREP_ON") + `, ` + pick(status, "WSREP_GCOMM_UUID")
}

// querier is a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) readFacts(ctx context.Context, q querier) (facts, error) {
	return s.scanFacts(ctx, q, s.facts)
}

// scanFacts reads facts with query, s.facts or a variant of it.
func (s *Store) scanFacts(ctx context.Context, q querier, query string) (facts, error) {
	var f facts
	var clients, noTx string
	err := q.QueryRowContext(ctx, query).Scan(&f.flush, &f.logBin, &f.syncBinlog, &f.sqlLogBin, &f.readOnly, &f.serverID, &f.domain,
		&f.dumps, &f.semiEnabled, &f.semiStatus, &f.waitPoint, &clients, &noTx, &f.wsrepOn, &f.wsrepStatus, &f.wsrepUUID, &f.wsrepSession, &f.wsrepNode)
	if err != nil {
		return f, fmt.Errorf("mysqlstore: reading the settings and replication state of the server at %s: %w", s.server, err)
	}
	f.semiClients, _ = strconv.ParseInt(clients, 10, 64)
	f.semiNoTx, _ = strconv.ParseInt(noTx, 10, 64)
	return f, nil
}

func on(v string) bool {
	v = strings.ToUpper(v)
	return v == "ON" || v == "1" || v == "YES"
}

// epoch is the history the server writes (see the package doc).
func (f facts) epoch() string {
	if on(f.wsrepOn) {
		return "galera/" + f.wsrepUUID
	}
	return f.serverID + "/" + f.domain
}

// class decides the durability class of f.
func (f facts) class() (segment.Class, string) {
	switch {
	case on(f.readOnly):
		return segment.ClassUnknown, "read_only is ON: the server is a replica, or fenced"
	case on(f.wsrepOn):
		if !on(f.wsrepSession) {
			return segment.ClassAsync, "wsrep_on is OFF in this session (a DSN parameter can set it): its writes are not replicated to the other Galera nodes"
		}
		if f.wsrepStatus != "Primary" {
			return segment.ClassUnknown, fmt.Sprintf("Galera node in a %s component (wsrep_cluster_status)", f.wsrepStatus)
		}
		return segment.ClassSync, "Galera node in the Primary component (wsrep_on): every node certifies a commit before it is acknowledged; each key is taken through one writer node at a time (Galera can let two nodes commit the same increment)"
	case !on(f.logBin):
		return segment.ClassSingle, "log_bin is OFF: no replica can follow"
	case f.dumps == 0:
		if on(f.semiEnabled) && !on(f.semiStatus) {
			return segment.ClassAsync, "rpl_semi_sync_master_enabled is ON but Rpl_semi_sync_master_status is OFF and no replica is connected: a replica that fell behind could be promoted"
		}
		return segment.ClassSingle, "no replica reads the binary log (no Binlog Dump thread)"
	case !on(f.semiStatus):
		return segment.ClassAsync, fmt.Sprintf("%d replica(s) read the binary log and Rpl_semi_sync_master_status is %s (rpl_semi_sync_master_enabled %s): replication is asynchronous", f.dumps, orNone(f.semiStatus), orNone(f.semiEnabled))
	case strings.ToUpper(f.waitPoint) != "AFTER_SYNC":
		return segment.ClassAsync, fmt.Sprintf("rpl_semi_sync_master_wait_point is %s: want AFTER_SYNC", orNone(f.waitPoint))
	case f.dumps > 1 || f.semiClients < int64(f.dumps):
		return segment.ClassAsync, fmt.Sprintf("%d replicas read the binary log, %d of them semi-sync, and a commit waits for one acknowledgement: the others can lack it", f.dumps, f.semiClients)
	}
	return segment.ClassSync, "one semi-sync replica, Rpl_semi_sync_master_status ON, rpl_semi_sync_master_wait_point AFTER_SYNC"
}

func orNone(v string) string {
	if v == "" {
		return "absent (no semi-sync plugin)"
	}
	return v
}

// checkReplication decides the class from the facts read before the write and after its
// COMMIT (the weaker), records it for Durability, and refuses what a failover can set back
// unless the store accepts async. It reports whether the take was synchronously acknowledged.
func (s *Store) checkReplication(before, after facts) (bool, error) {
	c1, r1 := before.class()
	c2, r2 := after.class()
	class, reason := c1, r1
	if c2 < c1 {
		class, reason = c2, r2
	}
	if class == segment.ClassSync && !on(after.wsrepOn) && after.semiNoTx > before.semiNoTx {
		class, reason = segment.ClassAsync, fmt.Sprintf("Rpl_semi_sync_master_no_tx rose from %d to %d during the take: a commit went without the replica's acknowledgement (rpl_semi_sync_master_timeout expired?)", before.semiNoTx, after.semiNoTx)
	}
	s.mu.Lock()
	s.dur = segment.Durability{Class: class, Reason: reason, Epoch: after.epoch(), AsyncAccepted: s.async}
	s.mu.Unlock()
	switch {
	case class == segment.ClassSync:
		return true, nil
	case class == segment.ClassSingle, s.async && class == segment.ClassAsync:
		return false, nil
	case class == segment.ClassUnknown:
		return false, fmt.Errorf("%w: the server at %s cannot take blocks safely: %s", ErrNotDurable, s.server, reason)
	}
	return false, fmt.Errorf("%w: the server at %s replicates asynchronously (%s), so a failover to a replica can lose acknowledged takes and repeat IDs; use semi-sync with rpl_semi_sync_master_wait_point = AFTER_SYNC and a long rpl_semi_sync_master_timeout, or Galera, or add durability=async to the store URL to run with failover fencing (a skip of the gap after each failover) as the only protection", ErrNotDurable, s.server, reason)
}

// Durability returns the durability class the store read at Open or its last take
// (segment.Durabler).
func (s *Store) Durability() segment.Durability {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dur
}

// checkDurable refuses a server or table that can lose a committed increment in a crash.
func (s *Store) checkDurable(ctx context.Context) error {
	schema, name, ok := strings.Cut(s.table, ".")
	if !ok {
		schema, name = "", s.table
	}
	var engine sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT ENGINE FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?`, schema, name).Scan(&engine)
	if err != nil {
		return fmt.Errorf("%w: cannot read the engine of table %s at %s: %w", ErrNotDurable, s.table, s.server, err)
	}
	if !strings.EqualFold(engine.String, "InnoDB") {
		return fmt.Errorf("%w: table %s at %s uses the %s engine, which does not keep a commit through a crash, so IDs repeat; ALTER TABLE %s ENGINE=InnoDB, or name another table", ErrNotDurable, s.table, s.server, engine.String, s.table)
	}
	if s.unsafe {
		return nil
	}
	vars, err := s.variables(ctx)
	if err != nil {
		return fmt.Errorf("%w: cannot read the settings of the server at %s (%w); add unsafe=true to the store URL only if you know it keeps every commit", ErrNotDurable, s.server, err)
	}
	return s.checkVariables(vars)
}

// checkVariables refuses the settings in vars (SHOW VARIABLES, names in lower case) that can
// lose a committed increment in a crash, unless the store is unsafe.
func (s *Store) checkVariables(vars map[string]string) error {
	if err := s.checkCommit(vars["innodb_flush_log_at_trx_commit"], vars["log_bin"], vars["sync_binlog"], vars["sql_log_bin"]); err != nil || s.unsafe {
		return err
	}
	switch dw := strings.ToUpper(vars["innodb_doublewrite"]); dw {
	case "0", "OFF", "DETECT_ONLY":
		return s.refuse("innodb_doublewrite", vars["innodb_doublewrite"], "a crash of its machine can tear the counter's page and repeat IDs", "set innodb_doublewrite = ON")
	}
	switch fm := strings.ToLower(vars["innodb_flush_method"]); fm {
	case "nosync", "littlesync":
		return s.refuse("innodb_flush_method", vars["innodb_flush_method"], "it never syncs its files and a crash of its machine can lose increments and repeat IDs", "set innodb_flush_method = fsync or O_DIRECT")
	}
	if on := strings.ToUpper(vars["wsrep_on"]); on == "ON" || on == "1" {
		return s.checkSplitBrain(vars["wsrep_provider_options"])
	}
	return nil
}

// checkSplitBrain refuses a Galera node whose wsrep_provider_options set pc.ignore_sb or
// pc.ignore_quorum (both are dynamic: SET GLOBAL wsrep_provider_options can turn them on
// after Open, so every Take on a Galera node reads them again).
func (s *Store) checkSplitBrain(options string) error {
	if s.allowSplitBrain {
		return nil
	}
	// wsrep_provider_options is "name = value; name = value; …".
	for _, kv := range strings.Split(options, ";") {
		k, v, _ := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.ToLower(strings.TrimSpace(v))
		if (k == "pc.ignore_sb" || k == "pc.ignore_quorum") && (v == "true" || v == "yes" || v == "1" || v == "on") {
			return s.refuse("wsrep_provider_options", k+" = "+v, "both halves of a split Galera cluster keep taking the same blocks and repeat IDs", "remove "+k)
		}
	}
	return nil
}

// galeraOptions reads a Galera node's wsrep_provider_options with SHOW GLOBAL VARIABLES, which
// gives the whole value (information_schema's column can cut a long one short), and checks
// them; f tells whether the node is one.
func (s *Store) galeraOptions(ctx context.Context, q querier, f facts) error {
	if s.unsafe || !on(f.wsrepOn) {
		return nil
	}
	var name, options string
	if err := q.QueryRowContext(ctx, `SHOW GLOBAL VARIABLES LIKE 'wsrep_provider_options'`).Scan(&name, &options); err != nil {
		return fmt.Errorf("mysqlstore: reading wsrep_provider_options of the server at %s: %w", s.server, err)
	}
	return s.checkSplitBrain(options)
}

// variables reads the server and session settings checkDurable looks at; SHOW VARIABLES
// leaves out those the server does not have (wsrep_* on MySQL).
func (s *Store) variables(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SHOW VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit', 'log_bin',
		'sync_binlog', 'sql_log_bin', 'innodb_doublewrite', 'innodb_flush_method', 'wsrep_on', 'wsrep_provider_options')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		vars[strings.ToLower(k)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if vars["innodb_flush_log_at_trx_commit"] == "" {
		return nil, errors.New("innodb_flush_log_at_trx_commit is missing: is InnoDB there?")
	}
	return vars, nil
}

// checkCommit refuses the settings that decide whether a commit survives a crash, read at
// Open and again by every Take: innodb_flush_log_at_trx_commit, log_bin, sync_binlog and the
// session's sql_log_bin. It accepts anything when the store is unsafe.
func (s *Store) checkCommit(flush, logBin, syncBinlog, sqlLogBin string) error {
	if s.unsafe {
		return nil
	}
	if flush != "1" && flush != "3" {
		return s.refuse("innodb_flush_log_at_trx_commit", flush, "a crash loses up to a second of increments and repeats IDs", "set innodb_flush_log_at_trx_commit = 1")
	}
	if on := strings.ToUpper(logBin); on == "ON" || on == "1" {
		if syncBinlog != "1" {
			return s.refuse("sync_binlog", syncBinlog, "with the binary log on, crash recovery rolls back the commits whose binlog events a crash of the machine lost, and repeats IDs", "set sync_binlog = 1")
		}
		if off := strings.ToUpper(sqlLogBin); off == "OFF" || off == "0" {
			return s.refuse("sql_log_bin", sqlLogBin+" in this session", "a replica never sees its increments and a failover repeats IDs", "remove sql_log_bin from the DSN")
		}
	}
	return nil
}

// refuse is the error for a setting that can lose a committed increment.
func (s *Store) refuse(setting, value, why, fix string) error {
	return fmt.Errorf("%w: the server at %s has %s %s, so %s; %s, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.server, setting, value, why, fix)
}

// Table returns the counter table's name.
func (s *Store) Table() string { return s.table }

// Take adds req.Step to the key's max_id and returns the numbers in between. Errors wrap
// segment.ErrClass when the key's row belongs to another store position,
// segment.ErrExhausted when max_id would leave the BIGINT range, and ErrNotDurable when a
// setting that decides whether the commit survives a crash was wrong before the write or
// after the COMMIT, or when the replication could lose it (see the package doc): the block
// is then lost, never used, as after any error at COMMIT.
func (s *Store) Take(ctx context.Context, req segment.Request) (b segment.Block, err error) {
	// One connection: the session read after COMMIT is the one that committed.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return b, fmt.Errorf("mysqlstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return b, fmt.Errorf("mysqlstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	// The first read of a guarded take waits until this node applied the write-sets the
	// cluster committed before it (wsrep_sync_wait for this statement alone), so the writer
	// guard reads the key's row as the cluster last wrote it.
	query := s.facts
	if s.guarded() {
		query = `SET STATEMENT wsrep_sync_wait = 1 FOR ` + s.facts
	}
	before, err := s.scanFacts(ctx, tx, query)
	if err != nil {
		return b, err
	}
	if err = s.checkCommit(before.flush, before.logBin, before.syncBinlog, before.sqlLogBin); err != nil {
		return b, fmt.Errorf("mysqlstore: key %q in %s: no block taken: %w", req.Key, s.table, err)
	}
	if err = s.galeraOptions(ctx, tx, before); err != nil {
		return b, fmt.Errorf("mysqlstore: key %q in %s: no block taken: %w", req.Key, s.table, err)
	}
	var epoch any // NULL: the row records none, and no gap is skipped
	var gap, newGap uint64
	if !s.unprotected {
		epoch, gap = before.epoch(), req.Gap
		if s.async {
			newGap = req.Gap
		}
	}
	if _, err = tx.ExecContext(ctx, `INSERT INTO `+s.table+` (biz_tag, max_id, step, store_index, store_count, updated_at, epoch)
		VALUES (?, ?, ?, ?, ?, NOW(6), ?) ON DUPLICATE KEY UPDATE biz_tag = biz_tag`, req.Key, req.Step*newGap, req.Step, req.Index, req.Count, epoch); err != nil {
		return b, s.fail(req, err)
	}
	update := `UPDATE ` + s.table + ` SET max_id = max_id + ? * (1 + IF(epoch <> ?, ?, 0)), step = ?, updated_at = NOW(6), epoch = ?
		WHERE biz_tag = ? AND store_index = ? AND store_count = ?`
	args := []any{req.Step, epoch, gap, req.Step, epoch, req.Key, req.Index, req.Count}
	if s.guarded() {
		if !on(before.wsrepOn) {
			return b, fmt.Errorf("mysqlstore: key %q in %s: no block taken: %w: the server was a Galera node at Open and has wsrep_on OFF now", req.Key, s.table, ErrNotDurable)
		}
		var r writerRow
		var since sql.NullInt64
		if err = tx.QueryRowContext(ctx, `SELECT max_id, COALESCE(writer, ''), TIMESTAMPDIFF(MICROSECOND, writer_since, NOW(6))
			FROM `+s.table+` WHERE biz_tag = ? FOR UPDATE`, req.Key).Scan(&r.maxID, &r.writer, &since); err != nil {
			return b, s.fail(req, err)
		}
		r.sinceClaim, r.claimed = time.Duration(since.Int64)*time.Microsecond, since.Valid
		switch act, why := s.decide(req.Key, before.wsrepNode, r, time.Now()); act {
		case actWait:
			err = fmt.Errorf("mysqlstore: key %q in %s on Galera node %s: no block taken: %w: %s", req.Key, s.table, orNone(before.wsrepNode), ErrNotWriter, why)
			return b, err
		case actClaim:
			err = s.claim(ctx, tx, req, r, before.wsrepNode, epoch)
			return b, err
		}
		update += ` AND writer = ?`
		args = append(args, before.wsrepNode)
	}
	res, err := tx.ExecContext(ctx, update, args...)
	if err != nil {
		return b, s.fail(req, err)
	}
	if n, rerr := res.RowsAffected(); rerr == nil && n == 0 {
		err = s.notUpdated(ctx, tx, req)
		return b, err
	}
	var maxID int64
	if err = tx.QueryRowContext(ctx, `SELECT max_id FROM `+s.table+` WHERE biz_tag = ?`, req.Key).Scan(&maxID); err != nil {
		return b, s.fail(req, err)
	}
	if s.beforeCommit != nil {
		s.beforeCommit()
	}
	if err = tx.Commit(); err != nil {
		return b, fmt.Errorf("mysqlstore: taking %d of key %q in %s: COMMIT (the block is dropped): %w", req.Step, req.Key, s.table, err)
	}
	// After COMMIT, before the block is handed out: what changed while the take ran is seen.
	after, err := s.readFacts(ctx, conn)
	if err != nil {
		return b, fmt.Errorf("mysqlstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
	}
	if err := s.checkCommit(after.flush, after.logBin, after.syncBinlog, after.sqlLogBin); err != nil {
		return b, fmt.Errorf("mysqlstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
	}
	if err := s.galeraOptions(ctx, conn, after); err != nil {
		return b, fmt.Errorf("mysqlstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
	}
	blk := segment.Block{First: uint64(maxID) - req.Step + 1, Last: uint64(maxID)}
	if !s.unprotected {
		sync, err := s.checkReplication(before, after)
		if err != nil {
			return b, fmt.Errorf("mysqlstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
		}
		blk.Epoch, blk.Synchronous = after.epoch(), sync
	}
	if maxID < int64(req.Step) {
		return b, fmt.Errorf("mysqlstore: key %q in %s: max_id %d after adding %d: %w", req.Key, s.table, maxID, req.Step, segment.ErrBackwards)
	}
	return blk, nil
}

// claim makes the Galera node me the writer of the key whose row Take read as r (see
// writer.go): it moves max_id on by a failover gap, records me and the time, and commits; it
// hands nothing out, so it returns an error wrapping ErrNotWriter when it succeeds, and the
// node takes blocks a hand-over delay later.
func (s *Store) claim(ctx context.Context, tx *sql.Tx, req segment.Request, r writerRow, me string, epoch any) error {
	gap := max(req.Gap, segment.DefaultFailoverGap)
	var old any // the writer the row had: NULL when none
	if r.writer != "" {
		old = r.writer
	}
	res, err := tx.ExecContext(ctx, `UPDATE `+s.table+` SET max_id = max_id + ? * ?, step = ?, writer = ?, writer_since = NOW(6), updated_at = NOW(6), epoch = ?
		WHERE biz_tag = ? AND store_index = ? AND store_count = ? AND max_id = ? AND writer <=> ?`,
		req.Step, gap, req.Step, me, epoch, req.Key, req.Index, req.Count, r.maxID, old)
	if err != nil {
		return s.fail(req, err)
	}
	if n, rerr := res.RowsAffected(); rerr == nil && n == 0 {
		return s.notUpdated(ctx, tx, req)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("mysqlstore: claiming key %q in %s for Galera node %s: COMMIT: %w", req.Key, s.table, me, err)
	}
	from := "no writer recorded"
	if r.writer != "" {
		from = "from node " + r.writer
	}
	return fmt.Errorf("mysqlstore: key %q in %s on Galera node %s: no block taken: %w: claimed the key (%s; max_id moved on by %d blocks of %d); this node takes blocks %v after its claim",
		req.Key, s.table, me, ErrNotWriter, from, gap, req.Step, s.handover)
}

// notUpdated explains an UPDATE of a take that matched no row: the key belongs to another
// store position (segment.ErrClass), or, on a Galera node, the row changed under the take.
func (s *Store) notUpdated(ctx context.Context, tx *sql.Tx, req segment.Request) error {
	var idx, cnt int
	if err := tx.QueryRowContext(ctx, `SELECT store_index, store_count FROM `+s.table+` WHERE biz_tag = ?`, req.Key).Scan(&idx, &cnt); err != nil {
		return s.fail(req, err)
	}
	if idx != req.Index || cnt != req.Count {
		return fmt.Errorf("mysqlstore: key %q in %s belongs to store %d of %d, asked as store %d of %d: %w",
			req.Key, s.table, idx+1, cnt, req.Index+1, req.Count, segment.ErrClass)
	}
	return fmt.Errorf("mysqlstore: key %q in %s: no block taken: %w: the row's writer or max_id changed during the take", req.Key, s.table, ErrNotWriter)
}

// fail wraps a database error of Take, turning BIGINT overflow into segment.ErrExhausted.
func (s *Store) fail(req segment.Request, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1264 || me.Number == 1690) { // ER_WARN_DATA_OUT_OF_RANGE (strict mode), ER_DATA_OUT_OF_RANGE
		return fmt.Errorf("mysqlstore: key %q in %s: max_id + %d leaves BIGINT: %w: %w", req.Key, s.table, req.Step, segment.ErrExhausted, err)
	}
	return fmt.Errorf("mysqlstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
}

// Check reports whether a Take would be refused now, without taking a block
// (segment.Checker): it reads the crash settings and the replication state as a take does
// before its write, in one statement that writes nothing. A Segment calls it before taking
// again after a failed take, so that a server that refuses (each refused take loses its
// block: its increment is committed before the check after COMMIT drops it) is not written to
// while it stays refused, such as a semi-sync primary fallen back to asynchronous
// replication until its replica catches up. Errors wrap ErrNotDurable as Take's refusals
// do, or are the connection's.
func (s *Store) Check(ctx context.Context) error {
	if s.unprotected {
		return nil
	}
	f, err := s.readFacts(ctx, s.db)
	if err != nil {
		return err
	}
	if err := s.checkCommit(f.flush, f.logBin, f.syncBinlog, f.sqlLogBin); err != nil {
		return fmt.Errorf("mysqlstore: checking %s: %w", s.table, err)
	}
	if _, err := s.checkReplication(f, f); err != nil {
		return fmt.Errorf("mysqlstore: checking %s: %w", s.table, err)
	}
	return nil
}

var _ segment.Checker = (*Store)(nil)

// Close closes the store's connections.
func (s *Store) Close() error { return s.db.Close() }
