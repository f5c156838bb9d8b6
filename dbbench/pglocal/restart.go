package pglocal

import (
	"context"
	"fmt"
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
