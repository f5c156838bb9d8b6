// Package pgtest gives tests a PostgreSQL server to talk to.
//
// [DSN] returns, in order of preference:
//
//  1. the connection string in the environment variable IDKIT_TEST_PG;
//  2. a private throwaway cluster started with pglocal from the installed
//     server binaries, shared by all tests of the test binary when the
//     package's TestMain calls [Main], else one cluster per calling test;
//  3. nothing: the test is skipped with a message saying how to get
//     PostgreSQL, except when the environment variable CI is "true", where
//     the test fails instead.
//
// [Schema] and [Database] give each test its own schema or database so that
// packages and tests do not collide; both are dropped when the test ends.
//
// Typical use:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.Schema(t) // search_path is a fresh schema
//		conn, err := pgx.Connect(ctx, dsn)
//		...
//	}
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/jackc/pgx/v5"
)

// EnvDSN is the environment variable holding an existing server's
// connection string; when set, no private cluster is started.
const EnvDSN = "IDKIT_TEST_PG"

// Settings returns the server settings of the private test cluster: small
// and unsafe (fsync off) because test data is thrown away.
func Settings() map[string]string {
	return map[string]string{
		"shared_buffers":             "32MB",
		"fsync":                      "off",
		"synchronous_commit":         "off",
		"full_page_writes":           "off",
		"max_connections":            "40",
		"autovacuum":                 "off",
		"max_wal_size":               "1GB",
		"dynamic_shared_memory_type": "mmap",
	}
}

// shared is the per-test-binary cluster. It is the one piece of package
// state: a test binary has exactly one TestMain, which owns its lifetime.
var shared struct {
	mu      sync.Mutex
	inMain  bool
	cluster *pglocal.Cluster
	err     error
	started bool
}

// Main runs the tests of m and exits. Call it from TestMain: a private
// cluster started by any test is then shared by the whole test binary and
// stopped after the last test.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the os.Exit: it runs the tests of m, stops the shared
// private cluster if one was started and returns m.Run's exit code.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster != nil {
		if err := shared.cluster.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stopping private cluster:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.cluster = nil
	}
	shared.inMain = false
	return code
}

// DSN returns a connection string for a PostgreSQL server the test may use,
// or skips the test (fails it when CI=true) when there is none. See the
// package documentation for where the server comes from.
func DSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn
	}
	shared.mu.Lock()
	inMain := shared.inMain
	if inMain {
		defer shared.mu.Unlock()
		if !shared.started {
			shared.started = true
			shared.cluster, shared.err = start()
		}
		if shared.err != nil {
			unavailable(t, shared.err)
		}
		return shared.cluster.DSN()
	}
	shared.mu.Unlock()
	c, err := start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("pgtest: stopping private cluster: %v", err)
		}
	})
	return c.DSN()
}

func start() (*pglocal.Cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return pglocal.Start(ctx, pglocal.Options{Settings: Settings()})
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("pgtest: no PostgreSQL for this test: %v\n"+
		"pgtest: install the PostgreSQL server package (e.g. apt-get install postgresql) "+
		"or set %s to a connection string (e.g. %s='host=/var/run/postgresql dbname=test')", err, EnvDSN, EnvDSN)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Schema creates a fresh schema for the test, drops it (with everything in
// it) when the test ends and returns a connection string whose search_path
// is that schema, so unqualified names land there.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	name := "pgtest_" + randomSuffix(t)
	scoped(t, dsn, "schema "+name, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	return WithParam(dsn, "search_path", name)
}

// Database creates a fresh database for the test, drops it when the test
// ends and returns a connection string for it. The server's user needs the
// CREATEDB privilege; a private cluster always has it.
func Database(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	name := "pgtest_" + randomSuffix(t)
	scoped(t, dsn, "database "+name, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	return WithParam(dsn, "dbname", name)
}

// scoped runs create now and drop when the test ends, each on a connection of its own.
func scoped(t testing.TB, dsn, what, create, drop string) {
	t.Helper()
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(create); err != nil {
		t.Fatalf("pgtest: create %s: %v", what, err)
	}
	t.Cleanup(func() {
		if err := exec(drop); err != nil {
			t.Errorf("pgtest: drop %s: %v", what, err)
		}
	})
}

// WithParam returns dsn with the connection parameter key set to value. It
// accepts both URL (postgres://…) and key/value connection strings; pgx
// sends parameters it does not know itself, such as search_path, to the
// server as run-time settings.
func WithParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			if key == "dbname" {
				u.Path = "/" + value
			} else {
				q := u.Query()
				q.Set(key, value)
				u.RawQuery = q.Encode()
			}
			return u.String()
		}
	}
	v := strings.ReplaceAll(strings.ReplaceAll(value, `\`, `\\`), "'", `\'`)
	return strings.TrimSpace(dsn) + " " + key + "='" + v + "'"
}

func randomSuffix(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("pgtest: random name: %v", err)
	}
	return hex.EncodeToString(b[:])
}
