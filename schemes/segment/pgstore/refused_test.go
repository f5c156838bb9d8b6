package pgstore_test

import (
	"testing"

	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
)

// TestRefusedStoreNotWritten runs a Segment on a durable private server whose fsync is then
// turned off, so that every take commits its increment and is refused (the block lost), as
// with an asynchronous standby without durability=async: the Segment checks the store before
// taking again and does not write to it while it refuses; the control, the same store without
// Check, keeps taking and losing blocks (segtest.RefusedNotWritten). With fsync on again, the
// Segment issues again without a restart.
func TestRefusedStoreNotWritten(t *testing.T) {
	c := private(t, "fsync", "on", "full_page_writes", "on")
	dsn := c.DSN()
	segtest.RefusedNotWritten(t, openDurable(t, dsn), openDurable(t, dsn), func(key string) int64 { return maxID(t, dsn, key) },
		func() { pgrepltest.SetAndReload(t, dsn, "fsync", "off") }, func() { pgrepltest.SetAndReload(t, dsn, "fsync", "on") },
		pgstore.ErrNotDurable, "fsync off")
}
