package nodeid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/schemes"
)

// Errors of the lease machinery. They are wrapped with context; match them with errors.Is.
var (
	// ErrNoFreeSlot reports that every slot in the node range is held. The message says how
	// many are taken.
	ErrNoFreeSlot = errors.New("nodeid: no free node slot")
	// ErrLost reports that the store no longer holds a claim: it expired, was released or was
	// removed. Store.Renew and Store.SaveMark return it.
	ErrLost = errors.New("nodeid: claim lost")
	// ErrTaken reports that a lapsed claim cannot be taken again because another owner
	// claimed the slot in the meantime. Store.Claim returns it for ClaimRequest.Again.
	ErrTaken = errors.New("nodeid: slot claimed by another owner since")
	// ErrHeld reports that the one slot asked for (LeaseSettings.Exact) is held by another
	// owner: two processes were given the same static node number.
	ErrHeld = errors.New("nodeid: node slot held by another owner")
	// ErrFenced is wrapped by Lease.Err while the lease may not be relied on: renewals are
	// failing, the claim lapsed, or the lease was closed.
	ErrFenced = errors.New("nodeid: node fenced")
)

// Claim is one holding of a slot in a Store.
type Claim struct {
	Node  uint64        // the slot, in [0, ClaimRequest.Nodes)
	Owner string        // the owner token given in the request
	TTL   time.Duration // the time to live the store granted, at least the one requested
	// Epoch tells holdings of one slot apart: it changes with every claim of the slot by
	// anyone (the etcd revision of the claim, the PostgreSQL claim count). A store uses it to
	// refuse renewals, marks and repeat claims of a holding that is no longer current.
	Epoch int64
	// Handle is the store's own reference to the holding (the etcd lease ID); zero where the
	// store needs none.
	Handle int64
}

// ClaimRequest asks a Store for a slot.
type ClaimRequest struct {
	Nodes uint64        // the slots are 0 to Nodes-1
	Owner string        // a token unique to the claiming Lease
	TTL   time.Duration // how long the holding lasts without renewal
	// Exact, when true, asks for slot Node only, failing with ErrHeld while another owner
	// holds it.
	Exact bool
	Node  uint64
	// Again, when set, asks for Again.Node only, and only if nobody has claimed that slot
	// since Again was made; otherwise Claim fails with ErrTaken. A Lease uses it to resume
	// after its claim lapsed without handing its generator a different node number.
	Again *Claim
}

// Slot is one slot as a listing shows it.
type Slot struct {
	Node    uint64
	Owner   string    // empty when free
	Held    bool      // whether a live holding covers it
	Expires time.Time // when the holding lapses without renewal, by the store's clock
	Epoch   int64
	Mark    time.Time // the high-water mark saved for the slot; zero if none
}

// Store is the backend of a Lease: a shared service that hands out node slots under holdings
// that expire unless renewed. Package etcdlease and package pglease implement it; other
// services can, as long as each method is a single atomic step on the service.
//
// Claim takes the lowest free slot (or the one ClaimRequest.Exact or Again names) with a
// compare-and-swap and returns an error wrapping ErrNoFreeSlot when every slot is held,
// ErrHeld when the exact slot is held and ErrTaken when Again's slot was claimed since. Renew extends a holding by
// its TTL, measured from no earlier than the moment Renew was called, or returns an error
// wrapping ErrLost when the holding is gone. Release gives a holding up. LoadMark and SaveMark
// keep a slot's high-water mark, which outlives holdings; SaveMark succeeds only while c is
// the current holding of its slot (else ErrLost). Slots lists the slots
// that have ever been claimed. Close releases the store's connections.
type Store interface {
	Claim(ctx context.Context, req ClaimRequest) (Claim, error)
	Renew(ctx context.Context, c Claim) error
	Release(ctx context.Context, c Claim) error
	LoadMark(ctx context.Context, node uint64) (time.Time, error)
	SaveMark(ctx context.Context, c Claim, mark time.Time) error
	Slots(ctx context.Context) ([]Slot, error)
	Close() error
}

// DefaultTTL is the lease time to live when LeaseSettings.TTL is zero.
const DefaultTTL = 10 * time.Second

