package idkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
)

// Layouter is implemented by schemes whose IDs follow a 64-bit layout (snowflake, sonyflake).
type Layouter interface {
	Layout() layouts.Layout
}

// Noder is implemented by schemes whose IDs carry a node value (snowflake). Node returns it: the
// fixed number of the spec, or the slot claimed from a lease store.
type Noder interface {
	Node() uint64
}

// Fenced is implemented by schemes that can lose the right to issue IDs while they run, such as
// a snowflake scheme whose node is held under a lease. Err returns nil while the scheme may
// issue IDs, and otherwise why not (for a lease: an error wrapping schemes.ErrFenced, from the
// moment renewals have failed for half the lease's time to live until the slot is held again;
// after the slot was taken by another owner, what the scheme does to get a node back). A
// service reports itself not ready while any of its schemes is fenced.
type Fenced interface {
	Err() error
}

// StatsReporter is implemented by schemes that count the events that slow them down or put
// them at risk (snowflake). A service exports them as metrics.
type StatsReporter interface {
	Stats() Stats
}

// Stats are a scheme's counters since it started; a scheme without one of them reports zero.
type Stats struct {
	// SeqExhausted counts ticks whose sequence ran out before the clock moved on, so that
	// callers waited for the next tick (or ran ahead within the lookahead).
	SeqExhausted uint64
	// DriftWaits counts waits for a clock that read behind the last issued ID.
	DriftWaits uint64
	// DriftContinued counts IDs issued ahead of a clock that read behind, within the drift
	// policy's continue bound.
	DriftContinued uint64
	// LeaseRenewals and LeaseRenewalFailures count the renewals of a leased node.
	LeaseRenewals, LeaseRenewalFailures uint64
}

// snowflakeKeys are the settings the snowflake scheme reads itself; node sources add theirs.
var snowflakeKeys = []string{"layout", "fields", "time_bits", "node_bits", "seq_bits", "unit", "epoch", "reverse", "shard_bits", "shard_from", "shard_by", "lookahead", "drift_wait", "drift_continue"}

// specLayout builds the layout a snowflake or custom spec describes.
func (sp *Settings) layout() (layouts.Layout, error) {
	l := layouts.Twitter.Clone()
	if v, ok := sp.Lookup("layout"); ok {
		p, err := layouts.Preset(v)
		if err != nil {
			return l, sp.Wrapf(err, "layout=%s", v)
		}
		l = p
	}
	custom := false
	if v, ok := sp.Lookup("fields"); ok {
		if sp.Has("layout") {
			return l, sp.Errorf("fields=%s and layout=%s both given; fields describes the whole layout", v, sp.vals["layout"])
		}
		fs, err := sp.parseFields(v)
		if err != nil {
			return l, err
		}
		l.Fields, l.Name, custom = fs, "custom", true
	}
	for _, w := range []struct {
		key  string
		kind layouts.Kind
	}{{"time_bits", layouts.KindTime}, {"node_bits", layouts.KindNode}, {"seq_bits", layouts.KindSeq}} {
		n, ok, err := sp.Uint(w.key, 64)
		if err != nil {
			return l, err
		}
		if ok {
			l.Fields = setWidth(l.Fields, w.kind, uint(n))
			custom = true
		}
	}
	if v, ok := sp.Lookup("unit"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return l, sp.Errorf("unit=%s: want a positive duration such as 1ms, 10ms or 1s", v)
		}
		l.Unit, custom = d, true
	}
	if t, ok, err := sp.Time("epoch"); err != nil {
		return l, err
	} else if ok {
		l.Epoch, custom = t, true
	}
	if custom && l.Name != "custom" {
		l.Name += "-custom"
	}
	if err := l.Validate(); err != nil {
		return l, sp.Wrapf(err, "layout %s (%s)", l.Name, l.Bits())
	}
	return sp.rangeLayout(l)
}

