// Package segment is range allocation: a central store hands each process a block of numbers
// and the process counts through it locally, as Flickr's ticket servers, Meituan Leaf's segment
// mode and Hibernate's pooled optimizers do. IDs are 64-bit, dense and positive (they fit a SQL
// BIGINT), carry no time and no node, and cost one store round trip per block.
//
// The core here knows no database: it takes blocks from a Store, and store packages
// (github.com/idkit/idkit/schemes/segment/pgstore, …/mysqlstore) register their URL schemes
// with RegisterStore.
//
// What a Segment adds to "UPDATE … SET max_id = max_id + step":
//
//   - a double buffer, as in Leaf: once a share of the current block is used (10%) the next
//     block is taken in the background, so Next does not wait on the store while it answers; a
//     slow or down store matters only when both blocks run dry, and Next then fails within its
//     wait instead of hanging;
//   - an optional dynamic step, as in Leaf: a block that lasted under 15 minutes doubles the
//     next step (up to a cap), one that lasted over 30 minutes halves it (not below the
//     configured step);
//   - several stores, Flickr's way: store i of n hands out the residue class i+1 modulo n, so
//     IDs stay unique while any one of them is down, and blocks are taken from whichever
//     answers (a store silent for a quarter of the timeout gets another asked beside it);
//   - a check that a store never goes backwards: a block at or below one this process already
//     took from the same store (its row edited by hand, a restore from an old backup) is
//     refused, and that store is not used again by this Segment.
//
// Order: every batch NextBatch fills is strictly increasing. IDs of one Segment taken from one
// store increase. They are k-sorted within one process only: N processes each count through
// their own block, so a table receives N interleaved ascending runs, and an ID made later by
// one process can be smaller than one made earlier by another (by up to N blocks). With several
// stores, the stores' counters drift apart, and a process switching from one to the other may
// step down between two calls.
//
// Durability is the stores' part: a store hands out a block only once its increment would
// survive a crash of its server, and refuses a server that could lose it (see each store
// package and docs/segment.md).
//
// Failover: a replicated store can lose acknowledged takes when a standby that did not hold
// them is promoted, and then hand their numbers out again. Stores refuse such a replica set
// unless told otherwise (durability=async in the store URL), and fence every take with the
// store's epoch, the history its primary writes (PostgreSQL's system identifier and timeline,
// MariaDB's server_id and GTID domain, Redis's replication ID): a take in another epoch than
// the one the key's row was last written in first moves the counter on by Settings.FailoverGap
// blocks, and a Segment that sees a store's epoch change drops every block it holds from that
// store that was not synchronously acknowledged. A take whose outcome is unknown (an error
// at or after COMMIT) is never used, and its numbers never reused.
package segment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Errors of this package, wrapped with context; match them with errors.Is.
var (
	// ErrSettings reports Settings that New cannot use.
	ErrSettings = errors.New("segment: invalid settings")
	// ErrUnavailable reports that both blocks ran dry and no store handed out a new one within
	// the wait. The error also wraps the last store error, if there was one.
	ErrUnavailable = errors.New("segment: no block available")
	// ErrBackwards reports a store that handed out a block at or below one this process already
	// took from it: its counter was lowered. Using the block could repeat IDs.
	ErrBackwards = errors.New("segment: store counter went backwards")
	// ErrExhausted reports a counter so high that its IDs would not fit in 63 bits.
	ErrExhausted = errors.New("segment: IDs exhausted")
	// ErrClass reports a store whose row for the key was made for another position in the list
	// of stores (store and store2 swapped, or both naming one table): its IDs could collide with
	// another store's.
	ErrClass = errors.New("segment: store serves another residue class")
	// ErrClosed reports use of a closed Segment.
	ErrClosed = errors.New("segment: closed")
)

// MaxID is the largest ID a Segment issues, so that every ID fits a signed 64-bit column.
const MaxID = math.MaxInt64

// Defaults for zero Settings fields.
const (
	DefaultStep       = 1000
	DefaultMaxStep    = 1_000_000 // Leaf's MAX_STEP
	DefaultTimeout    = 3 * time.Second
	DefaultWait       = 5 * time.Second
	DefaultShortBlock = 15 * time.Minute
	DefaultLongBlock  = 30 * time.Minute
	// DefaultPreload is the share of a block used before the next one is taken (Leaf: 10%).
	DefaultPreload = 0.1
	// DefaultFailoverGap is how many blocks a counter skips when a take finds its store in
	// another epoch (after a failover) than the key's last take: takes an asynchronous
	// standby lost are then not handed out again as long as they were fewer.
	DefaultFailoverGap = 1000
)

