package segment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/layouts"
)

// Importing this package (or one of its store packages, which import it) registers the scheme
// "segment" with idkit.Register, so that idkit.New accepts
// segment:store=URL,key=NAME,step=N,… The root package does not link it: a program that makes
// no segment IDs carries none of this code.
func init() {
	idkit.Register("segment", buildSegment)
	idkit.RegisterCodec("segment", codecSegment)
}

// segmentKeys are the settings of the segment scheme:
//
//	store=URL     the block store (pg://…, mysql://…, redis://…; its package registers it)
//	store2=URL    a second store: store 1 issues odd IDs, store 2 even ones
//	key=NAME      the counter (Leaf's biz_tag); required
//	step=1000     the block size
//	dynamic=true, max_step=N   Leaf's adaptive step
//	buffer=false  no background preload (for comparisons)
//	timeout=3s    one store round trip; wait=5s: how long Next waits when both blocks are dry
//	gap=1000      blocks a counter skips after a failover of its store (Settings.FailoverGap)
//	reverse=true  each ID is the bit reversal of its sequence number's 63 bits (Spanner's
//	              bit_reversed_positive sequences): unique, spread over the key space for
//	              range-partitioned databases, in no order
var segmentKeys = []string{"store", "store2", "key", "step", "dynamic", "max_step", "buffer", "timeout", "wait", "gap", "reverse"}

// segmentSpec is a segment spec read but not started.
type segmentSpec struct {
	urls    []string
	set     Settings
	reverse bool
}

// readSegment reads a segment spec's settings; the store URLs are checked for form only.
func readSegment(sp *idkit.Settings) (segmentSpec, error) {
	var ss segmentSpec
	for _, k := range []string{"store", "store2"} {
		u, ok := sp.Lookup(k)
		if !ok {
			continue
		}
		if err := CheckStoreURL(u); err != nil {
			return ss, sp.Wrapf(err, "%s=%s", k, u)
		}
		ss.urls = append(ss.urls, u)
	}
	if !sp.Has("store") {
		return ss, sp.Errorf("store is missing (want store=pg://… or store=mysql://…)")
	}
	key, ok := sp.Lookup("key")
	if !ok {
		return ss, sp.Errorf("key is missing (the counter's name, such as key=orders)")
	}
	ss.set.Key = key
	var err error
	if ss.set.Step, _, err = sp.Uint("step", MaxID/2); err != nil {
		v, _ := sp.Lookup("step")
		return ss, sp.Errorf("step=%s: want a whole number from 1 to %d", v, uint64(MaxID/2))
	}
	if ss.set.Dynamic, err = sp.Bool("dynamic", false); err != nil {
		return ss, err
	}
	var hasMax bool
	if ss.set.MaxStep, hasMax, err = sp.Uint("max_step", MaxID/2); err != nil {
		return ss, err
	}
	if hasMax && !ss.set.Dynamic {
		return ss, sp.Errorf("max_step=%d without dynamic=true: the step changes only when dynamic", ss.set.MaxStep)
	}
	buffer, err := sp.Bool("buffer", true)
	if err != nil {
		return ss, err
	}
	ss.set.NoBuffer = !buffer
	if ss.set.Timeout, _, err = sp.Duration("timeout"); err != nil {
		return ss, err
	}
	if ss.set.Wait, _, err = sp.Duration("wait"); err != nil {
		return ss, err
	}
	if ss.set.FailoverGap, _, err = sp.Uint("gap", 1<<40); err != nil {
		return ss, err
	}
	if ss.reverse, err = sp.Bool("reverse", false); err != nil {
		return ss, err
	}
	if ss.set.FailoverGap == 0 && sp.Has("gap") {
		return ss, sp.Errorf("gap=0: a failover must skip at least one block; want a whole number from 1 (default %d)", DefaultFailoverGap)
	}
	if err := sp.Done(segmentKeys...); err != nil {
		return ss, err
	}
	if ss.set.Step == 0 && sp.Has("step") {
		return ss, sp.Errorf("step=0: want a whole number from 1 to %d", uint64(MaxID/2))
	}
	if ss.set.Step != 0 && ss.set.MaxStep != 0 && ss.set.MaxStep < ss.set.Step {
		return ss, sp.Errorf("max_step=%d is below step=%d", ss.set.MaxStep, ss.set.Step)
	}
	return ss, nil
}