// rangeLayout applies the settings for range-partitioned databases to l: shard_bits (with
// shard_from) and reverse (true: the whole value, Spanner's; time: the time field in place,
// CockroachDB's).
func (sp *Settings) rangeLayout(l layouts.Layout) (layouts.Layout, error) {
	rev, revTime, err := sp.reverse()
	if err != nil {
		return l, err
	}
	n, sharded, err := sp.Uint("shard_bits", layouts.MaxShardBits)
	if err != nil {
		return l, err
	}
	from, hasFrom := sp.Lookup("shard_from")
	by, hasBy := sp.Lookup("shard_by")
	byTick := hasBy && strings.EqualFold(by, "tick")
	var why string
	switch {
	case hasBy && !byTick && !strings.EqualFold(by, "id"):
		why = "shard_by: want id (the default) or tick"
	case hasBy && !sharded && l.ShardBits() == 0:
		why = "shard_by without shard_bits"
	case hasFrom && !sharded:
		why = "shard_from without shard_bits"
	case sharded && n == 0:
		why = "shard_bits=0: want 1 to 15, or leave it out"
	case sharded && l.ShardBits() > 0:
		why = "shard_bits and a hash field in fields= both given"
	case rev && (sharded || l.ShardBits() > 0):
		why = "reverse=true with shard bits: a reversed layout has no time order for shards to keep"
	case revTime && (sharded || l.ShardBits() > 0):
		why = "reverse=time with shard bits: a time-reversed layout has no time order for shards to keep"
	}
	if why != "" {
		return l, sp.Errorf("%s", why)
	}
	if sharded {
		if hasFrom {
			from = strings.ToLower(from)
		}
		if l, err = l.Sharded(uint(n), from); err != nil {
			return l, sp.Wrapf(err, "shard_bits=%d", n)
		}
	}
	l.ShardByTick = byTick
	if rev {
		l.Reverse = true
		if err := l.Validate(); err != nil {
			return l, sp.Wrapf(err, "reverse=true")
		}
	}
	if revTime {
		l.ReverseTime = true
		if err := l.Validate(); err != nil {
			return l, sp.Wrapf(err, "reverse=time")
		}
	}
	return l, nil
}

// reverse reads reverse=: true (or another true form strconv.ParseBool reads) reverses the
// whole value, time the time field alone, false (the default) neither.
func (sp *Settings) reverse() (whole, timeOnly bool, err error) {
	v, _ := sp.Lookup("reverse")
	if strings.EqualFold(v, "time") {
		return false, true, nil
	}
	if whole, err = sp.Bool("reverse", false); err != nil {
		return false, false, sp.Errorf("reverse=%s: want true (the whole value), time (the time field alone) or false", v)
	}
	return whole, false, nil
}

// parseFields reads "time:41/datacenter:5/worker:5/seq:12".
func (sp *Settings) parseFields(v string) ([]layouts.Field, error) {
	var fs []layouts.Field
	for _, part := range strings.Split(v, "/") {
		name, width, ok := strings.Cut(part, ":")
		n, err := strconv.ParseUint(width, 10, 8)
		if !ok || err != nil || n == 0 || n > 64 || !isWord(name) {
			return nil, sp.Errorf("fields: %s: want name:bits with bits from 1 to 64, e.g. time:41/worker:10/seq:12", quote(part))
		}
		name = strings.ToLower(name)
		if slices.Contains(snowflakeKeys, name) || slices.Contains(nodeSourceKeys, name) {
			return nil, sp.Errorf("fields: %s cannot name a field (it is a setting)", quote(name))
		}
		switch name {
		case "hash":
			fs = append(fs, layouts.Hash(uint(n)))
		case "time":
			fs = append(fs, layouts.Time(uint(n)))
		case "seq":
			fs = append(fs, layouts.Seq(uint(n)))
		default:
			fs = append(fs, layouts.Node(name, uint(n)))
		}
	}
	return fs, nil
}

