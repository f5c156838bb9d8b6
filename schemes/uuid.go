package schemes

import (
	crand "crypto/rand"
	"io"

	"github.com/google/uuid"
)

// UUIDSettings configures NewUUIDv4 and NewUUIDv7. The zero value uses crypto/rand, as
// github.com/google/uuid does by default.
type UUIDSettings struct {
	// Entropy replaces crypto/rand for the random bits; it must be safe for concurrent use.
	Entropy io.Reader
}

// UUIDv4 generates random UUIDs (RFC 9562 version 4) with github.com/google/uuid: 122 random
// bits, no order. It is safe for concurrent use.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           random_a                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          random_a             |  ver  |       random_b        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|var|                       random_c                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           random_c                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type UUIDv4 struct{ entropy io.Reader }

// NewUUIDv4 returns a UUIDv4 generator. It does not fail today.
func NewUUIDv4(s UUIDSettings) (*UUIDv4, error) {
	return &UUIDv4{entropy: entropyOrDefault(s.Entropy)}, nil
}

// Next returns a new UUIDv4. It fails only when the entropy source does, with that source's
// error unchanged (crypto/rand, the default, does not fail). It is a single call so that it
// inlines into idkit's adapter.
func (g *UUIDv4) Next() ([16]byte, error) { return uuid.NewRandomFromReader(g.entropy) }

// UUIDv7 generates time-ordered UUIDs (RFC 9562 version 7) with github.com/google/uuid: 48
// bits of Unix milliseconds, then 12 bits that google/uuid fills with the sub-millisecond part
// of the clock, bumped when needed so that values keep increasing (RFC 9562 method 3), then 62
// random bits.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           unix_ts_ms                          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          unix_ts_ms           |  ver  |       rand_a          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|var|                        rand_b                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                            rand_b                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// google/uuid keeps the last timestamp in a process-wide variable under a lock, so all UUIDv7
// generators of a process share one increasing sequence; that is the wrapped library's design
// and this adapter keeps it rather than adding a second clock. It is safe for concurrent use.
type UUIDv7 struct{ entropy io.Reader }

// NewUUIDv7 returns a UUIDv7 generator. It does not fail today.
func NewUUIDv7(s UUIDSettings) (*UUIDv7, error) {
	return &UUIDv7{entropy: entropyOrDefault(s.Entropy)}, nil
}

// Next returns a new UUIDv7. It fails only when the entropy source does, with that source's
// error unchanged (crypto/rand, the default, does not fail). It is a single call so that it
// inlines into idkit's adapter.
func (g *UUIDv7) Next() ([16]byte, error) { return uuid.NewV7FromReader(g.entropy) }

// entropyOrDefault returns e, or crypto/rand.Reader, which is what google/uuid's NewRandom
// and NewV7 read (its process-wide random pool stays off, as it is by default).
func entropyOrDefault(e io.Reader) io.Reader {
	if e == nil {
		return crand.Reader
	}
	return e
}
