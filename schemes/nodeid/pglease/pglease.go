// Package pglease keeps node slots in a PostgreSQL table for nodeid.Hold, for teams whose
// only shared service is their database. It uses github.com/jackc/pgx/v5.
//
// Each slot is a row of a lease table (idkit_node_slots unless Settings.Table says otherwise,
// created on first use in the connection's search_path):
//
//	namespace   text         which generators share the slots (Settings.Namespace)
//	slot        bigint       the node number
//	owner       text         the holder's token; '' when released
//	expires_at  timestamptz  the holding lapses at this instant of the server's clock
//	epoch       bigint       bumped by every claim, to tell holdings apart across lapses
//	claimed_at  timestamptz
//	mark_ns     bigint       the slot's high-water mark in Unix nanoseconds; outlives holdings
//
// A claim is one INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= now(): it takes a slot
// that has no row or whose holding lapsed, atomically. Renewal, mark saves and release are
// UPDATEs guarded by owner, epoch and expires_at > now(), so a holder that lost its slot can
// change nothing. Every expiry is computed and compared on the database server's clock; the
// holder's clock only measures how long ago a renewal was sent.
//
// Why a lease table and not session advisory locks: an advisory lock is freed the moment the
// server ends the session (pg_terminate_backend, a restart, an idle-session timeout, a proxy
// dropping the connection), and another process can take it at once, while the first one
// learns of the loss only on its next round trip. Nothing bounds that window, so the two
// could issue IDs with the same node at the same time. A lease with an expiry on the server
// gives the bound the fence needs: nobody can claim a slot until TTL after its last renewal,
// and the holder stops issuing TTL/2 after it. A dropped connection costs nothing but a
// reconnect.
//
// Durability: a claim, renewal, release or mark save that the server acknowledged must
// survive a crash of the server, or a restarted server could hand a held slot to a second
// process, or forget a mark. Each of them runs in a transaction that raises
// synchronous_commit to on for itself (set_config(…, true), like SET LOCAL, which any role may
// do; remote_apply stays), so it is flushed to the WAL (and to synchronous standbys, if any)
// before the commit returns, whatever the server's, database's or role's default; with
// synchronous_commit = off, a common tuning, a crash loses the last commits of every session.
// A server with fsync or full_page_writes off can lose or corrupt any write when its machine
// crashes, and an UNLOGGED table is emptied by a crash: Open refuses them with ErrNotDurable,
// and every write reads fsync and full_page_writes again, unless the store URL says
// unsafe=true (Settings.Unsafe), for throwaway test clusters. A temporary table is refused
// always.
//
// Replication: a write the primary acknowledged survives a failover only if the promoted
// standby held it. Open and every write read the server's durability class (internal/pgrepl)
// in the write's own transaction, after raising synchronous_commit: single (no standby
// streams and no physical replication slot is kept), sync (every streaming standby is
// synchronous, every physical slot in use) or async (a physical slot whose standby is away
// counts as a standby: a partition ends a standby's walsender after wal_sender_timeout, and
// only its slot still shows it). An async or unknown class is refused with ErrNotDurable
// naming synchronous_standby_names, the standby or the slot, unless the
// store URL says durability=async (Settings.AcceptAsync). A commit whose wait for the
// synchronous standbys was cancelled is local only and counts as not durable: under class
// sync, a write counts only once pgrepl.Confirm, run right after COMMIT in the same batch,
// finds as many standbys in sync_state sync or quorum as synchronous_standby_names waits for
// with flush_lsn past the server's WAL flush position (waiting up to DefaultConfirmWait); the
// server's "canceling wait for synchronous replication" warning is a second sign (the write
// sets client_min_messages to warning for its transaction, and the warning is recognised by
// its routine, whatever lc_messages), and a DSN or Config whose options (or PGOPTIONS) or
// parameters set client_min_messages or lc_messages is refused (pgrepl.ErrOverride).
// Store.Replication shows the last class read.
//
// Failover fence: every claim records the server's epoch (system identifier and timeline,
// pg_epoch) in its row, and renewals, marks and claims again succeed only in the epoch the
// claim was made in, so a failover ends every holding and its holder must claim again. A
// claim that finds a slot last written in another epoch does not take it: it quarantines it
// for the longer of the two TTLs, counted on the new server, because the promoted standby may
// lack the holder's last renewals (asynchronously replicated) while the holder issues until
// TTL/2 after the last one it saw succeed. Marks saved asynchronously can also be lost, so
// under durability=async a successor's protection from its predecessor's times is the
// clocks' agreement within TTL/2 (see docs/nodes.md, Replicated stores).
//
// A claim whose outcome is unknown (the connection broke at or after COMMIT, a timeout) is
// possibly claimed, never assumed not: the store re-reads the slot and, when the row names the
// claim's owner, confirms it with a durable renewal and uses it; otherwise the claim fails
// with ErrUnknown and the row, if it was written, lapses unused. A batch once sent is never
// sent again.
package pglease

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/internal/pgrepl"
	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/internal/urlquery"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// ErrNotDurable reports a PostgreSQL server or lease table that can lose acknowledged writes