// LeaseSettings configures Hold. A zero field means the default.
type LeaseSettings struct {
	// Nodes is the number of slots, the layout's node count (layouts.Layout.Nodes). Required.
	Nodes uint64
	// TTL is how long a holding lasts without renewal; DefaultTTL when zero. The Lease renews
	// every TTL/6 and fences its generator TTL/2 after the start of the last renewal that
	// succeeded, so another process can claim the slot no earlier than TTL/2 after the
	// generator stopped. A store may round it up (etcd grants whole seconds, 2 s at least).
	TTL time.Duration
	// Owner names the holder in listings; it must be unique to this Lease. Default
	// "host:pid:random".
	Owner string
	// Exact, when true, claims slot Node and no other: a node number fixed by configuration
	// is then checked against every other process using the store, and Hold fails with
	// ErrHeld when one already holds it.
	Exact bool
	Node  uint64
}

// Lease holds one node slot of a Store. It implements schemes.DeadlineFence: its deadline is
// TTL/2 after the start of the last renewal that succeeded, and a generator made with it
// issues no ID whose time is past that, whether or not anything noticed the deadline pass.
// Err is nil while the slot is safely held and wraps ErrFenced from the moment renewals have
// failed for TTL/2 (or the store said the holding is gone) until the same slot is confirmed
// or claimed again. Marks returns a schemes.MarkStore kept in the store beside the slot. A
// Lease is safe for concurrent use.
//
// Use Node, Lease (as Fence) and Marks in schemes.SnowflakeSettings, and Close the Lease when
// done: Close stops the generators made with it before it releases the slot.
type Lease struct {
	store   Store
	nodes   uint64
	owner   string
	node    uint64
	ttl     time.Duration
	dl      schemes.Deadline
	lost    chan struct{} // closed when another owner claimed the slot after a lapse
	renewed atomic.Uint64 // renewals that succeeded (a claim taken again counts)
	failed  atomic.Uint64 // renewals that failed

	mu     sync.Mutex
	claim  Claim
	dead   error // set when the lease cannot resume
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

var _ schemes.DeadlineFence = (*Lease)(nil)

// Hold claims the lowest free slot of s and keeps it renewed until Close. Hold takes over s:
// Close closes it, and so does Hold when it fails.
//
// Errors wrap ErrNoFreeSlot when every slot is held, ErrHeld when LeaseSettings.Exact asks for
// a slot another owner holds, ErrRange for a bad LeaseSettings.Node, and otherwise come from
// the store.
func Hold(ctx context.Context, s Store, set LeaseSettings) (*Lease, error) {
	if set.Nodes == 0 {
		s.Close()
		return nil, fmt.Errorf("%w: LeaseSettings.Nodes is zero", ErrRange)
	}
	if set.TTL == 0 {
		set.TTL = DefaultTTL
	}
	if set.TTL < 0 {
		s.Close()
		return nil, fmt.Errorf("nodeid: lease TTL %v must be positive", set.TTL)
	}
	if set.Owner == "" {
		set.Owner = DefaultOwner()
	}
	if set.Exact {
		if err := Check(set.Node, set.Nodes); err != nil {
			s.Close()
			return nil, err
		}
	}
	start := time.Now()
	c, err := s.Claim(ctx, ClaimRequest{Nodes: set.Nodes, Owner: set.Owner, TTL: set.TTL, Exact: set.Exact, Node: set.Node})
	if err != nil {
		s.Close()
		return nil, err
	}
	l := &Lease{
		store: s, nodes: set.Nodes, owner: set.Owner, node: c.Node, ttl: c.TTL, claim: c,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	// Measured from before the claim was sent, so it is no later than the store's own
	// expiry minus TTL/2.
	l.dl.Set(start.Add(c.TTL / 2))
	go l.renewLoop()
	return l, nil
}

// DefaultOwner returns "host:pid:random", the owner token used when LeaseSettings.Owner is
// empty.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Node returns the claimed node number. It does not change for the life of the Lease.
func (l *Lease) Node() uint64 { return l.node }

// Owner returns the owner token the slot is held under.
func (l *Lease) Owner() string { return l.owner }

// TTL returns the time to live the store granted.
func (l *Lease) TTL() time.Duration { return l.ttl }

// Err returns nil while the slot is safely held, and an error wrapping ErrFenced otherwise:
// after the deadline (TTL/2 after the start of the last renewal that succeeded), after the
// store said the holding is gone, after Close, and for good once another owner claimed the
// slot (then it also wraps ErrTaken). It is an atomic load and a clock read, and needs no
// timer to have run.
func (l *Lease) Err() error {
	at, err := l.dl.Load()
	if err != nil {
		return err
	}
	if !time.Now().Before(at) {
		return fmt.Errorf("%w: node %d: no renewal succeeded for %v (TTL %v); no IDs until the slot is held again", ErrFenced, l.node, l.ttl/2, l.ttl)
	}
	return nil
}

// Deadline returns the instant up to which generators made with the Lease may issue IDs,
// which makes the Lease a schemes.DeadlineFence. The Lease moves it with every renewal,
// suspends it while the store says the holding is gone, and revokes it for good on Close and
// when another owner took the slot.
func (l *Lease) Deadline() *schemes.Deadline { return &l.dl }

// Lost returns a channel that is closed when the Lease can no longer hold its slot: its
// holding lapsed and another owner claimed the slot before it could claim it again. Err then
// wraps ErrTaken, and the generators made with the Lease are stopped for good; claiming a
// slot anew takes a new Lease and a new generator. Close does not close the channel.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Renewals returns how many renewals of the holding succeeded and how many failed so far, for
// monitoring: failures come before a fence, and a fence follows when they outlast half the TTL.
func (l *Lease) Renewals() (ok, failed uint64) { return l.renewed.Load(), l.failed.Load() }

// Marks returns a schemes.MarkStore kept in the lease store beside the slot. SaveMark fails
// while the Lease is fenced, and the store refuses it once the holding is no longer current.
func (l *Lease) Marks() schemes.MarkStore { return leaseMarks{l} }

// Close fences the Lease for good, stops renewing and releases the slot. It closes the store.
// The fence comes first: when it is closed, no generator made with the Lease can issue an ID,
// not even a call that passed its check just before (see schemes.Deadline.Revoke), so
// nothing is issued on the slot once another process may claim it.
func (l *Lease) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.dl.Revoke(fmt.Errorf("%w: node %d: the lease was closed", ErrFenced, l.node))
	close(l.stop)
	l.mu.Unlock()
	<-l.done

	l.mu.Lock()
	c, held := l.claim, l.dead == nil
	l.mu.Unlock()
	var err error
	if held {
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/2)
		err = l.store.Release(ctx, c)
		cancel()
	}
	if cerr := l.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// renewLoop renews every TTL/6. After a lapse it reclaims the same slot if nobody took it in
// between, and otherwise fences the lease for good and closes Lost.
func (l *Lease) renewLoop() {
	defer close(l.done)
	interval := l.ttl / 6
	next := time.NewTimer(interval)
	defer next.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-next.C:
		}
		l.mu.Lock()
		c, dead := l.claim, l.dead
		l.mu.Unlock()
		if dead != nil {
			return
		}
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		err := l.store.Renew(ctx, c)
		if errors.Is(err, ErrLost) {
			// The store says the holding is gone, so someone else may claim the slot now:
			// stop issuing before trying to get it back.
			l.dl.Suspend(fmt.Errorf("%w: node %d: %w", ErrFenced, l.node, err))
			var nc Claim
			nc, err = l.store.Claim(ctx, ClaimRequest{Nodes: l.nodes, Owner: l.owner, TTL: l.ttl, Again: &c})
			if err == nil {
				c = nc
			} else if errors.Is(err, ErrTaken) {
				l.mu.Lock()
				l.dead = err
				l.mu.Unlock()
				l.dl.Revoke(fmt.Errorf("%w: node %d: %w; this lease cannot resume, a new one must claim a slot", ErrFenced, l.node, err))
				close(l.lost)
				cancel()
				return
			}
		}
		cancel()
		l.mu.Lock()
		if err == nil && !l.closed {
			// Held without a gap: either the lease never lapsed, or it was claimed again
			// and nobody held the slot in between. A renewal that took longer than TTL/2
			// sets a deadline that has passed already, which lets no ID through.
			l.claim = c
			l.dl.Set(t0.Add(c.TTL / 2))
		}
		l.mu.Unlock()
		if err == nil {
			l.renewed.Add(1)
			next.Reset(interval)
		} else {
			l.failed.Add(1)
			next.Reset(interval / 2)
		}
	}
}

// leaseMarks is the MarkStore of a Lease.
type leaseMarks struct{ l *Lease }

func (m leaseMarks) LoadMark(ctx context.Context) (time.Time, error) {
	return m.l.store.LoadMark(ctx, m.l.node)
}

func (m leaseMarks) SaveMark(ctx context.Context, mark time.Time) error {
	if err := m.l.Err(); err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	m.l.mu.Lock()
	c := m.l.claim
	m.l.mu.Unlock()
	deadline, err := m.l.dl.Load()
	if err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	// A save still running when the fence closes is of no use; give up then instead of
	// holding the generator until the caller's timeout.
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return m.l.store.SaveMark(ctx, c, mark)
}
