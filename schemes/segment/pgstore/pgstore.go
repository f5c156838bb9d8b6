// Package pgstore keeps segment counters in a PostgreSQL table, for the segment scheme of
// idkit (store=pg://…). It uses github.com/jackc/pgx/v5. Importing it registers the URL
// schemes pg://, postgres:// and postgresql:// with segment.RegisterStore.
//
// Each key is a row of the table (idkit_segments unless ?table= says otherwise, created on
// first use in the connection's search_path), as in Meituan Leaf's leaf_alloc:
//
//	biz_tag      text         the key
//	max_id       bigint       the highest number handed out
//	step         bigint       the last block's size
//	store_index  int          the store's place in the spec (0 for store=, 1 for store2=)
//	store_count  int          how many stores the spec names
//	updated_at   timestamptz
//
// A block is taken with one statement, INSERT … ON CONFLICT DO UPDATE SET max_id = max_id +
// step … RETURNING max_id: atomic under concurrency, and creating the row on first use.
//
// # Durability
//
// A counter that a crash sets back hands its numbers out again, and IDs repeat. So a block is
// handed out only once its increment is on disk, whatever the server's tuning:
//
//   - the statement sets synchronous_commit to on for its own transaction (set_config(…, true),
//     what SET LOCAL does, allowed to any role), so the commit waits for the WAL flush also on a
//     server, database or role with synchronous_commit = off or local, which a crash (even
//     pg_ctl stop -m immediate) sets back by up to three wal_writer_delay; remote_apply is
//     kept;
//   - Open refuses, with an error wrapping ErrNotDurable that names the setting, a server with
//     fsync = off or full_page_writes = off (PostgreSQL's documentation: either can lose or
//     corrupt committed data when the machine crashes) and a table that is UNLOGGED (a crash
//     empties it); every Take reads fsync and full_page_writes again in the same statement and
//     refuses the block if either was turned off since, its numbers lost, never used;
//   - a temporary table (search_path starting with pg_temp) is refused always: every
//     connection would count on its own.
//
// The store URL's unsafe=true accepts fsync, full_page_writes or an UNLOGGED table anyway, for
// tests and throwaway data; synchronous_commit is raised all the same.
//
// # Replication
//
// A commit the primary acknowledged survives a failover only if the promoted standby held it.
// Open and every Take read the server's durability class (internal/pgrepl): in the take's
// transaction before COMMIT, and on the same connection after it, so a setting changed while
// the take ran is seen. A take is handed out only when the class is
//
//   - single: no standby streams from the server and it keeps no physical replication slot;
//     or
//   - sync: synchronous_standby_names is set, the take commits with synchronous_commit on (or
//     remote_apply), every streaming standby is in sync_state sync, or quorum with no
//     more quorum standbys than ANY n waits for, and every physical slot is in use.
//
// Otherwise (a standby in sync_state async or potential, an empty synchronous_standby_names
// with standbys streaming, a physical replication slot kept for a standby that is away, a
// role that cannot read pg_stat_replication.sync_state) Open and Take refuse with
// ErrNotDurable naming the setting, standby or slot, and the block is lost. A slot is what
// keeps a cut-off asynchronous standby in sight: under a partition the primary's walsender
// gives up after wal_sender_timeout and pg_stat_replication empties while the standby can
// still be promoted; a standby without a slot is then not seen. durability=async
// in the store URL's query (Settings.AcceptAsync) accepts an asynchronous standby, with
// failover fencing as the only protection: every row records the epoch it was last written
// in (pg_control_system()'s system identifier and the timeline of the current WAL file, which
// pg_promote() changes), and a take in another epoch first adds Request.Gap blocks to
// max_id; a new row skips the gap too under durability=async (the lost primary may have had
// it) and whenever the server has or had a standby (one streams, it keeps a physical
// replication slot, synchronous_standby_names is set, or its timeline is above 1) or the
// store saw one: a row is new on a promoted standby when the take that made it was lost.
//
// A new row's gap grows with each promotion. The timeline counts them (each pg_promote() raises
// it by one), and where the gap applies a new row starts at max_id = Step × (1 + Gap × T) on
// timeline T: its first block is Step × Gap × T + 1 to Step × (Gap × T + 1). A row that the lost
// primary, on timeline T, made with step s and took N numbers from in all, none of which the
// promoted standby (timeline T' > T) received, ends at s × Gap × T + N; the promoted standby's
// first take of the key, with step s', starts at s' × Gap × T' + 1. No number repeats while
// s' × Gap × T' ≥ s × Gap × T + N, so in particular while s' ≥ s and N ≤ s' × Gap (at most
// Gap blocks of the new step lost), the promise a row the standby had is kept with. s' ≥ s
// holds when every Segment of the key has the same Settings.Step and the row was made by a
// Segment's first take (which asks Settings.Step; the dynamic step never goes below it); a
// lowered Step or a row made with a grown dynamic step narrows it. The timeline counts the
// promotions of one physical replication history: a standby made from a backup of the
// promoted server has its timeline; a server with another system identifier (a logical
// replica, a restored dump) starts at timeline 1 again and is not covered. A start that
// leaves bigint is refused with segment.ErrExhausted, no row made; the statement computes the
// start before it finds the row, so such a Step and Gap are refused on that timeline for
// every key, existing ones too. With the defaults (gap 1000, a step up to
// segment.DefaultMaxStep) no 32-bit timeline reaches it.
//
// A commit whose wait for the synchronous standbys was cancelled (pg_cancel_backend, a
// statement_timeout) is on the primary only. Under class sync a take is handed out only once
// pgrepl.Confirm, run right after COMMIT in the same batch, finds as many standbys in
// sync_state sync or quorum as synchronous_standby_names waits for with flush_lsn past the
// server's WAL flush position (waiting up to DefaultConfirmWait for their reports). The
// server's warning ("canceling wait for synchronous replication") is a second sign: the take
// sets client_min_messages to warning for its transaction and recognises the warning by its
// routine, whatever lc_messages; a DSN whose options (or PGOPTIONS) or parameters set
// client_min_messages or lc_messages is refused (pgrepl.ErrOverride). Either sign, and any
// error at or after COMMIT, drops the block: its numbers are lost, never used.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/internal/pgrepl"
	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/schemes/nodeid/pglease"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the counter table's name when the URL gives none.
