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
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/idkit/idkit/schemes/nodeid/pglease"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the counter table's name when the URL gives none.
const DefaultTable = "idkit_segments"

func init() {
	for _, s := range []string{"pg", "postgres", "postgresql"} {
		segment.RegisterStore(s, driver{})
	}
}

type driver struct{}

func (driver) OpenStore(ctx context.Context, url string) (segment.Store, error) {
	dsn, table, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return Open(ctx, dsn, table)
}

func (driver) DescribeStore(url string) string {
	_, table, err := ParseURL(url)
	if err != nil {
		return "PostgreSQL store (unreadable URL)"
	}
	return "PostgreSQL table " + table
}

// ParseURL reads "pg://…", "postgres://…" or "postgresql://…" into a pgx connection string
// and a table name (the query parameter table, DefaultTable without it).
func ParseURL(url string) (dsn, table string, err error) {
	if scheme, rest, ok := strings.Cut(url, "://"); ok {
		url = strings.ToLower(scheme) + "://" + rest
	}
	s, err := pglease.ParseURL(url)
	if err != nil {
		return "", "", fmt.Errorf("pgstore: %w", err)
	}
	if s.Namespace != "" {
		return "", "", errors.New("pgstore: store URL: namespace is a lease store setting; a segment store takes table=")
	}
	if s.Table == "" {
		s.Table = DefaultTable
	}
	return s.DSN, s.Table, nil
}

// Store is a segment.Store in a PostgreSQL table. It is safe for concurrent use; it keeps a
// small pool of connections and opens new ones after a server restart.
type Store struct {
	pool  *pgxpool.Pool
	table string
	take  string
	class string
}

var _ segment.Store = (*Store)(nil)

// Open connects with dsn (a pgx connection string) and creates table if it does not exist.
func Open(ctx context.Context, dsn, table string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s := &Store{
		pool:  pool,
		table: table,
		take: `INSERT INTO ` + table + ` AS s (biz_tag, max_id, step, store_index, store_count, updated_at)
			VALUES ($1, $2, $2, $3, $4, now())
			ON CONFLICT (biz_tag) DO UPDATE SET max_id = s.max_id + EXCLUDED.step, step = EXCLUDED.step, updated_at = now()
			WHERE s.store_index = EXCLUDED.store_index AND s.store_count = EXCLUDED.store_count
			RETURNING max_id`,
		class: `SELECT store_index, store_count FROM ` + table + ` WHERE biz_tag = $1`,
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// CREATE TABLE IF NOT EXISTS can fail when run concurrently; serialise creators.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('idkit.pgstore.create'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
			biz_tag     text        PRIMARY KEY,
			max_id      bigint      NOT NULL CHECK (max_id >= 0),
			step        bigint      NOT NULL,
			store_index int         NOT NULL,
			store_count int         NOT NULL,
			updated_at  timestamptz NOT NULL DEFAULT now()
		)`)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: creating table %s: %w", table, err)
	}
	return s, nil
}

// Table returns the counter table's name.
func (s *Store) Table() string { return s.table }

// Take adds req.Step to the key's max_id and returns the numbers in between. Errors wrap
// segment.ErrClass when the key's row belongs to another store position, and
// segment.ErrExhausted when max_id would leave the bigint range.
func (s *Store) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	var maxID int64
	err := s.pool.QueryRow(ctx, s.take, req.Key, int64(req.Step), req.Index, req.Count).Scan(&maxID)
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
