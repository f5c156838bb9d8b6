package idkit_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// bit63Spec makes 64-bit IDs with bit 63 set: Discord's layout, 42 bits of milliseconds, with an
// epoch more than 2^41 ms (69.7 years) ago.
const bit63Spec = "snowflake:layout=discord,epoch=1950-01-01T00:00:00Z,worker=1"

func bit63IDs(t *testing.T, n int) []idkit.ID {
	t.Helper()
	s, err := idkit.New(bit63Spec)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]idkit.ID, n)
	for i := range ids {
		if ids[i], err = s.Next(); err != nil {
			t.Fatal(err)
		}
		if ids[i].Uint64() <= math.MaxInt64 {
			t.Fatalf("%s made %v, which does not use bit 63", bit63Spec, ids[i])
		}
	}
	return ids
}

// sqlRoundTrip inserts id into a fresh table whose id column has type typ and reads it back
// into an idkit.ID.
func sqlRoundTrip(t *testing.T, db *sql.DB, typ string, id idkit.ID) (idkit.ID, error) {
	t.Helper()
	ctx := context.Background()
	tables++
	tbl := "idkit_t" + strconv.Itoa(tables) // a new name each time: no plan cached for another type
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+tbl+" (id "+typ+" PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO "+tbl+" (id) VALUES ($1)", id); err != nil {
		return idkit.ID{}, err
	}
	var got idkit.ID
	err := db.QueryRowContext(ctx, "SELECT id FROM "+tbl).Scan(&got)
	return got, err
}

var tables int // tables made by sqlRoundTrip; tests using it do not run in parallel

// TestSQLiteBit63 stores 64-bit IDs with and without bit 63 in SQLite (modernc.org/sqlite) the
// ways ID.Value's documentation discusses: a TEXT (or BLOB) column keeps every ID exactly; an
// INTEGER-affinity column keeps IDs below 2^63 but turns a bit-63 ID's decimal text into a
// REAL, and Scan must then refuse it, saying that the column lost precision and what to use.
func TestSQLiteBit63(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/t.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	small := idkit.FromUint64(1541815603606036480)
	big := bit63IDs(t, 1)[0]
	for _, typ := range []string{"TEXT", "BLOB", "BIGINT"} {
		got, err := sqlRoundTrip(t, db, typ, small)
		if err != nil || got != small {
			t.Errorf("%s: %v came back as %v, %v", typ, small, got, err)
		}
	}
	for _, typ := range []string{"TEXT", "BLOB"} {
		got, err := sqlRoundTrip(t, db, typ, big)
		if err != nil || got != big {
			t.Errorf("%s: %v came back as %v, %v", typ, big, got, err)
		}
	}
	// (INTEGER PRIMARY KEY is the rowid: SQLite refuses the text at INSERT.)
	for _, typ := range []string{"BIGINT", "INT8", "NUMERIC"} {
		got, err := sqlRoundTrip(t, db, typ, big)
		if err == nil {
			t.Errorf("%s: bit-63 ID %v came back as %v without an error", typ, big, got)
			continue
		}
		if !errors.Is(err, idkit.ErrSyntax) || !strings.Contains(err.Error(), "lost precision") || !strings.Contains(err.Error(), "TEXT") {
			t.Errorf("%s: error %q does not say the column lost precision and what to use", typ, err)
		}
	}
}

// TestPostgresBit63 stores bit-63 IDs in PostgreSQL (pgx's database/sql driver): numeric(20,0)
// keeps them exactly and in order, and bigint refuses them with an error.
func TestPostgresBit63(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	small := idkit.FromUint64(1541815603606036480)
	ids := bit63IDs(t, 3)
	for _, typ := range []string{"numeric(20,0)"} {
		for _, id := range []idkit.ID{small, ids[0]} {
			got, err := sqlRoundTrip(t, db, typ, id)
			if err != nil || got != id {
				t.Errorf("%s: %v came back as %v, %v", typ, id, got, err)
			}
		}
	}
	if _, err := sqlRoundTrip(t, db, "bigint", ids[0]); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("bigint: bit-63 ID stored without a range error: %v", err)
	}
	// numeric orders bit-63 IDs after the others, as their values are.
	if _, err := db.ExecContext(ctx, "CREATE TABLE idkit_order (id numeric(20,0) PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []idkit.ID{ids[2], small, ids[0], ids[1]} {
		if _, err := db.ExecContext(ctx, "INSERT INTO idkit_order VALUES ($1)", id); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.QueryContext(ctx, "SELECT id FROM idkit_order ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []idkit.ID
	for rows.Next() {
		var id idkit.ID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if want := []idkit.ID{small, ids[0], ids[1], ids[2]}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("ORDER BY id = %v, want %v", got, want)
	}
}

// TestSQLRoundTrips stores one ID of every format through the real drivers in the column
// type ID.Value's documentation names for it, and reads it into a fresh ID: 64-bit IDs come
// back ==, 128-bit ones with their bytes and, after As, their kind.
func TestSQLRoundTrips(t *testing.T) {
	lite, err := sql.Open("sqlite", "file:"+t.TempDir()+"/t.db")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := sql.Open("pgx", pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	dbs := []struct {
		name          string
		db            *sql.DB
		col64, col128 string
	}{
		{"sqlite", lite, "TEXT", "BLOB"},
		{"postgres", pg, "numeric(20,0)", "uuid"},
	}
	for _, d := range dbs {
		for _, id := range roundTripIDs(t) {
			if id.IsZero() {
				continue
			}
			typ := d.col64
			if id.Bits() == 128 {
				typ = d.col128
			}
			got, err := sqlRoundTrip(t, d.db, typ, id)
			if err != nil {
				t.Errorf("%s %s: %v: %v", d.name, typ, id, err)
				continue
			}
			if id.Bits() == 128 {
				if got, err = got.As(id.Format()); err != nil {
					t.Fatal(err)
				}
			}
			if got != id {
				t.Errorf("%s %s: %v (%v) came back as %v (%v)", d.name, typ, id, id.Format(), got, got.Format())
			}
		}
	}
}
