// Package mysqltest gives tests a MariaDB or MySQL server to talk to.
//
// [DSN] returns, in order of preference:
//
//  1. the github.com/go-sql-driver/mysql data source name in the
//     environment variable IDKIT_TEST_MYSQL (e.g.
//     "user:secret@tcp(127.0.0.1:3306)/");
//  2. a private throwaway server started with mariadblocal from the
//     installed server binaries, shared by all tests of the test binary
//     when the package's TestMain calls [Main], else one server per calling
//     test;
//  3. nothing: the test is skipped with a message saying how to get a
//     server, except when the environment variable CI is "true", where the
//     test fails instead.
//
// [Database] gives each test a database of its own, dropped when the test
// ends, so that packages and tests do not collide.
package mysqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/idkit/idkit/dbbench/mariadblocal"
)

// EnvDSN is the environment variable holding an existing server's data
// source name; when set, no private server is started.
const EnvDSN = "IDKIT_TEST_MYSQL"

// Settings returns the server settings of the private test server: small
// and unsafe (no flush at commit, no doublewrite) because test data is
// thrown away.
func Settings() map[string]string {
	return map[string]string{
		"innodb_buffer_pool_size":        "32M",
		"innodb_log_file_size":           "48M",
		"innodb_flush_log_at_trx_commit": "0",
		"innodb_doublewrite":             "0",
		"max_connections":                "60",
		"character_set_server":           "utf8mb4",
		"collation_server":               "utf8mb4_general_ci",
	}
}

// shared is the per-test-binary server. It is the one piece of package
// state: a test binary has exactly one TestMain, which owns its lifetime.
var shared struct {
	mu      sync.Mutex
	inMain  bool
	server  *mariadblocal.Server
	err     error
	started bool
}

// Main runs the tests of m and exits. Call it from TestMain: a private
// server started by any test is then shared by the whole test binary and
// stopped after the last test.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the os.Exit: it runs the tests of m, stops the shared
// private server if one was started and returns m.Run's exit code.
func Run(m *testing.M) int { return Around(m.Run) }

// Around is Run for a TestMain that has more to wrap around its tests, such
// as another package's shared server: it calls run (which runs the tests),
// then stops the shared private server if one was started, and returns
// run's exit code.
//
//	func TestMain(m *testing.M) {
//		os.Exit(mysqltest.Around(func() int { return pgtest.Run(m) }))
//	}
func Around(run func() int) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		if err := shared.server.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "mysqltest: stopping private server:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.server = nil
	}
	shared.inMain = false
	return code
}

// DSN returns a data source name for a server the test may use, or skips
// the test (fails it when CI=true) when there is none. See the package
// documentation for where the server comes from.
func DSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn
	}
	shared.mu.Lock()
	if shared.inMain {
		defer shared.mu.Unlock()
		if !shared.started {
			shared.started = true
			shared.server, shared.err = start()
		}
		if shared.err != nil {
			unavailable(t, shared.err)
		}
		return shared.server.DSN()
	}
	shared.mu.Unlock()
	s, err := start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("mysqltest: stopping private server: %v", err)
		}
	})
	return s.DSN()
}

func start() (*mariadblocal.Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return mariadblocal.Start(ctx, mariadblocal.Options{Settings: Settings()})
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("mysqltest: no MariaDB/MySQL for this test: %v\n"+
		"mysqltest: install the server package (apt-get install mariadb-server) "+
		"or set %s to a go-sql-driver/mysql DSN (e.g. %s='user:secret@tcp(127.0.0.1:3306)/')", err, EnvDSN, EnvDSN)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Database creates a fresh database for the test, drops it when the test
// ends and returns a data source name that selects it. The user needs the
// CREATE and DROP privileges; a private server's root has them.
func Database(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("mysqltest: bad %s: %v", EnvDSN, err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("mysqltest: random name: %v", err)
	}
	name := "mysqltest_" + hex.EncodeToString(b[:])
	exec := func(q string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, q)
		return err
	}
	if err := exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("mysqltest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := exec("DROP DATABASE IF EXISTS " + name); err != nil {
			t.Errorf("mysqltest: drop database %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// URL returns dsn as a mysql:// URL, the form idbench's --db takes:
// mysql://user:password@host:port/db, with ?socket=PATH for a unix socket.
func URL(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("mysqltest: %w", err)
	}
	u := url.URL{Scheme: "mysql", Path: "/" + cfg.DBName}
	if cfg.Passwd != "" {
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	} else {
		u.User = url.User(cfg.User)
	}
	switch cfg.Net {
	case "unix":
		u.Host = "localhost"
		u.RawQuery = url.Values{"socket": {cfg.Addr}}.Encode()
	default:
		u.Host = cfg.Addr
	}
	return u.String(), nil
}
