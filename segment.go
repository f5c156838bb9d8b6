package idkit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/schemes/segment"
)

// segmentKeys are the settings of the segment scheme.
var segmentKeys = []string{"store", "store2", "key", "step", "dynamic", "max_step", "buffer", "timeout", "wait"}

// segmentSpec is a segment spec read but not started.
type segmentSpec struct {
	urls []string
	set  segment.Settings
}

// readSegment reads a segment spec's settings; the store URLs are checked for form only.
func readSegment(sp *Settings) (segmentSpec, error) {
	var ss segmentSpec
	for _, k := range []string{"store", "store2"} {
		u, ok := sp.Lookup(k)
		if !ok {
			continue
		}
		if err := segment.CheckStoreURL(u); err != nil {
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
	if ss.set.Step, _, err = sp.Uint("step", segment.MaxID/2); err != nil {
		return ss, err
	}
	if ss.set.Dynamic, err = sp.Bool("dynamic", false); err != nil {
		return ss, err
	}
	var hasMax bool
	if ss.set.MaxStep, hasMax, err = sp.Uint("max_step", segment.MaxID/2); err != nil {
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
	if err := sp.Done(segmentKeys...); err != nil {
		return ss, err
	}
	if ss.set.Step == 0 && sp.Has("step") {
		return ss, sp.Errorf("step=0: want at least 1")
	}
	if ss.set.Step != 0 && ss.set.MaxStep != 0 && ss.set.MaxStep < ss.set.Step {
		return ss, sp.Errorf("max_step=%d is below step=%d", ss.set.MaxStep, ss.set.Step)
	}
	return ss, nil
}

// codecSegment reads a segment spec for NewCodec, without opening its stores.
func codecSegment(sp *Settings) (Codec, error) {
	ss, err := readSegment(sp)
	if err != nil {
		return nil, err
	}
	return segmentCodec{stores: uint64(len(ss.urls))}, nil
}

func buildSegment(ctx context.Context, sp *Settings) (Scheme, error) {
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
		st, err := segment.OpenStore(ctx, u)
		if err != nil {
			closeAll()
			if errors.Is(err, segment.ErrNoStoreDriver) {
				return nil, sp.Wrapf(err, "store %d", i+1)
			}
			return nil, fmt.Errorf("idkit: %s: opening %s: %w", quote(sp.String()), segment.DescribeStore(u), redact.Error(err))
		}
		ss.set.Stores = append(ss.set.Stores, st)
	}
	g, err := segment.New(ss.set)
	if err != nil {
		closeAll()
		return nil, sp.Wrapf(err, "segment")
	}
	return &segmentScheme{segmentCodec: segmentCodec{stores: uint64(len(ss.urls))}, g: g, name: segmentName(ss)}, nil
}

// segmentName is the canonical spec of a segment scheme, credentials redacted.
func segmentName(ss segmentSpec) string {
	var b strings.Builder
	b.WriteString("segment:store=" + Redact(ss.urls[0]))
	if len(ss.urls) > 1 {
		b.WriteString(",store2=" + Redact(ss.urls[1]))
	}
	b.WriteString(",key=" + ss.set.Key)
	step := ss.set.Step
	if step == 0 {
		step = segment.DefaultStep
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
	return b.String()
}

// segmentCodec parses and decodes segment IDs: positive 63-bit numbers. With two stores, the
// residue class tells which store's counter an ID came from.
type segmentCodec struct {
	stores uint64
}

func (c segmentCodec) Parse(text string) (ID, error) {
	id, err := parseDecimal64(text)
	if err != nil {
		return ID{}, err
	}
	if err := c.check(id); err != nil {
		return ID{}, err
	}
	return id, nil
}

func (c segmentCodec) check(id ID) error {
	if id.Bits() != 64 {
		return fmt.Errorf("%w: %s is a %d-bit %s, segment IDs are 64-bit", ErrScheme, id, id.Bits(), id.Format())
	}
	if id.lo == 0 || id.lo > segment.MaxID {
		return fmt.Errorf("%w: %s: segment IDs run from 1 to %d", ErrScheme, id, uint64(segment.MaxID))
	}
	return nil
}

// Decode returns the ID as its sequence number; with two stores, Fields also names the store
// whose counter it came from ("store": 1 or 2). Segment IDs hold no time and no node.
func (c segmentCodec) Decode(id ID) (Parts, error) {
	if err := c.check(id); err != nil {
		return Parts{}, err
	}
	p := Parts{Seq: id.lo, HasSeq: true, Fields: []Field{{Name: "seq", Value: id.lo}}}
	if c.stores > 1 {
		p.Fields = append(p.Fields, Field{Name: "store", Value: (id.lo-1)%c.stores + 1})
	}
	return p, nil
}

// segmentScheme wraps segment.Segment. It implements Scheme, Batcher, the context variants
// and io.Closer.
type segmentScheme struct {
	segmentCodec
	g    *segment.Segment
	name string
}

func (s *segmentScheme) Name() string { return s.name }

func (s *segmentScheme) Next() (ID, error) {
	v, err := s.g.Next()
	if err != nil {
		return ID{}, err
	}
	return FromUint64(v), nil
}

// NextContext is Next with a context that ends a wait for the store early.
func (s *segmentScheme) NextContext(ctx context.Context) (ID, error) {
	v, err := s.g.NextContext(ctx)
	if err != nil {
		return ID{}, err
	}
	return FromUint64(v), nil
}

// NextBatch fills dst from the current block, a chunk at a time.
func (s *segmentScheme) NextBatch(dst []ID) error {
	return s.NextBatchContext(context.Background(), dst)
}

// NextBatchContext is NextBatch with a context that ends a wait for the store early.
func (s *segmentScheme) NextBatchContext(ctx context.Context, dst []ID) error {
	var buf [512]uint64
	for len(dst) > 0 {
		chunk := buf[:min(len(dst), len(buf))]
		if err := s.g.NextBatchContext(ctx, chunk); err != nil {
			return err
		}
		for i, v := range chunk {
			dst[i] = FromUint64(v)
		}
		dst = dst[len(chunk):]
	}
	return nil
}

// Close stops the background loader and closes the stores.
func (s *segmentScheme) Close() error { return s.g.Close() }