// in a crash (fsync or full_page_writes off, an UNLOGGED or temporary table). The message
// names the setting.
var ErrNotDurable = errors.New("pglease: PostgreSQL can lose acknowledged writes")

// DefaultTable and DefaultNamespace are used when Settings leaves them empty.
const (
	DefaultTable     = "idkit_node_slots"
	DefaultNamespace = "default"
)

// Settings configures Open. A zero field means the default.
type Settings struct {
	// DSN is a pgx connection string, URL (postgres://…) or key/value form. Required unless
	// Config is set.
	DSN string
	// Config, when set, is used instead of DSN.
	Config *pgx.ConnConfig
	// Namespace separates sets of slots in one table: generators that must not share a node
	// share a namespace. DefaultNamespace when empty.
	Namespace string
	// Table is the lease table's name, optionally schema-qualified; DefaultTable when empty.
	Table string
	// Unsafe accepts a server with fsync or full_page_writes off and an UNLOGGED table, which
	// a crash can make forget a holding or a mark: for throwaway test clusters only (see the
	// package doc).
	Unsafe bool
	// AcceptAsync runs the store although a standby could be promoted without its writes
	// (durability=async in the URL): the failover fence (see the package doc) is then the only
	// protection.
	AcceptAsync bool
}

// ParseURL reads "postgres://…", "postgresql://…" or "pg://…" into Settings. The query
// parameters namespace, table, unsafe (true or false) and durability (sync or async) are taken
// out for Settings.Namespace, Settings.Table, Settings.Unsafe and Settings.AcceptAsync; the rest of the URL goes to pgx
// ("pg" becomes "postgres"). The query is read strictly (internal/urlquery): a pair that does
// not parse (';', %zz), a key given twice and a key that is neither the store's, nor pgx's,
// nor one of a few session settings (application_name, search_path, options,
// client_encoding, timezone, statement_timeout, lock_timeout,
// idle_in_transaction_session_timeout) are refused, naming the parameter, and so are options
// or parameters that set client_min_messages or lc_messages (pgrepl.CheckParams). Errors never
// show a password the URL holds.
func ParseURL(raw string) (Settings, error) {
	s, err := parseURL(raw)
	return s, redact.Error(err)
}

func parseURL(raw string) (Settings, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Settings{}, fmt.Errorf("pglease: store URL: %w", err)
	}
	switch u.Scheme {
	case "postgres", "postgresql":
	case "pg":
		u.Scheme = "postgres"
	default:
		return Settings{}, fmt.Errorf("pglease: store URL scheme %q, want postgres, postgresql or pg", u.Scheme)
	}
	if _, rest, _ := strings.Cut(raw, ":"); u.Opaque != "" || !strings.HasPrefix(rest, "//") {
		return Settings{}, fmt.Errorf("pglease: store URL %q: want %s://…", raw, u.Scheme)
	}
	if u.Fragment != "" {
		return Settings{}, errors.New("pglease: store URL: a fragment is not supported")
	}
	// The settings CheckParams refuses are let through urlquery to be refused by name.
	known := func(k string) bool { return knownParam(k) || pgrepl.CheckParams(map[string]string{k: ""}) != nil }
	q, err := urlquery.Parse(u.RawQuery, known, knownHint)
	if err != nil {
		return Settings{}, fmt.Errorf("pglease: store URL: %w", err)
	}
	if err := pgrepl.CheckParams(q); err != nil {
		return Settings{}, fmt.Errorf("pglease: store URL: %w", err)
	}
	ns, hasNS := q["namespace"]
	table, hasTable := q["table"]
	s := Settings{Namespace: ns, Table: table}
	if hasNS && s.Namespace == "" || hasTable && s.Table == "" {
		return Settings{}, errors.New("pglease: store URL: namespace and table must not be empty")
	}
	if s.Table != "" && !validTable(s.Table) {
		return Settings{}, fmt.Errorf("pglease: table %q: want letters, digits and '_', optionally schema.table", s.Table)
	}
	if v, ok := q["unsafe"]; ok {
		if s.Unsafe, err = strconv.ParseBool(v); err != nil {
			return Settings{}, fmt.Errorf("pglease: store URL: unsafe=%.20q: want true or false", v)
		}
	}
	switch v, ok := q["durability"]; {
	case !ok, v == "sync":
	case v == "async":
		s.AcceptAsync = true
	default:
		return Settings{}, fmt.Errorf("pglease: store URL: durability=%.20q: want sync (the default: refuse a standby that could be promoted without a claim) or async (accept it, with the failover fence as the only protection)", v)
	}
	delete(q, "durability")
	delete(q, "namespace")
	delete(q, "table")
	delete(q, "unsafe")
	u.RawQuery = urlquery.Encode(q)
	s.DSN = u.String()
	if p := u.Scheme + "://"; !strings.HasPrefix(s.DSN, p) {
		s.DSN = p + strings.TrimPrefix(s.DSN, u.Scheme+":") // url drops "//" before an empty host
	}
	return s, nil
}

