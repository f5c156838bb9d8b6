// Package pgrepltest gives tests of PostgreSQL replication a standby and a translated server
// without a second cluster: pg_receivewal, which the primary lists in pg_stat_replication as
// it lists streaming standbys, and a locale of PostgreSQL's message catalogs built with
// localedef into a directory of the test's own.
package pgrepltest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/jackc/pgx/v5"
)

// Receiver is a running pg_receivewal.
type Receiver struct {
	cmd  *exec.Cmd
	stop func()
}

// ReceiveWAL runs pg_receivewal against dsn, which the server lists in pg_stat_replication
// as a standby named pg_receivewal (async, or sync once named in synchronous_standby_names
// and run with --synchronous: it then flushes and reports every write), and waits until the
// server shows it streaming in that sync_state. The end of the test stops it.
func ReceiveWAL(t testing.TB, dsn string, synchronous bool) *Receiver {
	t.Helper()
	dir, err := pglocal.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pg_receivewal")
	args := []string{"-D", t.TempDir(), "-d", dsn, "--no-loop"}
	if synchronous {
		args = append(args, "--synchronous")
	}
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	r := &Receiver{cmd: cmd, stop: sync.OnceFunc(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		<-done
	})}
	t.Cleanup(r.stop)
	want := "async"
	if synchronous {
		want = "sync"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE application_name = 'pg_receivewal' AND state = 'streaming' AND sync_state = $1`, want).Scan(&n)
		if err == nil && n == 1 {
			return r
		}
		select {
		case <-done:
			t.Fatalf("pg_receivewal exited: %s", out.String())
		case <-ctx.Done():
			t.Fatalf("pg_receivewal not streaming (%s) after 20 s: %v %s", want, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills pg_receivewal and waits for it to exit.
func (r *Receiver) Stop() { r.stop() }

// Pause stops pg_receivewal (SIGSTOP): the server keeps listing it, streaming, in its
// sync_state, but it neither flushes nor reports anything more, so a synchronous commit waits.
func (r *Receiver) Pause(t testing.TB) {
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

// Resume continues a paused pg_receivewal.
func (r *Receiver) Resume(t testing.TB) {
	if err := r.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// Translated builds the locale de_DE.ISO-8859-1 with localedef in a directory of the test's
// own, sets LOCPATH to it for the rest of the test (so a server started afterwards, which
// inherits the environment, can set lc_messages to it), and returns the locale's name.
// PostgreSQL then sends its messages in German, from the Debian catalog
// /usr/share/locale/de/LC_MESSAGES/postgres-*.mo. It skips the test, naming what to install,
// when localedef, the locale's source or the catalog is missing. (ISO-8859-1: localedef
// builds it in about a second, UTF-8 in several; the server converts the messages to the
// database's encoding.)
func Translated(t *testing.T) string {
	t.Helper()
	if m, _ := filepath.Glob("/usr/share/locale/de/LC_MESSAGES/postgres-*.mo"); len(m) == 0 {
		t.Skip("no German catalog of PostgreSQL's messages (/usr/share/locale/de/LC_MESSAGES/postgres-*.mo): install PostgreSQL's server package with its translations")
	}
	localedef, err := exec.LookPath("localedef")
	if err != nil {
		t.Skip("no localedef: install the locales package (glibc)")
	}
	dir, err := os.MkdirTemp("", "idkit-locale-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the server may run as another OS user
		t.Fatal(err)
	}
	const name = "de_DE.ISO-8859-1"
	if out, err := exec.Command(localedef, "-i", "de_DE", "-f", "ISO-8859-1", filepath.Join(dir, name)).CombinedOutput(); err != nil {
		t.Skipf("localedef -i de_DE -f ISO-8859-1: %v: %s (install the locales package with its sources in /usr/share/i18n)", err, out)
	}
	t.Setenv("LOCPATH", dir)
	return name
}

// Exec runs stmts on dsn, each in its own transaction, on a connection of its own; a statement
// that fails fails the test, named.
func Exec(t testing.TB, dsn string, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// SetAndReload sets the server setting name to value with ALTER SYSTEM, reloads the server's
// configuration and waits up to 10 s until a new session sees value.
func SetAndReload(t testing.TB, dsn, name, value string) {
	t.Helper()
	Exec(t, dsn, fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", name, value), "SELECT pg_reload_conf()")
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var v string
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			conn.QueryRow(ctx, "SELECT current_setting('"+name+"')").Scan(&v)
			conn.Close(ctx)
		}
		if v == value {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q 10 s after the reload, want %q", name, v, value)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Slot creates a physical replication slot named prefix and a number unique to the call
// through conn, without reserving WAL (so a slot costs a shared server nothing while it
// exists), as pg_basebackup -C -S or Patroni leaves one for a standby that is away. It returns
// the slot's name and a function that drops it, failing the test if that fails; the slot is
// also dropped when the test ends, if it was not.
func Slot(t testing.TB, conn *pgx.Conn, prefix string) (name string, drop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name = fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	if _, err := conn.Exec(ctx, `SELECT pg_create_physical_replication_slot($1)`, name); err != nil {
		t.Fatalf("creating replication slot %s: %v", name, err)
	}
	dropped := false
	t.Cleanup(func() {
		if !dropped {
			conn.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, name)
		}
	})
	return name, func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, name); err != nil {
			t.Fatalf("dropping replication slot %s: %v", name, err)
		}
		dropped = true
	}
}