// Request asks a store for a block.
type Request struct {
	// Key names the counter (Leaf's biz_tag): one row per key.
	Key string
	// Step is how many numbers to take.
	Step uint64
	// Index and Count place the store in the Segment's list of stores (Index from 0). A store
	// records them in the key's row when it creates it and refuses, with an error wrapping
	// ErrClass, a request whose Index or Count differs from the row's.
	Index, Count int
	// Gap is how many blocks of Step the store skips before this one when the key's row was
	// last written in another epoch than the store's current one (Settings.FailoverGap); a
	// store that knows no epochs ignores it.
	Gap uint64
}

// Block is a range of a store's counter, First to Last inclusive, First at least 1. A store
// returns the block its atomic increment produced: Last is the new max_id, First is
// Last-Step+1.
type Block struct {
	First, Last uint64
	// Epoch names the history the store's primary wrote the take in (see the package doc);
	// empty when the store does not know. A Segment that sees it change drops the blocks of
	// that store taken in the old epoch unless Synchronous.
	Epoch string
	// Synchronous reports that every standby that could be promoted held the take when the
	// store acknowledged it.
	Synchronous bool
}

// Store hands out blocks of one counter per key. Take must be atomic across every process
// sharing the store: two calls never return overlapping blocks for one key. Stores are safe
// for concurrent use.
type Store interface {
	// Take increments the key's counter by req.Step, creating it at 0 first if it does not
	// exist, and returns the numbers taken. ctx bounds the round trip.
	Take(ctx context.Context, req Request) (Block, error)
	// Close releases the store's connections.
	Close() error
}

// Checker is implemented by stores that can tell, without taking a block, whether a Take
// would be refused now (pgstore: the server's crash settings and replication class). A
// refused take loses its block, so a Segment whose take from a store failed asks Check before
// it takes from that store again, and takes only once Check passes: a store it refuses is
// not written to while it stays refused.
type Checker interface {
	// Check returns nil when a Take would not be refused for what the store can see before
	// it (a take can still fail), and otherwise why it would. ctx bounds the round trip.
	Check(ctx context.Context) error
}

// Clock is a Segment's time source, read once per block for the dynamic step.
type Clock interface {
	Now() time.Time
}

// Settings configures New. A zero field means its default.
type Settings struct {
	// Stores hands out the blocks: one store, or several serving disjoint residue classes
	// (store i of n issues IDs equal to i+1 modulo n). Required.
	Stores []Store
	// Key names the counter in every store. Required.
	Key string
	// Step is the block size (DefaultStep when 0); with Dynamic the smallest block.
	Step uint64
	// Dynamic doubles the step after a block that lasted less than ShortBlock and halves it
	// after one that lasted more than LongBlock, between Step and MaxStep.
	Dynamic bool
	// MaxStep caps the dynamic step (DefaultMaxStep when 0).
	MaxStep uint64
	// ShortBlock and LongBlock are the dynamic step's thresholds (15 and 30 minutes when 0).
	ShortBlock, LongBlock time.Duration
	// NoBuffer takes a block only when the current one is used up, so the Next that finds it
	// empty waits for the store. It exists to measure what the double buffer saves.
	NoBuffer bool
	// Preload is the share of a block used before the next is taken (DefaultPreload when 0).
	Preload float64
	// Timeout bounds one store round trip (DefaultTimeout when 0).
	Timeout time.Duration
	// Wait bounds how long Next waits for a block when both are dry: when 0, DefaultWait or,
	// if longer, Timeout for each store plus a second. With one store, a Wait below Timeout
	// can fail while the store is merely slow.
	Wait time.Duration
	// Clock is read for the dynamic step; nil means the system clock.
	Clock Clock
	// FailoverGap is how many blocks a counter skips after a failover (DefaultFailoverGap
	// when 0; see the package doc).
	FailoverGap uint64
}

// span is the part of a block not yet issued, as IDs: next, next+stride, … up to last.
type span struct {
	next, last uint64
	stride     uint64
	preload    uint64 // issuing this ID starts taking the next block
	store      int    // the store it came from
	sync       bool   // Block.Synchronous
}

