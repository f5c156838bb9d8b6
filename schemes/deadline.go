package schemes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// DeadlineFence is an optional interface of a Fence that knows in advance until when it lets a
// generator issue IDs, such as a node lease, which is safe until half its time to live after
// the last renewal that succeeded. A Snowflake whose Fence implements it never calls Err on
// its hot path: it compares the tick of every ID it is about to issue (including ticks taken
// ahead of the clock by a lookahead, a drift continue or a predecessor's mark) with the
// deadline, using the clock reading it takes for the ID anyway. So the permission ends when
// the deadline passes whether or not a timer has noticed, and an ID reserved by a goroutine
// that was paused (SIGSTOP, a VM migration, a long GC) carries the time it read before the
// pause, which lies before the deadline. Err stays what the fence reports to people
// (readiness, logs).
//
// A deadline is an instant of the system clock (time.Now, with its monotonic reading), which is
// what a generator without an injected Clock reads. A generator with an injected Clock places
// the deadline on that clock through the clock's reading when it converts the deadline: a
// deadline d ahead of the system clock is d ahead of the injected clock's reading. That is
// exact for a clock offset from the system clock, and lets a test's fake clock see a deadline
// set d ahead as d ahead of its own time.
type DeadlineFence interface {
	Fence
	// Deadline returns the fence's Deadline. A generator calls it once, when it is made.
	Deadline() *Deadline
}

// Deadline is the instant up to which a DeadlineFence lets generators issue IDs. The fence
// keeps it (Set, Suspend, Revoke); generators read it with one atomic load per ID. The zero
// value lets no ID through until Set is called. Its methods are safe for concurrent use.
type Deadline struct {
	cur atomic.Pointer[deadlineState]

	mu      sync.Mutex // orders Set, Suspend and Revoke; guards gens
	revoked bool
	gens    []*Snowflake // generators made with the fence, stopped by Revoke
}

// deadlineState is one published value of a Deadline. A new pointer is stored on every
// change, so a generator can tell by comparing pointers whether its converted copy is current.
type deadlineState struct {
	at  time.Time // IDs whose tick ends at or before at may be issued
	err error     // non-nil: no ID at all, whatever the time
}

// Set lets generators issue IDs whose tick ends at or before at, replacing an earlier Set or
// Suspend; at may be earlier than before. After Revoke it does nothing.
func (d *Deadline) Set(at time.Time) { d.publish(&deadlineState{at: at}) }

// Suspend lets no ID through until the next Set; generators fail with errors wrapping
// ErrFenced and err. A call that passed its check before Suspend may still issue an ID whose
// time lies before the deadline that was in force then. After Revoke it does nothing.
func (d *Deadline) Suspend(err error) { d.publish(&deadlineState{err: orClosed(err)}) }

// publish makes st current unless the deadline was revoked.
func (d *Deadline) publish(st *deadlineState) {
	d.mu.Lock()
	if !d.revoked {
		d.cur.Store(st)
	}
	d.mu.Unlock()
}

// Revoke lets no ID through, for good: later Set and Suspend calls do nothing, and generators
// fail with errors wrapping ErrFenced and err. It also stops every generator made with the
// fence, so that when Revoke returns none of them can issue another ID, not even a call that
// passed its check before Revoke and has not reserved its ID yet (a reservation is a
// compare-and-swap on the generator's state, which Revoke replaces). A fence calls it before
// it gives up what it guards, such as a lease before it releases its slot.
func (d *Deadline) Revoke(err error) {
	err = orClosed(err)
	d.mu.Lock()
	if !d.revoked {
		d.revoked = true
		d.cur.Store(&deadlineState{err: err})
		for _, g := range d.gens {
			g.stop(err)
		}
	}
	d.mu.Unlock()
}

// errNoDeadline is the reason of a refusal when the fence's deadline has passed (or was never
// set) and its Err says nothing yet.
var errNoDeadline = errors.New("schemes: the fence's deadline has passed and was not extended (or was never set)")

// orClosed is err, or a plain reason for a fence closed without one.
func orClosed(err error) error {
	if err == nil {
		return errors.New("schemes: the fence was closed")
	}
	return err
}