// setWidth changes the width of the time or sequence field; for node fields it replaces them
// all with one field named "node" (none for width 0), where the first node field was, or just
// above the sequence field when there was none.
func setWidth(fs []layouts.Field, k layouts.Kind, n uint) []layouts.Field {
	if k != layouts.KindNode {
		for i := range fs {
			if fs[i].Kind == k {
				fs[i].Bits = n
			}
		}
		return fs
	}
	var out []layouts.Field
	placed := n == 0
	for _, f := range fs {
		if f.Kind == layouts.KindNode {
			if !placed {
				out = append(out, layouts.Node("node", n))
				placed = true
			}
			continue
		}
		if f.Kind == layouts.KindSeq && !placed {
			out = append(out, layouts.Node("node", n))
			placed = true
		}
		out = append(out, f)
	}
	return out
}

func buildSnowflake(ctx context.Context, sp *Settings) (Scheme, error) {
	l, err := sp.layout()
	if err != nil {
		return nil, err
	}
	text, err := sp.textLayout(l)
	if err != nil {
		return nil, err
	}
	look, _, err := sp.Uint("lookahead", schemes.MaxLookahead)
	if err != nil {
		return nil, err
	}
	var drift schemes.DriftPolicy
	if drift.MaxWait, err = sp.durationOrOff("drift_wait"); err != nil {
		return nil, err
	}
	if drift.MaxContinue, err = sp.durationOrOff("drift_continue"); err != nil {
		return nil, err
	}
	// Node sub-fields by name (datacenter=, worker=, …), or one node setting.
	subs := map[string]uint64{}
	for _, f := range l.NodeFields() {
		if f.Name == "node" {
			continue
		}
		v, ok, err := sp.Uint(f.Name, 1<<f.Bits-1)
		if err != nil {
			return nil, err
		}
		if ok {
			subs[f.Name] = v
		}
	}
	var nb nodeBinding
	if len(subs) > 0 {
		if sp.Has("node") {
			return nil, sp.Errorf("node=%s and %s both given; set the node either whole or by its fields", sp.vals["node"], strings.Join(sortedKeys(subs), ", "))
		}
		node, err := l.NodeOf(subs)
		if err != nil {
			return nil, sp.Wrapf(err, "node fields")
		}
		if nb, err = bindFixedNode(ctx, sp, l, node); err != nil {
			return nil, err
		}
	} else if nb, err = bindNode(ctx, sp, l); err != nil {
		return nil, err
	}
	if err := sp.Done(snowflakeAllowed(l)...); err != nil {
		nb.release()
		return nil, err
	}
	s := &snowflakeScheme{layoutCodec: layoutCodec{l, text}, look: look, drift: drift}
	gen, err := s.start(ctx, nb)
	if err != nil {
		nb.release()
		if errors.Is(err, schemes.ErrSettings) {
			return nil, sp.Wrapf(err, "snowflake")
		}
		return nil, fmt.Errorf("idkit: starting %s: %w", quote(sp.String()), err)
	}
	s.cur.Store(gen)
	if nb.lease != nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.done = make(chan struct{})
		go s.reclaim()
	}
	return s, nil
}

// snowflakeAllowed lists the keys a snowflake spec with layout l accepts.
func snowflakeAllowed(l layouts.Layout) []string {
	allowed := append(append([]string{}, snowflakeKeys...), "node")
	for _, f := range l.NodeFields() {
		if f.Name != "node" {
			allowed = append(allowed, f.Name)
		}
	}
	return append(allowed, nodeSourceKeys...)
}

// codecSnowflake reads only the layout of a snowflake spec. The node settings are taken
// without being resolved: decoding needs no node, and resolving one may claim a lease.
func codecSnowflake(sp *Settings) (Codec, error) {
	l, err := sp.layout()
	if err != nil {
		return nil, err
	}
	text, err := sp.textLayout(l)
	if err != nil {
		return nil, err
	}
	allowed := snowflakeAllowed(l)
	for _, k := range allowed {
		sp.Lookup(k)
	}
	if err := sp.Done(allowed...); err != nil {
		return nil, err
	}
	return layoutCodec{l, text}, nil
}

