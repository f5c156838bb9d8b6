package mask

import (
	"encoding/binary"
	"fmt"

	"github.com/dchest/siphash"
)

// Rounds is the number of Feistel rounds of a Permutation: 10, as NIST SP 800-38G prescribes
// for FF1, whose structure Permutation follows (an alternating Feistel network over the two
// halves of the value, unbalanced when the width is odd) with a binary alphabet and
// SipHash-2-4 in place of FF1's AES-based round function. Luby and Rackoff's 4 rounds are
// proven secure only up to about 2^(h/2) queries for h-bit halves — 2^16 for a 64-bit layout,
// fewer IDs than a public API shows; Patarin's analyses of 5 and more rounds raise the bound
// towards 2^h, and the attacks published on format-preserving schemes with fewer rounds or
// small domains (on FF3's 8 rounds; message recovery on small domains) are why FF1 keeps 10.
// Each round costs one SipHash call on 7 bytes.
const Rounds = 10

// MinBits is the smallest width NewPermutation accepts. Below about 2^20 values a table of
// every masked value is small enough to collect, so a mask hides little whatever the rounds
// (NIST SP 800-38G asks FF1 domains for at least a million values); tests use small widths to
// check the permutation exhaustively.
const MinBits = 2

// Permutation is a keyed permutation of the n-bit integers (0 to 2^n-1, n from 2 to 64): Mask
// maps each to a distinct n-bit integer, and Unmask maps it back. For a 64-bit ID layout of n
// bits it hides every field (time, node, sequence) and keeps masked values in the layout's
// width, so a 63-bit layout's masked IDs stay below 2^63 and fit the same signed columns.
//
// It is an alternating Feistel network of Rounds rounds: the value is split into a high half
// A of u = n/2 bits and a low half B of v = n-u bits, and round i replaces (A, B) by
// (B, A XOR F_i(B)), where F_i(B) is SipHash-2-4 under the key of the 7-byte message
// B (4 bytes, little-endian) ‖ i ‖ n ‖ 'F', cut to the width of A. Halves trade widths each
// round, so after an even number of rounds A again has u bits and B has v:
//
//	x = A‖B   --F_0-->  B‖(A⊕F_0(B))  --F_1-->  …  (10 rounds)  -->  Mask(x)
//
// The width is part of every message, so permutations of different widths under one key are
// unrelated. The zero Permutation is not usable; make one with NewPermutation.
type Permutation struct {
	k0, k1 uint64
	n, u   uint8 // width and high-half width; the low half has n-u bits
}

// NewPermutation returns the permutation of n-bit integers under key k. It fails for n outside
// MinBits..64.
func NewPermutation(k Key, n int) (Permutation, error) {
	if n < MinBits || n > 64 {
		return Permutation{}, fmt.Errorf("mask: permutation of %d bits: want %d to 64", n, MinBits)
	}
	return Permutation{k0: k.k0, k1: k.k1, n: uint8(n), u: uint8(n / 2)}, nil
}

// Bits returns the width n: Mask and Unmask map integers below 2^n to integers below 2^n.
func (p Permutation) Bits() int { return int(p.n) }

// Mask returns x's masked value. Only the low Bits bits of x are read.
func (p Permutation) Mask(x uint64) uint64 {
	u, v := uint(p.u), uint(p.n-p.u)
	a, b := (x>>v)&ones(u), x&ones(v)
	for i := range uint8(Rounds) {
		m := u // width of a in this round
		if i%2 == 1 {
			m = v
		}
		a, b = b, a^p.f(i, b)&ones(m)
	}
	return a<<v | b
}

// Unmask returns the value whose mask is y: Unmask(Mask(x)) == x for every n-bit x. Only the
// low Bits bits of y are read.
func (p Permutation) Unmask(y uint64) uint64 {
	u, v := uint(p.u), uint(p.n-p.u)
	a, b := (y>>v)&ones(u), y&ones(v)
	for i := uint8(Rounds); i > 0; i-- {
		m := u // width of the half that round i-1 changed
		if (i-1)%2 == 1 {
			m = v
		}
		a, b = b^p.f(i-1, a)&ones(m), a
	}
	return a<<v | b
}

// f is the round function: SipHash-2-4 of half ‖ round ‖ width ‖ 'F'. Seven bytes keep SipHash
// to one compression block. The message is written with one 8-byte store: written a byte at a
// time, the CPU cannot forward the stores to SipHash's 8-byte load, and each round waits
// about 10 ns longer (measured on amd64; the rounds depend on each other, so it adds up).
func (p Permutation) f(round uint8, half uint64) uint64 {
	var msg [8]byte
	binary.LittleEndian.PutUint64(msg[:], half&0xffffffff|uint64(round)<<32|uint64(p.n)<<40|'F'<<48)
	return siphash.Hash(p.k0, p.k1, msg[:7])
}

// ones returns a mask of the low n bits, n ≤ 64.
func ones(n uint) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}
