package pg

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
)

func openTestPG(t *testing.T) *pgEngine {
	t.Helper()
	o := engine.Options{Rows: 100000, Mode: engine.ModeCopy, Clients: 1, Nodes: 1, Profile: engine.ProfileSteady,
		Fillfactor: 90, Points: 20, Lookups: 500, RangeN: 100}
	e, err := openPG(context.Background(), o, Server, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestInstagramFunctionDecodes makes IDs with the next_id() function dbbench installs and
// reads them with idkit's layout=instagram: same epoch, shard and sequence.
func TestInstagramFunctionDecodes(t *testing.T) {
	e := openTestPG(t)
	ctx := context.Background()
	r, err := engine.ResolveRow(context.Background(), "instagram-plpgsql:shard=7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.prepareServerSide(ctx, r); err != nil {
		t.Fatal(err)
	}
	codec, err := idkit.NewCodec(r.Canon)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	rows, err := e.admin.Query(ctx, "SELECT "+e.serverDefault+" FROM generate_series(1, 3000)")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)
	var prevSeq uint64
	for i, v := range ids {
		p, err := codec.Decode(idkit.FromUint64(uint64(v)))
		if err != nil {
			t.Fatal(err)
		}
		if p.Node != 7 {
			t.Fatalf("ID %d decodes to shard %d, want 7", v, p.Node)
		}
		if p.Time.Before(before) || p.Time.After(after) {
			t.Fatalf("ID %d decodes to %v, not now", v, p.Time)
		}
		// The sequence is nextval() % 1024: consecutive calls count up and wrap at 1024.
		if i > 0 && p.Seq != (prevSeq+1)%1024 {
			t.Fatalf("ID %d: sequence %d after %d", v, p.Seq, prevSeq)
		}
		prevSeq = p.Seq
	}
}

// TestInstagramFunctionWraps measures what the seed's next_id() does in a bulk statement: how
// many IDs it makes in one millisecond and whether the sequence wraps inside one (a repeated
// ID). It logs the finding; it fails only if a wrap inside a millisecond did not repeat an ID.
func TestInstagramFunctionWraps(t *testing.T) {
	e := openTestPG(t)
	ctx := context.Background()
	r, _ := engine.ResolveRow(context.Background(), engine.RowInstagramPLpgSQL)
	if _, err := e.prepareServerSide(ctx, r); err != nil {
		t.Fatal(err)
	}
	var n, distinct, maxPerMs int64
	err := e.admin.QueryRow(ctx, `WITH ids AS (SELECT `+e.serverDefault+` AS id FROM generate_series(1, 200000))
		SELECT count(*), count(DISTINCT id), (SELECT max(c) FROM (SELECT count(*) c FROM ids GROUP BY id >> 23) per_ms) FROM ids`).
		Scan(&n, &distinct, &maxPerMs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("next_id() in one statement: %d IDs, %d repeated, at most %d in one millisecond (the sequence has 1,024 values)", n, n-distinct, maxPerMs)
	if maxPerMs > 1024 && distinct == n {
		t.Errorf("%d IDs in one millisecond but no repeat", maxPerMs)
	}
	if maxPerMs <= 1024 && distinct != n {
		t.Errorf("repeats without a wrap inside one millisecond")
	}
}

func TestUUIDv7FunctionDecodes(t *testing.T) {
	e := openTestPG(t)
	ctx := context.Background()
	r, _ := engine.ResolveRow(context.Background(), engine.RowUUIDv7PLpgSQL)
	if _, err := e.prepareServerSide(ctx, r); err != nil {
		t.Fatal(err)
	}
	codec, _ := idkit.NewCodec("uuidv7")
	var s string
	if err := e.admin.QueryRow(ctx, "SELECT "+e.serverDefault+"::text").Scan(&s); err != nil {
		t.Fatal(err)
	}
	id, err := codec.Parse(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	p, _ := codec.Decode(id)
	if d := time.Since(p.Time); d < -time.Second || d > 5*time.Second {
		t.Fatalf("%s decodes to %v", s, p.Time)
	}
}

func TestUniqueViolationFinding(t *testing.T) {
	err := errors.Join(errors.New("dbbench: load rows"), &pgconn.PgError{Code: "23505", Detail: "Key (id)=(1) already exists."})
	f, ok := uniqueViolation(err, engine.Row{Label: engine.RowInstagramPLpgSQL, Col: engine.ColServerBigint})
	if !ok || !strings.Contains(f, "1,024") || !strings.Contains(f, "Key (id)=(1)") {
		t.Fatalf("finding %q, %v", f, ok)
	}
	if _, ok := uniqueViolation(errors.New("other"), engine.Row{}); ok {
		t.Fatal("an unrelated error taken for a unique violation")
	}
}

// TestInstagramWrapIsAFinding makes next_id() repeat at once (its sequence stepped by 1,024, so
// nextval() % 1024 never changes: the wrap a shard hits past 1,024 rows in one millisecond,
// every call) and loads a table: the load must fail with the unique violation that Run turns
// into a finding.
func TestInstagramWrapIsAFinding(t *testing.T) {
	e := openTestPG(t)
	ctx := context.Background()
	r, _ := engine.ResolveRow(context.Background(), engine.RowInstagramPLpgSQL)
	if _, err := e.prepareServerSide(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Exec(ctx, "ALTER SEQUENCE "+e.schema+".instagram_seq_5 INCREMENT BY 1024"); err != nil {
		t.Fatal(err)
	}
	tbl := engine.LoadTable("t1", r, false)
	if err := e.CreateTables(ctx, []engine.TableDef{tbl}); err != nil {
		t.Fatal(err)
	}
	src, err := engine.NewSource(r, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	err = e.FillTable(ctx, tbl, src, 3000, engine.NewRecorder(3000, 5, e.BatchSize(), nil))
	f, ok := uniqueViolation(err, r)
	if !ok {
		t.Fatalf("load error %v is not a unique violation", err)
	}
	t.Log(f)
}