const DefaultTable = "idkit_segments"

// ErrNotDurable reports a server or table that could lose a committed increment in a crash or
// in a failover to a replica that lacked it, and so hand its numbers out again.
var ErrNotDurable = errors.New("pgstore: PostgreSQL can lose a committed write in a crash or a failover")

func init() {
	for _, s := range []string{"pg", "postgres", "postgresql"} {
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
		return "PostgreSQL store (unreadable URL)"
	}
	return "PostgreSQL table " + s.Table
}

// Settings configures Open.
type Settings struct {
	// DSN is a pgx connection string, URL (postgres://…) or key/value form.
	DSN string
	// Table is the counter table, optionally schema-qualified; DefaultTable when empty.
	Table string
	// Unsafe accepts a server with fsync or full_page_writes off and an UNLOGGED table, which
	// can lose increments in a crash (see the package doc): for tests and throwaway data.
	Unsafe bool
	// AcceptAsync runs the store although a standby could be promoted without its takes
	// (durability=async in the URL): failover fencing is then the only protection (see the
	// package doc).
	AcceptAsync bool
}

// ParseURL reads "pg://…", "postgres://…" or "postgresql://…" into Settings: the query
// parameters table (DefaultTable without it), unsafe=true and durability=async (or sync, the
// default) are taken out, and the rest is the pgx connection string. The query is read as pglease.ParseURL reads it: strictly, so a
// pair that does not parse (';', %zz), a key given twice or an unknown key is an error naming
// the parameter. Errors never show a password the URL holds.
func ParseURL(raw string) (Settings, error) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		raw = strings.ToLower(scheme) + "://" + rest
	}
	raw, async, err := cutDurability(raw)
	if err != nil {
		return Settings{}, err
	}
	// The lease store's reader takes table= and unsafe= out and reads the query strictly.
	s, err := pglease.ParseURL(raw)
	if err != nil {
		return Settings{}, fmt.Errorf("pgstore: %w", err)
	}
	if s.Namespace != "" {
		return Settings{}, errors.New("pgstore: store URL: namespace is a lease store setting; a segment store takes table=")
	}
	set := Settings{DSN: s.DSN, Table: s.Table, Unsafe: s.Unsafe, AcceptAsync: async}
	if set.Table == "" {
		set.Table = DefaultTable
	}
	return set, nil
}

