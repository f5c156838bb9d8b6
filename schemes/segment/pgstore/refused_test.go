package pgstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/pgstore"
)

// hideCheck is a store without Check, as every store was before it: the control of
// TestRefusedStoreNotWritten.
type hideCheck struct{ segment.Store }

// TestRefusedStoreNotWritten runs a Segment on a durable private server whose fsync is then
// turned off, so that every take commits its increment and is refused (the block lost), as
// with an asynchronous standby without durability=async. Once its blocks are used up the
// Segment reports that it cannot issue (Err wraps ErrUnavailable, names fsync and gives a
// retry hint), Next fails at once rather than after its wait, and the counter stays where it
// was while the store refuses: the Segment checks the store before taking again. The control,
// the same store without Check, keeps taking and losing blocks. With fsync on again, the
// Segment issues again without a restart.
func TestRefusedStoreNotWritten(t *testing.T) {
	c := private(t, "fsync", "on", "full_page_writes", "on")
	dsn := c.DSN()
	newSeg := func(key string, st segment.Store) *segment.Segment {
		s, err := segment.New(segment.Settings{Stores: []segment.Store{st}, Key: key, Step: 10, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	seg := newSeg("checked", openDurable(t, dsn))
	ctl := newSeg("control", hideCheck{openDurable(t, dsn)})
	pgrepltest.SetAndReload(t, dsn, "fsync", "off")

	// Use up the blocks in hand; then the takes are refused.
	for _, s := range []*segment.Segment{seg, ctl} {
		segtest.WaitFor(t, "the segment to report it cannot issue", 10*time.Second, func() bool {
			s.Next()
			return s.Err() != nil
		})
	}
	err := seg.Err()
	var hint interface{ RetryAfter() time.Duration }
	if !errors.Is(err, segment.ErrUnavailable) || !errors.Is(err, pgstore.ErrNotDurable) || !strings.Contains(err.Error(), "fsync off") || !errors.As(err, &hint) || hint.RetryAfter() <= 0 {
		t.Fatalf("Err while the store refuses: %v; want ErrUnavailable and ErrNotDurable naming fsync, with a retry hint", err)
	}
	t.Log(err)
	start := time.Now()
	if _, err := seg.Next(); !errors.Is(err, segment.ErrUnavailable) || time.Since(start) > time.Second {
		t.Errorf("Next while the store refuses: %v after %v; want ErrUnavailable at once (the wait is 5 s)", err, time.Since(start))
	}

	// The counters over 2 s: the checked Segment writes nothing; the control keeps taking.
	before, ctlBefore := maxID(t, dsn, "checked"), maxID(t, dsn, "control")
	time.Sleep(2 * time.Second)
	after, ctlAfter := maxID(t, dsn, "checked"), maxID(t, dsn, "control")
	t.Logf("max_id over 2 s while refused: checked %d → %d, control (no Check) %d → %d", before, after, ctlBefore, ctlAfter)
	if after != before {
		t.Errorf("max_id of the checked Segment went %d → %d while the store refused: it kept taking and losing blocks", before, after)
	}
	if ctlAfter == ctlBefore {
		t.Errorf("control: max_id stayed %d; the test would not see takes made while refused", ctlAfter)
	}

	pgrepltest.SetAndReload(t, dsn, "fsync", "on")
	segtest.WaitFor(t, "the segment to issue again", 10*time.Second, func() bool {
		_, err := seg.Next()
		return err == nil && seg.Err() == nil
	})
}
