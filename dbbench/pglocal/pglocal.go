// Package pglocal starts and stops a private, throwaway PostgreSQL cluster
// from the server binaries installed on the machine.
//
// A cluster lives in a fresh temporary directory, listens only on a unix
// socket inside that directory (listen_addresses = ”), trusts local
// connections and is removed completely by [Cluster.Close]. It never touches
// a server or a data directory it did not create.
//
// PostgreSQL refuses to run as root. When the calling process runs as root,
// pglocal runs initdb and pg_ctl as an unprivileged operating-system user
// (default "postgres") and hands the temporary directory to that user.
//
// Functions in this package are safe for concurrent use; each [Cluster] is
// independent.
package pglocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// ErrNoBinaries is returned (wrapped) by [FindBinDir] and [Start] when no
// PostgreSQL server binaries (initdb, pg_ctl, postgres) can be found.
var ErrNoBinaries = errors.New("pglocal: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")

// DefaultUser is the operating-system user that runs the server when the
// calling process is root and [Options.OSUser] is empty.
const DefaultUser = "postgres"

// DefaultDBUser is the name of the cluster's superuser and of the database
// the DSN returned by [Cluster.DSN] points at.
const DefaultDBUser = "postgres"

// Options configures [Start]. The zero value is usable: it finds the newest
// installed server, uses PostgreSQL's defaults for every setting and runs as
// [DefaultUser] when the caller is root.
type Options struct {
	// BinDir is the directory holding initdb, pg_ctl and postgres. Empty means
	// the result of FindBinDir.
	BinDir string

	// Settings are server settings (postgresql.conf names and values), such as
	// "shared_buffers": "128MB" or "fsync": "off". listen_addresses and
	// unix_socket_directories are always set by pglocal and cannot be
	// overridden.
	Settings map[string]string

	// OSUser is the operating-system user that runs initdb and the server when
	// the calling process is root. Empty means DefaultUser. It is ignored when
	// the caller is not root: the server then runs as the caller.
	OSUser string

	// TempDir is the parent of the cluster's directory. Empty means
	// os.TempDir(). Keep it short: a unix socket path is limited to about 100
	// bytes.
	TempDir string

	// StartTimeout bounds how long pg_ctl waits for the server to accept
	// connections. Zero means 60 seconds.
	StartTimeout time.Duration

	// Netns, when set, names a network namespace (ip netns) the server runs in,
	// for partition tests: pg_ctl is started there as root through
	// "ip netns exec" and drops to OSUser with setpriv. Its unix socket stays
	// reachable from every namespace; Listen adds a TCP address in that one.
	Netns string

	// Listen is an IP address the server listens on over TCP besides its unix
	// socket (listen_addresses); empty for none. Meant with Netns, whose
	// addresses exist only inside the namespace.
	Listen string
}

// Cluster is a running private PostgreSQL cluster. Call Close to stop it
// and remove its files.
type Cluster struct {
	dir     string
	dataDir string
	sockDir string
	binDir  string
	version string
	port    int
	cred    *syscall.Credential
	closed  bool
	netns   string
	listen  string
}

