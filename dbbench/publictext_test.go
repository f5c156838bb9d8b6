package dbbench_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/mysqltest"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/jackc/pgx/v5"
)

// typeIDTexts returns the public text of n IDs of "typeid:prefix=user", in the order they were
// made, and the same texts shuffled.
func typeIDTexts(t *testing.T, n int) (ordered, shuffled []string) {
	t.Helper()
	s, err := idkit.New("typeid:prefix=user")
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		id, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		text, err := idkit.FormatID(s, id)
		if err != nil {
			t.Fatal(err)
		}
		ordered = append(ordered, text)
	}
	shuffled = slices.Clone(ordered)
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return ordered, shuffled
}

// checkTypeIDRows checks the typeid and typeid-text rows of a run: the text row's column is
// the wanted type and its key costs more bytes than the 16-byte row's.
func checkTypeIDRows(t *testing.T, rep *dbbench.Report, wantText, wantBinary string) {
	t.Helper()
	if len(rep.Results) != 2 || rep.Results[0].Scheme != "typeid" || rep.Results[1].Scheme != dbbench.RowTypeIDText {
		t.Fatalf("results %+v, want typeid then typeid-text", rep.Results)
	}
	bin, text := rep.Results[0], rep.Results[1]
	if bin.ColumnType != wantBinary || text.ColumnType != wantText {
		t.Errorf("column types %q and %q, want %q and %q", bin.ColumnType, text.ColumnType, wantBinary, wantText)
	}
	// Leaf pages where the engine counts them: InnoDB allocates whole extents, so a small
	// table's size in bytes can come out the same for both.
	more := text.IndexBytes > bin.IndexBytes
	if text.LeafPages != nil && bin.LeafPages != nil {
		more = *text.LeafPages > *bin.LeafPages
	}
	if bin.Rows != text.Rows || !more {
		t.Errorf("typeid-text index %d bytes (%v leaf pages) for %d rows, typeid %d (%v) for %d: the 31-byte text key should take more",
			text.IndexBytes, deref(text.LeafPages), text.Rows, bin.IndexBytes, deref(bin.LeafPages), bin.Rows)
	}
	found := false
	for _, n := range rep.Notes {
		found = found || strings.Contains(n, "typeid-text stores typeid:prefix=user's public text")
	}
	if !found {
		t.Errorf("no note explains typeid-text: %q", rep.Notes)
	}
}

// checkTextOrder checks that keys read back in the column's order are the ordered texts.
func checkTextOrder(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%d keys read back in column order differ from the %d IDs in the order made, first at %d", len(got), len(want), i)
	}
}

// TestPostgresTypeIDText loads typeid and typeid-text on PostgreSQL, then checks that TypeID
// keys in the text row's column type sort in ID order: inserted shuffled into a temporary
// table of that type, they read back by ORDER BY id in the order they were made.
func TestPostgresTypeIDText(t *testing.T) {
	dsn := pgtest.DSN(t)
	rep, err := dbbench.Run(context.Background(), small(dsn, "typeid", dbbench.RowTypeIDText))
	if err != nil {
		t.Fatal(err)
	}
	checkTypeIDRows(t, rep, `text COLLATE "C"`, "uuid")
	for _, r := range rep.Results {
		checkResult(t, rep, r, 3000, 8192)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TEMPORARY TABLE typeid_keys (id "+rep.Results[1].ColumnType+" PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	ordered, shuffled := typeIDTexts(t, 3000)
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"typeid_keys"}, []string{"id"},
		pgx.CopyFromSlice(len(shuffled), func(i int) ([]any, error) { return []any{shuffled[i]}, nil })); err != nil {
		t.Fatal(err)
	}
	rows, _ := conn.Query(ctx, "SELECT id FROM typeid_keys ORDER BY id")
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	checkTextOrder(t, got, ordered)
}

// TestMySQLTypeIDText is TestPostgresTypeIDText on MariaDB/MySQL, whose text row is VARBINARY.
func TestMySQLTypeIDText(t *testing.T) {
	url, _ := mysqlURL(t)
	cfg := small(url, "typeid", dbbench.RowTypeIDText)
	cfg.Rows = 20000 // past the few pages where innodb_index_stats miscounts leaves
	cfg.SecondaryIndex = true
	rep, err := dbbench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkTypeIDRows(t, rep, "VARBINARY(31)", "BINARY(16)")
	for _, r := range rep.Results {
		checkInnoDBResult(t, r, 20000)
	}

	ctx := context.Background()
	db, err := sql.Open("mysql", mysqltest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE typeid_keys (id "+rep.Results[1].ColumnType+" NOT NULL PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	ordered, shuffled := typeIDTexts(t, 3000)
	for chunk := range slices.Chunk(shuffled, 500) {
		q := "INSERT INTO typeid_keys (id) VALUES " + strings.TrimSuffix(strings.Repeat("(?),", len(chunk)), ",")
		args := make([]any, len(chunk))
		for i, s := range chunk {
			args[i] = s
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.QueryContext(ctx, "SELECT id FROM typeid_keys ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	checkTextOrder(t, got, ordered)
}
