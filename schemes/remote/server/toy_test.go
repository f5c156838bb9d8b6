package server_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/idkit/idkit"
)

// toy is a user's own scheme, registered in this test as "toyseq" the way any package adds a
// scheme: 64-bit IDs counting up from start, a Batcher, and a fence and a gate the tests work
// through the toys map (keyed by the spec's key= setting).
type toy struct {
	name   string
	n      atomic.Uint64
	fenced atomic.Pointer[error]
	gate   chan struct{} // when set, Next waits for a receive from it
	inside chan struct{} // when gated, Next sends on it before waiting
	closed atomic.Bool
}

var toys sync.Map // key string -> *toy

func init() {
	idkit.Register("toyseq", func(_ context.Context, sp *idkit.Settings) (idkit.Scheme, error) {
		start, _, err := sp.Uint("start", 1<<62)
		if err != nil {
			return nil, err
		}
		key, _ := sp.Lookup("key")
		gated, err := sp.Bool("gated", false)
		if err != nil {
			return nil, err
		}
		if err := sp.Done("start", "key", "gated"); err != nil {
			return nil, err
		}
		t := &toy{name: "toyseq:start=" + strconv.FormatUint(start, 10)}
		t.n.Store(start)
		if gated {
			t.gate = make(chan struct{})
			t.inside = make(chan struct{}, 1)
		}
		if key != "" {
			toys.Store(key, t)
		}
		return t, nil
	})
}

func toyOf(key string) *toy { v, _ := toys.Load(key); return v.(*toy) }

func (t *toy) Name() string { return t.name }

func (t *toy) Next() (idkit.ID, error) {
	if t.gate != nil {
		t.inside <- struct{}{}
		<-t.gate
	}
	if p := t.fenced.Load(); p != nil {
		return idkit.ID{}, *p
	}
	return idkit.FromUint64(t.n.Add(1)), nil
}

func (t *toy) NextBatch(dst []idkit.ID) error {
	if t.gate != nil {
		for i := range dst {
			var err error
			if dst[i], err = t.Next(); err != nil {
				return err
			}
		}
		return nil
	}
	if p := t.fenced.Load(); p != nil {
		return *p
	}
	end := t.n.Add(uint64(len(dst)))
	for i := range dst {
		dst[i] = idkit.FromUint64(end - uint64(len(dst)) + uint64(i) + 1)
	}
	return nil
}

func (t *toy) Err() error {
	if p := t.fenced.Load(); p != nil {
		return *p
	}
	return nil
}

func (t *toy) Close() error { t.closed.Store(true); return nil }

func (t *toy) Parse(text string) (idkit.ID, error) {
	id, err := idkit.Parse(text)
	if err != nil {
		return idkit.ID{}, err
	}
	if id.Bits() != 64 {
		return idkit.ID{}, errors.New("toyseq: not a 64-bit ID")
	}
	return id, nil
}

func (t *toy) Decode(id idkit.ID) (idkit.Parts, error) {
	return idkit.Parts{Seq: id.Uint64(), HasSeq: true}, nil
}