// cutDurability takes durability= out of raw's query: async is true for durability=async.
func cutDurability(raw string) (rest string, async bool, err error) {
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw, false, nil
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	var kept []string
	seen := false
	for _, part := range strings.Split(query, "&") {
		if part == "" && strings.Contains(query, "durability") {
			return "", false, errors.New("pgstore: store URL: an empty parameter (a doubled or trailing '&')")
		}
		k, v, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err != nil || key != "durability" {
			kept = append(kept, part)
			continue
		}
		if seen {
			return "", false, errors.New(`pgstore: store URL: parameter "durability" given twice`)
		}
		seen = true
		val, _ := url.QueryUnescape(v)
		if async, err = segment.ParseDurability(val); err != nil {
			return "", false, fmt.Errorf("pgstore: store URL: %w", err)
		}
	}
	rest = base
	if len(kept) > 0 {
		rest += "?" + strings.Join(kept, "&")
	}
	if hasFrag {
		rest += "#" + frag
	}
	return rest, async, nil
}

// Store is a segment.Store in a PostgreSQL table. It is safe for concurrent use; it keeps a
// small pool of connections and opens new ones after a server restart.
type Store struct {
	pool   *pgxpool.Pool
	table  string
	server string // host:port, for messages
	unsafe bool
	async  bool // Settings.AcceptAsync
	take   string
	class  string

	// unprotected, set by the fault tests' controls only, takes blocks as before failover
	// fencing: no epoch, no gap, no replication check, no look at a cancelled wait.
	unprotected bool
	// legacy, set by the tests' controls only, vouches for a take as before Confirm: by the
	// English text of the cancel warning alone, without forcing client_min_messages, and a
	// new row starts after the gap only under durability=async.
	legacy bool
	// noNotice, set by the tests only, ignores the cancel warning: Confirm alone vouches.
	noNotice bool
	// confirmWait bounds how long a take waits for its synchronous standbys to report its
	// WAL flushed (pgrepl.Confirm).
	confirmWait time.Duration
	// replicated is set once the store has seen a standby stream from its server, a
	// physical replication slot or synchronous_standby_names set: new rows then start after
	// the gap too.
	replicated atomic.Bool
	// ignoreSlots, set by the partition test's control only, classes the server as before
	// physical replication slots were read: by pg_stat_replication and
	// synchronous_standby_names alone, and a new row starts after the gap only as then.
	ignoreSlots bool

	mu  sync.Mutex
	dur segment.Durability

	// waits holds the connections on which PostgreSQL warned that a commit's wait for the
	// synchronous standbys was cancelled (pgconn's OnNotice runs while the batch is read).
	waits sync.Map // *pgconn.PgConn → struct{}
}

var _ segment.Store = (*Store)(nil)

// epochSQL is the server's epoch as pgrepl.Epoch.String writes it.
const epochSQL = pgrepl.EpochSQL

// DefaultConfirmWait is how long a take waits, after its COMMIT, for the synchronous standbys
// to report its WAL flushed. A standby that ended the commit's wait has flushed the commit
// already; the wait covers only WAL that other sessions flushed right after it.
const DefaultConfirmWait = 2 * time.Second

