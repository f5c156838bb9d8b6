package idkit_test

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/sony/sonyflake"

	"github.com/idkit/idkit"
)

// benchSchemes are the schemes BenchmarkNext measures through idkit.Scheme; each adapter's
// library is measured directly by BenchmarkLib in the same run, so their ratio is the
// adapter's cost.
var benchSchemes = []struct{ name, spec string }{
	{"snowflake-twitter", "snowflake"},
	{"snowflake-discord", "snowflake:layout=discord"},
	{"snowflake-seq22", "snowflake:fields=time:41/seq:22,epoch=2024-01-01"},
	{"ulid", "ulid"},
	{"ulid-random", "ulid:monotonic=false"},
	{"uuidv7", "uuidv7"},
	{"uuidv4", "uuidv4"},
	{"sonyflake", "sonyflake:machine=1"},
	// The in-memory block store of segment_test.go: the scheme's own cost, blocks amortised.
	{"segment", "segment:store=memseg://bench,key=k,step=100000"},
}

func BenchmarkNext(b *testing.B) {
	for _, bs := range benchSchemes {
		s, err := idkit.New(bs.spec)
		if err != nil {
			b.Fatal(err)
		}
		if c, ok := s.(io.Closer); ok {
			defer c.Close()
		}
		b.Run("scheme="+bs.name+"/goroutines=1", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := s.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("scheme="+bs.name+"/goroutines=parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLib calls the wrapped libraries directly, the way their documentation suggests.
func BenchmarkLib(b *testing.B) {
	sf, err := sonyflake.New(sonyflake.Settings{MachineID: func() (uint16, error) { return 1, nil }})
	if err != nil {
		b.Fatal(err)
	}
	libs := []struct {
		name string
		next func() error
	}{
		{"oklog-ulid", func() error { _ = ulid.Make(); return nil }},
		{"google-uuid-v7", func() error { _, err := uuid.NewV7(); return err }},
		{"google-uuid-v4", func() error { _, err := uuid.NewRandom(); return err }},
		{"sony-sonyflake", func() error { _, err := sf.NextID(); return err }},
	}
	for _, l := range libs {
		b.Run("lib="+l.name+"/goroutines=1", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := l.next(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("lib="+l.name+"/goroutines=parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := l.next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkNextBatch measures idkit's Batcher per ID (ns/op is per ID).
func BenchmarkNextBatch(b *testing.B) {
	s, err := idkit.New("snowflake:fields=time:41/seq:22,epoch=2024-01-01")
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]idkit.ID, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i += len(dst) {
		if err := s.(idkit.Batcher).NextBatch(dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkString(b *testing.B) {
	u, _ := idkit.Parse("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	v, _ := idkit.Parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
	buf := make([]byte, 0, 64)
	for _, id := range []idkit.ID{idkit.FromUint64(1541815603606036480), u, v} {
		b.Run("format="+id.Format().String(), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				buf, _ = id.AppendText(buf[:0])
			}
		})
	}
}

// publicSchemes are the schemes BenchmarkPublicText measures, each unmasked and masked in the
// same run: the ratio is what the mask costs per ID. seq22 is the layout whose Next its
// sequence does not hold back (twitter's 4096 per millisecond do).
var publicSchemes = []struct{ name, spec string }{
	{"uuidv7", "uuidv7"},
	{"uuidv7-mask", "uuidv7:mask=" + testMaskRef},
	{"typeid", "typeid:prefix=user"},
	{"typeid-mask", "typeid:prefix=user,mask=" + testMaskRef},
	{"snowflake-seq22", "snowflake:fields=time:41/seq:22,epoch=2024-01-01"},
	{"snowflake-seq22-mask", "snowflake:fields=time:41/seq:22,epoch=2024-01-01,mask=" + testMaskRef},
	{"snowflake-twitter", "snowflake"},
	{"snowflake-twitter-mask", "snowflake:mask=" + testMaskRef},
}

// BenchmarkPublicText is Next then the public text appended to a buffer, as a server answering
// with text does, on one goroutine.
func BenchmarkPublicText(b *testing.B) {
	b.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	for _, bs := range publicSchemes {
		s, err := idkit.New(bs.spec)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 0, 64)
		b.Run("scheme="+bs.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				id, err := s.Next()
				if err != nil {
					b.Fatal(err)
				}
				if buf, err = idkit.AppendID(s, buf[:0], id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParsePublic reads public text back to the stored ID.
func BenchmarkParsePublic(b *testing.B) {
	b.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	for _, bs := range publicSchemes {
		s, err := idkit.New(bs.spec)
		if err != nil {
			b.Fatal(err)
		}
		id, _ := s.Next()
		text, _ := idkit.FormatID(s, id)
		b.Run("scheme="+bs.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := s.Parse(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// interleave runs a and c alternately in blocks of n calls until each has run b.N times, and
// returns the medians over the blocks of each one's nanoseconds per call and of their ratio
// c/a. Blocks a few microseconds long put both under the same load, and medians drop the
// blocks a busy machine preempted, so the ratio holds where consecutive benchmarks would not.
func interleave(b *testing.B, n int, a, c func()) (nsA, nsC, ratio float64) {
	var as, cs, rs []float64
	for done := 0; done < b.N; done += n {
		k := min(n, b.N-done)
		start := time.Now()
		for range k {
			a()
		}
		mid := time.Now()
		for range k {
			c()
		}
		da, dc := float64(mid.Sub(start))/float64(k), float64(time.Since(mid))/float64(k)
		as, cs, rs = append(as, da), append(cs, dc), append(rs, dc/da)
	}
	return median(as), median(cs), median(rs)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkMaskCost is BenchmarkPublicText's masked/unmasked pairs interleaved (see
// interleave): ns/op covers both; plain-ns/id, masked-ns/id and masked/plain are medians over
// blocks of 256 IDs.
func BenchmarkMaskCost(b *testing.B) {
	b.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	for _, pair := range []struct{ name, plain string }{
		{"uuidv7", "uuidv7"},
		{"typeid", "typeid:prefix=user"},
		{"snowflake-seq22", "snowflake:fields=time:41/seq:22,epoch=2024-01-01"},
		{"snowflake-twitter", "snowflake"},
	} {
		sep := ":"
		if strings.Contains(pair.plain, ":") {
			sep = ","
		}
		var run [2]func()
		for i, spec := range []string{pair.plain, pair.plain + sep + "mask=" + testMaskRef} {
			s, err := idkit.New(spec)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 64)
			run[i] = func() {
				id, err := s.Next()
				if err != nil {
					b.Fatal(err)
				}
				if buf, err = idkit.AppendID(s, buf[:0], id); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run("scheme="+pair.name, func(b *testing.B) {
			b.ReportAllocs()
			plain, masked, ratio := interleave(b, 256, run[0], run[1])
			b.ReportMetric(plain, "plain-ns/id")
			b.ReportMetric(masked, "masked-ns/id")
			b.ReportMetric(ratio, "masked/plain")
		})
	}
}
