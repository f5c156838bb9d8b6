package engine

import (
	"fmt"
	"io"

	"github.com/idkit/idkit"
)

// Options is what an engine reads of the run's configuration: the fields of a validated
// Config that shape a load, the same for every engine. Run makes it (Config.options); an
// engine never sees Config, nor its connection string.
type Options struct {
	// Rows, Batch and Points are Config's: the rows of a load, the rows per batch as given
	// (0: the engine's default, see batchFor) and the chunks of the throughput curve.
	Rows, Batch, Points int
	// Mode is ModeCopy, ModeBatch, ModeSingle or ModeTx.
	Mode string
	// Clients is the number of connections loading a table; Nodes the simulated generators.
	Clients, Nodes int
	// Profile is ProfileSteady or ProfileCheckpoints.
	Profile string
	// Fillfactor is the primary key's fillfactor (PostgreSQL).
	Fillfactor int
	// Lookups and RangeN size the queries measured after a table-workload load.
	Lookups, RangeN int
	// SecondaryIndex adds an index on payload (MariaDB/MySQL).
	SecondaryIndex bool
	// Log receives one line per step, or is nil.
	Log io.Writer
}

// Logf writes one line to o.Log with any password hidden.
func (o Options) Logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintln(o.Log, idkit.Redact(fmt.Sprintf(format, args...)))
	}
}

// BatchFor returns the effective batch size for an engine. A COPY (or a
// SQLite transaction) covers one chunk of the throughput curve by default, so
// that each chunk is timed from the client's first row to the server's
// commit.
func (c Options) BatchFor(sqlite bool) int {
	b := c.Batch
	if b == 0 {
		switch {
		case c.Mode == ModeCopy:
			b = (c.Rows + c.Points - 1) / c.Points
		case sqlite:
			b = 500
		default:
			b = 1000
		}
	}
	if c.Mode == ModeSingle {
		b = 1
	}
	return max(1, min(b, c.Rows))
}