// standbySQL is true on a server that has or had a standby: one streams from it, it keeps a
// physical replication slot (for a standby that may be away), synchronous_standby_names is
// set, or its timeline is above 1 (it was promoted, or restored to a point in time). A new row
// starts after the gap there: the row may be new only because the server was promoted without
// the take that made it on the old primary.
const standbySQL = `(EXISTS (SELECT 1 FROM pg_catalog.pg_stat_replication)
	OR EXISTS (SELECT 1 FROM pg_catalog.pg_replication_slots WHERE slot_type OPERATOR(pg_catalog.=) 'physical')
	OR pg_catalog.current_setting('synchronous_standby_names') <> ''
	OR ` + timelineSQL + ` > 1)`

// timelineSQL is the timeline of the server's current WAL file, as the epoch reads it
// (pgrepl.EpochSQL): 1 on a new cluster, raised by one at each pg_promote().
const timelineSQL = `('x' || pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()), 1, 8))::bit(32)::bigint`

// timelineGap is how many blocks a new row skips where the gap applies: Request.Gap for each
// timeline, so that a promoted server starts a row past the blocks the lost primary handed
// out from the same row (see the package doc).
const timelineGap = `$5::bigint * f.timeline`

// takeQuery is the statement that takes a block. It returns the new max_id, the epoch the row
// now records and the server's fsync and full_page_writes. With syncCommit it makes its own
// commit wait for the WAL flush (see the package doc); without, only the tests' control run
// uses it. With notices it sets client_min_messages to warning for its transaction
// (pgrepl.ForceNotices). With fence the row records the epoch, and a row last written in
// another epoch skips $6 blocks first. A new row skips $5 blocks when $7 is true, or, with
// standbyGap, when the server has or had a standby (standbySQL); with standbyGap it skips $5
// blocks for each timeline (timelineGap), without only $5.
func takeQuery(table string, syncCommit, notices, fence, standbyGap bool) string {
	// A volatile function in FROM runs once, before the row is inserted; a setting made local
	// to the transaction lasts until its commit, which reads it.
	raise, force, epoch, standby, timeline, gap := "NULL", "NULL", "NULL::text", "false", "1::bigint", "$5::bigint"
	if syncCommit {
		raise = pgrepl.RaiseCommit
	}
	if notices {
		force = pgrepl.ForceNotices
	}
	if fence {
		epoch = epochSQL
	}
	if standbyGap {
		standby, timeline, gap = standbySQL, timelineSQL, timelineGap
	}
	return `INSERT INTO ` + table + ` AS s (biz_tag, max_id, step, store_index, store_count, updated_at, epoch)
			SELECT $1::text, $2::bigint * (1 + CASE WHEN $7::bool OR f.standby THEN ` + gap + ` ELSE 0 END), $2::bigint, $3::int, $4::int, now(), f.epoch
			FROM (SELECT ` + raise + ` AS durable, ` + force + ` AS notices, ` + epoch + ` AS epoch, ` + standby + ` AS standby, ` + timeline + ` AS timeline) AS f
			ON CONFLICT (biz_tag) DO UPDATE SET
				max_id = s.max_id + EXCLUDED.step * (1 + CASE WHEN s.epoch <> EXCLUDED.epoch THEN $6::bigint ELSE 0 END),
				step = EXCLUDED.step, updated_at = now(), epoch = EXCLUDED.epoch
			WHERE s.store_index = EXCLUDED.store_index AND s.store_count = EXCLUDED.store_count
			RETURNING max_id, COALESCE(epoch, ''), current_setting('fsync'), current_setting('full_page_writes')`
}

// Open connects with set.DSN and creates set.Table if it does not exist. It refuses, with an
// error wrapping ErrNotDurable, a server or table that can lose a committed increment in a
// crash, unless set.Unsafe (see the package doc).
func Open(ctx context.Context, set Settings) (*Store, error) {
	return open(ctx, set, false)
}

