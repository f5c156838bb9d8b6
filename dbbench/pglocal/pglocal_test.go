package pglocal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/jackc/pgx/v5"
)

func requireBinaries(t *testing.T) {
	t.Helper()
	if _, err := pglocal.FindBinDir(); err != nil {
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
	c, err := pglocal.Start(ctx, pglocal.Options{Settings: map[string]string{
		"shared_buffers":   "16MB",
		"fsync":            "off",
		"application_name": "it's quoted",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Version() == "" {
		t.Error("Version() is empty")
	}
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ setting, want string }{
		{"shared_buffers", "16MB"},
		{"fsync", "off"},
		{"listen_addresses", ""},
		{"unix_socket_directories", c.SocketDir()},
	}
	for _, tt := range tests {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", tt.setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.setting, got, tt.want)
		}
	}
	conn.Close(ctx)

	dir := c.Dir()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster dir %s still exists after Close (err=%v)", dir, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name string
		opts pglocal.Options
		is   error
	}{
		{"no binaries", pglocal.Options{BinDir: t.TempDir()}, pglocal.ErrNoBinaries},
		{"bad setting name", pglocal.Options{BinDir: "", Settings: map[string]string{"x = 1\nfsync": "off"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.BinDir == "" {
				requireBinaries(t)
			}
			c, err := pglocal.Start(context.Background(), tt.opts)
			if err == nil {
				c.Close()
				t.Fatal("Start succeeded, want error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}

func TestStartBadSettingCleansUp(t *testing.T) {
	requireBinaries(t)
	// Not t.TempDir: when root, the OS user running the server must be
	// able to reach the directory, and t.TempDir's parent is private.
	parent, err := os.MkdirTemp("", "pglocaltest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(parent)
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = pglocal.Start(context.Background(), pglocal.Options{
		TempDir:  parent,
		Settings: map[string]string{"shared_buffers": "not-a-size"},
	})
	if err == nil {
		t.Fatal("Start with a bad setting succeeded")
	}
	left, _ := filepath.Glob(filepath.Join(parent, "pglocal-*"))
	if len(left) != 0 {
		t.Errorf("Start left %v behind after failing: %v", left, err)
	}
}
