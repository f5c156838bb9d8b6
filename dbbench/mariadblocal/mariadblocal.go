// Package mariadblocal starts and stops a private, throwaway MariaDB (or
// MySQL) server from the server binaries installed on the machine.
//
// A server lives in a fresh temporary directory, listens only on a unix
// socket inside that directory (skip-networking), reads no configuration
// file but its own (so /etc/mysql is ignored), lets its root user in
// without a password over that socket, and is stopped and removed
// completely by [Server.Close]. It never touches a server or a data
// directory it did not create.
//
// The server refuses to run as root. When the calling process runs as
// root, mariadblocal hands the temporary directory to an unprivileged
// operating-system user (default "mysql", which the Debian package creates)
// and passes --user to the server, which switches to it.
//
// Functions in this package are safe for concurrent use; each [Server] is
// independent.
package mariadblocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoBinaries is returned (wrapped) by [FindBinaries] and [Start] when no
// MariaDB or MySQL server binaries can be found.
var ErrNoBinaries = errors.New("mariadblocal: MariaDB/MySQL server binaries (mariadbd or mysqld, and mariadb-install-db) not found")

// DefaultUser is the operating-system user that runs the server when the
// calling process is root and [Options.OSUser] is empty.
const DefaultUser = "mysql"

// DBUser is the server's administrative user, which the DSN returned by
// [Server.DSN] logs in as.
const DBUser = "root"

// Binaries are the programs mariadblocal runs.
type Binaries struct {
	Server  string // mariadbd or mysqld
	Install string // mariadb-install-db or mysql_install_db
}

// Options configures [Start]. The zero value is usable: it finds the
// installed server, uses its defaults for every setting and runs as
// [DefaultUser] when the caller is root.
type Options struct {
	// Binaries names the programs; zero fields mean the result of
	// FindBinaries.
	Binaries Binaries

	// Settings are server options (my.cnf names and values), such as
	// "innodb_buffer_pool_size": "128M". socket, skip-networking, datadir,
	// pid-file, log-error and user are always set by mariadblocal and
	// cannot be overridden.
	Settings map[string]string

	// OSUser is the operating-system user that runs the server when the
	// calling process is root. Empty means DefaultUser. It is ignored when
	// the caller is not root: the server then runs as the caller.
	OSUser string

	// TempDir is the parent of the server's directory. Empty means
	// os.TempDir(). Keep it short: a unix socket path is limited to about
	// 100 bytes.
	TempDir string

	// StartTimeout bounds how long Start waits for the server to accept
	// connections. Zero means 60 seconds.
	StartTimeout time.Duration
}

// Server is a running private server. Call Close to stop it and remove its
// files.
type Server struct {
	dir     string
	dataDir string
	sock    string
	bins    Binaries
	version string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the server process has exited
	waitErr error
	closed  bool
}

// FindBinaries returns the server and install programs: mariadbd (else
// mysqld) and mariadb-install-db (else mysql_install_db), looked up in PATH
// and in /usr/sbin, /usr/bin and /usr/local/mysql/bin. It returns an error
// wrapping ErrNoBinaries when either is missing.
func FindBinaries() (Binaries, error) {
	var b Binaries
	b.Server = findProgram("mariadbd", "mysqld")
	b.Install = findProgram("mariadb-install-db", "mysql_install_db")
	if b.Server == "" || b.Install == "" {
		return b, fmt.Errorf("%w (looked in PATH, /usr/sbin, /usr/bin, /usr/local/mysql/bin; install the server package, e.g. apt-get install mariadb-server)", ErrNoBinaries)
	}
	return b, nil
}

