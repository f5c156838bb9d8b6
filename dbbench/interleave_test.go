package dbbench_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/mysqltest"
)

// interleavedLeafPages loads keys 1..n into a fresh InnoDB table (id BIGINT PRIMARY KEY, a
// 200-byte payload) in the order given, statement after statement of rows multi-row INSERTs
// sent in turn by the connections (each statement keeps its rows' order), and returns the
// clustered index's leaf pages after ANALYZE TABLE.
func interleavedLeafPages(t *testing.T, db *sql.DB, table string, order []int, conns, rows int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, pad CHAR(200) NOT NULL) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	cs := make([]*sql.Conn, conns)
	for i := range cs {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cs[i] = c
	}
	for s := 0; s*rows < len(order); s++ {
		batch := order[s*rows : min((s+1)*rows, len(order))]
		var q strings.Builder
		args := make([]any, 0, len(batch))
		q.WriteString("INSERT INTO " + table + " (id, pad) VALUES ")
		for i, k := range batch {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString("(?, 'x')")
			args = append(args, k)
		}
		if _, err := cs[s%conns].ExecContext(ctx, q.String(), args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
		t.Fatal(err)
	}
	var leaves int64
	if err := db.QueryRowContext(ctx, `SELECT stat_value FROM mysql.innodb_index_stats
		WHERE database_name = DATABASE() AND table_name = ? AND index_name = 'PRIMARY' AND stat_name = 'n_leaf_pages'`, table).Scan(&leaves); err != nil {
		t.Fatal(err)
	}
	return leaves
}

// TestInnoDBInterleavedWriters reproduces what several writers do to a time-ordered key on
// InnoDB: the same 12,000 keys arrive from 4 connections nearly in order (in operations of 5
// keys made together, each operation up to 4 operations from its place, as when transactions
// that took their IDs in order reach the B-tree in a slightly different one), and the clustered index needs far more leaf pages than
// when one connection inserts them in order (the control), because InnoDB splits a page in the
// middle when an insert does not follow the page's last one, and the keys that come after
// never go back to the left half. Deterministic: a fixed seed and one goroutine.
func TestInnoDBInterleavedWriters(t *testing.T) {
	dsn := mysqltest.Database(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 12000
	inOrder := make([]int, n)
	for i := range inOrder {
		inOrder[i] = i + 1
	}
	// Keys come in operations of 5 (a parent and its children's keys, made together); each
	// operation arrives at its place plus a jitter of 0 to 4 operations.
	rng := rand.New(rand.NewPCG(33, 1))
	at := make([]float64, n+1)
	for op := 0; op < n/5; op++ {
		j := float64(op) + 4*rng.Float64()
		for i := 1; i <= 5; i++ {
			at[op*5+i] = j + float64(i)*1e-6
		}
	}
	jittered := slices.Clone(inOrder)
	slices.SortFunc(jittered, func(a, b int) int {
		switch {
		case at[a] < at[b]:
			return -1
		case at[a] > at[b]:
			return 1
		}
		return 0
	})
	late, top := 0, 0
	for _, k := range jittered {
		if k < top {
			late++
		}
		top = max(top, k)
	}
	one := interleavedLeafPages(t, db, "in_order", inOrder, 1, 5)
	four := interleavedLeafPages(t, db, "four_writers", jittered, 4, 5)
	t.Logf("%d keys: in order from 1 connection %d leaf pages; %d%% of them late, from 4 connections, %d leaf pages (%.2f×)",
		n, one, 100*late/n, four, float64(four)/float64(one))
	if one <= 0 || float64(four) < 1.3*float64(one) {
		t.Errorf("near-ordered keys from 4 writers took %d leaf pages, in order from 1 writer %d: want at least 1.3× (the InnoDB effect of many writers is gone, or the control no longer fills its pages)", four, one)
	}
}