// knownParam reports whether a store URL may hold the query parameter key: the store's own,
// pgx's connection parameters, and the session settings a connection string commonly sets.
// pgx would send any other key to the server as a setting, so a misspelt one (tabel=) would
// only fail when the server refused it, or not at all.
var knownParam = urlquery.Known(
	"namespace", "table", "unsafe", "durability",
	// pgconn: parameters of the connection, not sent to the server.
	"host", "port", "database", "user", "password", "passfile", "connect_timeout",
	"sslmode", "sslkey", "sslcert", "sslcertmode", "sslrootcert", "sslnegotiation", "sslpassword",
	"sslsni", "krbspn", "krbsrvname", "target_session_attrs", "service", "servicefile",
	"min_protocol_version", "max_protocol_version", "channel_binding", "require_auth",
	// pgx
	"statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode",
	// session settings
	"application_name", "search_path", "options", "client_encoding", "timezone",
	"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout",
)

const knownHint = "the store takes namespace, table, unsafe, durability, pgx's connection parameters " +
	"(sslmode, connect_timeout, …) and the settings application_name, search_path, options, " +
	"client_encoding, timezone, statement_timeout, lock_timeout and " +
	"idle_in_transaction_session_timeout"

func validTable(t string) bool {
	parts := strings.Split(t, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 63 || p[0] >= '0' && p[0] <= '9' {
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

// Store is a nodeid.Store in a PostgreSQL table. It is safe for concurrent use.
//
// A Store uses one connection, opened again after it breaks: renewals and mark saves are its
// only traffic, a few statements a second.
type Store struct {
	cfg    *pgx.ConnConfig
	ns     string
	table  string
	q      queries
	unsafe bool // accept fsync or full_page_writes off, an UNLOGGED table
	async  bool // Settings.AcceptAsync
	// asyncCommit leaves synchronous_commit to the server: only the durability test sets it,
	// for its control run.
	asyncCommit bool
	// legacy, set by the tests' controls only, vouches for a write as before pgrepl.Confirm:
	// by the English text of the cancel warning alone, client_min_messages as the session has
	// it. noNotice, set by tests only, ignores the warning: Confirm alone vouches.
	legacy, noNotice bool
	// confirmWait bounds how long a write waits for its synchronous standbys to report its
	// WAL flushed (pgrepl.Confirm).
	confirmWait time.Duration

	mu   sync.Mutex // serialises use of conn
	conn *pgx.Conn  // nil or closed: connect on next use
	// cancelled is set by the connection's OnNotice when PostgreSQL warns that a commit's wait
	// for the synchronous standbys was cancelled; write reads and clears it (under mu).
	cancelled atomic.Bool

	repMu sync.Mutex
	rep   Replication
}

// Replication is what a Store last read of the server's replication, with the write it
// checked.
type Replication struct {
	Class  string // pgrepl's class: "single", "sync", "async" or "unknown"
	Reason string // the setting or standby that decides it
	Epoch  string // system identifier/timeline of the server's history
	// AsyncAccepted is Settings.AcceptAsync: an async class is run, not refused.
	AsyncAccepted bool
}

// Replication returns what the store read of the server's replication at its last write
// (Open's table check included), for readiness checks and logs.
func (s *Store) Replication() Replication {
	s.repMu.Lock()
	defer s.repMu.Unlock()
	return s.rep
}

var _ nodeid.Store = (*Store)(nil)

type queries struct {
	taken, claim, again, owner, mine, renew, release, load, save, slots string
}

// epochSQL is the server's epoch as pgrepl.Epoch.String writes it.
const epochSQL = pgrepl.EpochSQL

// failoverOwner is the owner a claim writes into a slot it found last written in another
// epoch: the slot is kept from everyone for a TTL (see the package doc).
const failoverOwner = "(quarantined after a failover)"

// newQueries returns the statements on table t. Without fenced they ignore the epoch, as
// before the failover fence: only the fault test's control uses that.
func newQueries(t string, fenced bool) queries {
	const ttl = "make_interval(secs => $4::float8)"
	same, inEpoch := `s.pg_epoch IS NOT DISTINCT FROM EXCLUDED.pg_epoch`, ` AND pg_epoch = `+epochSQL
	if !fenced {
		same, inEpoch = "true", ""
	}
	return queries{
		taken: `SELECT slot FROM ` + t + ` WHERE namespace = $1 AND slot < $2 AND owner <> '' AND expires_at > now() ORDER BY slot`,
		// A free slot last written in this epoch is claimed; a slot last written in another
		// one (before a failover, or by a version without epochs) is quarantined instead.
		claim: `INSERT INTO ` + t + ` AS s (namespace, slot, owner, expires_at, epoch, claimed_at, pg_epoch, ttl_s)
			VALUES ($1, $2, $3, now() + ` + ttl + `, 1, now(), ` + epochSQL + `, $4::float8)
			ON CONFLICT (namespace, slot) DO UPDATE
			SET owner = CASE WHEN ` + same + ` THEN EXCLUDED.owner ELSE '` + failoverOwner + `' END,
				expires_at = CASE WHEN ` + same + ` THEN EXCLUDED.expires_at
					ELSE GREATEST(s.expires_at, now() + make_interval(secs => GREATEST($4::float8, COALESCE(s.ttl_s, 0)))) END,
				ttl_s = CASE WHEN ` + same + ` THEN EXCLUDED.ttl_s ELSE GREATEST($4::float8, COALESCE(s.ttl_s, 0)) END,
				epoch = s.epoch + 1, claimed_at = now(), pg_epoch = EXCLUDED.pg_epoch
			WHERE (s.owner = '' OR s.expires_at <= now()) AND ` + same + ` OR NOT ` + same + `
			RETURNING epoch, owner = $3`,
		again: `UPDATE ` + t + ` SET owner = $3, expires_at = now() + ` + ttl + `, epoch = epoch + 1, claimed_at = now(), ttl_s = $4::float8
			WHERE namespace = $1 AND slot = $2 AND epoch = $5 AND (owner = '' OR expires_at <= now())` + inEpoch + `
			RETURNING epoch`,
		owner: `SELECT owner, claimed_at, expires_at FROM ` + t + ` WHERE namespace = $1 AND slot = $2`,
		mine:  `SELECT epoch FROM ` + t + ` WHERE namespace = $1 AND slot = $2 AND owner = $3`,
		renew: `UPDATE ` + t + ` SET expires_at = now() + ` + ttl + `
			WHERE namespace = $1 AND slot = $2 AND owner = $3 AND epoch = $5 AND expires_at > now()` + inEpoch,
		release: `UPDATE ` + t + ` SET owner = '', expires_at = '-infinity'
			WHERE namespace = $1 AND slot = $2 AND owner = $3 AND epoch = $4`,
		load: `SELECT mark_ns FROM ` + t + ` WHERE namespace = $1 AND slot = $2`,
		save: `UPDATE ` + t + ` SET mark_ns = GREATEST(mark_ns, $5)
			WHERE namespace = $1 AND slot = $2 AND owner = $3 AND epoch = $4 AND expires_at > now()` + inEpoch,
		slots: `SELECT slot, owner, owner <> '' AND expires_at > now(), expires_at, epoch, mark_ns FROM ` + t + `
			WHERE namespace = $1 ORDER BY slot`,
	}
}

// Open connects to PostgreSQL and creates the lease table if it does not exist. It returns an
// error wrapping ErrNotDurable for a server or table that can lose a committed claim in a
// crash, unless Settings.Unsafe (see the package doc).
func Open(ctx context.Context, s Settings) (*Store, error) {
	cfg := s.Config
	if cfg == nil {
		if s.DSN == "" {
			return nil, errors.New("pglease: no DSN")
		}
		var err error
		cfg, err = pgx.ParseConfig(s.DSN)
		if err != nil {
			return nil, redact.Error(fmt.Errorf("pglease: %w", err))
		}
	}
	table := s.Table
	if table == "" {
		table = DefaultTable
	}
	if !validTable(table) {
		return nil, fmt.Errorf("pglease: table %q: want letters, digits and '_', optionally schema.table", table)
	}
	ns := s.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if err := pgrepl.CheckParams(cfg.RuntimeParams); err != nil {
		return nil, fmt.Errorf("pglease: %w: %w", ErrNotDurable, err)
	}
	cfg = cfg.Copy() // OnNotice below must not change the caller's Config
	st := &Store{cfg: cfg, ns: ns, table: table, q: newQueries(table, true), unsafe: s.Unsafe, async: s.AcceptAsync,
		confirmWait: DefaultConfirmWait}
	onNotice := cfg.OnNotice
	cfg.OnNotice = func(c *pgconn.PgConn, n *pgconn.Notice) {
		cancelled := pgrepl.CancelledWait(n)
		if st.legacy {
			cancelled = n != nil && strings.Contains(n.Message, "wait for synchronous replication")
		}
		if cancelled && !st.noNotice {
			st.cancelled.Store(true)
		}
		if onNotice != nil {
			onNotice(c, n)
		}
	}
	if err := st.createTable(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// with runs f on the store's connection, connecting first if there is none. A connection
// that broke is dropped; f runs once more on a new one when the error says nothing reached
// the server.
func (s *Store) with(ctx context.Context, f func(*pgx.Conn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if s.conn == nil || s.conn.IsClosed() {
			c, err := pgx.ConnectConfig(ctx, s.cfg)
			if err != nil {
				return fmt.Errorf("connecting: %w", err)
			}
			s.conn = c
		}
		err := f(s.conn)
		if err == nil || !s.conn.IsClosed() && ctx.Err() == nil {
			return err
		}
		// The connection broke or was cancelled mid-statement: never reuse it.
		s.conn.Close(context.WithoutCancel(ctx))
		s.conn = nil
		if attempt > 0 || !pgconn.SafeToRetry(err) || ctx.Err() != nil {
			return err
		}
	}
}

// where names the server for a message: its host (or socket directory) and port, no
// credentials.
func (s *Store) where() string {
	return fmt.Sprintf("%s port %d", s.cfg.Host, s.cfg.Port)
}

// durableSetting is the first statement of every write's transaction: it raises
// synchronous_commit to on for the transaction (remote_apply, stronger, stays), sets
// client_min_messages to warning for it (pgrepl.ForceNotices, so the cancel warning reaches
// the store whatever the session's setting) and reads the settings checkSettings looks at.
const durableSetting = `SELECT set_config('synchronous_commit',
	CASE current_setting('synchronous_commit') WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)
	|| ` + pgrepl.ForceNotices + `,
	current_setting('fsync'), current_setting('full_page_writes')`

// legacySetting is durableSetting as before pgrepl.ForceNotices, for the tests' controls.
const legacySetting = `SELECT set_config('synchronous_commit',
	CASE current_setting('synchronous_commit') WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true),
	current_setting('fsync'), current_setting('full_page_writes')`

// DefaultConfirmWait is how long a write waits, after its COMMIT, for the synchronous standbys
// to report its WAL flushed (pgrepl.Confirm). A standby that ended the commit's wait has
// flushed the commit already; the wait covers only WAL that other sessions flushed right
// after it.
const DefaultConfirmWait = 2 * time.Second

// checkSettings refuses a server with fsync or full_page_writes off, unless the store is
// unsafe: with either, a crash of its machine can lose or corrupt committed rows.
func (s *Store) checkSettings(fsync, fpw string) error {
	switch {
	case s.unsafe:
	case fsync != "on":
		return fmt.Errorf("%w: the server at %s has fsync=%s, so a crash of its machine can forget a claimed slot or a mark and hand one node to two processes; set fsync = on, or add unsafe=true to the store URL (Settings.Unsafe) for a throwaway test server", ErrNotDurable, s.where(), fsync)
	case fpw != "on":
		return fmt.Errorf("%w: the server at %s has full_page_writes=%s, so a crash of its machine can corrupt the lease table and hand one node to two processes; set full_page_writes = on, or add unsafe=true to the store URL (Settings.Unsafe) for a throwaway test server", ErrNotDurable, s.where(), fpw)
	}
	return nil
}

// write runs sql, a statement that changes the lease table, in a transaction that commits
// durably whatever the server's or the role's synchronous_commit (durableSetting: a setting
// local to the transaction, which any role may make), sent as one batch: one round trip. With
// dest it scans the statement's one row into dest (pgx.ErrNoRows when there is none); it
// returns the rows the statement touched. It returns an error wrapping ErrNotDurable when the
// server's fsync or full_page_writes is off (turned off since Open); the statement has then
// committed, but its caller must not rely on it.
func (s *Store) write(ctx context.Context, sql string, args []any, dest ...any) (int64, error) {
	var n int64
	var fsync, fpw string
	var rs pgrepl.Scan
	var vouch pgrepl.Vouch
	cancelled := false
	err := s.with(ctx, func(c *pgx.Conn) error {
		s.cancelled.Store(false)
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		settings := durableSetting
		switch {
		case s.asyncCommit:
			settings = `SELECT '', current_setting('fsync'), current_setting('full_page_writes')`
		case s.legacy:
			settings = legacySetting
		}
		b.Queue(settings)
		b.Queue(pgrepl.Query)
		b.Queue(sql, args...)
		b.Queue("COMMIT")
		// The commit's WAL position and the standbys' flush, with no statement between.
		b.Queue(pgrepl.VouchQuery)
		br := c.SendBatch(ctx, b)
		err := func() error {
			if _, err := br.Exec(); err != nil {
				return err
			}
			var sc string
			if err := br.QueryRow().Scan(&sc, &fsync, &fpw); err != nil {
				return err
			}
			if err := br.QueryRow().Scan(rs.Dest()...); err != nil {
				return err
			}
			if len(dest) > 0 {
				if err := br.QueryRow().Scan(dest...); err != nil {
					return err
				}
				n = 1
			} else {
				tag, err := br.Exec()
				if err != nil {
					return err
				}
				n = tag.RowsAffected()
			}
			if _, err := br.Exec(); err != nil {
				return err
			}
			return br.QueryRow().Scan(vouch.Dest()...)
		}()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		cancelled = s.cancelled.Swap(false)
		if c.PgConn().TxStatus() != 'I' && !c.IsClosed() {
			// The statement failed inside the transaction (or no row was scanned and the
			// batch stopped): end it, or the connection is useless for the next call.
			if _, rerr := c.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
				c.Close(context.WithoutCancel(ctx))
			}
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			// The batch may have run up to its COMMIT: never send it again (pgx reports a
			// connection that broke while the answer was read as "conn closed", safe to
			// retry, TestClaimCommitAnswerLost).
			err = sentError{err}
		}
		return err
	})
	if err == nil {
		err = s.checkSettings(fsync, fpw)
	}
	if err == nil && cancelled {
		err = fmt.Errorf("%w: the commit's wait for the synchronous standbys at %s was cancelled: it is on the primary only, and a failover can lose it", ErrNotDurable, s.where())
	}
	if err == nil && !s.asyncCommit {
		var f pgrepl.Facts
		if f, err = rs.Facts(); err == nil {
			err = s.checkReplication(f)
		} else {
			err = fmt.Errorf("%w: reading the replication of the server at %s: %w", ErrNotDurable, s.where(), err)
		}
		if c, _ := f.Class(); err == nil && c == pgrepl.Sync && !s.legacy {
			// The commit waited for standbys. The warning above can be kept from the client
			// (client_min_messages) or translated: the standbys' own flush positions vouch
			// for the write.
			err = s.with(ctx, func(c *pgx.Conn) error { return pgrepl.Confirm(ctx, c, vouch, s.confirmWait) })
			if err != nil {
				err = fmt.Errorf("%w: the server at %s: %w", ErrNotDurable, s.where(), err)
			}
		}
	}
	return n, err
}

// checkReplication decides the durability class of a write from the facts its transaction
// read after raising synchronous_commit, records it for Replication, and refuses a class a
// failover can set back (async or unknown, unless Settings.AcceptAsync and the server is not
// a standby): the write has committed then, but its caller must not rely on it.
func (s *Store) checkReplication(f pgrepl.Facts) error {
	class, reason := f.Class()
	s.repMu.Lock()
	s.rep = Replication{Class: class.String(), Reason: reason, Epoch: f.Epoch.String(), AsyncAccepted: s.async}
	s.repMu.Unlock()
	switch {
	case class == pgrepl.Sync, class == pgrepl.Single:
		return nil
	case s.async && !f.InRecovery:
		return nil
	case class == pgrepl.Async:
		return fmt.Errorf("%w: the server at %s replicates asynchronously (%s), so a failover to that standby can lose an acknowledged claim or renewal and hand one node to two processes; list every standby that may be promoted in synchronous_standby_names, or add durability=async to the store URL (Settings.AcceptAsync) to run with the failover fence as the only protection", ErrNotDurable, s.where(), reason)
	}
	return fmt.Errorf("%w: cannot tell whether a standby of the server at %s holds every claim: %s", ErrNotDurable, s.where(), reason)
}

// createTable creates the lease table. CREATE TABLE IF NOT EXISTS is not safe against itself
// when run concurrently (two sessions can both pass the check and one then fails on the
// catalog's unique index), so creators take a transaction-scoped advisory lock first.
func (s *Store) createTable(ctx context.Context) error {
	err := s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error { return s.createTx(ctx, tx) })
	})
	if errors.Is(err, ErrNotDurable) {
		return err
	}
	if err != nil {
		return fmt.Errorf("pglease: creating table %s: %w", s.table, err)
	}
	return nil
}

func (s *Store) createTx(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('idkit.pglease.create'))`); err != nil {
		return err
	}
	if !s.asyncCommit {
		if _, err := tx.Exec(ctx, durableSetting); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.table+` (
			namespace  text        NOT NULL,
			slot       bigint      NOT NULL CHECK (slot >= 0),
			owner      text        NOT NULL DEFAULT '',
			expires_at timestamptz NOT NULL DEFAULT '-infinity',
			epoch      bigint      NOT NULL DEFAULT 0,
			claimed_at timestamptz,
			mark_ns    bigint      NOT NULL DEFAULT 0,
			pg_epoch   text,
			ttl_s      float8,
			PRIMARY KEY (namespace, slot)
		)`)
	if err != nil {
		return err
	}
	// Tables made before the failover fence get its columns; their rows read as written in
	// another epoch, and are quarantined once.
	var cols int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = $1::regclass
		AND attname IN ('pg_epoch', 'ttl_s') AND NOT attisdropped`, s.table).Scan(&cols); err != nil {
		return err
	}
	if cols < 2 {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+s.table+` ADD COLUMN IF NOT EXISTS pg_epoch text, ADD COLUMN IF NOT EXISTS ttl_s float8`); err != nil {
			return err
		}
	}
	return s.checkDurable(ctx, tx)
}