func (p *span) left() uint64 {
	if p.next > p.last {
		return 0
	}
	return (p.last-p.next)/p.stride + 1
}

// storeState is what a Segment knows of one of its stores.
type storeState struct {
	st    Store
	high  uint64        // highest counter value taken from st; 0 before the first block
	fails int           // failures in a row
	retry time.Time     // skip st until then after a failure
	dead  error         // st handed out a block that cannot be used; never asked again
	delay time.Duration // current back-off
	epoch string        // the epoch of st's last block
	fence int           // epoch changes seen
	down  time.Time     // when the current run of failures began; zero while fails is 0
}

// Segment issues IDs from blocks. It is safe for concurrent use. Close it to stop the
// background loader and close the stores.
type Segment struct {
	set    Settings
	stores []storeState
	clock  Clock

	mu      sync.Mutex
	cur     span
	nxt     span
	hasNxt  bool
	loading bool
	done    chan struct{} // closed when the running load ends
	lastErr error         // the last store error, for messages
	fatal   error         // no store can ever be used again
	closed  bool
	step    uint64
	takenAt time.Time // when the last block was taken, for the dynamic step
	rr      int       // the store to try first next time

	ctx    context.Context // ends when the Segment is closed
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// answered, when set (by this package's tests only), runs in the loader when a store's
	// answer arrives, before the loader looks at it: a test holds it there to make a block
	// arrive while Close runs.
	answered func()
}

// New returns a Segment counting through the blocks of set.Stores. It takes no block yet: the
// first Next (or Warm) does. Errors wrap ErrSettings.
func New(set Settings) (*Segment, error) {
	if len(set.Stores) == 0 {
		return nil, fmt.Errorf("%w: no store", ErrSettings)
	}
	if slices.Contains(set.Stores, nil) {
		return nil, fmt.Errorf("%w: nil store", ErrSettings)
	}
	if set.Key == "" {
		return nil, fmt.Errorf("%w: no key", ErrSettings)
	}
	if set.Step == 0 {
		set.Step = DefaultStep
	}
	if set.MaxStep == 0 {
		set.MaxStep = max(DefaultMaxStep, set.Step)
	}
	if set.ShortBlock == 0 {
		set.ShortBlock = DefaultShortBlock
	}
	if set.LongBlock == 0 {
		set.LongBlock = DefaultLongBlock
	}
	if set.Preload == 0 {
		set.Preload = DefaultPreload
	}
	if set.FailoverGap == 0 {
		set.FailoverGap = DefaultFailoverGap
	}
	if set.Timeout == 0 {
		set.Timeout = DefaultTimeout
	}
	if set.Wait == 0 {
		// Long enough for every store to time out once and the last to answer.
		set.Wait = max(DefaultWait, set.Timeout*time.Duration(len(set.Stores))+time.Second)
	}
	n := uint64(len(set.Stores))
	switch {
	case set.Step > MaxID/n:
		return nil, fmt.Errorf("%w: step %d is too large for %d stores", ErrSettings, set.Step, n)
	case set.MaxStep < set.Step:
		return nil, fmt.Errorf("%w: max step %d is below the step %d", ErrSettings, set.MaxStep, set.Step)
	case set.MaxStep > MaxID/n:
		return nil, fmt.Errorf("%w: max step %d is too large for %d stores", ErrSettings, set.MaxStep, n)
	case set.ShortBlock > set.LongBlock:
		return nil, fmt.Errorf("%w: short block time %v is above the long block time %v", ErrSettings, set.ShortBlock, set.LongBlock)
	case !(set.Preload > 0 && set.Preload < 1):
		return nil, fmt.Errorf("%w: preload %v: want a share between 0 and 1", ErrSettings, set.Preload)
	case set.Timeout < 0 || set.Wait < 0 || set.ShortBlock < 0:
		return nil, fmt.Errorf("%w: negative duration", ErrSettings)
	}
	s := &Segment{set: set, clock: set.Clock, step: set.Step, done: make(chan struct{}), cur: span{next: 1, stride: 1}}
	close(s.done)
	if s.clock == nil {
		s.clock = systemClock{}
	}
	s.set.Stores = slices.Clone(set.Stores)
	s.stores = make([]storeState, len(set.Stores))
	for i, st := range set.Stores {
		s.stores[i].st = st
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Step returns the step the next block will be taken with.
func (s *Segment) Step() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.step
}

// Next returns a new ID. It waits for the store only when both blocks are used up, at most
// Settings.Wait, and not at all while Err reports that it cannot issue (every store failed its
// last takes): then it fails at once with Err's error. Errors wrap ErrUnavailable (and the
// store's error), ErrBackwards, ErrExhausted, ErrClass or ErrClosed.
func (s *Segment) Next() (uint64, error) { return s.NextContext(context.Background()) }

// NextContext is Next with a context that ends the wait for a block early.
func (s *Segment) NextContext(ctx context.Context) (uint64, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, s.closedError()
	}
	if s.cur.next > s.cur.last && s.hasNxt { // a block boundary with the next block ready
		s.cur, s.hasNxt = s.nxt, false
	}
	if c := &s.cur; c.next <= c.last {
		v := c.next
		c.next += c.stride
		if v == c.preload && !s.hasNxt && !s.loading {
			s.startLoad()
		}
		s.mu.Unlock()
		return v, nil
	}
	return s.nextSlow(ctx)
}

