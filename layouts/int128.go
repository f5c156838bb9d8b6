package layouts

import "math/bits"

// int128 is a signed 128-bit integer, hi*2^64 + lo, for the tick arithmetic beyond
// time.Duration's range (tickTime, Tick). It replaces math/big there, which a program that
// only makes IDs would otherwise link (TestLightRoot).
type int128 struct {
	hi int64
	lo uint64
}

// int128Of returns x as an int128.
func int128Of(x int64) int128 { return int128{hi: x >> 63, lo: uint64(x)} }

// neg returns -x.
func (x int128) neg() int128 {
	lo, c := bits.Add64(^x.lo, 1, 0)
	return int128{hi: ^x.hi + int64(c), lo: lo}
}

// add returns x+y; the callers' values stay far inside the range.
func (x int128) add(y int128) int128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	return int128{hi: x.hi + y.hi + int64(c), lo: lo}
}

// mul returns x*m for |x|*m below 2^127.
func (x int128) mul(m uint64) int128 {
	if x.hi < 0 {
		return x.neg().mul(m).neg()
	}
	hi, lo := bits.Mul64(x.lo, m)
	return int128{hi: int64(hi + uint64(x.hi)*m), lo: lo}
}

// divFloor returns the floor of x/d and the remainder, in [0, d), for d > 0.
func (x int128) divFloor(d uint64) (int128, uint64) {
	neg := x.hi < 0
	if neg {
		x = x.neg()
	}
	qhi, rhi := uint64(x.hi)/d, uint64(x.hi)%d
	qlo, r := bits.Div64(rhi, x.lo, d)
	q := int128{hi: int64(qhi), lo: qlo}
	if !neg {
		return q, r
	}
	if r != 0 {
		q, r = q.add(int128Of(1)), d-r
	}
	return q.neg(), r
}

// int64 returns x when it fits an int64.
func (x int128) int64() (int64, bool) {
	v := int64(x.lo)
	return v, x.hi == v>>63
}