// open is Open; ignoreSlots (the partition test's control only) classes the server by
// pg_stat_replication and synchronous_standby_names alone, as before slots were read.
func open(ctx context.Context, set Settings, ignoreSlots bool) (*Store, error) {
	if set.Table == "" {
		set.Table = DefaultTable
	}
	table := set.Table
	cfg, err := pgxpool.ParseConfig(set.DSN)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", redact.Error(err))
	}
	if err := pgrepl.CheckParams(cfg.ConnConfig.RuntimeParams); err != nil {
		return nil, fmt.Errorf("pgstore: %w: %w", ErrNotDurable, err)
	}
	cfg.MaxConns = 2
	s := &Store{
		table:       table,
		server:      net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))),
		unsafe:      set.Unsafe,
		async:       set.AcceptAsync,
		take:        takeQuery(table, true, true, true, true),
		class:       `SELECT store_index, store_count FROM ` + table + ` WHERE biz_tag = $1`,
		confirmWait: DefaultConfirmWait,
		ignoreSlots: ignoreSlots,
	}
	onNotice := cfg.ConnConfig.OnNotice
	cfg.ConnConfig.OnNotice = func(c *pgconn.PgConn, n *pgconn.Notice) {
		cancelled := pgrepl.CancelledWait(n)
		if s.legacy {
			cancelled = n != nil && strings.Contains(n.Message, "wait for synchronous replication")
		}
		if cancelled && !s.noNotice {
			s.waits.Store(c, struct{}{})
		}
		if onNotice != nil {
			onNotice(c, n)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", redact.Error(err))
	}
	s.pool = pool
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// CREATE TABLE IF NOT EXISTS can fail when run concurrently; serialise creators.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('idkit.pgstore.create'))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
			biz_tag     text        PRIMARY KEY,
			max_id      bigint      NOT NULL CHECK (max_id >= 0),
			step        bigint      NOT NULL,
			store_index int         NOT NULL,
			store_count int         NOT NULL,
			updated_at  timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("pgstore: creating table %s: %w", table, err)
		}
		// epoch came with failover fencing: tables made before get it here.
		if _, err := tx.Exec(ctx, `ALTER TABLE `+table+` ADD COLUMN IF NOT EXISTS epoch text`); err != nil {
			return fmt.Errorf("pgstore: adding column epoch to %s: %w", table, err)
		}
		if err := s.checkDurable(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT `+pgrepl.RaiseCommit); err != nil {
			return err
		}
		f, err := pgrepl.Read(ctx, tx)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotDurable, err)
		}
		_, err = s.checkReplication(f, f)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// checkDurable refuses a server or table that can lose a committed increment in a crash. It
// runs on the connection that created the table, which sees it even when it is temporary.
func (s *Store) checkDurable(ctx context.Context, tx pgx.Tx) error {
	var fsync, fpw, persistence string
	err := tx.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('full_page_writes'), c.relpersistence::text
		FROM pg_class c WHERE c.oid = $1::regclass`, s.table).Scan(&fsync, &fpw, &persistence)
	if err != nil {
		return fmt.Errorf("%w: cannot read the settings of PostgreSQL at %s (%w); add unsafe=true to the store URL only if you know it persists every commit", ErrNotDurable, s.server, err)
	}
	switch persistence {
	case "t":
		return fmt.Errorf("%w: table %s is a temporary table (search_path starts with pg_temp?), which every connection sees empty and a disconnect drops, so IDs repeat; name a permanent table", ErrNotDurable, s.table)
	case "u":
		if !s.unsafe {
			return fmt.Errorf("%w: table %s is UNLOGGED, so a crash empties it and repeats IDs; ALTER TABLE %s SET LOGGED, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.table, s.table)
		}
	}
	return s.checkSettings(fsync, fpw)
}