// snowflakeName is the canonical spec of a snowflake scheme.
func snowflakeName(l layouts.Layout, node, look uint64, drift schemes.DriftPolicy) string {
	var b strings.Builder
	b.WriteString("snowflake:")
	if p, ok := presetOf(l); ok {
		b.WriteString("layout=" + p.Name)
		if hb := l.ShardBits(); hb > 0 {
			fmt.Fprintf(&b, ",shard_bits=%d", hb)
		}
	} else {
		b.WriteString("fields=" + l.FieldList())
		fmt.Fprintf(&b, ",unit=%v,epoch=%s", l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano))
	}
	// At most one of these: reversed layouts take no shard bits.
	flag := ""
	switch {
	case l.Reverse:
		flag = ",reverse=true"
	case l.ReverseTime:
		flag = ",reverse=time"
	case l.ShardByTick:
		flag = ",shard_by=tick"
	}
	b.WriteString(flag)
	nf := l.NodeFields()
	// A node field named "node" cannot be set by name (node= means the whole node), so such
	// layouts spell the node whole too.
	whole := slices.ContainsFunc(nf, func(f layouts.Field) bool { return f.Name == "node" })
	switch {
	case len(nf) == 1 || whole:
		fmt.Fprintf(&b, ",node=%d", node)
	case len(nf) > 1:
		for _, v := range l.Decompose(mustCompose(l, node)).Named {
			if v.Kind == layouts.KindNode {
				fmt.Fprintf(&b, ",%s=%d", v.Name, v.Value)
			}
		}
	}
	if look > 0 {
		fmt.Fprintf(&b, ",lookahead=%d", look)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"drift_wait", drift.MaxWait}, {"drift_continue", drift.MaxContinue}} {
		switch {
		case d.v < 0:
			fmt.Fprintf(&b, ",%s=off", d.key)
		case d.v > 0:
			fmt.Fprintf(&b, ",%s=%v", d.key, d.v)
		}
	}
	return b.String()
}

// presetOf returns the preset l is, alone or with shard bits taken from its sequence field
// (reversed or not).
func presetOf(l layouts.Layout) (layouts.Layout, bool) {
	p, err := layouts.Preset(l.Name)
	if err != nil {
		return p, false
	}
	if hb := l.ShardBits(); hb > 0 {
		if p, err = p.Sharded(hb, ""); err != nil {
			return p, false
		}
	}
	return p, sameLayout(p, l)
}

func mustCompose(l layouts.Layout, node uint64) uint64 {
	id, _ := l.Compose(0, node, 0) // node was validated by NewSnowflake
	return id
}

func sameLayout(a, b layouts.Layout) bool {
	if a.Unit != b.Unit || !a.Epoch.Equal(b.Epoch) || len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		if a.Fields[i] != b.Fields[i] {
			return false
		}
	}
	return true
}

// layoutCodec is what the 64-bit layout schemes (snowflake, sonyflake) share: Parse, Decode,
// AppendID and Layout by their layout and text form.
type layoutCodec struct {
	l layouts.Layout
	t *textForm // nil: decimal text
}

func (c layoutCodec) Parse(text string) (ID, error) {
	var id ID
	var err error
	if c.t == nil {
		id, err = parseDecimal64(text)
	} else {
		id, err = c.t.parse(text, FormatDecimal, parseDecimal64)
	}
	if err != nil {
		return ID{}, err
	}
	if err := checkLayout(c.l, id); err != nil {
		return ID{}, err
	}
	return id, nil
}

