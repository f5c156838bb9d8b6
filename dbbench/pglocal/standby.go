package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Standby makes c a streaming standby of primary, for failover tests: c's server must be
// stopped or dead (Kill). Its data directory is replaced by a pg_basebackup of primary
// (-X stream, -R), it connects with application_name name (what synchronous_standby_names
// lists), keeps its own socket, and is started. primary's settings, copied with the backup,
// apply to c as well.
func (c *Cluster) Standby(ctx context.Context, primary *Cluster, name string) error {
	if !validName(name) {
		return fmt.Errorf("pglocal: invalid standby name %q", name)
	}
	// A killed server leaves its pid file; the processes are gone.
	if err := os.RemoveAll(c.dataDir); err != nil {
		return fmt.Errorf("pglocal: remove %s: %w", c.dataDir, err)
	}
	if _, err := c.run(ctx, "pg_basebackup", "-D", c.dataDir, "-h", primary.sockDir, "-p", strconv.Itoa(primary.port),
		"-U", DefaultDBUser, "-X", "stream", "-R", "-c", "fast", "--no-sync"); err != nil {
		return err
	}
	host := primary.sockDir
	if primary.listen != "" && c.netns != "" {
		// In network namespaces the standby streams over the lab's net, which a partition
		// test can cut.
		host = primary.listen
	}
	conninfo := fmt.Sprintf("host=%s port=%d user=%s application_name=%s", host, primary.port, DefaultDBUser, name)
	f, err := os.OpenFile(filepath.Join(c.dataDir, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pglocal: open postgresql.auto.conf: %w", err)
	}
	// Later lines win: this socket, this name.
	_, err = fmt.Fprintf(f, "\n# pglocal standby\nprimary_conninfo = %s\nunix_socket_directories = %s\nport = %d\nhot_standby = on\nlisten_addresses = %s\n",
		quote(conninfo), quote(c.sockDir), c.port, quote(c.listen))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pglocal: write postgresql.auto.conf: %w", err)
	}
	c.closed = false
	if err := c.StartAgain(ctx); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		return fmt.Errorf("%w\nserver log:\n%s", err, tail(log, 1500))
	}
	return nil
}

// NewStandby starts a new cluster in a fresh temporary directory (opts.TempDir) as a
// streaming standby of c named name (see Standby). Close it as any cluster. With opts.Netns
// and opts.Listen it runs in that namespace on that address and, when c listens on an
// address too, streams from it over TCP (a partition test's replication link).
func (c *Cluster) NewStandby(ctx context.Context, name string, opts Options) (*Cluster, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "pglocal-")
	if err != nil {
		return nil, fmt.Errorf("pglocal: create temp dir: %w", err)
	}
	s := &Cluster{dir: dir, dataDir: filepath.Join(dir, "data"), sockDir: dir, binDir: c.binDir, version: c.version, port: c.port, cred: c.cred,
		netns: opts.Netns, listen: opts.Listen}
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pglocal: chown %s: %w", dir, err)
		}
	}
	if err := s.Standby(ctx, c, name); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Pids returns the server's processes: the postmaster first, then its children.
func (c *Cluster) Pids() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(c.dataDir, "postmaster.pid"))
	if err != nil {
		return nil, fmt.Errorf("pglocal: no running server: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return nil, fmt.Errorf("pglocal: postmaster.pid: %w", err)
	}
	pids := []int{pm}
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pm, pm))
	if err != nil {
		return nil, fmt.Errorf("pglocal: children of postmaster %d: %w", pm, err)
	}
	for _, f := range strings.Fields(string(kids)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// Kill crashes the server: every process of it is stopped (SIGSTOP, so none writes or sends
// anything more), then killed (SIGKILL), as when its machine fails. Its files stay; Standby
// can reuse the cluster.
func (c *Cluster) Kill() error {
	pids, err := c.Pids()
	if err != nil {
		return err
	}
	var errs []error
	for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGKILL} {
		for _, p := range pids {
			if err := syscall.Kill(p, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("pglocal: kill -%d %d: %w", sig, p, err))
			}
		}
	}
	if len(errs) == 0 {
		// The processes are gone: Close need not stop them, Standby may reuse the directory.
		// Their lock files go too: a killed postmaster whose parent (init, in a container
		// often no reaper) has not collected it still answers kill(pid, 0), and a new
		// server would take it for a live one.
		os.Remove(filepath.Join(c.dataDir, "postmaster.pid"))
		os.Remove(filepath.Join(c.sockDir, fmt.Sprintf(".s.PGSQL.%d.lock", c.port)))
	}
	return errors.Join(errs...)
}
