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
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/schemes/nodeid/pglease"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the counter table's name when the URL gives none.
const DefaultTable = "idkit_segments"

// ErrNotDurable reports a server or table that could lose a committed increment in a crash,
// and so hand its numbers out again.
var ErrNotDurable = errors.New("pgstore: PostgreSQL can lose a committed write in a crash")

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
}

// ParseURL reads "pg://…", "postgres://…" or "postgresql://…" into Settings: the query
// parameters table (DefaultTable without it) and unsafe=true are taken out, and the rest is
// the pgx connection string. The query is read as pglease.ParseURL reads it: strictly, so a
// pair that does not parse (';', %zz), a key given twice or an unknown key is an error naming
// the parameter. Errors never show a password the URL holds.
func ParseURL(raw string) (Settings, error) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		raw = strings.ToLower(scheme) + "://" + rest
	}
	// The lease store's reader takes table= and unsafe= out and reads the query strictly.
	s, err := pglease.ParseURL(raw)
	if err != nil {
		return Settings{}, fmt.Errorf("pgstore: %w", err)
	}
	if s.Namespace != "" {
		return Settings{}, errors.New("pgstore: store URL: namespace is a lease store setting; a segment store takes table=")
	}
	set := Settings{DSN: s.DSN, Table: s.Table, Unsafe: s.Unsafe}
	if set.Table == "" {
		set.Table = DefaultTable
	}
	return set, nil
}

// Store is a segment.Store in a PostgreSQL table. It is safe for concurrent use; it keeps a
// small pool of connections and opens new ones after a server restart.
type Store struct {
	pool   *pgxpool.Pool
	table  string
	server string // host:port, for messages
	unsafe bool
	take   string
	class  string
}

var _ segment.Store = (*Store)(nil)

// takeQuery is the statement that takes a block. It returns the new max_id and the server's
// fsync and full_page_writes. With syncCommit it makes its own commit wait for the WAL flush
// (see the package doc); without, only the tests' control run uses it.
func takeQuery(table string, syncCommit bool) string {
	from := ""
	if syncCommit {
		// A volatile function in FROM runs once, before the row is inserted; a setting made
		// local to the transaction lasts until its commit, which reads it.
		from = ` FROM (SELECT set_config('synchronous_commit',
			CASE current_setting('synchronous_commit') WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)) AS durable`
	}
	return `INSERT INTO ` + table + ` AS s (biz_tag, max_id, step, store_index, store_count, updated_at)
			SELECT $1::text, $2::bigint, $2::bigint, $3::int, $4::int, now()` + from + `
			ON CONFLICT (biz_tag) DO UPDATE SET max_id = s.max_id + EXCLUDED.step, step = EXCLUDED.step, updated_at = now()
			WHERE s.store_index = EXCLUDED.store_index AND s.store_count = EXCLUDED.store_count
			RETURNING max_id, current_setting('fsync'), current_setting('full_page_writes')`
}

// Open connects with set.DSN and creates set.Table if it does not exist. It refuses, with an
// error wrapping ErrNotDurable, a server or table that can lose a committed increment in a
// crash, unless set.Unsafe (see the package doc).
func Open(ctx context.Context, set Settings) (*Store, error) {
	if set.Table == "" {
		set.Table = DefaultTable
	}
	table := set.Table
	cfg, err := pgxpool.ParseConfig(set.DSN)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", redact.Error(err))
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", redact.Error(err))
	}
	s := &Store{
		pool:   pool,
		table:  table,
		server: net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))),
		unsafe: set.Unsafe,
		take:   takeQuery(table, true),
		class:  `SELECT store_index, store_count FROM ` + table + ` WHERE biz_tag = $1`,
	}
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
		return s.checkDurable(ctx, tx)
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

// Table returns the counter table's name.
func (s *Store) Table() string { return s.table }

// Take adds req.Step to the key's max_id and returns the numbers in between, once the
// increment is on disk. Errors wrap segment.ErrClass when the key's row belongs to another
// store position, segment.ErrExhausted when max_id would leave the bigint range, and
// ErrNotDurable when fsync or full_page_writes was turned off since Open (the block is then
// lost, never used).
func (s *Store) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	var maxID int64
	var fsync, fpw string
	err := s.pool.QueryRow(ctx, s.take, req.Key, int64(req.Step), req.Index, req.Count).Scan(&maxID, &fsync, &fpw)
	if errors.Is(err, pgx.ErrNoRows) {
		var idx, n int
		if err := s.pool.QueryRow(ctx, s.class, req.Key).Scan(&idx, &n); err != nil {
			return segment.Block{}, fmt.Errorf("pgstore: reading the row of key %q in %s: %w", req.Key, s.table, err)
		}
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s belongs to store %d of %d, asked as store %d of %d: %w",
			req.Key, s.table, idx+1, n, req.Index+1, req.Count, segment.ErrClass)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "22003" { // numeric_value_out_of_range
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: max_id + %d leaves bigint: %w", req.Key, s.table, req.Step, segment.ErrExhausted)
	}
	if err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
	}
	if err := s.checkSettings(fsync, fpw); err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: block up to %d dropped: %w", req.Key, s.table, maxID, err)
	}
	if maxID < int64(req.Step) {
		return segment.Block{}, fmt.Errorf("pgstore: key %q in %s: max_id %d after adding %d: %w", req.Key, s.table, maxID, req.Step, segment.ErrBackwards)
	}
	return segment.Block{First: uint64(maxID) - req.Step + 1, Last: uint64(maxID)}, nil
}

// Close closes the store's connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
