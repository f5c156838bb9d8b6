package pgtest_test

import (
	"context"
	"testing"

	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestSchemaIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.Schema(t), pgtest.Schema(t)
	for _, dsn := range []string{a, b} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "CREATE TABLE t (id bigint PRIMARY KEY)"); err != nil {
			t.Fatalf("create table in %q: %v", dsn, err)
		}
	}
}

func TestDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var name string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name == "postgres" {
		t.Errorf("current_database() = %q, want a fresh database", name)
	}
}

func TestWithParam(t *testing.T) {
	tests := []struct{ dsn, key, value, want string }{
		{"host=/tmp port=5432", "search_path", "s1", "host=/tmp port=5432 search_path='s1'"},
		{"postgres://u@h:5432/db?sslmode=disable", "search_path", "s1", "postgres://u@h:5432/db?search_path=s1&sslmode=disable"},
		{"postgres://u@h:5432/db", "dbname", "other", "postgres://u@h:5432/other"},
		{"dbname=x", "application_name", "it's", `dbname=x application_name='it\'s'`},
	}
	for _, tt := range tests {
		if got := pgtest.WithParam(tt.dsn, tt.key, tt.value); got != tt.want {
			t.Errorf("WithParam(%q, %q, %q) = %q, want %q", tt.dsn, tt.key, tt.value, got, tt.want)
		}
	}
}
