package innodb

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/dbbench/engine"
)

// Marks reads the log sequence number, Innodb_buffer_pool_reads and, when enabled, the
// INNODB_METRICS page splits and merges (snap). They are server-wide: on a shared server they
// count other sessions' work too (TableNotes says so).
func (e *mysqlEngine) Marks(ctx context.Context) (func(context.Context) (map[string]int64, error), error) {
	before, err := e.snap(ctx)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (map[string]int64, error) {
		after, err := e.snap(ctx)
		if err != nil {
			return nil, err
		}
		c := map[string]int64{
			engine.CounterLogBytes:  after.lsn - before.lsn,
			engine.CounterPoolReads: after.bpReads - before.bpReads,
		}
		if e.monitors {
			c[engine.CounterPageSplits] = after.splits - before.splits
			c[engine.CounterPageMerges] = after.merges - before.merges
		}
		return c, nil
	}, nil
}

// recordBytes is what a row of t occupies in a clustered-index leaf: the record header, the
// key, the transaction id and roll pointer, and the other columns (BIGINT and DATETIME(6)
// take 8 bytes each).
func (e *mysqlEngine) recordBytes(t engine.TableDef) int64 {
	n := int64(innodbRecHeader + e.keyBytes(t.Key) + innodbTrxRollPtr)
	for _, c := range t.Columns {
		if c.Kind == engine.KindKey {
			n += int64(e.keyBytes(t.Key))
		} else {
			n += 8
		}
	}
	return n
}

// LeafStats reads the leaf pages in use of the index ("n_leaf_pages" in
// mysql.innodb_index_stats after Settle: counted, not sampled, and the one place that names
// leaf pages per index), and for the clustered index (index "") the leaf fill that rows
// records imply in them (leafFill). InnoDB gives no fragmentation figure, and nothing
// without access to mysql.innodb_index_stats. MariaDB 10.11 reports 1 leaf page for indexes
// of a few pages although the rows fill several: such a load is noted (TableNotes) and its
// leaf figures left out rather than guessed.
func (e *mysqlEngine) LeafStats(ctx context.Context, t engine.TableDef, index string, rows int64) (engine.LeafStats, error) {
	if !e.indexStats {
		return engine.LeafStats{}, nil
	}
	name := index
	if name == "" {
		name = "PRIMARY"
	}
	var leaves int64
	if err := e.admin.QueryRowContext(ctx, `SELECT stat_value FROM mysql.innodb_index_stats
		WHERE database_name = ? AND table_name = ? AND index_name = ? AND stat_name = 'n_leaf_pages'`, e.dbName, t.Name, name).Scan(&leaves); err != nil {
		return engine.LeafStats{}, fail(ctx, "read mysql.innodb_index_stats", err)
	}
	if index != "" {
		return engine.LeafStats{Pages: &leaves}, nil
	}
	density := e.leafFill(rows, e.recordBytes(t), leaves)
	if density != nil && *density > 100 {
		e.badLeafStats = append(e.badLeafStats, fmt.Sprintf("%s: %d leaf page(s) for %d rows", t.Key.Label, leaves, rows))
		return engine.LeafStats{}, nil
	}
	return engine.LeafStats{Density: density, Pages: &leaves}, nil
}

// SampleKeys draws keys with RAND() (up to 4n, from four times the share n is of rows, so
// that enough come back), each as the driver takes it back: uint64 for BIGINT UNSIGNED,
// int64, []byte for BINARY(16), string.
func (e *mysqlEngine) SampleKeys(ctx context.Context, t engine.TableDef, n int, rows int64) ([]any, error) {
	frac := min(1, 4*float64(n)/float64(max(rows, 1)))
	rs, err := e.admin.QueryContext(ctx, fmt.Sprintf("SELECT id FROM %s WHERE RAND() < %g LIMIT %d", e.Qualify(t.Name), frac, 4*n))
	if err != nil {
		return nil, fail(ctx, "sample keys", err)
	}
	defer rs.Close()
	r := t.Key
	var keys []any
	for rs.Next() {
		var k any
		switch {
		case r.Col == engine.ColBigint && r.Unsigned:
			var v uint64
			err = rs.Scan(&v)
			k = v
		case r.Col == engine.ColIdentity || r.Col == engine.ColBigint:
			var v int64
			err = rs.Scan(&v)
			k = v
		case r.Col == engine.ColUUID:
			var v []byte
			err = rs.Scan(&v)
			k = v
		default:
			var v string
			err = rs.Scan(&v)
			k = v
		}
		if err != nil {
			return nil, fail(ctx, "sample keys", err)
		}
		keys = append(keys, k)
	}
	return keys, fail(ctx, "sample keys", rs.Err())
}

// Prepare prepares q on the measuring connection (the binary protocol).
func (e *mysqlEngine) Prepare(ctx context.Context, q string) (engine.Stmt, error) {
	st, err := e.admin.PrepareContext(ctx, q)
	if err != nil {
		return nil, fail(ctx, "prepare "+q, err)
	}
	return engine.SQLStmt{Stmt: st}, nil
}

func (e *mysqlEngine) QueryInt(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	if err := e.admin.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fail(ctx, "query", err)
	}
	return n, nil
}
