package layouts

import (
	"math"
	"math/big"
	"testing"
)

// FuzzInt128 checks int128's products and floored quotients against math/big's.
func FuzzInt128(f *testing.F) {
	for _, c := range [][3]int64{
		{math.MaxInt64, math.MaxInt64, 1e9}, {math.MinInt64, math.MaxInt64, 1e9}, {math.MinInt64, 1, 7},
		{-1, 1, 1e9}, {-1e9, 1, 1e9}, {-1e9 - 1, 3, 1e9}, {0, 5, 3}, {1 << 62, 1e9, math.MaxInt64},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, a, m, d int64) {
		if m < 0 {
			m = -(m + 1)
		}
		if d <= 0 {
			d = -(d + 1) + 1
		}
		if d <= 0 {
			return
		}
		p := int128Of(a).mul(uint64(m))
		want := new(big.Int).Mul(big.NewInt(a), big.NewInt(m))
		if got := toBig(p); got.Cmp(want) != 0 {
			t.Fatalf("%d*%d = %v, want %v", a, m, got, want)
		}
		q, r := p.divFloor(uint64(d))
		wq, wr := new(big.Int).DivMod(want, big.NewInt(d), new(big.Int))
		if toBig(q).Cmp(wq) != 0 || new(big.Int).SetUint64(r).Cmp(wr) != 0 {
			t.Fatalf("%v / %d = %v r %d, want %v r %v", want, d, toBig(q), r, wq, wr)
		}
		if v, ok := q.int64(); ok != wq.IsInt64() || ok && v != wq.Int64() {
			t.Fatalf("int64(%v) = %d, %v", wq, v, ok)
		}
		s := int128Of(a).add(int128Of(m).neg())
		if got, want := toBig(s), new(big.Int).Sub(big.NewInt(a), big.NewInt(m)); got.Cmp(want) != 0 {
			t.Fatalf("%d-%d = %v, want %v", a, m, got, want)
		}
	})
}

func toBig(x int128) *big.Int {
	v := new(big.Int).Lsh(big.NewInt(x.hi), 64)
	return v.Add(v, new(big.Int).SetUint64(x.lo))
}
