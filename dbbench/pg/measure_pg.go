package pg

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Marks reads the WAL position, pg_stat_wal.wal_fpi and the checkpoint count (snap); the
// function it returns flushes the loading sessions' statistics first, so that their
// full-page images are counted.
func (e *pgEngine) Marks(ctx context.Context) (func(context.Context) (map[string]int64, error), error) {
	before, err := e.snap(ctx)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (map[string]int64, error) {
		if e.flushStats {
			for _, c := range e.loaders {
				if _, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
					return nil, fail(ctx, "flush statistics", err)
				}
			}
		}
		after, err := e.snap(ctx)
		if err != nil {
			return nil, err
		}
		var wal int64
		if err := e.admin.QueryRow(ctx, "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint", after.lsn, before.lsn).Scan(&wal); err != nil {
			return nil, fail(ctx, "compute WAL bytes", err)
		}
		c := map[string]int64{engine.CounterLogBytes: wal}
		if e.walStats {
			c[engine.CounterFullPageImages] = after.fpi - before.fpi
		}
		if e.ckptQuery != "" {
			c[engine.CounterCheckpoints] = after.ckpts - before.ckpts
		}
		return c, nil
	}, nil
}

// LeafStats reads pgstatindex of the index (t's primary key, t_pkey, when index is ""). Without
// pgstattuple it reports nothing; when pgstatindex fails for another reason than a lost
// connection, the statistics become unavailable for the rest of the run, with the reason in
// the settings.
func (e *pgEngine) LeafStats(ctx context.Context, t engine.TableDef, index string, _ int64) (engine.LeafStats, error) {
	if e.statsFn == "" {
		return engine.LeafStats{}, nil
	}
	if index == "" {
		index = t.Name + "_pkey"
	}
	var density, frag float64
	var leaves int64
	err := e.admin.QueryRow(ctx, "SELECT avg_leaf_density, leaf_fragmentation, leaf_pages FROM "+e.statsFn+"($1::regclass)", e.Qualify(index)).
		Scan(&density, &frag, &leaves)
	switch {
	case err == nil:
		return engine.LeafStats{Density: &density, Fragmentation: &frag, Pages: &leaves}, nil
	case ctx.Err() != nil || pgConnLost(err):
		return engine.LeafStats{}, fail(ctx, "pgstatindex", err)
	}
	e.statsFn, e.statsWhy = "", "pgstatindex failed: "+engine.OneLine(err.Error())
	e.set.Statistics = "unavailable: " + e.statsWhy
	return engine.LeafStats{}, nil
}

// SampleKeys draws about n keys with TABLESAMPLE BERNOULLI (four times the share n is of
// rows, so that enough rows come back), in random order, each as pgx takes it back: int64,
// pgtype.Numeric, pgtype.UUID or string.
func (e *pgEngine) SampleKeys(ctx context.Context, t engine.TableDef, n int, rows int64) ([]any, error) {
	pct := min(100, 400*float64(n)/float64(max(rows, 1)))
	rs, err := e.admin.Query(ctx, fmt.Sprintf("SELECT id FROM %s TABLESAMPLE BERNOULLI (%g) ORDER BY random() LIMIT %d",
		e.Qualify(t.Name), pct, n))
	if err != nil {
		return nil, fail(ctx, "sample keys", err)
	}
	var keys []any
	for rs.Next() {
		var k any
		switch t.Key.Col {
		case engine.ColIdentity, engine.ColBigint, engine.ColServerBigint:
			var v int64
			err = rs.Scan(&v)
			k = v
		case engine.ColUint64:
			var v pgtype.Numeric
			err = rs.Scan(&v)
			k = v
		case engine.ColUUID, engine.ColServerUUID:
			var v pgtype.UUID
			err = rs.Scan(&v)
			k = v
		default:
			var v string
			err = rs.Scan(&v)
			k = v
		}
		if err != nil {
			rs.Close()
			return nil, fail(ctx, "sample keys", err)
		}
		keys = append(keys, k)
	}
	return keys, fail(ctx, "sample keys", rs.Err())
}

// pgStmt is a query on the measuring connection, which pgx prepares on its first run and
// keeps in its statement cache.
type pgStmt struct {
	conn *pgx.Conn
	sql  string
}

func (s pgStmt) Rows(ctx context.Context, args ...any) (int64, error) {
	rows, err := s.conn.Query(ctx, s.sql, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

func (s pgStmt) Close() error { return nil }

// Prepare returns q on the measuring connection; pgx prepares it on its first run.
func (e *pgEngine) Prepare(_ context.Context, q string) (engine.Stmt, error) {
	return pgStmt{conn: e.admin, sql: q}, nil
}

func (e *pgEngine) QueryInt(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	if err := e.admin.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		return 0, fail(ctx, "query", err)
	}
	return n, nil
}
