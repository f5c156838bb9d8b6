package idkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/idkit/idkit"
)

// counting wraps a Scheme and counts its Next calls; it hides every optional interface.
type counting struct {
	idkit.Scheme
	nexts int
}

func (c *counting) Next() (idkit.ID, error) {
	c.nexts++
	return c.Scheme.Next()
}

// countingBatcher adds NextBatch (but not NextBatchContext) to counting.
type countingBatcher struct {
	*counting
	batches int
}

func (c *countingBatcher) NextBatch(dst []idkit.ID) error {
	c.batches++
	for i := range dst {
		id, err := c.Scheme.Next()
		if err != nil {
			return err
		}
		dst[i] = id
	}
	return nil
}

func mustNew(t *testing.T, spec string) idkit.Scheme {
	t.Helper()
	s, err := idkit.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := s.(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return s
}

// TestNextContextWaits: the snowflake scheme is a ContextScheme and a ContextBatcher; on a
// layout whose tick is an hour its first ID waits for the next tick, and a deadline ends that
// wait at once with an error wrapping context.DeadlineExceeded.
func TestNextContextWaits(t *testing.T) {
	s := mustNew(t, "snowflake:fields=time:30/seq:12,unit=1h,epoch=2024-01-01")
	if _, ok := s.(idkit.ContextScheme); !ok {
		t.Fatal("snowflake scheme is not a ContextScheme")
	}
	if _, ok := s.(idkit.ContextBatcher); !ok {
		t.Fatal("snowflake scheme is not a ContextBatcher")
	}
	calls := map[string]func(ctx context.Context) error{
		"NextContext": func(ctx context.Context) error {
			_, err := idkit.NextContext(ctx, s)
			return err
		},
		"NextBatchContext": func(ctx context.Context) error {
			return idkit.NextBatchContext(ctx, s, make([]idkit.ID, 2000))
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := call(ctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("returned after %v, want about 100ms", d)
			}
		})
	}
}

// TestNextContextFallbacks: schemes without the context interfaces are called through Next or
// NextBatch after a check of the context, and not at all once it is done.
func TestNextContextFallbacks(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	tests := []struct {
		name        string
		ctx         context.Context
		wantErr     error
		wantNexts   int // Next calls through the helper (a NextBatch's own are not counted)
		wantBatches int
		batcher     bool // the scheme implements Batcher
		batchLen    int  // call NextBatchContext with this many IDs; 0: NextContext
	}{
		{"Next/live", live, nil, 1, 0, false, 0},
		{"Next/cancelled", done, context.Canceled, 0, 0, false, 0},
		{"batch via Next/live", live, nil, 5, 0, false, 5},
		{"batch via Next/cancelled", done, context.Canceled, 0, 0, false, 5},
		{"batch via NextBatch/live", live, nil, 0, 1, true, 5},
		{"batch via NextBatch/cancelled", done, context.Canceled, 0, 0, true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &counting{Scheme: mustNew(t, "ulid")}
			var s idkit.Scheme = c
			var b *countingBatcher
			if tt.batcher {
				b = &countingBatcher{counting: c}
				s = b
			}
			var err error
			var ids []idkit.ID
			if tt.batchLen > 0 {
				ids = make([]idkit.ID, tt.batchLen)
				err = idkit.NextBatchContext(tt.ctx, s, ids)
			} else {
				var id idkit.ID
				id, err = idkit.NextContext(tt.ctx, s)
				ids = []idkit.ID{id}
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if c.nexts != tt.wantNexts {
				t.Errorf("%d Next calls, want %d", c.nexts, tt.wantNexts)
			}
			if b != nil && b.batches != tt.wantBatches {
				t.Errorf("%d NextBatch calls, want %d", b.batches, tt.wantBatches)
			}
			if err == nil {
				for i, id := range ids {
					if id.IsZero() {
						t.Fatalf("ID %d not filled", i)
					}
					if i > 0 && idkit.Compare(ids[i-1], id) >= 0 {
						t.Fatalf("ID %d: %s not above %s", i, id, ids[i-1])
					}
				}
			}
		})
	}
}

func ExampleNextContext() {
	s, err := idkit.New("ulid")
	if err != nil {
		panic(err)
	}
	// A scheme that may wait (snowflake) stops waiting when the context is done; others are
	// called as they are, after a check of the context.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	id, err := idkit.NextContext(ctx, s)
	fmt.Println(id.Bits(), err)
	// Output: 128 <nil>
}