// AppendID appends the public text: decimal, or the scheme's prefixed or masked form.
func (c layoutCodec) AppendID(b []byte, id ID) ([]byte, error) {
	if id.IsZero() {
		return b, nil
	}
	if err := checkLayout(c.l, id); err != nil {
		return b, err
	}
	if c.t == nil {
		return strconv.AppendUint(b, id.lo, 10), nil
	}
	return c.t.append(b, id), nil
}

func (c layoutCodec) Decode(id ID) (Parts, error) { return decodeLayout(c.l, id) }

func (c layoutCodec) Layout() layouts.Layout { return c.l.Clone() }

// snowflakeScheme wraps the native core. It implements Scheme, Batcher, Layouter, Noder, Fenced,
// Durabler and io.Closer.
//
// A node held under a lease can be lost for good: the process could not renew it for longer
// than its time to live (a partition, a pause) and another owner claimed the slot. Then the
// scheme claims a node again the way the spec says (the lowest free slot, or its fixed
// number, retried until that slot is free) and swaps in a new generator for it, which loads
// the slot's mark and waits out its start tick like any new generator. Until then Err says
// why it issues nothing.
type snowflakeScheme struct {
	layoutCodec
	look   uint64
	drift  schemes.DriftPolicy
	cur    atomic.Pointer[snowflakeGen]
	reason atomic.Pointer[error] // set while the scheme claims a node again: why it issues nothing
	ctx    context.Context       // ends with Close; bounds claiming again
	cancel context.CancelFunc
	done   chan struct{} // closed when reclaim has ended; nil without a lease

	mu     sync.Mutex // guards base, closed and swapping cur
	base   Stats      // the counters of generators swapped out
	closed bool
}

// snowflakeGen is one generator of a snowflakeScheme and the node it holds.
type snowflakeGen struct {
	g    *schemes.Snowflake
	nb   nodeBinding
	name string
}

// start makes a generator for the node nb holds.
func (s *snowflakeScheme) start(ctx context.Context, nb nodeBinding) (*snowflakeGen, error) {
	g, err := schemes.NewSnowflakeContext(ctx, schemes.SnowflakeSettings{
		Layout:     s.l,
		Node:       nb.node,
		Lookahead:  int(s.look),
		Drift:      s.drift,
		Fence:      nb.fence,
		Marks:      nb.marks,
		MarkWindow: nb.markWindow,
		Clock:      nb.clock,
	})
	if err != nil {
		return nil, err
	}
	return &snowflakeGen{g: g, nb: nb, name: s.t.name(snowflakeName(s.l, nb.node, s.look, s.drift))}, nil
}

// reclaim waits for the current lease to be lost for good and claims a node again, until
// Close.
func (s *snowflakeScheme) reclaim() {
	defer close(s.done)
	for {
		cur := s.cur.Load()
		select {
		case <-s.ctx.Done():
			return
		case <-cur.nb.lost:
		}
		if !s.replace(cur) {
			return
		}
	}
}

// replace claims a node again after cur's lease was lost and swaps in a generator for it,
// retrying with a backoff up to the lease's time to live. It returns false when Close ended it.
func (s *snowflakeScheme) replace(cur *snowflakeGen) bool {
	lost := cur.nb.fence.Err()
	ls := cur.nb.lease
	wait, most := max(ls.ttl/6, 100*time.Millisecond), max(ls.ttl, time.Second)
	plan := "claiming another free slot of " + nodeid.DescribeStore(ls.url)
	if ls.exact {
		plan = "the node number is fixed, so it retries slot " + strconv.FormatUint(ls.node, 10) + " of " + nodeid.DescribeStore(ls.url)
	}
	plan += " (every " + most.String() + " at most)"
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(s.ctx, defaultClaimTimeout)
		nb, err := ls.claim(ctx)
		var next *snowflakeGen
		if err == nil {
			// The new generator loads the slot's mark and waits out its start tick (and
			// the mark) on its first ID, as one made by New would.
			if next, err = s.start(ctx, nb); err != nil {
				nb.release()
			}
		}
		cancel()
		if err == nil {
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				next.close()
				return false
			}
			s.base = s.base.plus(cur.stats())
			s.cur.Store(next)
			s.reason.Store(nil)
			s.mu.Unlock()
			cur.close() // closes the lost lease's store; there is nothing to release
			return true
		}
		reason := fmt.Errorf("%w: %w; %s: attempt %d failed: %w", schemes.ErrFenced, lost, plan, attempt, redact.Error(err))
		s.reason.Store(&reason)
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, most)
	}
}