// checkSettings refuses the server settings fsync and full_page_writes read from the server
// unless they are on or the store is unsafe.
func (s *Store) checkSettings(fsync, fpw string) error {
	switch {
	case s.unsafe:
	case fsync != "on":
		return fmt.Errorf("%w: PostgreSQL at %s has fsync %s, so a crash of its machine can lose the last increments and repeat IDs; set fsync = on, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.server, fsync)
	case fpw != "on":
		return fmt.Errorf("%w: PostgreSQL at %s has full_page_writes %s, so a crash of its machine can corrupt the counter and repeat IDs; set full_page_writes = on, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.server, fpw)
	}
	return nil
}

// checkReplication decides the durability class from the facts read before and after a
// commit (the weaker of the two; the commit ran with before's synchronous_commit), records it
// for Durability, and refuses a class that a failover can set back unless the store accepts
// async. It reports whether the class is sync.
func (s *Store) checkReplication(before, after pgrepl.Facts) (sync bool, err error) {
	after.SynchronousCommit = before.SynchronousCommit
	if s.ignoreSlots {
		before.Slots, after.Slots = nil, nil
	}
	c1, r1 := before.Class()
	c2, r2 := after.Class()
	for _, f := range []pgrepl.Facts{before, after} {
		if len(f.Standbys) > 0 || len(f.Slots) > 0 || strings.TrimSpace(f.SynchronousStandbyNames) != "" {
			s.replicated.Store(true)
		}
	}
	class, reason := c1, r1
	if c2 < c1 {
		class, reason = c2, r2
	}
	d := segment.Durability{Class: segmentClass(class), Reason: reason, Epoch: after.Epoch.String(), AsyncAccepted: s.async}
	s.mu.Lock()
	s.dur = d
	s.mu.Unlock()
	switch {
	case class == pgrepl.Sync:
		return true, nil
	case class == pgrepl.Single, s.async && !after.InRecovery:
		return false, nil
	case class == pgrepl.Unknown:
		return false, fmt.Errorf("%w: cannot tell whether a standby of PostgreSQL at %s holds every take: %s; a failover could hand its blocks out again", ErrNotDurable, s.server, reason)
	}
	return false, fmt.Errorf("%w: PostgreSQL at %s replicates asynchronously (%s), so a failover to that standby can lose acknowledged takes and repeat IDs; list the standbys in synchronous_standby_names (every standby that may be promoted), or add durability=async to the store URL to run with failover fencing (a skip of the gap after each failover) as the only protection", ErrNotDurable, s.server, reason)
}

// segmentClass maps a pgrepl class onto the segment package's.
func segmentClass(c pgrepl.Class) segment.Class {
	switch c {
	case pgrepl.Async:
		return segment.ClassAsync
	case pgrepl.Single:
		return segment.ClassSingle
	case pgrepl.Sync:
		return segment.ClassSync
	}
	return segment.ClassUnknown
}

// Durability returns the durability class the store read at Open or its last take
// (segment.Durabler).
func (s *Store) Durability() segment.Durability {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dur
}

// Table returns the counter table's name.
func (s *Store) Table() string { return s.table }

// Take adds req.Step to the key's max_id and returns the numbers in between, once the
// increment is on disk and on every standby that could be promoted (see the package doc).
// Errors wrap segment.ErrClass when the key's row belongs to another store position,
// segment.ErrExhausted when max_id would leave the bigint range (also a new row's start,
// Step × (1 + Gap × timeline) where the gap applies), and ErrNotDurable when
// fsync or full_page_writes was turned off since Open, the replication became asynchronous
// (without durability=async) or the commit's wait for the synchronous standbys was cancelled
// (the warning, or no standby flushed past the commit: pgrepl.Confirm);
// the block is then lost, never used, as after any error at COMMIT.
func (s *Store) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
	}
	// A connection left inside the transaction (an error half-way) is closed by Release.
	defer conn.Release()
	pc := conn.Conn().PgConn()
	s.waits.Delete(pc)

	var gap uint64
	if !s.unprotected {
		gap = req.Gap
	}
	take := s.take
	switch {
	case s.unprotected:
		take = takeQuery(s.table, true, false, false, false)
	case s.legacy:
		take = takeQuery(s.table, true, false, true, false)
	}
	// One round trip: the take and the replication state before COMMIT, then the commit's
	// WAL position with the standbys' and the replication state after it.
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(take, req.Key, int64(req.Step), req.Index, req.Count, int64(gap), int64(gap), s.async || !s.legacy && s.replicated.Load())
	b.Queue(pgrepl.Query)
	b.Queue("COMMIT")
	b.Queue(pgrepl.VouchQuery)
	b.Queue(pgrepl.Query)
	res := conn.SendBatch(ctx, b)
	var maxID int64
	var epoch, fsync, fpw string
	var before, after pgrepl.Scan
	var vouch pgrepl.Vouch
	_, err = res.Exec()
	if err == nil {
		err = res.QueryRow().Scan(&maxID, &epoch, &fsync, &fpw)
	}
	if err == nil {
		err = res.QueryRow().Scan(before.Dest()...)
	}
	committed := false
	if err == nil {
		// From here on, an error leaves the outcome unknown: the block is dropped all the same.
		_, err = res.Exec()
		committed = err == nil
	}
	if err == nil {
		err = res.QueryRow().Scan(vouch.Dest()...)
	}
	if err == nil {
		err = res.QueryRow().Scan(after.Dest()...)
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) && !committed {
		var idx, n int
		if err := conn.QueryRow(ctx, s.class, req.Key).Scan(&idx, &n); err != nil {
			return segment.Block{}, fmt.Errorf("pgstore: reading the row of key %q in %s: %w", req.Key, s.table, err)
		}
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s belongs to store %d of %d, asked as store %d of %d: %w",
			req.Key, s.table, idx+1, n, req.Index+1, req.Count, segment.ErrClass)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "22003" { // numeric_value_out_of_range
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: max_id + %d, or a new row's start past the failover gap, leaves bigint: %w", req.Key, s.table, req.Step, segment.ErrExhausted)
	}
	if err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: taking %d of key %q in %s (the block is dropped): %w", req.Step, req.Key, s.table, err)
	}
	if err := s.checkSettings(fsync, fpw); err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
	}
	blk := segment.Block{First: uint64(maxID) - req.Step + 1, Last: uint64(maxID)}
	if !s.unprotected {
		fb, err1 := before.Facts()
		fa, err2 := after.Facts()
		if err := errors.Join(err1, err2); err != nil {
			return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: block up to %d dropped: %w: %w", req.Key, s.table, maxID, ErrNotDurable, err)
		}
		sync, err := s.checkReplication(fb, fa)
		if err != nil {
			return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
		}
		if _, cancelled := s.waits.LoadAndDelete(pc); cancelled {
			return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: block up to %d dropped: %w: the commit's wait for the synchronous standbys was cancelled, so it may be on the primary only", req.Key, s.table, maxID, ErrNotDurable)
		}
		if c, _ := fb.Class(); (sync || c == pgrepl.Sync) && !s.legacy {
			// The commit waited for standbys, or should have. The warning above can be kept
			// from the client (client_min_messages) or translated: the standbys' own flush
			// positions vouch for the take.
			if err := pgrepl.Confirm(ctx, conn, vouch, s.confirmWait); err != nil {
				return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: block up to %d dropped: %w: %w", req.Key, s.table, maxID, ErrNotDurable, err)
			}
		}
		blk.Epoch, blk.Synchronous = epoch, sync
	}
	if maxID < int64(req.Step) {
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: max_id %d after adding %d: %w", req.Key, s.table, maxID, req.Step, segment.ErrBackwards)
	}
	return blk, nil
}

// Check reports whether a Take would be refused now, without taking a block
// (segment.Checker): it reads fsync, full_page_writes and the replication class as a take
// does, with synchronous_commit raised as a take raises it, in a read-only transaction that
// it rolls back. A Segment calls it before taking again after a failed take, so that a store
// that refuses (its blocks lost) is not written to while it stays refused. Errors wrap
// ErrNotDurable as Take's refusals do, or are the connection's.
func (s *Store) Check(ctx context.Context) error {
	if s.unprotected {
		return nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("pgstore: checking %s: %w", s.table, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var fsync, fpw string
	if err := tx.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('full_page_writes'), `+pgrepl.RaiseCommit).Scan(&fsync, &fpw, new(any)); err != nil {
		return fmt.Errorf("pgstore: checking %s: %w", s.table, err)
	}
	if err := s.checkSettings(fsync, fpw); err != nil {
		return err
	}
	f, err := pgrepl.Read(ctx, tx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	_, err = s.checkReplication(f, f)
	return err
}

var _ segment.Checker = (*Store)(nil)

// Close closes the store's connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
