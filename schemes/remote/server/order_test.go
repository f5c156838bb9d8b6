package server_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
)

// TestNextOrderAsDocumented checks the order idkit.proto promises for Next, scheme by scheme,
// under concurrent calls: snowflake, sonyflake, ulid and uuidv7 answer increasing batches of
// distinct IDs. It also shows why the proto does not promise more: a snowflake batch larger
// than what is left of its tick is reserved one tick at a time, so another call's IDs can fall
// between two of its IDs (the test logs how many batches interleaved).
func TestNextOrderAsDocumented(t *testing.T) {
	t.Parallel()
	cfg := server.Config{Generators: []server.Generator{
		{Name: "snowflake", Spec: "snowflake:layout=twitter,worker=1"},
		{Name: "sonyflake", Spec: "sonyflake:machine=1"},
		{Name: "ulid", Spec: "ulid"},
		{Name: "uuidv7", Spec: "uuidv7"},
	}, MaxCount: 5000}
	r := start(t, cfg)
	c := idkitv1connect.NewIDServiceClient(h2(), r.url)
	for _, tc := range []struct {
		gen     string
		count   uint32
		calls   int
		callers int
	}{
		{"snowflake", 3000, 10, 8},
		{"sonyflake", 40, 10, 4}, // 256 IDs per 10 ms: keep it short
		{"ulid", 2000, 10, 8},
		{"uuidv7", 2000, 10, 8},
	} {
		t.Run(tc.gen, func(t *testing.T) {
			var (
				mu      sync.Mutex
				batches [][]idkit.ID
				wg      sync.WaitGroup
				errs    = make(chan error, tc.callers)
			)
			for range tc.callers {
				wg.Go(func() {
					for range tc.calls {
						res, err := c.Next(context.Background(), connect.NewRequest(&v1.NextRequest{Generator: tc.gen, Count: tc.count}))
						if err != nil {
							errs <- err
							return
						}
						ids := toIDs(t, res.Msg)
						mu.Lock()
						batches = append(batches, ids)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			type span struct{ lo, hi idkit.ID }
			var spans []span
			seen := make(map[idkit.ID]bool)
			for b, ids := range batches {
				for i, id := range ids {
					if seen[id] {
						t.Fatalf("batch %d: ID %v issued twice", b, id)
					}
					seen[id] = true
					if i > 0 && idkit.Compare(ids[i-1], id) >= 0 {
						t.Fatalf("batch %d: IDs %d and %d out of order: %v, %v", b, i-1, i, ids[i-1], id)
					}
				}
				spans = append(spans, span{ids[0], ids[len(ids)-1]})
			}
			slices.SortFunc(spans, func(a, b span) int { return idkit.Compare(a.lo, b.lo) })
			interleaved := 0
			for i := 1; i < len(spans); i++ {
				if idkit.Compare(spans[i].lo, spans[i-1].hi) <= 0 {
					interleaved++
				}
			}
			t.Logf("%d batches of %d, %d distinct IDs, %d batches overlapping the previous one's span", len(batches), tc.count, len(seen), interleaved)
		})
	}
}