// close stops the generator, waiting for its mark saves, then lets go of its node: nothing
// runs or writes to the node's marks once the slot may be another process's.
func (sg *snowflakeGen) close() error {
	sg.g.Close()
	return sg.nb.release()
}

// gen returns the generator in use.
func (s *snowflakeScheme) gen() *snowflakeGen { return s.cur.Load() }

// stats is the generator's counters and its lease's renewals.
func (sg *snowflakeGen) stats() Stats {
	c := sg.g.Stats()
	st := Stats{SeqExhausted: c.SeqExhausted, DriftWaits: c.DriftWaits, DriftContinued: c.DriftContinued}
	if sg.nb.renewals != nil {
		st.LeaseRenewals, st.LeaseRenewalFailures = sg.nb.renewals()
	}
	return st
}

// plus adds o's counters to s's.
func (s Stats) plus(o Stats) Stats {
	return Stats{
		SeqExhausted:         s.SeqExhausted + o.SeqExhausted,
		DriftWaits:           s.DriftWaits + o.DriftWaits,
		DriftContinued:       s.DriftContinued + o.DriftContinued,
		LeaseRenewals:        s.LeaseRenewals + o.LeaseRenewals,
		LeaseRenewalFailures: s.LeaseRenewalFailures + o.LeaseRenewalFailures,
	}
}

// Stats returns the core's counters and, for a leased node, the lease's renewals, summed over
// the generators the scheme has had.
func (s *snowflakeScheme) Stats() Stats {
	s.mu.Lock()
	base, cur := s.base, s.cur.Load()
	s.mu.Unlock()
	return base.plus(cur.stats())
}

// Node returns the node the scheme issues IDs for (after a lease was lost, the new one).
func (s *snowflakeScheme) Node() uint64 { return s.gen().g.Node() }

// Err returns nil for a node without a lease and for a lease that is safely held; otherwise
// the fence's error, or, while the scheme claims a node again after losing one, what it is
// doing and why it has not succeeded yet.
func (s *snowflakeScheme) Err() error {
	cur := s.gen()
	if cur.nb.fence == nil {
		return nil
	}
	if r := s.reason.Load(); r != nil {
		return *r
	}
	return cur.nb.fence.Err()
}

// Durability reports the class of the lease store the node is held in (Durabler); nil for a
// node without a lease.
func (s *snowflakeScheme) Durability() []Durability {
	nb := s.gen().nb
	if nb.lease == nil {
		return nil
	}
	d := Durability{Store: "lease " + nodeid.DescribeStore(nb.lease.url), Class: "unknown", Reason: "the lease store does not report its durability"}
	if nb.durability != nil {
		nd := nb.durability()
		d.Class, d.Reason, d.Epoch, d.AsyncAccepted = nd.Class, nd.Reason, nd.Epoch, nd.AsyncAccepted
	}
	return []Durability{d}
}

func (s *snowflakeScheme) Name() string { return s.gen().name }

func (s *snowflakeScheme) Next() (ID, error) { return s.NextContext(context.Background()) }

// NextContext is Next whose waits for the clock or a mark end when ctx is done (ContextScheme).
func (s *snowflakeScheme) NextContext(ctx context.Context) (ID, error) {
	cur := s.gen()
	v, err := cur.g.NextContext(ctx)
	if err != nil {
		if again := s.fenced(cur, err); again != nil {
			v, err = again.g.NextContext(ctx)
		}
		if err != nil {
			return ID{}, s.why(err)
		}
	}
	return FromUint64(v), nil
}

