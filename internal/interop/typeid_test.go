package interop_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	jetify "go.jetify.com/typeid"

	"github.com/idkit/idkit"
)

// TestTypeIDInterop: go.jetify.com/typeid reads idkit's TypeIDs to the same prefix and UUID,
// and idkit reads the TypeIDs it makes to the same UUID, for new IDs of both and for random
// 128-bit values.
func TestTypeIDInterop(t *testing.T) {
	for _, prefix := range []string{"", "user", "pre_fix", "a"} {
		spec := "typeid"
		if prefix != "" {
			spec += ":prefix=" + prefix
		}
		s, err := idkit.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(prefix))))
		for i := range 20000 {
			// idkit → jetify: new IDs, then random values of every version.
			id, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 {
				var b [16]byte
				for j := range b {
					b[j] = byte(rng.Uint32())
				}
				id = idkit.FromUUID(b)
			}
			text, err := idkit.FormatID(s, id)
			if err != nil {
				t.Fatal(err)
			}
			tid, err := jetify.FromString(text)
			if err != nil {
				t.Fatalf("jetify.FromString(%q): %v", text, err)
			}
			if tid.Prefix() != prefix || tid.UUID() != id.String() || tid.String() != text {
				t.Fatalf("jetify reads %q as prefix %q, UUID %s (%s); idkit made it of %s", text, tid.Prefix(), tid.UUID(), tid, id)
			}
			// jetify → idkit.
			theirs, err := jetify.WithPrefix(prefix)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Parse(theirs.String())
			if err != nil || got.String() != theirs.UUID() {
				t.Fatalf("idkit reads jetify's %s as %s, %v; want %s", theirs, got, err, theirs.UUID())
			}
			if p, err := s.Decode(got); err != nil || p.Version != 7 || p.Time.IsZero() {
				t.Fatalf("Decode(%s) = %+v, %v; want a UUIDv7's time", got, p, err)
			}
			back, err := idkit.FormatID(s, got)
			if err != nil || back != theirs.String() {
				t.Fatalf("idkit shows jetify's %s as %q, %v", theirs, back, err)
			}
		}
	}
}

// userPrefix and userID are a jetify TypeID subtype, as its documentation declares them.
type userPrefix struct{}

func (userPrefix) Prefix() string { return "user" }

type userID struct {
	jetify.TypeID[userPrefix]
}

// BenchmarkTypeIDNew sets generating a TypeID as text with idkit beside go.jetify.com/typeid's
// own constructors, in one run: idkit's Next then FormatID (a string), against jetify's New
// (typed, its documented way) and WithPrefix (untyped), each then String. A jetify TypeID keeps
// its suffix as a string made in New; String joins prefix and suffix. new-only is New alone.
func BenchmarkTypeIDNew(b *testing.B) {
	s, err := idkit.New("typeid:prefix=user")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lib=idkit", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			id, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := idkit.FormatID(s, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lib=jetify-new", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tid, err := jetify.New[userID]()
			if err != nil {
				b.Fatal(err)
			}
			_ = tid.String()
		}
	})
	b.Run("lib=jetify-withprefix", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tid, err := jetify.WithPrefix("user")
			if err != nil {
				b.Fatal(err)
			}
			_ = tid.String()
		}
	})
	b.Run("lib=jetify-new-only", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := jetify.New[userID](); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTypeIDCost runs idkit and jetify's New (then String) alternately in blocks of 256,
// so both see the same load, and reports the medians over the blocks of each one's ns per
// TypeID and of their ratio (medians drop the blocks a busy machine preempted).
func BenchmarkTypeIDCost(b *testing.B) {
	s, err := idkit.New("typeid:prefix=user")
	if err != nil {
		b.Fatal(err)
	}
	var sink string
	b.ReportAllocs()
	var ours, theirs, ratio []float64
	for done := 0; done < b.N; done += 256 {
		k := min(256, b.N-done)
		start := time.Now()
		for range k {
			id, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			if sink, err = idkit.FormatID(s, id); err != nil {
				b.Fatal(err)
			}
		}
		mid := time.Now()
		for range k {
			tid, err := jetify.New[userID]()
			if err != nil {
				b.Fatal(err)
			}
			sink = tid.String()
		}
		o, t := float64(mid.Sub(start))/float64(k), float64(time.Since(mid))/float64(k)
		ours, theirs, ratio = append(ours, o), append(theirs, t), append(ratio, o/t)
	}
	_ = sink
	b.ReportMetric(median(ours), "idkit-ns/id")
	b.ReportMetric(median(theirs), "jetify-ns/id")
	b.ReportMetric(median(ratio), "idkit/jetify")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
