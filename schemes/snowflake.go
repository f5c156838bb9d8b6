package schemes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/layouts"
)

// Errors returned by the generators in this package. Each is wrapped with context; match them
// with errors.Is.
var (
	// ErrSettings reports settings a generator cannot start with: an invalid layout, a node or
	// machine ID out of range, a negative lookahead.
	ErrSettings = errors.New("schemes: invalid settings")
	// ErrClockBackward reports a clock that reads further behind the last issued time than the
	// drift policy tolerates. The error text names the drift.
	ErrClockBackward = errors.New("schemes: clock moved backwards")
	// ErrTimeOverflow reports that the layout's time field cannot hold the current time (or the
	// clock reads before the layout's epoch). Generators never wrap around.
	ErrTimeOverflow = errors.New("schemes: time outside the layout's time field")
	// ErrFenced reports that the generator's Fence withdrew permission to issue IDs for its
	// node, typically because its lease was lost.
	ErrFenced = errors.New("schemes: node ID no longer held")
	// ErrMark reports a high-water mark that could not be loaded or saved.
	ErrMark = errors.New("schemes: high-water mark")
	// ErrClosed reports use of a generator after its Close.
	ErrClosed = errors.New("schemes: generator closed")
)

// maxStartNs bounds the time from a layout's epoch to a generator's start, 2^62 ns (146
// years), which leaves as long again before the running clock could overflow an int64.
const maxStartNs = 1 << 62

// Default drift policy and mark window, after the seed design.
const (
	DefaultMaxWait     = 5 * time.Millisecond
	DefaultMaxContinue = 100 * time.Millisecond
	DefaultMarkWindow  = 50 * time.Millisecond
	defaultMarkTimeout = 5 * time.Second
)

// Bounds on SnowflakeSettings, checked by NewSnowflake.
const (
	// MaxLookahead is the largest SnowflakeSettings.Lookahead, in ticks, the same bound the
	// idkit spec's lookahead= has. A restarted generator waits out its predecessor's whole
	// lookahead, so a larger value would mostly buy long start-up waits.
	MaxLookahead = 1 << 20
	// MaxMarkWindow is the largest SnowflakeSettings.MarkWindow. A generator restarted on
	// its predecessor's mark may wait up to one window before it issues, so the window bounds
	// that wait.
	MaxMarkWindow = time.Hour
)

// DriftPolicy says what a generator does when its clock reads behind the time of the last ID it
// issued: after a restart against a persisted mark, or when an injected clock steps back.
// (With the system clock a running generator cannot see a backward step, because it reads the
// monotonic clock.) Let drift be how far the clock is behind:
//
//   - drift <= MaxWait: sleep until the clock catches up, then issue;
//   - else drift <= MaxContinue: keep issuing on the last timestamp (the sequence keeps counting,
//     then the time field moves one tick at a time, never more than MaxContinue ahead);
//   - else: fail with ErrClockBackward, naming the drift.
//
// A zero field means its default (5 ms and 100 ms); a negative one switches that step off, so
// DriftPolicy{MaxWait: -1, MaxContinue: -1} fails at once and DriftPolicy{MaxWait: time.Hour,
// MaxContinue: -1} always waits.
//
// A mark that a generator finds at start at most one mark window (plus its lookahead) ahead of
// its clock is its predecessor's reservation, not a backward step: the generator first waits
// until the drift is within MaxContinue (or MaxWait, or zero when both are off), so a restart
// on a clock that did not move never fails whatever the policy. NextContext can cut that wait
// short.
type DriftPolicy struct {
	MaxWait     time.Duration
	MaxContinue time.Duration
}

func (p DriftPolicy) resolved() (wait, cont int64) {
	wait, cont = int64(p.MaxWait), int64(p.MaxContinue)
	if wait == 0 {
		wait = int64(DefaultMaxWait)
	}
	if cont == 0 {
		cont = int64(DefaultMaxContinue)
	}
	return wait, cont
}

// SnowflakeSettings configures NewSnowflake. The zero value is valid: the Twitter layout, node
// 0, the system clock, no lookahead and the default drift policy.
type SnowflakeSettings struct {
	// Layout is the bit layout; a layout with no fields means layouts.Twitter.
	Layout layouts.Layout
	// Node is the node value, all node fields concatenated (see layouts.Layout.NodeOf).
	Node uint64
	// Clock is the time source; nil means the system's monotonic clock.
	Clock Clock
	// Lookahead lets the ID's time run up to this many ticks ahead of the clock when a burst
	// exhausts the sequence, instead of waiting for the next tick. Zero waits at once; at most
	// MaxLookahead.
	Lookahead int
	// Drift is the policy for a clock that reads behind the last issued time.
	Drift DriftPolicy
	// Fence, when set, is consulted before every ID and batch; see Fence. A fence that
	// implements DeadlineFence (a node lease) is checked against the time of every ID
	// instead.
	Fence Fence
	// Marks, when set, persists a high-water mark so that a restarted generator never reissues
	// a timestamp (see MarkStore).
	Marks MarkStore
	// MarkWindow is how far ahead of the issued time a saved mark reaches. A new mark is saved
	// in the background once half the window is used and synchronously when all of it is, so
	// the store sees about two writes per window while IDs flow and none while idle. Zero
	// means DefaultMarkWindow, which keeps a fast restart within the default MaxContinue; at
	// most MaxMarkWindow. A generator that finds a mark at most one window (plus its
	// lookahead) ahead of its clock at start takes it for its predecessor's reservation and
	// waits until the clock is close enough for the drift policy to accept it.
	MarkWindow time.Duration
}

