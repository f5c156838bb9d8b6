package schemes

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// units are the divisors the generator meets (time units in ns) plus awkward ones: small
// numbers, powers of two and their neighbours, primes, and the largest values.
func dividerUnits() []uint64 {
	us := []uint64{1, 2, 3, 4, 5, 7, 10, 1000, 1_000_000, 10_000_000, 1_000_000_000,
		uint64(time.Hour), uint64(time.Hour) * 24, 999_999_937, math.MaxUint32, math.MaxUint32 + 1,
		1<<62 - 1, 1 << 62, 1<<62 + 1, 1 << 63, 1<<63 + 1, math.MaxUint64 - 1, math.MaxUint64}
	for s := 2; s < 64; s++ {
		us = append(us, 1<<s-1, 1<<s, 1<<s+1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		us = append(us, r.Uint64()>>r.IntN(64)|1)
	}
	return us
}

func TestDivider(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range dividerUnits() {
		v := newDivider(d)
		ns := []uint64{0, 1, d - 1, d, d + 1, 2*d - 1, 2 * d, 1<<62 - 1, 1 << 62, 1<<62 + 1,
			1<<63 - 1, 1 << 63, 1<<63 + 1, math.MaxUint64}
		// The multiply is used up to 2^63: the multiples of d just below it (and just
		// below 2^62, the bound of an earlier version) are where a rounding error shows.
		for _, top := range []uint64{1<<62 - 1, 1<<63 - 1} {
			for k := uint64(1); k < 1000; k++ {
				if q := top / d; q >= k {
					ns = append(ns, (q-k)*d, (q-k)*d-1, (q-k)*d+d-1)
				}
			}
			ns = append(ns, top/d*d, top/d*d-1, top)
		}
		for range 2000 {
			ns = append(ns, r.Uint64()>>r.IntN(64))
		}
		for _, n := range ns {
			if got, want := v.div(n), n/d; got != want {
				t.Fatalf("divider(%d).div(%d) = %d, want %d", d, n, got, want)
			}
		}
	}
}

func FuzzDivider(f *testing.F) {
	for _, d := range dividerUnits()[:40] {
		f.Add(d, uint64(1<<62-1))
		f.Add(d, d*3-1)
	}
	f.Fuzz(func(t *testing.T, d, n uint64) {
		if d == 0 {
			return
		}
		if got, want := newDivider(d).div(n), n/d; got != want {
			t.Fatalf("divider(%d).div(%d) = %d, want %d", d, n, got, want)
		}
	})
}
