package pg

import (
	"context"
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/internal/golden"
	"github.com/idkit/idkit/dbbench/pgtest"

	"github.com/jackc/pgx/v5"
)

var update = flag.Bool("update", false, "rewrite testdata/table_ddl.golden from this run")

// ddlTracer records the CREATE statements an engine sends on any of its connections.
type ddlTracer struct {
	mu    sync.Mutex
	stmts []string
}

func (t *ddlTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(strings.TrimSpace(d.SQL), "CREATE TABLE") || strings.HasPrefix(strings.TrimSpace(d.SQL), "CREATE INDEX") {
		t.mu.Lock()
		t.stmts = append(t.stmts, d.SQL)
		t.mu.Unlock()
	}
	return ctx
}

func (t *ddlTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *ddlTracer) take() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.stmts
	t.stmts = nil
	return out
}

// TestTableDDL holds the table workload's DDL on PostgreSQL to testdata/table_ddl.golden: the
// statements a load (golden.Fill, as dbbench's tableLoad) sends for every column type, as the
// server received them, with the random schema name replaced by idbench_S and each run of white
// space by one space (the server reads the same tokens). The table workload's reports compare
// loads of these exact tables, so a refactor of how the DDL is made must not change them (go
// test -run TestTableDDL -update rewrites the file, for a deliberate change).
func TestTableDDL(t *testing.T) {
	ctx := context.Background()
	connCfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := &ddlTracer{}
	connCfg.Tracer = tr
	var got []string
	for _, ff := range []int{90, 70} {
		o := engine.Options{Rows: 20, Mode: engine.ModeCopy, Clients: 1, Nodes: 1, Profile: engine.ProfileSteady,
			Fillfactor: ff, Points: 2}
		e, err := openPGConfig(ctx, o, Server, connCfg.Copy(), "")
		if err != nil {
			t.Fatal(err)
		}
		tables := 0
		labels := []string{engine.RowBigserial, "snowflake", "snowflake:layout=discord,epoch=1950-01-01T00:00:00Z",
			"uuidv4", "uuidv7-text", engine.RowULIDTextICU, engine.RowTypeIDText,
			engine.RowInstagramPLpgSQL, engine.RowUUIDv7PLpgSQL, engine.RowSegment}
		for _, label := range labels {
			r, err := engine.ResolveRow(ctx, label)
			if err == nil {
				r, err = Columns(r)
			}
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			tr.take()
			tables++
			if err := golden.Fill(ctx, e, engine.LoadTable("t"+strconv.Itoa(tables), r, false), 20, false, nil); err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			for _, s := range tr.take() {
				got = append(got, label+" fillfactor="+strconv.Itoa(ff)+"\n"+oneSpace(strings.ReplaceAll(s, e.schema, "idbench_S")))
			}
		}
		tr.take()
		tables++
		if err := golden.Fill(ctx, e, engine.LoadTable("t"+strconv.Itoa(tables), engine.Row{Col: engine.ColBigint}, false), 20, true, nil); err != nil {
			t.Fatal(err)
		}
		for _, s := range tr.take() {
			got = append(got, "baseline fillfactor="+strconv.Itoa(ff)+"\n"+oneSpace(strings.ReplaceAll(s, e.schema, "idbench_S")))
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, filepath.Join("testdata", "table_ddl.golden"), "table-workload DDL", strings.Join(got, "\n\n")+"\n", *update)
}

// oneSpace replaces each run of white space in s by one space.
func oneSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