// Load returns the current deadline, or the error a Suspend or Revoke gave (then the time is
// zero). Before the first Set both are zero.
func (d *Deadline) Load() (time.Time, error) {
	st := d.cur.Load()
	if st == nil {
		return time.Time{}, nil
	}
	return st.at, st.err
}

// attach registers g, whose fence publishes d, for Revoke; a generator made after Revoke is
// stopped at once.
func (d *Deadline) attach(g *Snowflake) {
	d.mu.Lock()
	if d.revoked {
		g.stop(d.cur.Load().err)
	} else {
		d.gens = append(d.gens, g)
	}
	d.mu.Unlock()
}

// deadlineLimit is a deadline converted into a generator's ticks.
type deadlineLimit struct {
	st   *deadlineState
	tick int64 // the first tick that may not be issued
}

// limit returns the first tick the fence's deadline forbids. It costs two atomic loads while
// the deadline is unchanged, and converts the deadline once per change.
func (g *Snowflake) limit() int64 {
	st := g.dl.cur.Load()
	if c := g.dlc.Load(); c.st == st {
		return c.tick
	}
	return g.convertDeadline(st)
}

// convertDeadline turns st into the generator's ticks: the first tick that does not end at
// or before the deadline. With the system clock the deadline's distance from the generator's
// start is measured on the monotonic clock, as the generator's own time is; an injected clock
// is related to the system clock only by what it reads now.
func (g *Snowflake) convertDeadline(st *deadlineState) int64 {
	tick := int64(math.MinInt64)
	if st != nil && st.err == nil {
		base, d := g.startNs, int64(st.at.Sub(g.start)) // Sub saturates at ±292 years
		if g.clock != nil {
			base, d = g.nanos(), int64(time.Until(st.at))
		}
		ns := base + d
		switch {
		case d > 0 && ns < base:
			ns = math.MaxInt64
		case d < 0 && ns > base:
			ns = math.MinInt64
		}
		// Tick t ends at (t+1)*unit: it may be issued while (t+1)*unit <= ns, so the
		// first forbidden tick is floor(ns/unit).
		tick = g.tickOf(ns)
	}
	g.dlc.Store(&deadlineLimit{st: st, tick: tick})
	return tick
}

// pastDeadline handles an ID whose tick is at or past the fence's deadline as the generator
// last converted it (or a deadline that changed since). It returns an error wrapping
// ErrFenced once the clock itself has reached the deadline (or the fence is suspended or
// revoked), and nil when the caller should try again: the deadline moved on, or only the lookahead (or a continue on a mark or a drifted clock) took the tick
// past it, and it waited a little for a renewal to move it or the clock to reach it.
func (g *Snowflake) pastDeadline(ctx context.Context, tick int64) error {
	st := g.dl.cur.Load()
	if st != nil && st.err != nil {
		return fmt.Errorf("%w: %w", ErrFenced, st.err)
	}
	lim := g.limit()
	if tick < lim {
		return nil
	}
	ns := g.nanos()
	if g.tickOf(ns) >= lim {
		err := g.fence.Err()
		if err == nil {
			// The fence says nothing yet (the tick ends past the deadline, the clock has
			// not reached it), or it never set a deadline.
			err = errNoDeadline
		}
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	return g.sleep(ctx, min(subNs(g.tickNs(lim), ns), int64(10*time.Millisecond)))
}

// A stopped generator holds the state word g.poisoned (see newPacking). No reservation starts
// from it: it reads as a used-up tick no clock reaches before the time field ends, so every
// call takes the slow path, which reports the stop (a generator that really used its last tick
// has nothing left to issue either).

// stop makes the generator fail every later call with an error wrapping ErrFenced and err
// (unless Close stopped it first: then ErrClosed stays the reason). When it returns no call can
// issue an ID: one that read the state before fails its compare-and-swap, because the state
// changed, and tries again from the poisoned word; one that reserved with an atomic add after
// it finds the value past its tick's sequence and drops it.
func (g *Snowflake) stop(err error) {
	err = fmt.Errorf("%w: %w", ErrFenced, err)
	g.stopped.CompareAndSwap(nil, &err)
	g.state.Store(g.poisoned)
}
