package mysqltest_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/mysqltest"
)

func TestMain(m *testing.M) { mysqltest.Main(m) }

func TestDatabaseIsolated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names [2]string
	for i := range names {
		db, err := sql.Open("mysql", mysqltest.Database(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&names[i]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE t (id BIGINT PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
	}
	if names[0] == names[1] || names[0] == "" {
		t.Errorf("databases %q and %q are not distinct", names[0], names[1])
	}
}

func TestURL(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"root@unix(/tmp/x/mysqld.sock)/", "mysql://root@localhost/?socket=%2Ftmp%2Fx%2Fmysqld.sock"},
		{"app:s3cret@tcp(db.internal:3307)/bench", "mysql://app:s3cret@db.internal:3307/bench"},
	}
	for _, tt := range tests {
		got, err := mysqltest.URL(tt.dsn)
		if err != nil {
			t.Fatalf("URL(%q): %v", tt.dsn, err)
		}
		if got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
	}
	if _, err := mysqltest.URL("not a dsn"); err == nil {
		t.Error("URL accepted a bad DSN")
	}
}
