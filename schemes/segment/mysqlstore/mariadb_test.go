package mysqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// envDSN names an existing server's go-sql-driver/mysql DSN; without it the tests start a
// private mariadbd of their own.
const envDSN = "IDKIT_TEST_MYSQL"

// server is a private mariadbd in a temporary directory, listening on a unix socket only.
// It is a minimal stand-in for a shared helper package.
type server struct {
	dir, data, sock string
	extra           []string // server options beyond the defaults
	cmd             *exec.Cmd
}

func unavailable(t testing.TB, msg string) {
	t.Helper()
	msg = "mysqlstore: no MariaDB/MySQL for this test: " + msg +
		"\nmysqlstore: install the server (apt-get install mariadb-server) or set " + envDSN +
		" to a DSN such as 'user:pass@tcp(127.0.0.1:3306)/test'"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// startServer initialises and starts a private mariadbd with the server options in extra
// (--innodb-flush-log-at-trx-commit=0, …); it is stopped and removed when the test ends.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		unavailable(t, "mariadb-install-db not found")
	}
	if _, err := findMariadbd(); err != nil {
		unavailable(t, err.Error())
	}
	dir, err := os.MkdirTemp("", "mdb-")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "sock"), extra: extra}
	t.Cleanup(func() {
		s.stop(t)
		os.RemoveAll(dir)
	})
	tmpl, err := installed(install)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", tmpl, s.data).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	s.start(t)
	return s
}

// installedData is the data directory mariadb-install-db made once for this test binary:
// each private server starts on a copy of it (a copy takes a fraction of a second, an install
// several seconds of CPU, and a dozen tests start servers). TestMain removes it.
var installedData struct {
	sync.Mutex
	dir, data string
}

// installed returns the test binary's installed data directory, running mariadb-install-db
// (at the path install) the first time.
func installed(install string) (string, error) {
	installedData.Lock()
	defer installedData.Unlock()
	if installedData.data != "" {
		return installedData.data, nil
	}
	dir, err := os.MkdirTemp("", "mdb-tmpl-")
	if err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	// A private tmpdir: mariadbd deletes every #sql file in its tmpdir when it starts, so
	// servers sharing /tmp delete each other's live temporary tables (see privateTmp).
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	args := []string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}
	installedData.dir, installedData.data = dir, data
	return data, nil
}

// removeInstalled removes the installed data directory, if one was made.
func removeInstalled() {
	installedData.Lock()
	defer installedData.Unlock()
	if installedData.dir != "" {
		os.RemoveAll(installedData.dir)
		installedData.dir, installedData.data = "", ""
	}
}

// privateTmp returns dir/tmp, created, for a test server's --tmpdir. mariadbd removes every
// file named #sql* in its tmpdir at startup (leftovers of a crash, it assumes), so a server
// started beside others sharing /tmp deletes their live internal temporary tables: MariaDB
// 10.11.19 then crashed (signal 11 in ha_maria::drop_table) and mariadb-install-db failed
// ("Could not remove temporary table … error: 2"), 2 of 8 installs run at once on /tmp and
// 0 of 10 on private tmpdirs.
func privateTmp(t testing.TB, dir string) string {
	t.Helper()
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	return tmp
}

func findMariadbd() (string, error) {
	for _, p := range []string{"mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("mariadbd not found")
}

// start runs mariadbd on the data directory and waits until it answers.
func (s *server) start(t testing.TB) {
	t.Helper()
	bin, _ := findMariadbd()
	args := []string{"--no-defaults", "--datadir=" + s.data, "--tmpdir=" + privateTmp(t, s.dir), "--socket=" + s.sock, "--skip-networking",
		"--pid-file=" + filepath.Join(s.dir, "pid"), "--log-error=" + filepath.Join(s.dir, "err.log"),
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--max-connections=60"}
	args = append(args, s.extra...)
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	s.cmd = exec.Command(bin, args...)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := sql.Open("mysql", s.rootDSN(""))
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "err.log"))
			t.Fatalf("mariadbd did not answer within 60s: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts mariadbd down (SIGTERM, a clean shutdown) and waits for it.
func (s *server) stop(t testing.TB) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// kill ends mariadbd with SIGKILL, as a crash of the server process: nothing is flushed on
// the way out.
func (s *server) kill(t testing.TB) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()
	s.cmd = nil
}

func (s *server) rootDSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "unix", s.sock, db
	return cfg.FormatDSN()
}

// database gives the test a fresh database, on IDKIT_TEST_MYSQL's server or a private one,
// dropped when the test ends. It returns the DSN and the private server (nil with the
// variable set).
func database(t testing.TB) (string, *server) {
	t.Helper()
	if dsn := os.Getenv(envDSN); dsn != "" {
		return createDatabase(t, dsn, nil), nil
	}
	return privateDatabase(t)
}

// privateDatabase gives the test a fresh database on a private server started with the
// server options in extra, whatever IDKIT_TEST_MYSQL says: for tests that change global
// settings or kill the server.
func privateDatabase(t testing.TB, extra ...string) (string, *server) {
	t.Helper()
	srv := startServer(t, extra...)
	return createDatabase(t, srv.rootDSN(""), srv), srv
}

// createDatabase creates a database on the server of the DSN base (srv, when it is private)
// and drops it when the test ends, unless srv is stopped then.
func createDatabase(t testing.TB, base string, srv *server) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s: %v", envDSN, err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "idkit_test_" + hex.EncodeToString(b[:])
	exec := func(q string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := sql.Open("mysql", base)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, q)
		return err
	}
	if err := exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("creating database: %v", err)
	}
	t.Cleanup(func() {
		if srv == nil || srv.cmd != nil {
			if err := exec("DROP DATABASE IF EXISTS " + name); err != nil {
				t.Errorf("dropping database %s: %v", name, err)
			}
		}
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// storeURL turns a DSN into the mysql:// URL a spec takes.
func storeURL(t testing.TB, dsn string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.User
	if cfg.Passwd != "" {
		user += ":" + cfg.Passwd
	}
	if cfg.Net == "unix" {
		return "mysql://" + user + "@/" + cfg.DBName + "?socket=" + cfg.Addr
	}
	return "mysql://" + user + "@" + strings.TrimSpace(cfg.Addr) + "/" + cfg.DBName
}