// nextSlow refills the current block and takes one ID; it is called with s.mu held and
// releases it.
func (s *Segment) nextSlow(ctx context.Context) (uint64, error) {
	defer s.mu.Unlock()
	if err := s.refill(ctx); err != nil {
		return 0, err
	}
	c := &s.cur
	v := c.next
	c.next += c.stride
	if v == c.preload && !s.hasNxt && !s.loading {
		s.startLoad()
	}
	return v, nil
}

// NextBatch fills dst with new IDs in increasing order, taking as many as the current block
// holds in one step under one lock (with several stores, a batch that spans blocks of two
// stores is sorted).
func (s *Segment) NextBatch(dst []uint64) error { return s.NextBatchContext(context.Background(), dst) }

// NextBatchContext is NextBatch with a context that ends the wait for a block early.
func (s *Segment) NextBatchContext(ctx context.Context, dst []uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, sorted := dst, true
	var prev uint64
	for len(dst) > 0 {
		if err := s.refill(ctx); err != nil {
			return err
		}
		c := &s.cur
		n := min(uint64(len(dst)), c.left())
		if len(dst) < len(all) && c.next < prev {
			sorted = false
		}
		v := c.next
		for i := range n {
			dst[i] = v
			v += c.stride
		}
		prev = v - c.stride
		trigger := c.preload >= c.next && c.preload < v
		c.next = v
		if trigger && !s.hasNxt && !s.loading {
			s.startLoad()
		}
		dst = dst[n:]
	}
	if !sorted {
		slices.Sort(all)
	}
	return nil
}

// refill makes the current block non-empty: it moves the buffered block in, or waits for the
// loader, at most Settings.Wait and until ctx ends. It is called and returns with s.mu held.
func (s *Segment) refill(ctx context.Context) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		switch {
		case s.closed:
			return s.closedError()
		case s.cur.next <= s.cur.last:
			return nil
		case s.hasNxt:
			s.cur, s.hasNxt = s.nxt, false
			continue
		case s.fatal != nil:
			return s.fatal
		}
		if err := s.downError(); err != nil && ctx.Err() == nil && (!unreachable(s.lastErr) || s.outage() >= s.set.Wait) {
			// Every store failed its last takes, refusing (a store that answered no) or
			// unreachable for longer than a Next waits: waiting would only make the caller
			// wait as long and fail all the same; the loader keeps trying. A store that has
			// been unreachable for less (a restart) is waited for, up to Settings.Wait.
			if !s.loading {
				s.startLoad()
			}
			return err
		}
		if !s.loading {
			s.startLoad()
		}
		done := s.done
		s.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(s.set.Wait)
		}
		var err error
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		case <-timer.C:
			err = fmt.Errorf("waited %v", s.set.Wait)
		}
		s.mu.Lock()
		if err != nil && !s.hasNxt {
			if s.lastErr != nil {
				return &unavailableError{fmt.Errorf("%w for key %q: %w; last store error: %w", ErrUnavailable, s.set.Key, err, s.lastErr), s.retryIn()}
			}
			return &unavailableError{fmt.Errorf("%w for key %q: %w", ErrUnavailable, s.set.Key, err), s.retryIn()}
		}
	}
}