// Snowflake is the native Snowflake generator: time, node and sequence packed by a
// layouts.Layout. It is safe for concurrent use; the hot path is one clock read and one atomic
// add on a packed (tick, counter) word, with no lock and no retry loop (a compare-and-swap
// only when the tick changes, and for layouts whose time field leaves the counter too few
// spare bits, see addPath).
//
// Guarantees, per generator: IDs strictly increase in issue order (when the sequence field is
// the lowest field; otherwise their time then sequence do; for a sharded or reversed layout
// it is the layout's value, before the hash field is filled in or the bits reversed, that
// increases, and within each shard the stored IDs); no ID repeats, whatever the clock
// does; the time field never wraps (ErrTimeOverflow instead). On start it waits until the
// clock passes the tick it started in (plus the lookahead), so a generator restarted with the
// same node within the same tick cannot reissue its predecessor's IDs, provided the wall clock
// did not step back between the two runs; a MarkStore covers that case too. With a Fence that
// implements DeadlineFence, no ID's tick ends after the fence's deadline, and once the fence
// revokes its permission no call in progress issues another ID.
type Snowflake struct {
	// The contended word has a cache line to itself, padded on both sides: goroutines on
	// other cores then move only it, never the read-mostly fields below nor the tail of
	// whatever the allocator put before the generator.
	_        [56]byte
	state    atomic.Uint64 // tick<<pBits | counter: the last reserved (tick, seq); counter > seqMask is a used-up tick
	_        [56]byte
	fast     bool          // NextContext's fast path applies
	soft     atomic.Int64  // ticks above this take the slow path: refresh the mark, check overflow
	hard     atomic.Int64  // ticks above this need a durably saved mark first
	refresh  atomic.Bool   // a background mark save is running
	markMu   sync.Mutex    // serialises mark saves
	closed   atomic.Bool   // set by Close; a save that finds it set writes nothing
	bgMu     sync.Mutex    // guards bgDone and saveStop, orders them with Close
	bgDone   chan struct{} // closed when the background save ends; nil: none started
	saveStop func()        // cancels the save in progress; nil: none
	clock    Clock         // nil: monotonic system clock
	start    time.Time
	startNs  int64 // start - epoch, in ns
	unitNs   int64
	div      divider
	seqBits  uint
	seqMask  uint64
	pBits    uint   // the counter's width in state: seqBits, or 64 - time bits with addPath
	pMask    uint64 // 1<<pBits - 1
	addPath  bool   // Next reserves with an atomic add (see newPacking)
	poisoned uint64 // the state of a stopped generator (see stop)
	maxTick  int64
	ahead    int64 // lookahead in ticks
	maxWait  int64 // ns; negative: off
	maxCont  int64 // ns; negative: off
	tShift   uint
	sShift   uint
	nodePart uint64
	xform    bool   // the stored ID is not the layout's value: a hash field or a reversal
	rev      bool   // reversed layout
	revTime  bool   // time-reversed layout: the time field, at tShift, reversed in place
	tBits    uint   // width of the time field
	hashMask uint64 // what the hash field hashes of a value: all of it, or without the sequence (ShardByTick)
	hShift   uint   // hash field position and width (hBits 0: none)
	hBits    uint
	fence    Fence
	dl       *Deadline                     // the fence's deadline, when it publishes one
	dlc      atomic.Pointer[deadlineLimit] // dl converted into ticks
	stopped  atomic.Pointer[error]         // why every call fails; set before state is poisoned
	marks    MarkStore
	window   int64 // mark window in ticks
	own      int64 // a loaded mark within the window: waited out, not subject to the drift policy; -1: none
	layout   layouts.Layout
	node     uint64
	// Counters of the slow path, for Stats; the fast path never touches them.
	exhaustedTick atomic.Int64  // the last tick counted in seqExhausted
	driftTick     atomic.Int64  // the last issued tick counted in driftWaits
	seqExhausted  atomic.Uint64 // ticks whose sequence ran out before the clock moved on
	driftWaits    atomic.Uint64 // waits for a clock behind the last issued ID (one per last tick)
	driftAhead    atomic.Uint64 // IDs issued ahead of a clock that read behind (drift continue)
}

// SnowflakeStats counts the events that make a Snowflake generator wait or run ahead of its
// clock, since it started. They are meant for monitoring (a service exports them).
type SnowflakeStats struct {
	// SeqExhausted counts ticks whose sequence was used up before the clock reached the next
	// tick, so that callers waited (or, with a lookahead, ran ahead).
	SeqExhausted uint64
	// DriftWaits counts waits for a clock that read behind the last issued ID (a restart
	// against a mark, or an injected clock stepping back), at most one per issued tick.
	DriftWaits uint64
	// DriftContinued counts IDs issued on the last timestamp while the clock read behind it,
	// within the drift policy's continue bound (an ID whose reservation lost a race with
	// another goroutine and was retried may count twice).
	DriftContinued uint64
}

// Stats returns the generator's counters. It is safe to call at any time.
func (g *Snowflake) Stats() SnowflakeStats {
	return SnowflakeStats{SeqExhausted: g.seqExhausted.Load(), DriftWaits: g.driftWaits.Load(), DriftContinued: g.driftAhead.Load()}
}

// count adds one to c the first time it is called for tick (ticks only grow), so a wait that
// spins through the slow path many times counts once.
func count(c *atomic.Uint64, seen *atomic.Int64, tick int64) {
	for {
		prev := seen.Load()
		if prev >= tick {
			return
		}
		if seen.CompareAndSwap(prev, tick) {
			c.Add(1)
			return
		}
	}
}

