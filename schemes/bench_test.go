package schemes_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// reportRate adds IDs/s and, for capped layouts, the share of the cap reached.
func reportRate(b *testing.B, ids int, l layouts.Layout) {
	rate := float64(ids) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "IDs/s")
	if l.Name == "twitter" {
		b.ReportMetric(100*rate/l.IDsPerSecond(), "%cap")
	}
}

// runShared runs b.N calls of next split among n goroutines sharing one generator.
func runShared(b *testing.B, n int, next func() error) {
	var wg sync.WaitGroup
	per := b.N / n
	for w := range n {
		count := per
		if w == 0 {
			count += b.N % n
		}
		wg.Go(func() {
			for range count {
				if err := next(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkSnowflake measures schemes.Snowflake.Next on the Twitter layout (capped at
// 4,096,000 IDs/s) and on a 22-sequence-bit layout whose cap is out of reach, on one goroutine
// and on two sharing one generator.
func BenchmarkSnowflake(b *testing.B) {
	for _, l := range []layouts.Layout{layouts.Twitter, seq22} {
		name := l.Name
		if l.Name == "test" {
			name = "seq22"
		}
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("layout=%s/goroutines=%d", name, n), func(b *testing.B) {
				g := mustSnowflake(b, schemes.SnowflakeSettings{Layout: l})
				mustNext(b, g) // the first ID waits out the start tick
				b.ReportAllocs()
				b.ResetTimer()
				runShared(b, n, func() error { _, err := g.Next(); return err })
				reportRate(b, b.N, l)
			})
		}
	}
}

// BenchmarkSnowflakeFence measures Next on the 22-sequence-bit layout with a plain Fence (Err
// called once per ID) and with a DeadlineFence (the ID's tick compared with the deadline), as a
// node lease makes it, against no fence.
func BenchmarkSnowflakeFence(b *testing.B) {
	df := &deadlineFence{}
	df.d.Set(time.Now().Add(time.Hour))
	for _, f := range []struct {
		name  string
		fence schemes.Fence
	}{{"none", nil}, {"err", &fence{}}, {"deadline", df}} {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("fence=%s/goroutines=%d", f.name, n), func(b *testing.B) {
				g := mustSnowflake(b, schemes.SnowflakeSettings{Layout: seq22, Fence: f.fence})
				mustNext(b, g)
				b.ReportAllocs()
				b.ResetTimer()
				runShared(b, n, func() error { _, err := g.Next(); return err })
				reportRate(b, b.N, seq22)
			})
		}
	}
}

// BenchmarkNextN measures the batch method per ID: ns/op is per ID, not per batch.
func BenchmarkNextN(b *testing.B) {
	for _, batch := range []int{512, 4096} {
		b.Run(fmt.Sprintf("layout=seq22/batch=%d", batch), func(b *testing.B) {
			g := mustSnowflake(b, schemes.SnowflakeSettings{Layout: seq22})
			buf := make([]uint64, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				if err := g.NextN(buf); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, b.N, seq22)
		})
	}
}

// BenchmarkBaseline is the floor the core is held to: one monotonic clock read
// (time.Since) plus one compare-and-swap, serial and with two goroutines sharing the word.
func BenchmarkBaseline(b *testing.B) {
	b.Run("op=clock+cas/goroutines=1", func(b *testing.B) {
		start := time.Now()
		var w atomic.Uint64
		var prev uint64
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			v := uint64(time.Since(start))
			if w.CompareAndSwap(prev, v) {
				prev = v
			}
		}
	})
	b.Run("op=clock+cas/goroutines=2", func(b *testing.B) {
		start := time.Now()
		var w atomic.Uint64
		b.ReportAllocs()
		b.ResetTimer()
		runShared(b, 2, func() error {
			for {
				old := w.Load()
				if w.CompareAndSwap(old, max(old+1, uint64(time.Since(start)))) {
					return nil
				}
			}
		})
	})
	b.Run("op=clock", func(b *testing.B) {
		start := time.Now()
		var sink time.Duration
		b.ReportAllocs()
		for range b.N {
			sink += time.Since(start)
		}
		_ = sink
	})
}

// BenchmarkAdapters measures the adapters in this package directly (package idkit compares
// them, wrapped in its Scheme, with the libraries).
func BenchmarkAdapters(b *testing.B) {
	u, _ := schemes.NewULID(schemes.ULIDSettings{})
	v7, _ := schemes.NewUUIDv7(schemes.UUIDSettings{})
	v4, _ := schemes.NewUUIDv4(schemes.UUIDSettings{})
	for _, a := range []struct {
		name string
		next func() ([16]byte, error)
	}{{"ulid", u.Next}, {"uuidv7", v7.Next}, {"uuidv4", v4.Next}} {
		b.Run("scheme="+a.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := a.next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnowflakeRange measures Next and NextN on the 22-sequence-bit layout as it is, with
// a 4-bit hash field on top (shard_bits=4: one fmix64 per ID) and reversed (reverse=true: one
// bit reversal per ID), on one goroutine; compare with benchstat -col /layout.
func BenchmarkSnowflakeRange(b *testing.B) {
	sharded, err := seq22.Sharded(4, "")
	if err != nil {
		b.Fatal(err)
	}
	reversed := seq22.Clone()
	reversed.Reverse = true
	for _, tt := range []struct {
		name string
		l    layouts.Layout
	}{{"seq22", seq22}, {"seq22-shard4", sharded}, {"seq22-reverse", reversed}} {
		b.Run("op=next/layout="+tt.name, func(b *testing.B) {
			g := mustSnowflake(b, schemes.SnowflakeSettings{Layout: tt.l})
			mustNext(b, g)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, b.N, tt.l)
		})
		b.Run("op=nextn512/layout="+tt.name, func(b *testing.B) {
			g := mustSnowflake(b, schemes.SnowflakeSettings{Layout: tt.l})
			buf := make([]uint64, 512)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += len(buf) {
				if err := g.NextN(buf); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, b.N, tt.l)
		})
	}
}