// codecSegment reads a segment spec for NewCodec, without opening its stores.
func codecSegment(sp *idkit.Settings) (idkit.Codec, error) {
	ss, err := readSegment(sp)
	if err != nil {
		return nil, err
	}
	return segmentCodec{stores: uint64(len(ss.urls)), reverse: ss.reverse}, nil
}

func buildSegment(ctx context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
	ss, err := readSegment(sp)
	if err != nil {
		return nil, err
	}
	closeAll := func() {
		for _, st := range ss.set.Stores {
			st.Close()
		}
	}
	for i, u := range ss.urls {
		st, err := OpenStore(ctx, u)
		if err != nil {
			closeAll()
			if errors.Is(err, ErrNoStoreDriver) {
				return nil, sp.Wrapf(err, "store %d", i+1)
			}
			return nil, fmt.Errorf("idkit: %s: opening %s: %w", strconv.Quote(sp.String()), DescribeStore(u), redact.Error(err))
		}
		ss.set.Stores = append(ss.set.Stores, st)
	}
	g, err := New(ss.set)
	if err != nil {
		closeAll()
		return nil, sp.Wrapf(err, "segment")
	}
	return &segmentScheme{segmentCodec: segmentCodec{stores: uint64(len(ss.urls)), reverse: ss.reverse}, g: g, name: segmentName(ss), urls: ss.urls}, nil
}

// segmentName is the canonical spec of a segment scheme, credentials redacted.
func segmentName(ss segmentSpec) string {
	var b strings.Builder
	b.WriteString("segment:store=" + idkit.Redact(ss.urls[0]))
	if len(ss.urls) > 1 {
		b.WriteString(",store2=" + idkit.Redact(ss.urls[1]))
	}
	b.WriteString(",key=" + ss.set.Key)
	step := ss.set.Step
	if step == 0 {
		step = DefaultStep
	}
	b.WriteString(",step=" + strconv.FormatUint(step, 10))
	if ss.set.Dynamic {
		b.WriteString(",dynamic=true")
		if ss.set.MaxStep != 0 {
			b.WriteString(",max_step=" + strconv.FormatUint(ss.set.MaxStep, 10))
		}
	}
	if ss.set.NoBuffer {
		b.WriteString(",buffer=false")
	}
	if ss.set.Timeout != 0 {
		b.WriteString(",timeout=" + ss.set.Timeout.String())
	}
	if ss.set.Wait != 0 {
		b.WriteString(",wait=" + ss.set.Wait.String())
	}
	if ss.set.FailoverGap != 0 {
		b.WriteString(",gap=" + strconv.FormatUint(ss.set.FailoverGap, 10))
	}
	if ss.reverse {
		b.WriteString(",reverse=true")
	}
	return b.String()
}

// segmentCodec parses and decodes segment IDs: positive 63-bit numbers. With two stores, the
// residue class tells which store's counter an ID came from. With reverse, an ID is the bit
// reversal of its sequence number's 63 bits (layouts.Reverse63, its own inverse).
type segmentCodec struct {
	stores  uint64
	reverse bool
}

// id is the ID of sequence number v.
func (c segmentCodec) id(v uint64) idkit.ID {
	if c.reverse {
		v = layouts.Reverse63(v)
	}
	return idkit.FromUint64(v)
}

func (c segmentCodec) Parse(text string) (idkit.ID, error) {
	if len(text) == 0 || len(text) > 20 || strings.Trim(text, "0123456789") != "" {
		return idkit.ID{}, fmt.Errorf("%w: %s: want 1 to 20 decimal digits", idkit.ErrSyntax, strconv.Quote(text))
	}
	id, err := idkit.Parse(text)
	if err != nil {
		return idkit.ID{}, err
	}
	if err := c.check(id); err != nil {
		return idkit.ID{}, err
	}
	return id, nil
}