// FindBinDir returns the directory holding the PostgreSQL server binaries:
// the directory of initdb found in PATH when pg_ctl and postgres sit next to
// it, else the newest /usr/lib/postgresql/<version>/bin that holds all three.
// It returns an error wrapping ErrNoBinaries when neither exists.
func FindBinDir() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("initdb"); err == nil {
		// Distributions link initdb into PATH; the real directory is the
		// one holding postgres and its share files.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		return versionOf(dirs[i]) > versionOf(dirs[j])
	})
	candidates = append(candidates, dirs...)
	for _, d := range candidates {
		if hasServer(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w (looked in PATH and /usr/lib/postgresql/*/bin; install the PostgreSQL server package)", ErrNoBinaries)
}

// versionOf extracts the major version from /usr/lib/postgresql/<v>/bin; it
// returns 0 when the path has no number there.
func versionOf(dir string) float64 {
	v, err := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
	if err != nil {
		return 0
	}
	return v
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// Start creates, configures and starts a new cluster and waits until it
// accepts connections. On any error, everything it created is stopped and
// removed before it returns.
//
// Errors: ErrNoBinaries (wrapped) when no server is installed; an error
// naming the user when the caller is root and the OS user does not exist;
// errors from initdb or pg_ctl including the tail of their output; ctx's
// error when ctx ends first.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	c, err := start(ctx, opts)
	if err != nil {
		if c != nil {
			_ = c.Close()
		}
		return nil, err
	}
	return c, nil
}

// start does the work of Start; on error it may return a partly built
// cluster for Start to clean up.
func start(ctx context.Context, opts Options) (c *Cluster, err error) {
	binDir := opts.BinDir
	if binDir == "" {
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if !hasServer(binDir) {
		return nil, fmt.Errorf("%w in %s", ErrNoBinaries, binDir)
	}
	for k := range opts.Settings {
		if !validName(k) {
			return nil, fmt.Errorf("pglocal: invalid setting name %q", k)
		}
	}

	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		name := opts.OSUser
		if name == "" {
			name = DefaultUser
		}
		cred, err = lookupCred(name)
		if err != nil {
			return nil, err
		}
	}

	dir, err := os.MkdirTemp(opts.TempDir, "pglocal-")
	if err != nil {
		return nil, fmt.Errorf("pglocal: create temp dir: %w", err)
	}
	c = &Cluster{
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		sockDir: dir,
		binDir:  binDir,
		port:    5432,
		cred:    cred,
		netns:   opts.Netns,
		listen:  opts.Listen,
	}
	if c.netns != "" && cred == nil {
		return c, fmt.Errorf("pglocal: Netns needs root (ip netns exec)")
	}
	if len(c.sockDir)+len("/.s.PGSQL.5432") >= 104 {
		return c, fmt.Errorf("pglocal: socket path in %s is too long for a unix socket; set Options.TempDir to a shorter directory", dir)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return c, fmt.Errorf("pglocal: chown %s: %w", dir, err)
		}
	}

	if _, err := c.run(ctx, "initdb", "-D", c.dataDir, "-U", DefaultDBUser,
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return c, err
	}
	if err := c.writeConf(opts.Settings); err != nil {
		return c, err
	}
	if c.listen != "" {
		// The lab's hosts reach it over TCP from their own subnet; trust, as on the socket.
		if err := appendFile(filepath.Join(c.dataDir, "pg_hba.conf"), "\nhost all all samenet trust\nhost replication all samenet trust\n"); err != nil {
			return c, err
		}
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	secs := strconv.Itoa(int((timeout + time.Second - 1) / time.Second))
	logFile := filepath.Join(dir, "server.log")
	if _, err := c.run(ctx, "pg_ctl", "start", "-w", "-t", secs, "-D", c.dataDir, "-l", logFile); err != nil {
		if log, rerr := os.ReadFile(logFile); rerr == nil {
			err = fmt.Errorf("%w\nserver log:\n%s", err, tail(log, 2000))
		}
		return c, err
	}
	out, err := c.run(ctx, "postgres", "--version")
	if err == nil {
		c.version = strings.TrimSpace(string(out))
	}
	return c, nil
}

func lookupCred(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pglocal: running as root and PostgreSQL refuses to run as root, but the OS user %q to run it as was not found: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pglocal: user %q: bad uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pglocal: user %q: bad gid %q: %w", name, u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// writeConf appends pglocal's settings to postgresql.conf; later lines win,
// so these override initdb's defaults.
func (c *Cluster) writeConf(settings map[string]string) error {
	var b strings.Builder
	b.WriteString("\n# pglocal\n")
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "listen_addresses" || k == "unix_socket_directories" || k == "port" {
			continue
		}
		fmt.Fprintf(&b, "%s = %s\n", k, quote(settings[k]))
	}
	fmt.Fprintf(&b, "listen_addresses = %s\n", quote(c.listen))
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", quote(c.sockDir))
	fmt.Fprintf(&b, "port = %d\n", c.port)
	f, err := os.OpenFile(filepath.Join(c.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pglocal: open postgresql.conf: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("pglocal: write postgresql.conf: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pglocal: write postgresql.conf: %w", err)
	}
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("pglocal: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	return nil
}

func quote(v string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", "''") + "'"
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// run executes one of the server binaries as the cluster's OS user.
func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	if c.netns != "" && name == "pg_ctl" {
		// Entering a namespace needs root; the server then drops to the cluster's user.
		cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", c.netns, "setpriv",
			"--reuid", strconv.Itoa(int(c.cred.Uid)), "--regid", strconv.Itoa(int(c.cred.Gid)), "--init-groups",
			filepath.Join(c.binDir, name)}, args...)...)
	} else if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pglocal: %s: %w", name, ctx.Err())
		}
		return nil, fmt.Errorf("pglocal: %s %s: %w: %s", name, strings.Join(args, " "), err, tail(out.Bytes(), 2000))
	}
	return out.Bytes(), nil
}

// DSN returns a key/value connection string for the cluster's superuser and
// its "postgres" database, usable by pgx and libpq.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.sockDir, c.port, DefaultDBUser, DefaultDBUser)
}

// SocketDir returns the directory holding the cluster's unix socket.
func (c *Cluster) SocketDir() string { return c.sockDir }

// Port returns the port number that names the cluster's unix socket. The
// cluster does not listen on TCP.
func (c *Cluster) Port() int { return c.port }

// Dir returns the temporary directory holding the cluster's files.
func (c *Cluster) Dir() string { return c.dir }

// Version returns the output of "postgres --version" for the server
// binaries used, or "" when it could not be determined.
func (c *Cluster) Version() string { return c.version }

// Close stops the server (pg_ctl stop -m fast) and removes the cluster's
// directory. It is safe to call more than once; only the first call acts.
// It is not safe to call concurrently with itself.
func (c *Cluster) Close() error {
	if c == nil || c.closed {
		return nil
	}
	c.closed = true
	var errs []error
	if _, err := os.Stat(filepath.Join(c.dataDir, "postmaster.pid")); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := c.run(ctx, "pg_ctl", "stop", "-m", "fast", "-w", "-D", c.dataDir)
		cancel()
		if err != nil {
			// A fast shutdown that does not finish is escalated so no server
			// is left running over a deleted directory.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err2 := c.run(ctx, "pg_ctl", "stop", "-m", "immediate", "-w", "-D", c.dataDir)
			cancel()
			if err2 != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("pglocal: remove %s: %w", c.dir, err))
	}
	return errors.Join(errs...)
}
