package idkit

import (
	"context"
	"fmt"
)

// The native Snowflake scheme honours cancellation in all its waits.
var (
	_ ContextScheme  = (*snowflakeScheme)(nil)
	_ ContextBatcher = (*snowflakeScheme)(nil)
)

// ContextScheme is implemented by schemes whose Next may wait: for the next tick of a
// Snowflake layout, for a clock behind the last ID, or for a predecessor's high-water mark.
// NextContext is Next whose waits end when ctx is done, with an error wrapping ctx.Err(). An
// ID that is available at once is returned without looking at ctx. Use the package function
// NextContext to call it on any Scheme.
type ContextScheme interface {
	NextContext(ctx context.Context) (ID, error)
}

// ContextBatcher is implemented by Batchers whose NextBatch may wait (see ContextScheme).
// NextBatchContext fills dst like NextBatch and stops waiting when ctx is done; dst may then
// be partly filled and the error, wrapping ctx.Err(), says how far it got.
type ContextBatcher interface {
	NextBatchContext(ctx context.Context, dst []ID) error
}

// NextContext returns a new ID of s, giving up when ctx is done. It calls s.NextContext when s
// is a ContextScheme; otherwise it returns ctx.Err() (wrapped) if ctx is already done and
// s.Next() if not, so a scheme that never waits costs one check.
func NextContext(ctx context.Context, s Scheme) (ID, error) {
	if cs, ok := s.(ContextScheme); ok {
		return cs.NextContext(ctx)
	}
	if err := ctx.Err(); err != nil {
		return ID{}, fmt.Errorf("idkit: %s: %w", s.Name(), err)
	}
	return s.Next()
}

// NextBatchContext fills dst with new IDs of s in increasing order, giving up when ctx is
// done. It uses, in this order, s.NextBatchContext (ContextBatcher), s.NextBatch (Batcher)
// after a check of ctx, or NextContext once per element, checking ctx before each. On error
// dst may be partly filled.
func NextBatchContext(ctx context.Context, s Scheme, dst []ID) error {
	switch b := s.(type) {
	case ContextBatcher:
		return b.NextBatchContext(ctx, dst)
	case Batcher:
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("idkit: %s: %w", s.Name(), err)
		}
		return b.NextBatch(dst)
	}
	for i := range dst {
		id, err := NextContext(ctx, s)
		if err != nil {
			return fmt.Errorf("%w (after %d of %d IDs)", err, i, len(dst))
		}
		dst[i] = id
	}
	return nil
}
