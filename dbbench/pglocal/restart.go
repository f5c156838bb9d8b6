package pglocal

import (
	"context"
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
)

// Stop stops the server, keeping its files, for fault tests that take a store away and bring
// it back with StartAgain. mode is pg_ctl's shutdown mode: "fast" (disconnect clients, clean
// shutdown) or "immediate" (no shutdown checkpoint, as after a crash).
func (c *Cluster) Stop(ctx context.Context, mode string) error {
	if mode != "fast" && mode != "immediate" && mode != "smart" {
		return fmt.Errorf("pglocal: shutdown mode %q: want fast, immediate or smart", mode)
	}
	_, err := c.run(ctx, "pg_ctl", "stop", "-m", mode, "-w", "-D", c.dataDir)
	return err
}

// StartAgain starts a server that Stop stopped, on the same socket, and waits until it
// accepts connections.
func (c *Cluster) StartAgain(ctx context.Context) error {
	out, err := c.run(ctx, "pg_ctl", "start", "-w", "-D", c.dataDir, "-l", filepath.Join(c.dir, "server.log"))
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Keep stops the server and keeps its directory, so that Close afterwards does nothing, and
// returns the shell command that starts the server again on the same socket (DSN still
// connects to it then). The caller owns the directory from then on.
func (c *Cluster) Keep(ctx context.Context) (string, error) {
	if c == nil || c.closed {
		return "", fmt.Errorf("pglocal: cluster already closed")
	}
	if err := c.Stop(ctx, "fast"); err != nil {
		return "", err
	}
	c.closed = true
	start := fmt.Sprintf("%s start -w -D %s -l %s", filepath.Join(c.binDir, "pg_ctl"), c.dataDir, filepath.Join(c.dir, "server.log"))
	if c.cred != nil { // the files belong to the user that ran the server
		if u, err := user.LookupId(fmt.Sprint(c.cred.Uid)); err == nil {
			return "su " + u.Username + " -s /bin/sh -c '" + start + "'", nil
		}
	}
	return start, nil
}
