package segment

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counter is a Store in memory: one counter for every key, taken under a lock.
type counter struct {
	mu  sync.Mutex
	max uint64
}

func (c *counter) Take(_ context.Context, r Request) (Block, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max += r.Step
	return Block{First: c.max - r.Step + 1, Last: c.max}, nil
}

func (c *counter) Close() error { return nil }

// TestCloseDropsArrivingBlock holds the store's answer in the loader until Close has begun,
// then lets it through: the block must not be served after Close, and every call must fail
// with ErrClosed. Both orders are run: the answer arriving with the current block used up (the
// loader would make it the current block) and with IDs left (it would be the buffered one).
func TestCloseDropsArrivingBlock(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold int32 // the store answer to hold: 1 is the first block's, 2 the preloaded one's
	}{
		{"first block", 1},
		{"buffered block", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &counter{}
			s, err := New(Settings{Stores: []Store{st}, Key: "k", Step: 10, Wait: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			arrived, release := make(chan struct{}), make(chan struct{})
			var answers atomic.Int32
			s.answered = func() {
				if answers.Add(1) == tc.hold {
					close(arrived)
					<-release
				}
			}
			first := make(chan error, 1)
			if tc.hold == 1 {
				go func() { first <- s.Warm(context.Background()) }()
			} else {
				// With step 10 the second ID starts the preload; eight IDs stay in the block.
				for range 2 {
					if _, err := s.Next(); err != nil {
						t.Fatal(err)
					}
				}
			}
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatal("the store was not asked for a block")
			}
			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			for {
				s.mu.Lock()
				c := s.closed
				s.mu.Unlock()
				if c {
					break
				}
				time.Sleep(time.Millisecond)
			}
			close(release) // the block arrives while Close waits for the loader
			if err := <-closed; err != nil {
				t.Fatal(err)
			}
			if tc.hold == 1 {
				if err := <-first; !errors.Is(err, ErrClosed) {
					t.Fatalf("Warm waiting for the held block: %v; want ErrClosed", err)
				}
			}
			if want := uint64(10 * tc.hold); st.max != want {
				t.Fatalf("store counter %d, want %d: the held block was not taken", st.max, want)
			}
			if v, err := s.Next(); !errors.Is(err, ErrClosed) {
				t.Fatalf("Next after Close = %d, %v; want ErrClosed", v, err)
			}
			if err := s.NextBatch(make([]uint64, 3)); !errors.Is(err, ErrClosed) {
				t.Fatalf("NextBatch after Close: %v; want ErrClosed", err)
			}
			if err := s.Warm(context.Background()); !errors.Is(err, ErrClosed) {
				t.Fatalf("Warm after Close: %v; want ErrClosed", err)
			}
			_, err = s.Next()
			t.Log(err)
		})
	}
}