func findProgram(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin", "/usr/local/mysql/scripts"} {
			p := filepath.Join(d, n)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// Start creates, configures and starts a new server and waits until it
// accepts connections on its socket. On any error, everything it created is
// stopped and removed before it returns.
//
// Errors: ErrNoBinaries (wrapped) when no server is installed; an error
// naming the user when the caller is root and the OS user does not exist;
// an invalid setting name; errors from the install program or the server
// including the tail of their output; ctx's error when ctx ends first.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := start(ctx, opts)
	if err != nil {
		if s != nil {
			_ = s.Close()
		}
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, opts Options) (s *Server, err error) {
	bins := opts.Binaries
	if bins.Server == "" || bins.Install == "" {
		found, err := FindBinaries()
		if err != nil {
			return nil, err
		}
		if bins.Server == "" {
			bins.Server = found.Server
		}
		if bins.Install == "" {
			bins.Install = found.Install
		}
	}
	for k, v := range opts.Settings {
		if !validName(k) {
			return nil, fmt.Errorf("mariadblocal: invalid setting name %q", k)
		}
		if strings.ContainsAny(v, "\n\r") {
			return nil, fmt.Errorf("mariadblocal: setting %s: value contains a line break", k)
		}
	}
	var osUser string
	var uid, gid = -1, -1
	if os.Geteuid() == 0 {
		osUser = opts.OSUser
		if osUser == "" {
			osUser = DefaultUser
		}
		if uid, gid, err = lookupUser(osUser); err != nil {
			return nil, err
		}
	}

	dir, err := os.MkdirTemp(opts.TempDir, "mariadblocal-")
	if err != nil {
		return nil, fmt.Errorf("mariadblocal: create temp dir: %w", err)
	}
	s = &Server{
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		sock:    filepath.Join(dir, "mysqld.sock"),
		bins:    bins,
	}
	if len(s.sock) >= 104 {
		return s, fmt.Errorf("mariadblocal: socket path %s is too long for a unix socket; set Options.TempDir to a shorter directory", s.sock)
	}
	if err := os.Mkdir(s.tmpDir(), 0o700); err != nil {
		return s, fmt.Errorf("mariadblocal: create tmpdir: %w", err)
	}
	if uid >= 0 {
		for _, d := range []string{dir, s.tmpDir()} {
			if err := os.Chown(d, uid, gid); err != nil {
				return s, fmt.Errorf("mariadblocal: chown %s: %w", d, err)
			}
		}
	}
	cnf := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(cnf, []byte(s.config(opts.Settings, osUser)), 0o644); err != nil {
		return s, fmt.Errorf("mariadblocal: write my.cnf: %w", err)
	}

	// --defaults-file must come first; --auth-root-authentication-method
	// exists on MariaDB 10.4+, whose root otherwise authenticates by unix
	// socket credentials (the OS user must then be root).
	install := []string{"--defaults-file=" + cnf, "--datadir=" + s.dataDir, "--skip-test-db", "--skip-name-resolve"}
	if strings.Contains(filepath.Base(bins.Install), "mariadb") {
		install = append(install, "--auth-root-authentication-method=normal")
	}
	if osUser != "" {
		install = append(install, "--user="+osUser)
	}
	if out, err := run(ctx, dir, bins.Install, install...); err != nil {
		// The bootstrap server writes its errors to the log file.
		log, _ := os.ReadFile(s.logFile())
		return s, fmt.Errorf("mariadblocal: %s: %w: %s", filepath.Base(bins.Install), err, errorLines(append(out, log...)))
	}
	if out, err := run(ctx, dir, bins.Server, "--version"); err == nil {
		s.version = strings.TrimSpace(string(out))
	}

	s.cmd = exec.Command(bins.Server, "--defaults-file="+cnf)
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	// Its own process group: a Ctrl-C in the terminal reaches idbench,
	// which then stops the server in order, instead of killing it mid-run.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return s, fmt.Errorf("mariadblocal: start %s: %w", bins.Server, err)
	}
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.Dial("unix", s.sock); err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("mariadblocal: waiting for the server: %w", ctx.Err())
		case <-s.exited:
			return s, fmt.Errorf("mariadblocal: server exited during start-up (%v); log:\n%s", s.waitErr, s.logTail())
		case <-deadline.C:
			return s, fmt.Errorf("mariadblocal: server not accepting connections after %s; log:\n%s", timeout, s.logTail())
		case <-tick.C:
		}
	}
}