// fenced returns the generator to try again with after err from cur: the one swapped in
// meanwhile, if cur was fenced because its lease was lost; nil otherwise.
func (s *snowflakeScheme) fenced(cur *snowflakeGen, err error) *snowflakeGen {
	// A generator swapped out is closed, so a call that started on it may see ErrClosed.
	if !errors.Is(err, schemes.ErrFenced) && !errors.Is(err, schemes.ErrClosed) {
		return nil
	}
	if now := s.gen(); now != cur {
		return now
	}
	return nil
}

// why returns err, or for a fenced generator while the scheme claims a node again, what that
// is doing.
func (s *snowflakeScheme) why(err error) error {
	if r := s.reason.Load(); r != nil && errors.Is(err, schemes.ErrFenced) {
		return *r
	}
	return err
}

// NextBatch reserves len(dst) IDs through the core's NextN, a chunk at a time, in issue
// order: increasing for a layout with the time field on top, and for a sharded, reversed or
// time-reversed one in the order of their layout values (see Batcher).
func (s *snowflakeScheme) NextBatch(dst []ID) error {
	return s.NextBatchContext(context.Background(), dst)
}

// NextBatchContext is NextBatch whose waits end when ctx is done (ContextBatcher).
func (s *snowflakeScheme) NextBatchContext(ctx context.Context, dst []ID) error {
	cur := s.gen()
	var buf [512]uint64
	for done := 0; done < len(dst); {
		chunk := buf[:min(len(dst)-done, len(buf))]
		if err := cur.g.NextNContext(ctx, chunk); err != nil {
			if done > 0 {
				return fmt.Errorf("idkit: %d of %d IDs filled: %w", done, len(dst), s.why(err))
			}
			// Nothing issued yet: a batch that met a lost lease may start over on the
			// generator swapped in for it.
			if again := s.fenced(cur, err); again != nil {
				cur = again
				continue
			}
			return s.why(err)
		}
		for i, v := range chunk {
			dst[done+i] = FromUint64(v)
		}
		done += len(chunk)
	}
	return nil
}

// Close stops claiming nodes again, stops the generator and releases the node's lease, if
// any. The generator is stopped first, and a mark save in progress cut short and waited for,
// so that nothing is issued or written once the slot may be claimed by another process (or,
// for marks=file:, once a successor may open the file). Later calls fail with errors wrapping
// schemes.ErrClosed.
func (s *snowflakeScheme) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return s.gen().close()
}

// parseDecimal64 reads a 64-bit ID's decimal text, with a message that says so.
func parseDecimal64(text string) (ID, error) {
	if len(text) == 0 || len(text) > 20 {
		return ID{}, fmt.Errorf("%w: %s: want 1 to 20 decimal digits", ErrSyntax, quote(text))
	}
	return parseDecimal(text)
}

func checkLayout(l layouts.Layout, id ID) error {
	if id.Bits() != 64 {
		return fmt.Errorf("%w: %s is a %d-bit %s, layout %s makes 64-bit IDs", ErrScheme, id, id.Bits(), id.Format(), l.Name)
	}
	if err := l.Check(id.lo); err != nil {
		return fmt.Errorf("%w: %w", ErrScheme, err)
	}
	return nil
}

func decodeLayout(l layouts.Layout, id ID) (Parts, error) {
	if err := checkLayout(l, id); err != nil {
		return Parts{}, err
	}
	d := l.Decompose(id.lo)
	p := Parts{
		Time:    d.Time.UTC(),
		Node:    d.Node,
		HasNode: l.NodeBits() > 0,
		Seq:     d.Seq,
		HasSeq:  true,
		Fields:  make([]Field, len(d.Named)),
	}
	for i, v := range d.Named {
		p.Fields[i] = Field{Name: v.Name, Value: v.Value}
	}
	return p, nil
}