// checkDurable refuses a server or a lease table that can lose a committed claim in a crash.
// It runs on the connection that created the table, which sees it even when it is temporary.
func (s *Store) checkDurable(ctx context.Context, tx pgx.Tx) error {
	var fsync, fpw, persistence string
	err := tx.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('full_page_writes'), c.relpersistence::text
		FROM pg_class c WHERE c.oid = $1::regclass`, s.table).Scan(&fsync, &fpw, &persistence)
	if err != nil {
		return fmt.Errorf("%w: cannot read the settings of the server at %s (%w); add unsafe=true to the store URL only if you know it persists every commit", ErrNotDurable, s.where(), err)
	}
	switch persistence {
	case "t":
		return fmt.Errorf("%w: the lease table %s is a temporary table (search_path starts with pg_temp?), which every connection sees empty, so two processes would hold one slot; name a permanent table", ErrNotDurable, s.table)
	case "u":
		if !s.unsafe {
			return fmt.Errorf("%w: the lease table %s is UNLOGGED, so a crash empties it and hands held slots to other processes; ALTER TABLE %s SET LOGGED, or add unsafe=true to the store URL for a throwaway test server", ErrNotDurable, s.table, s.table)
		}
	}
	if err := s.checkSettings(fsync, fpw); err != nil || s.asyncCommit {
		return err
	}
	f, err := pgrepl.Read(ctx, tx)
	if err != nil {
		return fmt.Errorf("%w: reading the replication of the server at %s: %w", ErrNotDurable, s.where(), err)
	}
	return s.checkReplication(f)
}

// Namespace returns the namespace the slots live in.
func (s *Store) Namespace() string { return s.ns }

// Table returns the lease table's name.
func (s *Store) Table() string { return s.table }

// Claim takes the lowest free slot, or the one req.Exact or req.Again names. Errors wrap
// nodeid.ErrNoFreeSlot, nodeid.ErrHeld or nodeid.ErrTaken as nodeid.Store describes.
func (s *Store) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	if req.Nodes > 1<<62 {
		req.Nodes = 1 << 62 // slot is a bigint
	}
	secs := req.TTL.Seconds()
	mk := func(n uint64, epoch int64) nodeid.Claim {
		return nodeid.Claim{Node: n, Owner: req.Owner, TTL: req.TTL, Epoch: epoch}
	}
	claim := func(n uint64) (int64, bool, error) {
		var epoch int64
		var won bool
		_, err := s.write(ctx, s.q.claim, []any{s.ns, int64(n), req.Owner, secs}, &epoch, &won)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, false, nil
		}
		if err != nil {
			if c, ok := s.reread(ctx, mk(n, 0), err); ok {
				return c.Epoch, true, nil
			}
			return 0, false, fmt.Errorf("pglease: claiming slot %d in %s/%s: %w", n, s.table, s.ns, unknown(err))
		}
		return epoch, won, nil
	}
	switch {
	case req.Again != nil:
		var epoch int64
		_, err := s.write(ctx, s.q.again, []any{s.ns, int64(req.Again.Node), req.Owner, secs, req.Again.Epoch}, &epoch)
		if errors.Is(err, pgx.ErrNoRows) {
			return nodeid.Claim{}, fmt.Errorf("pglease: slot %d in %s/%s (claimed by another owner since, or last written before a failover): %w", req.Again.Node, s.table, s.ns, nodeid.ErrTaken)
		}
		if err != nil {
			if c, ok := s.reread(ctx, mk(req.Again.Node, 0), err); ok && c.Epoch == req.Again.Epoch+1 {
				return c, nil
			}
			return nodeid.Claim{}, fmt.Errorf("pglease: claiming slot %d again in %s/%s: %w", req.Again.Node, s.table, s.ns, unknown(err))
		}
		return mk(req.Again.Node, epoch), nil
	case req.Exact:
		epoch, ok, err := claim(req.Node)
		if err != nil {
			return nodeid.Claim{}, err
		}
		if !ok {
			return nodeid.Claim{}, fmt.Errorf("%w: slot %d in %s/%s is held by %s", nodeid.ErrHeld, req.Node, s.table, s.ns, s.ownerOf(ctx, req.Node))
		}
		return mk(req.Node, epoch), nil
	}
	for {
		var taken []int64
		err := s.with(ctx, func(c *pgx.Conn) error {
			rows, err := c.Query(ctx, s.q.taken, s.ns, int64(req.Nodes))
			if err != nil {
				return err
			}
			taken, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
		if err != nil {
			return nodeid.Claim{}, fmt.Errorf("pglease: listing slots in %s/%s: %w", s.table, s.ns, err)
		}
		n, ok := lowestFree(taken, req.Nodes)
		if !ok {
			return nodeid.Claim{}, fmt.Errorf("%w: all %d of %d slots in PostgreSQL table %s, namespace %s, are taken", nodeid.ErrNoFreeSlot, len(taken), req.Nodes, s.table, s.ns)
		}
		epoch, won, err := claim(n)
		if err != nil {
			return nodeid.Claim{}, err
		}
		if won {
			return mk(n, epoch), nil
		}
		// Another process took n between the listing and the claim: list again.
	}
}

// ErrUnknown is wrapped by the error of a claim whose outcome PostgreSQL did not tell (the
// connection broke at or after COMMIT, a timeout) and a re-read could not confirm.
var ErrUnknown = errors.New("pglease: claim outcome unknown")

// reread settles a claim of slot c.Node whose write failed with sendErr: it may have been
// committed, so it is "possibly claimed", never "not claimed". If the row names c.Owner (a
// token unique to the claiming Lease), the claim is confirmed by renewing it, a durable write
// of its own whose commit comes after the claim's in the WAL, so a synchronous standby that
// holds the renewal holds the claim; the confirmed claim is returned. Otherwise the slot is
// left alone: a claim committed anyway lapses after its TTL unused. The re-read gets a few
// seconds of its own when ctx has ended.
func (s *Store) reread(ctx context.Context, c nodeid.Claim, sendErr error) (nodeid.Claim, bool) {
	if errors.Is(sendErr, ErrNotDurable) || !sent(sendErr) {
		return c, false // committed but not durably (possibly claimed, never used), or never sent
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if err := s.queryRow(rctx, s.q.mine, []any{s.ns, int64(c.Node), c.Owner}, &c.Epoch); err != nil {
		return c, false
	}
	if err := s.Renew(rctx, c); err != nil {
		return c, false
	}
	return c, true
}

// sentError is an error of a batch that was sent: its statements may have run, so it is not
// safe to retry, whatever the driver says.
type sentError struct{ error }

func (e sentError) Unwrap() error     { return e.error }
func (e sentError) SafeToRetry() bool { return false }

// sent reports whether err is that of a batch that was sent (sentError).
func sent(err error) bool {
	var se sentError
	return errors.As(err, &se)
}

// unknown marks the error of a claim that may have been committed although it is not used:
// ErrNotDurable says so already, a batch that was sent wraps ErrUnknown, and one that never
// left (no connection) is a plain failure.
func unknown(err error) error {
	if errors.Is(err, ErrNotDurable) || !sent(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnknown, err)
}

// lowestFree returns the lowest number in [0, nodes) not in sorted.
func lowestFree(sorted []int64, nodes uint64) (uint64, bool) {
	var want uint64
	for _, n := range sorted {
		if uint64(n) == want {
			want++
		} else if uint64(n) > want {
			break
		}
	}
	return want, want < nodes
}

// ownerOf names the holder of slot n for a message.
func (s *Store) ownerOf(ctx context.Context, n uint64) string {
	var owner string
	var claimed, expires pgtype.Timestamptz
	if err := s.queryRow(ctx, s.q.owner, []any{s.ns, int64(n)}, &owner, &claimed, &expires); err != nil || owner == "" {
		return "another owner"
	}
	if expires.InfinityModifier != pgtype.Finite {
		return fmt.Sprintf("%q", owner)
	}
	return fmt.Sprintf("%q until %s", owner, expires.Time.UTC().Format(time.RFC3339))
}

// Renew extends c's holding by its TTL from now on the server's clock. Errors wrap
// nodeid.ErrLost when the holding lapsed or is no longer c's.
func (s *Store) Renew(ctx context.Context, c nodeid.Claim) error {
	n, err := s.write(ctx, s.q.renew, []any{s.ns, int64(c.Node), c.Owner, c.TTL.Seconds(), c.Epoch})
	if err != nil {
		return fmt.Errorf("pglease: renewing slot %d in %s/%s: %w", c.Node, s.table, s.ns, err)
	}
	if n == 0 {
		return fmt.Errorf("pglease: slot %d in %s/%s: holding lapsed or replaced: %w", c.Node, s.table, s.ns, nodeid.ErrLost)
	}
	return nil
}

// Release frees c's slot if c still holds it. The mark stays.
func (s *Store) Release(ctx context.Context, c nodeid.Claim) error {
	if _, err := s.write(ctx, s.q.release, []any{s.ns, int64(c.Node), c.Owner, c.Epoch}); err != nil {
		return fmt.Errorf("pglease: releasing slot %d in %s/%s: %w", c.Node, s.table, s.ns, err)
	}
	return nil
}

// LoadMark returns slot node's saved mark, or the zero time.
func (s *Store) LoadMark(ctx context.Context, node uint64) (time.Time, error) {
	var ns int64
	err := s.queryRow(ctx, s.q.load, []any{s.ns, int64(node)}, &ns)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && ns == 0 {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("pglease: loading the mark of slot %d in %s/%s: %w", node, s.table, s.ns, err)
	}
	return time.Unix(0, ns).UTC(), nil
}

// SaveMark raises c's slot's mark to mark (never lowers it) while c holds the slot. Errors
// wrap nodeid.ErrLost otherwise.
func (s *Store) SaveMark(ctx context.Context, c nodeid.Claim, mark time.Time) error {
	ns := mark.UnixNano()
	if ns <= 0 {
		return fmt.Errorf("pglease: mark %v is not after 1970", mark)
	}
	n, err := s.write(ctx, s.q.save, []any{s.ns, int64(c.Node), c.Owner, c.Epoch, ns})
	if err != nil {
		return fmt.Errorf("pglease: saving the mark of slot %d in %s/%s: %w", c.Node, s.table, s.ns, err)
	}
	if n == 0 {
		return fmt.Errorf("pglease: saving the mark of slot %d in %s/%s: %w", c.Node, s.table, s.ns, nodeid.ErrLost)
	}
	return nil
}

// Slots lists every slot of the namespace that was ever claimed.
func (s *Store) Slots(ctx context.Context) ([]nodeid.Slot, error) {
	var out []nodeid.Slot
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, s.q.slots, s.ns)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanSlot)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pglease: listing %s/%s: %w", s.table, s.ns, err)
	}
	return out, nil
}

func scanSlot(r pgx.CollectableRow) (nodeid.Slot, error) {
	var sl nodeid.Slot
	var slot, mark int64
	var exp pgtype.Timestamptz
	if err := r.Scan(&slot, &sl.Owner, &sl.Held, &exp, &sl.Epoch, &mark); err != nil {
		return sl, err
	}
	sl.Node = uint64(slot)
	if exp.Valid && exp.InfinityModifier == pgtype.Finite {
		sl.Expires = exp.Time.UTC()
	}
	if mark > 0 {
		sl.Mark = time.Unix(0, mark).UTC()
	}
	return sl, nil
}

// Close closes the connection.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.conn.Close(ctx)
	s.conn = nil
	if err != nil {
		return fmt.Errorf("pglease: closing: %w", err)
	}
	return nil
}

// queryRow scans one row of sql into dest.
func (s *Store) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return s.with(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, sql, args...).Scan(dest...) })
}
