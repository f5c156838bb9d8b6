package segment_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/segment"
)

// seq22 is the uncapped Snowflake layout of the core's own benchmarks: 41 bits of ms, no
// node, 22 bits of sequence, so the cap (4.2 billion IDs/s) is out of reach.
var seq22 = layouts.Layout{Name: "seq22", Unit: time.Millisecond, Epoch: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	Fields: []layouts.Field{layouts.Time(41), layouts.Seq(22)}}

// run measures next on one goroutine, or on GOMAXPROCS goroutines sharing the generator.
func run(b *testing.B, parallel bool, next func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		for range b.N {
			if err := next(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := next(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkNext compares a segment's steady-state Next (in-memory store, step 100000, so
// block loads are amortised as they are with any store) with the Snowflake core on the
// uncapped seq22 layout, in one run: benchstat -col /scheme compares them.
func BenchmarkNext(b *testing.B) {
	for _, par := range []bool{false, true} {
		g := "1"
		if par {
			g = "parallel"
		}
		b.Run("scheme=snowflake-seq22/goroutines="+g, func(b *testing.B) {
			s, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: seq22})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Next(); err != nil { // waits out the start tick
				b.Fatal(err)
			}
			run(b, par, func() error { _, err := s.Next(); return err })
		})
		b.Run("scheme=segment/goroutines="+g, func(b *testing.B) {
			s := mustNew(b, segment.Settings{Stores: []segment.Store{newMem()}, Key: "k", Step: 100000})
			if _, err := s.Next(); err != nil {
				b.Fatal(err)
			}
			run(b, par, func() error { _, err := s.Next(); return err })
		})
	}
}

// BenchmarkNextBatch is NextBatch per ID (ns/op is per ID).
func BenchmarkNextBatch(b *testing.B) {
	s := mustNew(b, segment.Settings{Stores: []segment.Store{newMem()}, Key: "k", Step: 100000})
	buf := make([]uint64, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(buf) {
		if err := s.NextBatch(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBoundary times every Next against a store that sleeps 100µs per block (time.Sleep
// rounds that up; the store's measured time per block is reported as ns-store-take), step
// 100000, and reports latency percentiles of the calls that start a block (boundary) and of
// the others (inside). With the double buffer a boundary costs what an inside call does as
// long as 90% of a block lasts longer than a store round trip; without it, every boundary
// waits a round trip. Run it with a fixed count so that every run crosses the same number of
// boundaries:
//
//	go test -run '^$' -bench Boundary -benchtime 20000000x ./schemes/segment/
func BenchmarkBoundary(b *testing.B) {
	const step = 100000
	for _, buffer := range []bool{true, false} {
		b.Run(fmt.Sprintf("buffer=%v", buffer), func(b *testing.B) {
			st := newMem()
			st.delay = 100 * time.Microsecond
			s := mustNew(b, segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: step, NoBuffer: !buffer})
			if err := s.Warm(b.Context()); err != nil {
				b.Fatal(err)
			}
			// Inside latencies go to a histogram of whole nanoseconds (slow ones to a list),
			// so that memory does not grow with b.N.
			var hist [1 << 16]int64
			var slow, boundary []int64
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				if _, err := s.Next(); err != nil {
					b.Fatal(err)
				}
				d := int64(time.Since(t0))
				switch {
				case i > 0 && i%step == 0: // ID i+1 starts a block (every block after the first)
					boundary = append(boundary, d)
				case d < int64(len(hist)):
					hist[d]++
				default:
					slow = append(slow, d)
				}
			}
			b.StopTimer()
			inside := func(p float64) float64 {
				n := int64(b.N - len(boundary))
				rank := int64(p * float64(n))
				for v, c := range hist {
					if rank < c {
						return float64(v)
					}
					rank -= c
				}
				slices.Sort(slow)
				return float64(slow[min(int(rank), len(slow)-1)])
			}
			slices.Sort(boundary)
			pct := func(v []int64, p float64) float64 {
				if len(v) == 0 {
					return 0
				}
				return float64(v[min(len(v)-1, int(p*float64(len(v))))])
			}
			b.ReportMetric(inside(0.5), "ns-p50-inside")
			b.ReportMetric(inside(0.999), "ns-p99.9-inside")
			b.ReportMetric(pct(boundary, 0.5), "ns-p50-boundary")
			b.ReportMetric(pct(boundary, 0.999), "ns-p99.9-boundary")
			b.ReportMetric(float64(len(boundary)), "boundaries")
			waits := len(boundary) - slices.IndexFunc(boundary, func(d int64) bool { return d > int64(10*time.Microsecond) })
			if waits > len(boundary) {
				waits = 0
			}
			b.ReportMetric(float64(waits), "boundaries>10µs")
			b.ReportMetric(float64(st.takeNanos.Load())/float64(st.takes.Load()), "ns-store-take")
		})
	}
}