// Err returns nil while the Segment can issue IDs, and otherwise why not: both blocks are used
// up and the last two takes from every store failed (or every store handed out a block that
// cannot be used, or the Segment is closed), while the loader keeps trying the stores in the
// background (checking first those that are Checkers); Err is nil again as soon as a block
// arrives. Next then fails at once, except while the stores have been unreachable (not
// refusing) for less than Settings.Wait: a store restarting is waited for. The error wraps ErrUnavailable and the last store error, and has a
// method RetryAfter() time.Duration: when the next attempt is due.
// It makes a Segment (and the segment scheme) an idkit.Fenced, so that a service reports
// itself not ready while it cannot issue.
func (s *Segment) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return s.closedError()
	case s.cur.next <= s.cur.last || s.hasNxt:
		return nil
	case s.fatal != nil:
		return s.fatal
	}
	return s.downError()
}

// downAfter is how many takes in a row a store must have failed to count as down: one failure
// (a lost packet) is retried within 50 ms, which a Next waits for.
const downAfter = 2

// downError is nil unless the Segment has no IDs left (the caller checks) and every store is
// dead or failed its last downAfter takes: then the error Next returns. s.mu is held.
func (s *Segment) downError() error {
	for i := range s.stores {
		if st := &s.stores[i]; st.dead == nil && st.fails < downAfter {
			return nil
		}
	}
	return &unavailableError{fmt.Errorf("%w for key %q: the last takes from every store failed (retrying in %v): %w", ErrUnavailable, s.set.Key, s.retryIn().Round(time.Millisecond), s.lastErr), s.retryIn()}
}

// unreachable reports whether err is a store that could not be reached or did not answer in
// time (a network error or a deadline: its chain has a Timeout method, as net.Error and
// context.DeadlineExceeded have), rather than one that answered and refused.
func unreachable(err error) bool {
	var to interface{ Timeout() bool }
	return errors.As(err, &to)
}

// outage is how long every store has been failing: the shortest run of failures of the stores
// that are not dead (a dead store's is unbounded). s.mu is held.
func (s *Segment) outage() time.Duration {
	out := time.Duration(1<<63 - 1)
	for i := range s.stores {
		if st := &s.stores[i]; st.dead == nil {
			d := time.Duration(0)
			if !st.down.IsZero() {
				d = time.Since(st.down)
			}
			out = min(out, d)
		}
	}
	return out
}

// retryIn is how long until the loader asks a store again: the shortest back-off left of
// the stores that are not dead, at least 100 ms. s.mu is held.
func (s *Segment) retryIn() time.Duration {
	now := time.Now()
	best := time.Duration(-1)
	for i := range s.stores {
		if st := &s.stores[i]; st.dead == nil {
			if d := st.retry.Sub(now); best < 0 || d < best {
				best = d
			}
		}
	}
	return max(best, 100*time.Millisecond)
}

// unavailableError is ErrUnavailable with a retry hint, for a service to pass on.
type unavailableError struct {
	err   error
	retry time.Duration
}

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// RetryAfter is when the next take is due: the earliest a retry can succeed.
func (e *unavailableError) RetryAfter() time.Duration { return e.retry }

// Warm takes the first block now, so that the first Next does not wait; New does not touch
// the stores. Errors are those of Next.
func (s *Segment) Warm(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refill(ctx)
}

// startLoad starts the background loader; s.mu is held.
func (s *Segment) startLoad() {
	if s.closed || s.fatal != nil {
		return
	}
	s.loading = true
	s.done = make(chan struct{})
	s.wg.Add(1)
	go s.load(s.done)
}

