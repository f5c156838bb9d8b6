package dbbench

import (
	"context"
	"fmt"
	"sync"

	"github.com/idkit/idkit/dbbench/engine"
)

// clientKeys makes the keys of one client's operations (WorkloadApp): from the load's shared
// source, one operation at a time (the default); from the client's own source
// (Config.IDsPerClient); or in blocks, the keys of the client's next Config.ClientBlock
// operations taken at once from the shared source while no other client takes any, so that
// each client holds a run of consecutive IDs, as a segment generator per client holds a block
// of one store (Config.ClientBlock).
type clientKeys struct {
	src *engine.Source
	// mu, for blocks, is shared by the clients: a block is taken under it.
	mu    *sync.Mutex
	block []appOp // the keys of the block taken, Parent and Children set
	pos   int     // the next unused operation of block
}

// newClientKeys returns the key maker of a client that takes its keys from src, in blocks of
// block operations (each with children keys) under mu when block > 1.
func newClientKeys(src *engine.Source, mu *sync.Mutex, block, children int) *clientKeys {
	k := &clientKeys{src: src}
	if block > 1 {
		k.mu, k.block, k.pos = mu, make([]appOp, block), block
		for i := range k.block {
			k.block[i].Children = make([]engine.Value, children)
		}
	}
	return k
}

// next sets op's parent and children keys.
func (k *clientKeys) next(ctx context.Context, op *appOp) error {
	if k.block == nil {
		return k.make(ctx, op)
	}
	if k.pos == len(k.block) {
		if err := k.take(ctx); err != nil {
			return err
		}
	}
	b := &k.block[k.pos]
	k.pos++
	op.Parent = b.Parent
	copy(op.Children, b.Children)
	return nil
}

// take fills the block with the keys of its operations, one run of the source's IDs.
func (k *clientKeys) take(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range k.block {
		if err := k.make(ctx, &k.block[i]); err != nil {
			return err
		}
	}
	k.pos = 0
	return nil
}

// make sets op's parent key, then its children's, from the source.
func (k *clientKeys) make(ctx context.Context, op *appOp) error {
	if err := k.src.NextContext(ctx, &op.Parent); err != nil {
		return err
	}
	for j := range op.Children {
		if err := k.src.NextContext(ctx, &op.Children[j]); err != nil {
			return err
		}
	}
	return nil
}

// clientSources returns the sources of a load's n clients: the shared source for each, or,
// with Config.IDsPerClient, a source of each client's own: engine.NodeSpec gives a
// Snowflake-family spec the client's number as its node (a layout with the node field above
// the time puts each client's keys in a range of its own), other schemes an independent
// generator of the same spec. Keys the database makes share the one source. close releases
// the sources made here.
func clientSources(cfg Config, r engine.Row, shared *engine.Source, n int) (srcs []*engine.Source, close func(), err error) {
	srcs = make([]*engine.Source, n)
	close = func() {}
	if !cfg.IDsPerClient || r.Col.ServerMade() || r.Spec == "" {
		for i := range srcs {
			srcs[i] = shared
		}
		return srcs, close, nil
	}
	var made []*engine.Source
	close = func() {
		for _, s := range made {
			s.Close()
		}
	}
	for i := range srcs {
		own := r
		if own.Spec, err = engine.NodeSpec(r.Spec, i, n); err != nil {
			close()
			return nil, func() {}, fmt.Errorf("dbbench: scheme %q: --ids-per-client: %w", r.Label, err)
		}
		s, err := engine.NewSource(own, 1)
		if err != nil {
			close()
			return nil, func() {}, err
		}
		made = append(made, s)
		srcs[i] = s
	}
	return srcs, close, nil
}