// NewSnowflake returns a generator for s. It returns an error wrapping ErrSettings for an
// invalid layout, a node outside the layout's node fields, a lookahead outside 0 to
// MaxLookahead or a mark window above MaxMarkWindow; ErrTimeOverflow when the clock is before
// the epoch or past the layout's time range (the Baidu preset's 28-bit seconds ran out in
// 2024); and ErrMark when a MarkStore cannot be read. A mark far ahead of the clock is not an
// error here: Next applies the drift policy to it. It is NewSnowflakeContext with
// context.Background().
func NewSnowflake(s SnowflakeSettings) (*Snowflake, error) {
	return NewSnowflakeContext(context.Background(), s)
}

// NewSnowflakeContext is NewSnowflake with a context for loading the mark from s.Marks (the
// only step that may wait); its errors are NewSnowflake's, and a cancelled ctx makes the load
// fail with ErrMark wrapping ctx.Err().
func NewSnowflakeContext(ctx context.Context, s SnowflakeSettings) (*Snowflake, error) {
	l := s.Layout
	if len(l.Fields) == 0 {
		l = layouts.Twitter
	}
	l = l.Clone()
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	if s.Lookahead < 0 || s.Lookahead > MaxLookahead {
		return nil, fmt.Errorf("%w: lookahead %d outside 0 to %d ticks", ErrSettings, s.Lookahead, MaxLookahead)
	}
	if s.MarkWindow > MaxMarkWindow {
		return nil, fmt.Errorf("%w: mark window %v is longer than %v (a restarted generator may wait one window)", ErrSettings, s.MarkWindow, MaxMarkWindow)
	}
	nodeBits := l.NodeBits()
	if nodeBits < 64 && s.Node>>nodeBits != 0 {
		return nil, fmt.Errorf("%w: node %d does not fit the %d node bits of layout %s (0 to %d)", ErrSettings, s.Node, nodeBits, l.Name, uint64(1)<<nodeBits-1)
	}
	nodePart, err := l.ComposeValue(0, s.Node, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	g := &Snowflake{
		clock:    s.Clock,
		unitNs:   int64(l.Unit),
		div:      newDivider(uint64(l.Unit)),
		seqBits:  l.SeqBits(),
		maxTick:  l.MaxTick(),
		ahead:    int64(s.Lookahead),
		nodePart: nodePart,
		fence:    s.Fence,
		marks:    s.Marks,
		layout:   l,
		node:     s.Node,
		own:      -1,
	}
	g.seqMask = 1<<g.seqBits - 1
	g.hShift, g.hBits = l.KindShift(layouts.KindHash)
	g.rev, g.revTime = l.Reverse, l.ReverseTime
	g.xform = g.rev || g.revTime || g.hBits > 0
	g.newPacking(l)
	g.tShift, g.tBits = l.KindShift(layouts.KindTime)
	g.sShift, _ = l.KindShift(layouts.KindSeq)
	g.hashMask = ^uint64(0)
	if l.ShardByTick {
		g.hashMask = ^(g.seqMask << g.sShift)
	}
	g.maxWait, g.maxCont = s.Drift.resolved()
	if g.clock == nil {
		g.start = time.Now()
	} else {
		g.start = g.clock.Now()
	}
	g.startNs = int64(g.start.Sub(l.Epoch))
	if g.start.Before(l.Epoch) {
		return nil, fmt.Errorf("%w: clock reads %s, before the epoch %s of layout %s", ErrTimeOverflow, g.start.UTC().Format(time.RFC3339Nano), l.Epoch.UTC().Format(time.RFC3339), l.Name)
	}
	// Nanoseconds since the epoch are an int64 that keeps growing while the generator runs;
	// an epoch so old that it is near the limit would saturate or wrap it (and hang Next).
	if g.startNs > maxStartNs {
		return nil, fmt.Errorf("%w: epoch %s of layout %s is more than 146 years (2^62 ns) before the clock; the time since the epoch must stay within int64 nanoseconds", ErrSettings, l.Epoch.UTC().Format(time.RFC3339), l.Name)
	}
	startTick := g.tickOf(g.startNs)
	if startTick > g.maxTick {
		return nil, fmt.Errorf("%w: layout %s ran out of time on %s", ErrTimeOverflow, l.Name, l.RunsOut().UTC().Format(time.RFC3339))
	}
	// Pretend the tick we start in (plus the lookahead a predecessor may have used) is used
	// up, so the first ID waits for the next tick. Near the end of the time field the
	// predecessor can have used every tick up to the last one, never more: clamp, because a
	// tick above maxTick shifted into the packed word would wrap to a low tick (and reissue).
	last := min(startTick+g.ahead, g.maxTick)
	if g.marks != nil {
		window := s.MarkWindow
		if window <= 0 {
			window = DefaultMarkWindow
		}
		g.window = max(1, int64(window)/g.unitNs)
		lctx, cancel := context.WithTimeout(ctx, defaultMarkTimeout)
		mark, err := g.marks.LoadMark(lctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%w: load: %w", ErrMark, err)
		}
		if !mark.IsZero() {
			// The mark is inclusive: IDs at its tick may exist, so start above it. A mark
			// past the time field (the store may hold anything) means every tick is used.
			mt := min(l.Tick(mark), g.maxTick)
			if mt > last && mt-startTick <= g.window+g.ahead {
				// The predecessor reserved up to one window (plus the lookahead it may
				// have run) ahead of its clock: with a clock that did not step back the
				// mark is this close, and waiting it out is the expected restart.
				g.own = mt
			}
			last = max(last, mt)
		}
		g.hard.Store(last) // nothing is reserved yet: the first ID saves a mark
		g.soft.Store(last)
	} else {
		g.hard.Store(g.maxTick)
		g.soft.Store(g.maxTick)
	}
	g.state.Store(uint64(last)<<g.pBits | g.seqMask)
	g.exhaustedTick.Store(last) // the start tick counts as used up; that is no exhaustion
	g.driftTick.Store(math.MinInt64)
	if df, ok := s.Fence.(DeadlineFence); ok && df.Deadline() != nil {
		g.dl = df.Deadline()
		g.convertDeadline(g.dl.cur.Load())
		g.dl.attach(g)
	}
	g.fast = g.clock == nil && (g.fence == nil || g.dl != nil) && g.addPath && !g.xform && g.div.m != 0
	return g, nil
}

// Layout returns a copy of the generator's layout.
func (g *Snowflake) Layout() layouts.Layout { return g.layout.Clone() }

// Node returns the generator's node value.
func (g *Snowflake) Node() uint64 { return g.node }

// nanos returns the time since the layout's epoch as the generator sees it: the wall time at
// start plus the monotonic time elapsed since.
func (g *Snowflake) nanos() int64 {
	if g.clock == nil {
		return g.startNs + int64(time.Since(g.start))
	}
	// An injected clock may jump centuries ahead (a fake told to sleep out a huge drift):
	// saturate instead of wrapping to a time before the epoch.
	d := int64(g.clock.Now().Sub(g.start))
	if d > math.MaxInt64-g.startNs {
		return math.MaxInt64
	}
	return g.startNs + d
}

func (g *Snowflake) tickOf(ns int64) int64 {
	if ns < 0 {
		return -1 - int64(g.div.div(uint64(-(ns + 1))))
	}
	return int64(g.div.div(uint64(ns)))
}

// minSpare is how many reservations past the end of a tick's sequence the counter must hold
// before it would carry into the tick (see newPacking): more than goroutines can ever be
// between loading the state and adding to it.
const minSpare = 1 << 20

// newPacking chooses how state packs a tick and its counter. Next reserves an ID with one
// atomic add on the counter instead of a compare-and-swap retry loop, which on a contended
// cache line cost more than a mutex's hand-off (issue 28): an add always succeeds, so each ID
// moves the line once. A goroutine adds only when the counter it loaded had room, and a value
// past the sequence's end is dropped, so the counter overshoots the last sequence number by
// at most the number of goroutines between their load and their add; it must never carry
// into the tick. The counter therefore takes every bit below the time field (64 - time bits,
// up to 2^23 values in the presets against the sequence's 2^12 to 2^22), and a layout where
// that leaves fewer than minSpare values of headroom keeps the compare-and-swap (mastodon's
// 48-bit time field, or time and sequence filling all 64 bits).
//
// A stopped generator's state, poisoned, is the highest tick the time field's bits can hold
// with its counter one past the sequence's end: it reads as a used-up tick that no clock
// reaches, and the adds of goroutines already past their load (fewer than minSpare) cannot
// wrap it around to a low tick.
func (g *Snowflake) newPacking(l layouts.Layout) {
	var timeBits uint
	for _, f := range l.Fields {
		if f.Kind == layouts.KindTime {
			timeBits += f.Bits
		}
	}
	g.pBits, g.poisoned = g.seqBits, math.MaxUint64
	if c := 64 - timeBits; timeBits > 0 && c > g.seqBits && c < 64 && uint64(1)<<c-uint64(1)<<g.seqBits >= minSpare {
		g.pBits, g.addPath = c, true
		g.poisoned = math.MaxUint64 - (uint64(1)<<c - 1) + uint64(1)<<g.seqBits
	}
	g.pMask = 1<<g.pBits - 1
}

// compose turns a packed (tick, counter) word whose counter is at most seqMask into an ID: the
// layout's value, then for a sharded or reversed layout its stored form (layouts.Layout.Stored).
func (g *Snowflake) compose(packed uint64) uint64 {
	v := g.value(packed)
	if g.xform {
		return g.stored(v)
	}
	return v
}

// value turns a packed (tick, counter) word whose counter is at most seqMask into the
// layout's value.
func (g *Snowflake) value(packed uint64) uint64 {
	return (packed>>g.pBits)<<g.tShift | g.nodePart | (packed&g.pMask)<<g.sShift
}

// fillStored writes the stored forms of consecutive layout values step apart, starting at v,
// into out: fill for a sharded or reversed layout, with the transform's loop unswitched.
func (g *Snowflake) fillStored(out []uint64, v, step uint64) {
	if g.revTime {
		// The values share their tick and differ below the time field, which stays in
		// place: their stored forms are step apart too.
		fill(out, layouts.ReverseField(v, g.tShift, g.tBits), step)
		return
	}
	if g.rev {
		for i := range out {
			out[i] = layouts.Reverse63(v)
			v += step
		}
		return
	}
	hb, hs := g.hBits, g.hShift
	if g.hashMask != ^uint64(0) {
		// Sharded by tick: the values share their tick and node, and so their shard.
		fill(out, v|layouts.ShardHash(v&g.hashMask, hb)<<hs, step)
		return
	}
	for i := range out {
		out[i] = v | layouts.ShardHash(v, hb)<<hs
		v += step
	}
}

// stored is layouts.Layout.Stored without copying the layout.
func (g *Snowflake) stored(v uint64) uint64 {
	if g.rev {
		return layouts.Reverse63(v)
	}
	if g.revTime {
		return layouts.ReverseField(v, g.tShift, g.tBits)
	}
	return v | layouts.ShardHash(v&g.hashMask, g.hBits)<<g.hShift
}

// Next returns a new ID. It waits when the sequence of the current tick is used up (or runs
// ahead within the lookahead), and applies the drift policy when the clock reads behind the
// last ID. It returns errors wrapping ErrFenced, ErrClockBackward, ErrTimeOverflow or ErrMark.
// It is NextContext with context.Background(): its waits cannot be cut short.
func (g *Snowflake) Next() (uint64, error) { return g.NextContext(context.Background()) }

// NextContext is Next whose waits (for the next tick, for a clock behind the last ID or a
// predecessor's mark, for a mark save) end early when ctx is done, with an error wrapping
// ctx.Err(). An ID available at once is issued without looking at ctx.
func (g *Snowflake) NextContext(ctx context.Context) (uint64, error) {
	if g.fast {
		// The common case of the loop below for a generator on the system clock, without
		// a fence or with one that publishes a deadline (a node lease), reserving with an
		// atomic add and storing the layout's value (g.fast): the clock is on the last
		// reserved tick or within the lookahead behind it, and its sequence has room. It
		// is the loop's add case with nanos, tickOf and compose spelled out, their branches
		// for an injected clock, a time before the epoch and a sharded or reversed layout
		// left out: the calls and branches around the clock read and the add made the core
		// 1.26x the two alone (issue 28). Shift counts are masked to 63 (they are all below
		// 64) so that the compiler does not guard them. Anything else, a new tick
		// included, goes to the loop, which reads the clock again.
		ns := g.startNs + int64(time.Since(g.start)) // >= 0: the monotonic clock does not go back
		now := int64(g.div.mulShift(uint64(ns)))
		old := g.state.Load()
		base := old &^ g.pMask // the tick's sequence 0
		last := int64(old >> (g.pBits & 63))
		// last-ahead <= now <= last, and the sequence has room.
		if uint64(last-now) <= uint64(g.ahead) && old-base < g.seqMask {
			next := g.state.Add(1)
			// One comparison for "still on tick last, within its sequence": the state
			// never decreases, and a value below base would wrap to a huge difference.
			if seq := next - base; seq <= g.seqMask && last <= g.soft.Load() {
				id := uint64(last)<<(g.tShift&63) | g.nodePart | seq<<(g.sShift&63)
				if g.dl == nil {
					return id, nil
				}
				// The deadline (added's check): the converted deadline is current and
				// tick last ends before it.
				if c := g.dlc.Load(); c.st == g.dl.cur.Load() && last < c.tick {
					return id, nil
				}
			}
			id, ok, err := g.added(ctx, next, last)
			if ok || err != nil {
				return id, err
			}
		}
	}
	if g.fence != nil && g.dl == nil {
		if err := g.fence.Err(); err != nil {
			if p := g.stopped.Load(); p != nil {
				return 0, *p
			}
			return 0, fmt.Errorf("%w: %w", ErrFenced, err)
		}
	}
	for {
		ns := g.nanos()
		now := g.tickOf(ns)
		old := g.state.Load()
		last := int64(old >> g.pBits)
		var next uint64
		switch {
		case now > last:
			if now > g.maxTick {
				return 0, g.overflow()
			}
			next = uint64(now) << g.pBits
		case now >= last-g.ahead && old&g.pMask < g.seqMask:
			if g.addPath {
				next = g.state.Add(1)
				// The common case, spelled out here rather than in added: a call costs
				// a few percent of an ID.
				if next>>g.pBits == uint64(last) && next&g.pMask <= g.seqMask && g.dl == nil && last <= g.soft.Load() {
					return g.compose(next), nil
				}
				id, ok, err := g.added(ctx, next, last)
				if ok || err != nil {
					return id, err
				}
				continue
			}
			next = old + 1
		default:
			var ok bool
			var err error
			next, ok, err = g.slow(ctx, old, ns, now)
			if err != nil {
				return 0, err
			}
			if !ok {
				continue
			}
		}
		tick := int64(next >> g.pBits)
		if g.dl != nil {
			// limit(), spelled out: it is too big for the compiler to inline.
			if c := g.dlc.Load(); c.st != g.dl.cur.Load() || tick >= c.tick {
				if err := g.pastDeadline(ctx, tick); err != nil {
					return 0, err
				}
				continue
			}
		}
		if tick > g.soft.Load() {
			if err := g.reserve(ctx, tick); err != nil {
				return 0, err
			}
		}
		if g.state.CompareAndSwap(old, next) {
			return g.compose(next), nil
		}
	}
}

// added finishes a reservation NextContext made with one atomic add on tick last (the state
// it loaded had room on that tick), when its common case does not apply: next is the value
// the add gave. It returns the ID and true; false when next is not one to issue (another
// goroutine moved the state to a later tick, used the tick up, or stopped the generator in
// between: the value is lost, never issued, and the caller tries again); or an error from
// the deadline or the mark, like NextContext's.
//
// The checks that NextContext makes before its compare-and-swap come after the add here: the
// add is the reservation, and the ID is issued only when they pass. A deadline fence revoked
// after the add is seen by the deadline check; a stop or Close during a synchronous mark save
// by the check after it; otherwise a stop after the add is no different from a
// compare-and-swap that succeeded just before it.
func (g *Snowflake) added(ctx context.Context, next uint64, last int64) (uint64, bool, error) {
	if int64(next>>g.pBits) != last || next&g.pMask > g.seqMask {
		return 0, false, nil
	}
	if g.dl != nil {
		if c := g.dlc.Load(); c.st != g.dl.cur.Load() || last >= c.tick {
			return 0, false, g.pastDeadline(ctx, last)
		}
	}
	if last > g.soft.Load() {
		if err := g.reserve(ctx, last); err != nil {
			return 0, false, err
		}
		// A synchronous mark save can take long: a Close or a fence's stop while it ran
		// fails this call, as the compare-and-swap after it would have.
		if p := g.stopped.Load(); p != nil {
			return 0, false, *p
		}
	}
	return g.compose(next), true, nil
}

// NextN fills dst with new IDs, reserving as many as the current tick has left with one
// compare-and-swap, so a batch costs about one clock read per tick it spans. The IDs are
// consecutive in issue order (their layout values, for a sharded or reversed layout). On error, dst may be partly filled; the error says how many.
// It is NextNContext with context.Background().
func (g *Snowflake) NextN(dst []uint64) error { return g.NextNContext(context.Background(), dst) }

// NextNContext is NextN whose waits end early when ctx is done, with an error wrapping
// ctx.Err() that says how many IDs of dst were filled.
func (g *Snowflake) NextNContext(ctx context.Context, dst []uint64) error {
	if g.fence != nil && g.dl == nil {
		if err := g.fence.Err(); err != nil {
			if p := g.stopped.Load(); p != nil {
				return *p
			}
			return fmt.Errorf("%w: %w", ErrFenced, err)
		}
	}
	total := len(dst)
	for len(dst) > 0 {
		ns := g.nanos()
		now := g.tickOf(ns)
		old := g.state.Load()
		last := int64(old >> g.pBits)
		var first uint64
		switch {
		case now > last:
			if now > g.maxTick {
				return fmt.Errorf("%w (after %d of %d IDs)", g.overflow(), total-len(dst), total)
			}
			first = uint64(now) << g.pBits
		case now >= last-g.ahead && old&g.pMask < g.seqMask:
			first = old + 1
		default:
			var ok bool
			var err error
			first, ok, err = g.slow(ctx, old, ns, now)
			if err != nil {
				return fmt.Errorf("%w (after %d of %d IDs)", err, total-len(dst), total)
			}
			if !ok {
				continue
			}
		}
		n := min(uint64(len(dst)), g.seqMask-first&g.pMask+1)
		end := first + n - 1 // on first's tick: n stops at the end of its sequence
		tick := int64(first >> g.pBits)
		if g.dl != nil {
			if c := g.dlc.Load(); c.st != g.dl.cur.Load() || tick >= c.tick {
				if err := g.pastDeadline(ctx, tick); err != nil {
					return fmt.Errorf("%w (after %d of %d IDs)", err, total-len(dst), total)
				}
				continue
			}
		}
		if tick > g.soft.Load() {
			if err := g.reserve(ctx, tick); err != nil {
				return fmt.Errorf("%w (after %d of %d IDs)", err, total-len(dst), total)
			}
		}
		if !g.state.CompareAndSwap(old, end) {
			continue
		}
		if g.xform {
			g.fillStored(dst[:n], g.value(first), uint64(1)<<g.sShift)
		} else {
			fill(dst[:n], g.compose(first), uint64(1)<<g.sShift)
		}
		dst = dst[n:]
	}
	return nil
}

// fill writes consecutive IDs step apart, starting at id, into out. It is not inlined so that
// its loop, two instructions and a branch per ID, starts at the same place in an aligned
// function whatever NextNContext around it becomes: inlined, the loop moved with every change
// there and ran at twice the cost per ID when it straddled a fetch boundary.
//
//go:noinline
func fill(out []uint64, id, step uint64) {
	for i := range out {
		out[i] = id
		id += step
	}
}

// slow decides what to issue when the clock has not moved past the last tick and the fast
// cases do not apply: the sequence is used up, or the clock reads behind. It returns the next
// packed word and true, or false after waiting (the caller reads the clock again). Every wait
// ends early when ctx is done.
func (g *Snowflake) slow(ctx context.Context, old uint64, ns, now int64) (uint64, bool, error) {
	if old >= g.poisoned {
		// Stopped; or, with addPath, the last tick of a 64-bit time field used up (and
		// overshot by adds), which the code below reports as an overflow.
		if p := g.stopped.Load(); p != nil {
			return 0, false, *p
		}
	}
	last := int64(old >> g.pBits)
	exhausted := old&g.pMask >= g.seqMask
	if now < last-g.ahead {
		// The callers read the clock before loading old, so another goroutine may have
		// issued on a later tick in between (a preempted goroutine's reading can be many
		// ticks stale). Only a reading taken after old was loaded shows a real drift.
		ns = g.nanos()
		if now = g.tickOf(ns); now >= last-g.ahead {
			return 0, false, nil
		}
		// The clock reads behind the last issued tick by more than the lookahead explains.
		target := g.tickNs(last - g.ahead)
		if target == math.MaxInt64 {
			// Only a loaded mark gets here: no clock reading of this generator (at most
			// 2^63 ns past the epoch) can reach it, so no policy can wait it out.
			return 0, false, fmt.Errorf("%w: the last issued time of layout %s, %s, is beyond the generator's clock range (2^63 ns after the epoch)",
				ErrClockBackward, g.layout.Name, g.layout.TickTime(last).UTC().Format(time.RFC3339))
		}
		drift := subNs(target, ns)
		if drift > 0 && (g.maxWait >= 0 && drift <= g.maxWait || last <= g.own) {
			count(&g.driftWaits, &g.driftTick, last)
		}
		if last <= g.own {
			// Behind a mark the predecessor reserved ahead of its clock (not a clock that
			// stepped back): wait until the drift policy accepts what is left, however
			// strict it is. The wait is bounded by the mark window.
			if accept := max(g.maxWait, g.maxCont, 0); drift > accept {
				if err := g.sleep(ctx, drift-accept); err != nil {
					return 0, false, err
				}
				return 0, false, nil
			}
		}
		switch {
		case g.maxWait >= 0 && drift <= g.maxWait:
			if err := g.sleep(ctx, drift); err != nil {
				return 0, false, err
			}
			return 0, false, nil
		case g.maxCont >= 0 && drift <= g.maxCont:
			if !exhausted {
				g.driftAhead.Add(1)
				return old + 1, true, nil
			}
			if over := subNs(g.tickNs(last+1-g.ahead), ns) - g.maxCont; over > 0 {
				if err := g.sleep(ctx, over); err != nil {
					return 0, false, err
				}
				return 0, false, nil
			}
			g.driftAhead.Add(1)
			return g.nextTick(last)
		}
		return 0, false, fmt.Errorf("%w: clock is %v behind the last issued time of layout %s (policy: wait up to %v, continue up to %v)",
			ErrClockBackward, time.Duration(drift), g.layout.Name, policyString(g.maxWait), policyString(g.maxCont))
	}
	if now < 0 {
		return 0, false, fmt.Errorf("%w: clock reads before the epoch of layout %s", ErrTimeOverflow, g.layout.Name)
	}
	// Sequence used up on the last tick: move to the next tick if the lookahead allows it,
	// else wait for the clock to get there.
	count(&g.seqExhausted, &g.exhaustedTick, last)
	if last+1 <= now+g.ahead {
		return g.nextTick(last)
	}
	if err := g.sleep(ctx, subNs(g.tickNs(last+1-g.ahead), ns)); err != nil {
		return 0, false, err
	}
	return 0, false, nil
}

// tickNs returns the nanoseconds since the epoch at which tick starts, saturating at
// math.MaxInt64: a loaded mark may be any tick of the time field, and 2^62 ticks of an hour
// are far past an int64 of nanoseconds.
func (g *Snowflake) tickNs(tick int64) int64 {
	if tick > math.MaxInt64/g.unitNs {
		return math.MaxInt64
	}
	return tick * g.unitNs
}

// subNs returns a-b for a >= 0, saturating at math.MaxInt64 (b is negative for a clock that
// reads before the epoch).
func subNs(a, b int64) int64 {
	if b < 0 && a > math.MaxInt64+b {
		return math.MaxInt64
	}
	return a - b
}

// nextTick returns the packed word for sequence 0 of the tick after last. The check cannot be
// left to reserve: when time and sequence fill all 64 bits, the tick after the last one shifts
// out of the word and the packed value wraps to tick 0.
func (g *Snowflake) nextTick(last int64) (uint64, bool, error) {
	if last+1 > g.maxTick {
		return 0, false, g.overflow()
	}
	return uint64(last+1) << g.pBits, true, nil
}

// overflow is the error for a tick past the time field.
func (g *Snowflake) overflow() error {
	return fmt.Errorf("%w: layout %s ran out of time on %s", ErrTimeOverflow, g.layout.Name, g.layout.RunsOut().UTC().Format(time.RFC3339))
}

func policyString(ns int64) string {
	if ns < 0 {
		return "off"
	}
	return time.Duration(ns).String()
}

// sleep waits about d, or until ctx is done, when it returns an error wrapping ctx.Err().
// With the system clock, waits under 2 ms spin (yielding the processor between clock reads):
// a millisecond-tick layout loses its capacity if every tick boundary costs a timer's wake-up
// latency. Longer waits sleep all but the last millisecond. An injected clock sleeps through
// SleepContext when it has one (see ContextSleeper), else through Sleep with ctx checked
// before and after.
func (g *Snowflake) sleep(ctx context.Context, d int64) error {
	if g.clock != nil {
		if cs, ok := g.clock.(ContextSleeper); ok {
			if err := cs.SleepContext(ctx, time.Duration(d)); err != nil {
				return interrupted(d, err)
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return interrupted(d, err)
		}
		g.clock.Sleep(time.Duration(d))
		if err := ctx.Err(); err != nil {
			return interrupted(d, err)
		}
		return nil
	}
	if d > int64(2*time.Millisecond) {
		done := ctx.Done()
		if done == nil { // context.Background(): no timer needed
			time.Sleep(time.Duration(d) - time.Millisecond)
			return nil
		}
		t := time.NewTimer(time.Duration(d) - time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-done:
			return interrupted(d, ctx.Err())
		}
	}
	if err := ctx.Err(); err != nil {
		return interrupted(d, err)
	}
	runtime.Gosched()
	return nil
}

// interrupted is the error for a wait of d ns cut short by err, a context's error.
func interrupted(d int64, err error) error {
	return fmt.Errorf("schemes: snowflake: stopped waiting %v for the clock: %w", time.Duration(d), err)
}

// reserve runs when a tick passes the soft limit: it checks the time field's range and keeps a
// saved high-water mark ahead of the tick about to be issued. Within the saved window it only
// starts a background save; past it, it saves synchronously under ctx, because an ID must
// never be issued above a mark that is not durable yet.
func (g *Snowflake) reserve(ctx context.Context, tick int64) error {
	if tick > g.maxTick {
		return g.overflow()
	}
	if g.marks == nil {
		return nil
	}
	if tick <= g.hard.Load() {
		if g.refresh.CompareAndSwap(false, true) {
			g.bgMu.Lock()
			defer g.bgMu.Unlock()
			if g.closed.Load() {
				return nil // the caller's compare-and-swap fails on the poisoned state
			}
			done := make(chan struct{})
			g.bgDone = done
			go func() {
				defer close(done)
				defer g.refresh.Store(false)
				g.markMu.Lock()
				defer g.markMu.Unlock()
				// A failure here is retried synchronously when the window is used up, and
				// reported then. The save outlives the caller that started it, so it does
				// not use the caller's context; Close cuts it short and waits for it.
				_ = g.saveLocked(context.Background(), tick)
			}()
		}
		return nil
	}
	g.markMu.Lock()
	defer g.markMu.Unlock()
	if tick <= g.hard.Load() {
		return nil
	}
	return g.saveLocked(ctx, tick)
}

// saveLocked saves a mark one window past tick, then raises the limits. markMu must be held.
func (g *Snowflake) saveLocked(ctx context.Context, tick int64) error {
	upto := min(tick+g.window, g.maxTick)
	if upto <= g.hard.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, defaultMarkTimeout)
	defer cancel()
	// Close cancels the save through saveStop; one that finds closed set writes nothing.
	g.bgMu.Lock()
	if g.closed.Load() {
		g.bgMu.Unlock()
		return g.closedErr()
	}
	g.saveStop = cancel
	g.bgMu.Unlock()
	defer g.clearSaveStop()
	if err := g.marks.SaveMark(ctx, g.layout.TickTime(upto)); err != nil {
		if g.closed.Load() {
			return g.closedErr()
		}
		return fmt.Errorf("%w: save: %w", ErrMark, err)
	}
	g.hard.Store(upto)
	soft := upto - g.window/2
	if upto == g.maxTick {
		soft = upto
	}
	g.soft.Store(max(tick, soft))
	return nil
}

// Close stops the generator: every later call (and every call in progress that has not
// reserved its ID yet) fails with an error wrapping ErrClosed. It cuts short a mark save in
// progress, background or not, and waits for it, so that when Close returns the generator
// neither runs nor writes to its MarkStore; the caller may then close what the store uses.
// A second Close does nothing. It always returns nil.
func (g *Snowflake) Close() error {
	err := g.closedErr()
	g.bgMu.Lock()
	if g.closed.Swap(true) {
		g.bgMu.Unlock()
		return nil
	}
	g.stopped.Store(&err) // wins over a fence's stop: the generator is closed whatever else
	g.state.Store(g.poisoned)
	if g.saveStop != nil {
		g.saveStop()
	}
	done := g.bgDone
	g.bgMu.Unlock()
	if done != nil {
		<-done
	}
	// A synchronous save of a call in progress holds markMu; wait for it to end (saveStop cut
	// it short). Later saves find closed set and write nothing.
	g.markMu.Lock()
	g.markMu.Unlock() //nolint:staticcheck // an empty critical section: waiting is the point
	return nil
}

// clearSaveStop forgets the cancel function of the save that ends.
func (g *Snowflake) clearSaveStop() {
	g.bgMu.Lock()
	g.saveStop = nil
	g.bgMu.Unlock()
}

// closedErr is the error of every call after Close.
func (g *Snowflake) closedErr() error {
	return fmt.Errorf("%w: snowflake node %d of layout %s: no IDs after Close", ErrClosed, g.node, g.layout.Name)
}

// divider divides by a fixed unit with a multiply and a shift: a 64-bit DIV costs tens of
// cycles on the hot path, a multiply a few. Exact for every n below 2^63, which covers every
// non-negative int64 of nanoseconds; larger n, and a unit of 1 ns, use the DIV instruction.
type divider struct {
	d     uint64
	m     uint64 // 0: divide with DIV
	shift uint   // total shift minus 64
}

func newDivider(d uint64) divider {
	if d < 2 {
		return divider{d: d}
	}
	// l = ceil(log2 d), so 2^(l-1) < d <= 2^l; m = ceil(2^(63+l) / d) < 2^64. Then
	// floor(n*m / 2^(63+l)) == n/d for n < 2^63: m*n/2^(63+l) is n/d plus an error
	// e*n/(d*2^(63+l)) with e = m*d - 2^(63+l) < d <= 2^l, so below 1/d, which cannot
	// carry n/d past the next integer. 2^(63+l-64) = 2^(l-1) < d, so Div64 cannot overflow.
	l := uint(bits.Len64(d - 1))
	hi := uint64(1) << (l - 1)
	q, r := bits.Div64(hi, 0, d)
	if r != 0 {
		q++
	}
	return divider{d: d, m: q, shift: l - 1}
}

func (v divider) div(n uint64) uint64 {
	if v.m == 0 || n >= 1<<63 {
		return n / v.d
	}
	return v.mulShift(n)
}

// mulShift is div for n below 2^63 and a divisor of at least 2 (m set), without the checks.
func (v divider) mulShift(n uint64) uint64 {
	hi, _ := bits.Mul64(n, v.m)
	return hi >> (v.shift & 63)
}