// load takes one block from the first store that hands out a usable one, until it succeeds,
// every store is dead or the Segment is closed. It asks the stores in turn and backs off from
// those that fail; when a store has not answered within the hedge delay and another store is
// usable, it asks that one too and keeps the first block that comes back, so a store that
// hangs costs the hedge delay rather than the whole timeout. A block that comes back after
// another was kept is dropped (its numbers are lost, never reused).
func (s *Segment) load(done chan struct{}) {
	defer s.wg.Done()
	defer close(done)
	for {
		s.mu.Lock()
		if s.closed {
			s.loading = false
			s.mu.Unlock()
			return
		}
		i, wait, ok := s.pick(nil)
		if !ok {
			s.fatal = s.deadError()
			s.loading = false
			s.mu.Unlock()
			return
		}
		if wait > 0 {
			s.mu.Unlock()
			select {
			case <-time.After(wait):
			case <-s.ctx.Done():
			}
			continue
		}
		step := s.nextStep()
		check := s.stores[i].fails > 0
		s.mu.Unlock()

		res := make(chan takeResult, len(s.stores)) // buffered: a late answer never blocks
		asked := make([]bool, len(s.stores))
		// ask takes a block from store i; check (read under s.mu: the store's last take
		// failed) has a Checker store checked first, and not written to unless it passes.
		ask := func(i int, check bool) {
			asked[i] = true
			st := s.stores[i].st
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				ctx, cancel := context.WithTimeout(s.ctx, s.set.Timeout)
				defer cancel()
				if c, ok := st.(Checker); ok && check {
					if err := c.Check(ctx); err != nil {
						res <- takeResult{i, Block{}, fmt.Errorf("not taking (its last take failed, and a check before the next fails): %w", err)}
						return
					}
				}
				b, err := st.Take(ctx, Request{Key: s.set.Key, Step: step, Index: i, Count: len(s.stores), Gap: s.set.FailoverGap})
				res <- takeResult{i, b, err}
			}()
		}
		ask(i, check)
		pending := 1
		hedge := time.NewTimer(s.hedgeDelay())
		for pending > 0 {
			select {
			case r := <-res:
				pending--
				if s.answered != nil {
					s.answered()
				}
				s.mu.Lock()
				if s.closed {
					// Close has begun: the block is dropped (its numbers lost), never served.
					s.loading = false
					s.mu.Unlock()
					hedge.Stop()
					s.drainLate(res, pending)
					return
				}
				err := r.err
				if err == nil {
					var p span
					if p, err = s.accept(r.i, r.b); err == nil {
						s.takenAt = s.clock.Now()
						s.step = step
						if s.cur.next > s.cur.last {
							s.cur = p
						} else {
							s.nxt, s.hasNxt = p, true
						}
						s.loading = false
						s.mu.Unlock()
						hedge.Stop()
						s.drainLate(res, pending)
						return
					}
				}
				s.failed(r.i, err)
				s.mu.Unlock()
			case <-hedge.C:
				s.mu.Lock()
				j, wait, ok := s.pick(asked)
				check := ok && s.stores[j].fails > 0
				s.mu.Unlock()
				if ok && wait == 0 {
					ask(j, check)
					pending++
				}
			case <-s.ctx.Done():
				hedge.Stop()
				s.mu.Lock()
				s.loading = false
				s.mu.Unlock()
				return
			}
		}
		hedge.Stop()
	}
}

// hedgeDelay is how long a store may take before another is asked too: a quarter of the
// timeout, between 50 ms and 1 s.
func (s *Segment) hedgeDelay() time.Duration {
	return min(max(s.set.Timeout/4, 50*time.Millisecond), time.Second)
}

// takeResult is one store's answer to a Take.
type takeResult struct {
	i   int
	b   Block
	err error
}

// drainLate collects the answers still pending after a block was kept: blocks are dropped,
// failures still count against their store.
func (s *Segment) drainLate(res <-chan takeResult, pending int) {
	if pending == 0 {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for range pending {
			if r := <-res; r.err != nil {
				s.mu.Lock()
				s.failed(r.i, r.err)
				s.mu.Unlock()
			}
		}
	}()
}