// config returns the server's my.cnf: the caller's settings, then the ones
// mariadblocal owns.
func (s *Server) config(settings map[string]string, osUser string) string {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch strings.ReplaceAll(k, "-", "_") {
		case "socket", "skip_networking", "datadir", "pid_file", "log_error", "user", "port", "bind_address", "tmpdir":
			continue
		}
		fmt.Fprintf(&b, "%s = %s\n", k, settings[k])
	}
	fmt.Fprintf(&b, "datadir = %s\n", s.dataDir)
	fmt.Fprintf(&b, "socket = %s\n", s.sock)
	// Its own tmpdir: mariadbd deletes every #sql* file in its tmpdir when it starts, so
	// a server sharing /tmp with others (the machine's own, other tests') would delete their
	// live internal temporary tables; MariaDB 10.11.19 crashes on that.
	fmt.Fprintf(&b, "tmpdir = %s\n", s.tmpDir())
	b.WriteString("skip-networking\n")
	fmt.Fprintf(&b, "pid-file = %s\n", filepath.Join(s.dir, "mysqld.pid"))
	fmt.Fprintf(&b, "log-error = %s\n", s.logFile())
	if osUser != "" {
		fmt.Fprintf(&b, "user = %s\n", osUser)
	}
	return b.String()
}

func (s *Server) logFile() string { return filepath.Join(s.dir, "server.log") }

func (s *Server) tmpDir() string { return filepath.Join(s.dir, "tmp") }

func (s *Server) logTail() string {
	b, err := os.ReadFile(s.logFile())
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	return tail(b, 2000)
}

func lookupUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return -1, -1, fmt.Errorf("mariadblocal: running as root and the server refuses to run as root, but the OS user %q to run it as was not found: %w", name, err)
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return -1, -1, fmt.Errorf("mariadblocal: user %q: bad uid %q: %w", name, u.Uid, err)
	}
	if gid, err = strconv.Atoi(u.Gid); err != nil {
		return -1, -1, fmt.Errorf("mariadblocal: user %q: bad gid %q: %w", name, u.Gid, err)
	}
	return uid, gid, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// errorLines returns the server's [ERROR] lines from out, which the install
// program buries under a page of advice, else the tail of out.
func errorLines(out []byte) string {
	var errs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "[ERROR]") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) == 0 {
		return tail(out, 2000)
	}
	return tail([]byte(strings.Join(errs, "\n")), 2000)
}

func run(ctx context.Context, dir, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.Bytes(), err
}

// DSN returns a github.com/go-sql-driver/mysql data source name for the
// server's root user over its unix socket, with no database selected.
func (s *Server) DSN() string {
	return DBUser + "@unix(" + s.sock + ")/"
}

// Socket returns the path of the server's unix socket.
func (s *Server) Socket() string { return s.sock }

// Dir returns the temporary directory holding the server's files.
func (s *Server) Dir() string { return s.dir }

// Version returns the output of "mariadbd --version" for the server binary
// used, or "" when it could not be determined.
func (s *Server) Version() string { return s.version }

// Close stops the server (SIGTERM, then SIGKILL after 30 seconds) and
// removes its directory. It is safe to call more than once; only the first
// call acts. It is not safe to call concurrently with itself.
func (s *Server) Close() error {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.cmd != nil && s.cmd.Process != nil {
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				// The data is thrown away: no reason to wait for a clean
				// shutdown that does not come.
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("mariadblocal: remove %s: %w", s.dir, err))
	}
	return errors.Join(errs...)
}

// Keep stops the server and keeps its directory, so that Close afterwards does nothing, and
// returns the shell command that starts the server again on the same socket (DSN still
// connects to it then). The caller owns the directory from then on.
func (s *Server) Keep() (string, error) {
	if s == nil || s.closed {
		return "", errors.New("mariadblocal: server already closed")
	}
	s.closed = true
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(60 * time.Second):
			return "", errors.New("mariadblocal: server did not stop within 60 seconds")
		}
	}
	cnf := filepath.Join(s.dir, "my.cnf")
	return fmt.Sprintf("(%s --defaults-file=%s &) && sleep 5", s.bins.Server, cnf), nil
}