// IDWidth is 63 (idkit.Widther): segment IDs stay positive as signed 64-bit integers, and so
// do their masked forms (mask=).
func (segmentCodec) IDWidth() int { return 63 }

func (c segmentCodec) check(id idkit.ID) error {
	if id.Bits() != 64 {
		return fmt.Errorf("%w: %s is a %d-bit %s, segment IDs are 64-bit", idkit.ErrScheme, id, id.Bits(), id.Format())
	}
	if id.Uint64() == 0 || id.Uint64() > MaxID {
		return fmt.Errorf("%w: %s: segment IDs run from 1 to %d", idkit.ErrScheme, id, uint64(MaxID))
	}
	return nil
}

// Decode returns the ID's sequence number (the ID itself, or its bit reversal with reverse);
// with two stores, Fields also names the store whose counter it came from ("store": 1 or 2).
// Segment IDs hold no time and no node.
func (c segmentCodec) Decode(id idkit.ID) (idkit.Parts, error) {
	if err := c.check(id); err != nil {
		return idkit.Parts{}, err
	}
	seq := id.Uint64()
	if c.reverse {
		seq = layouts.Reverse63(seq)
	}
	p := idkit.Parts{Seq: seq, HasSeq: true, Fields: []idkit.Field{{Name: "seq", Value: seq}}}
	if c.stores > 1 {
		p.Fields = append(p.Fields, idkit.Field{Name: "store", Value: (seq-1)%c.stores + 1})
	}
	return p, nil
}

// segmentScheme wraps Segment. It implements idkit.Scheme, Batcher, the context variants,
// Widther, Durabler and io.Closer.
type segmentScheme struct {
	segmentCodec
	g    *Segment
	name string
	urls []string // the stores', for Durability
}

func (s *segmentScheme) Name() string { return s.name }

func (s *segmentScheme) Next() (idkit.ID, error) {
	v, err := s.g.Next()
	if err != nil {
		return idkit.ID{}, err
	}
	return s.id(v), nil
}

// NextContext is Next with a context that ends a wait for the store early.
func (s *segmentScheme) NextContext(ctx context.Context) (idkit.ID, error) {
	v, err := s.g.NextContext(ctx)
	if err != nil {
		return idkit.ID{}, err
	}
	return s.id(v), nil
}

// NextBatch fills dst with increasing IDs (in no order with reverse=true), taking them from
// the blocks a chunk at a time.
func (s *segmentScheme) NextBatch(dst []idkit.ID) error {
	return s.NextBatchContext(context.Background(), dst)
}

// NextBatchContext is NextBatch with a context that ends a wait for the store early.
//
// With reverse=true the IDs are in no order, and the batch is not sorted.
//
// Each chunk comes back sorted, but chunks need not follow each other in order: with two
// stores, the current block and the buffered one belong to different residue classes and
// counters that drift apart (one chunk ends in store 1's block at 10,599, the next starts in
// store 2's at 426), and other goroutines take IDs between two chunks. So the batch is sorted
// as a whole when a chunk starts at or below the end of the one before.
func (s *segmentScheme) NextBatchContext(ctx context.Context, dst []idkit.ID) error {
	var buf [512]uint64
	all, sorted := dst, true
	var prev uint64
	for len(dst) > 0 {
		chunk := buf[:min(len(dst), len(buf))]
		if err := s.g.NextBatchContext(ctx, chunk); err != nil {
			return err
		}
		if chunk[0] <= prev {
			sorted = false
		}
		for i, v := range chunk {
			dst[i] = s.id(v)
		}
		prev = chunk[len(chunk)-1]
		dst = dst[len(chunk):]
	}
	if !sorted && !s.reverse {
		slices.SortFunc(all, func(a, b idkit.ID) int { return cmp.Compare(a.Uint64(), b.Uint64()) })
	}
	return nil
}

// Close stops the background loader and closes the stores.
func (s *segmentScheme) Close() error { return s.g.Close() }