// pick chooses the store to ask: the next one in turn that is not backing off, or, when all
// are, the one whose back-off ends first and how long until then. Stores marked in skip are
// not chosen. ok is false when no store is left (every store is dead, or skipped). s.mu is
// held.
func (s *Segment) pick(skip []bool) (i int, wait time.Duration, ok bool) {
	now := time.Now()
	best := -1
	n := len(s.stores)
	for k := range n {
		j := (s.rr + k) % n
		st := &s.stores[j]
		if st.dead != nil || skip != nil && skip[j] {
			continue
		}
		if !now.Before(st.retry) {
			s.rr = (j + 1) % n
			return j, 0, true
		}
		if best < 0 || st.retry.Before(s.stores[best].retry) {
			best = j
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return best, s.stores[best].retry.Sub(now), true
}

// nextStep returns the step for the block about to be taken: Leaf's rule when dynamic. s.mu
// is held.
func (s *Segment) nextStep() uint64 {
	if !s.set.Dynamic || s.takenAt.IsZero() {
		return s.step
	}
	lasted := s.clock.Now().Sub(s.takenAt)
	switch {
	case lasted < s.set.ShortBlock:
		if s.step <= s.set.MaxStep/2 {
			return s.step * 2
		}
		return s.set.MaxStep
	case lasted > s.set.LongBlock:
		return max(s.step/2, s.set.Step)
	}
	return s.step
}

// accept checks block b of store i and turns it into IDs. s.mu is held.
func (s *Segment) accept(i int, b Block) (span, error) {
	n := uint64(len(s.stores))
	st := &s.stores[i]
	switch {
	case b.First == 0 || b.Last < b.First:
		return span{}, fmt.Errorf("%w: store %d returned the block [%d, %d] for key %q", ErrBackwards, i+1, b.First, b.Last, s.set.Key)
	case b.First <= st.high:
		return span{}, fmt.Errorf("%w: store %d returned the block [%d, %d] for key %q, but this process already took up to %d from it: was max_id lowered?", ErrBackwards, i+1, b.First, b.Last, s.set.Key, st.high)
	case b.Last > MaxID/n:
		return span{}, fmt.Errorf("%w: store %d's counter for key %q reached %d, beyond %d", ErrExhausted, i+1, s.set.Key, b.Last, MaxID/n)
	}
	if b.Epoch != "" {
		if st.epoch != "" && b.Epoch != st.epoch {
			// A failover: what this process holds of the old epoch may be missing on the new
			// primary, which hands it out again (after the gap, if fewer blocks were lost).
			st.fence++
			if s.cur.store == i && !s.cur.sync {
				s.cur.next, s.cur.last = 1, 0
			}
			if s.hasNxt && s.nxt.store == i && !s.nxt.sync {
				s.hasNxt = false
			}
		}
		st.epoch = b.Epoch
	}
	st.high = b.Last
	st.fails, st.delay, st.down = 0, 0, time.Time{}
	// Counter value r of store i is the ID (r-1)*n + i + 1.
	first := (b.First-1)*n + uint64(i) + 1
	last := (b.Last-1)*n + uint64(i) + 1
	p := span{next: first, last: last, stride: n, preload: last + 1, store: i, sync: b.Synchronous}
	if !s.set.NoBuffer {
		p.preload = first + uint64(float64(b.Last-b.First+1)*s.set.Preload)*n
	}
	return p, nil
}

// failed records store i's error: a block that cannot be used kills the store for this
// Segment; any other error backs off from it. s.mu is held.
func (s *Segment) failed(i int, err error) {
	st := &s.stores[i]
	if s.ctx.Err() != nil {
		return
	}
	err = fmt.Errorf("store %d of %d: %w", i+1, len(s.stores), err)
	s.lastErr = err
	if errors.Is(err, ErrBackwards) || errors.Is(err, ErrExhausted) || errors.Is(err, ErrClass) {
		st.dead = err
		return
	}
	if st.fails == 0 {
		st.down = time.Now()
	}
	st.fails++
	switch {
	case st.delay == 0:
		st.delay = 50 * time.Millisecond
	case st.delay < time.Second:
		st.delay *= 2
	}
	st.retry = time.Now().Add(st.delay)
}

// deadError joins the reasons every store is dead. s.mu is held.
func (s *Segment) deadError() error {
	errs := make([]error, len(s.stores))
	for i := range s.stores {
		errs[i] = s.stores[i].dead
	}
	return errors.Join(errs...)
}

// Durability returns what each store last reported of its durability, in the order of
// Settings.Stores; ClassUnknown for a store that is not a Durabler.
func (s *Segment) Durability() []Durability {
	d := make([]Durability, len(s.stores))
	for i := range s.stores {
		if st, ok := s.stores[i].st.(Durabler); ok {
			d[i] = st.Durability()
		}
	}
	return d
}

// Failovers returns how many times a block came back from one of the stores in another epoch
// than the block before it.
func (s *Segment) Failovers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range s.stores {
		n += s.stores[i].fence
	}
	return n
}

// closedError is the error of every call after Close. s.mu is held.
func (s *Segment) closedError() error {
	return fmt.Errorf("%w: key %q: no IDs after Close", ErrClosed, s.set.Key)
}

// Close stops the loader, waits for it and closes every store. Once Close has begun, every
// Next, NextBatch and Warm fails with an error wrapping ErrClosed: the rest of the current
// block, the buffered block and a block that a store hands out while Close runs are dropped,
// never served. Close is safe to call more than once.
func (s *Segment) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cur, s.hasNxt = span{next: 1, stride: 1}, false // the fast path finds nothing left
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	var errs []error
	for _, st := range s.stores {
		if err := st.st.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
