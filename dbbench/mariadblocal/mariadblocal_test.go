package mariadblocal_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/idkit/idkit/dbbench/mariadblocal"
)

func requireBinaries(t *testing.T) {
	t.Helper()
	if _, err := mariadblocal.FindBinaries(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func TestStartQueryClose(t *testing.T) {
	requireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := mariadblocal.Start(ctx, mariadblocal.Options{Settings: map[string]string{
		"innodb_buffer_pool_size": "16M",
		"innodb_log_file_size":    "48M",
		"character_set_server":    "utf8mb4",
		// mariadblocal owns these: a caller's value is ignored.
		"socket":       "/tmp/elsewhere.sock",
		"bind-address": "0.0.0.0",
		// A shared tmpdir would let this server's start delete other servers' live
		// temporary tables (mariadbd removes #sql* files there when it starts).
		"tmpdir": "/tmp",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Version() == "" {
		t.Error("Version() is empty")
	}
	if _, err := mysql.ParseDSN(s.DSN()); err != nil {
		t.Fatalf("DSN %q: %v", s.DSN(), err)
	}
	db, err := sql.Open("mysql", s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct{ variable, want string }{
		{"innodb_buffer_pool_size", "16777216"},
		{"character_set_server", "utf8mb4"},
		{"skip_networking", "1"},
		{"socket", s.Socket()},
		{"tmpdir", filepath.Join(s.Dir(), "tmp")},
	}
	for _, tt := range tests {
		var got string
		if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+tt.variable).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.variable, got, tt.want)
		}
	}
	db.Close()
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after Close: %v", dir, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name string
		opts mariadblocal.Options
		want string
	}{
		{"bad name", mariadblocal.Options{Settings: map[string]string{"a b": "1"}}, `invalid setting name "a b"`},
		{"line break", mariadblocal.Options{Settings: map[string]string{"max_connections": "1\n[client]"}}, "line break"},
		{"no binaries", mariadblocal.Options{Binaries: mariadblocal.Binaries{Server: "/nonexistent/mariadbd", Install: "/nonexistent/install"}}, "nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "no binaries" && os.Geteuid() == 0 {
				// As root, Start looks up the OS user first; without it
				// the error names the user instead.
				if _, err := mariadblocal.FindBinaries(); err != nil {
					t.Skip(err)
				}
			}
			s, err := mariadblocal.Start(context.Background(), tt.opts)
			if err == nil {
				s.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// A setting the server rejects makes Start fail with the server's log and
// leave nothing behind.
func TestStartBadSettingCleansUp(t *testing.T) {
	requireBinaries(t)
	// Not t.TempDir: its parent is private to root, and the server runs
	// as the mysql user.
	parent, err := os.MkdirTemp("", "mdbl-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = mariadblocal.Start(ctx, mariadblocal.Options{TempDir: parent, Settings: map[string]string{
		"innodb_no_such_setting": "1",
	}})
	if err == nil {
		t.Fatal("Start succeeded with an unknown setting")
	}
	if !strings.Contains(err.Error(), "innodb_no_such_setting") {
		t.Errorf("error does not name the setting: %v", err)
	}
	left, _ := os.ReadDir(parent)
	if len(left) != 0 {
		t.Errorf("Start left %d entries in %s", len(left), parent)
	}
}
