package segtest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/segment"
)

// HideCheck is a store without Check (its Store's other methods only), as every store was
// before segment.Checker: the control of RefusedNotWritten.
type HideCheck struct{ segment.Store }

// RefusedNotWritten runs a Segment (step 10) on st, key "checked", and one on ctl, another
// store on the same server wrapped in HideCheck, key "control", takes an ID from each, then
// calls refuse, after which the server refuses every take (the block lost) with an error
// wrapping notDurable and containing names. Once its blocks are used up the checked Segment
// reports that it cannot issue (Err wraps segment.ErrUnavailable and notDurable, names the
// setting and gives a retry hint), Next fails at once rather than after its wait, and its
// counter stays where it was for 2 s while the store refuses: the Segment checks the
// store before taking again. The control keeps taking and losing blocks. After allow, the
// checked Segment issues again without a restart. maxID reads a key's max_id.
func RefusedNotWritten(t *testing.T, st, ctl segment.Store, maxID func(key string) int64, refuse, allow func(), notDurable error, names string) {
	t.Helper()
	if _, ok := st.(segment.Checker); !ok {
		t.Fatalf("%T is not a segment.Checker", st)
	}
	newSeg := func(key string, st segment.Store) *segment.Segment {
		s := NewSegment(t, segment.Settings{Stores: []segment.Store{st}, Key: key, Step: 10, Timeout: time.Second})
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	seg := newSeg("checked", st)
	control := newSeg("control", HideCheck{ctl})
	refuse()

	// Use up the blocks in hand; then the takes are refused.
	for _, s := range []*segment.Segment{seg, control} {
		WaitFor(t, "the segment to report it cannot issue", 10*time.Second, func() bool {
			s.Next()
			return s.Err() != nil
		})
	}
	err := seg.Err()
	var hint interface{ RetryAfter() time.Duration }
	if !errors.Is(err, segment.ErrUnavailable) || !errors.Is(err, notDurable) || !strings.Contains(err.Error(), names) || !errors.As(err, &hint) || hint.RetryAfter() <= 0 {
		t.Fatalf("Err while the store refuses: %v; want ErrUnavailable and %v naming %q, with a retry hint", err, notDurable, names)
	}
	t.Log(err)
	start := time.Now()
	if _, err := seg.Next(); !errors.Is(err, segment.ErrUnavailable) || time.Since(start) > time.Second {
		t.Errorf("Next while the store refuses: %v after %v; want ErrUnavailable at once (the wait is 5 s)", err, time.Since(start))
	}

	// The counters over 2 s: the checked Segment writes nothing; the control keeps taking
	// (its loader backs off from 50 ms).
	before, ctlBefore := maxID("checked"), maxID("control")
	time.Sleep(2 * time.Second)
	after, ctlAfter := maxID("checked"), maxID("control")
	t.Logf("max_id over 2 s while refused: checked %d → %d, control (no Check) %d → %d", before, after, ctlBefore, ctlAfter)
	if after != before {
		t.Errorf("max_id of the checked Segment went %d → %d while the store refused: it kept taking and losing blocks", before, after)
	}
	if ctlAfter == ctlBefore {
		t.Errorf("control: max_id stayed %d; the test would not see takes made while refused", ctlAfter)
	}

	allow()
	WaitFor(t, "the segment to issue again", 10*time.Second, func() bool {
		_, err := seg.Next()
		return err == nil && seg.Err() == nil
	})
}
