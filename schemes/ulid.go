package schemes

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	mrand "math/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// ULIDSettings configures NewULID. The zero value gives monotonic ULIDs from the system clock
// and the entropy ulid.Make uses, a math/rand generator, here seeded from crypto/rand: fast and
// unpredictable enough for IDs, not a source for secrets.
type ULIDSettings struct {
	// Entropy is read for the random part; nil means a math/rand generator seeded from
	// crypto/rand.
	// It is only read under the generator's lock, so it need not be safe for concurrent use.
	Entropy io.Reader
	// NonMonotonic draws a fresh random part for every ID, as ulid.New with plain entropy
	// does: IDs of one millisecond are then in random order.
	NonMonotonic bool
	// Clock is the time source; nil means the system clock.
	Clock Clock
}

// ULID generates ULIDs (github.com/oklog/ulid/v2): 48 bits of Unix milliseconds and 80 random
// bits, big-endian, so byte order is time order.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      32_bit_uint_time_high                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     16_bit_uint_time_low      |       16_bit_uint_random      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       32_bit_uint_random                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       32_bit_uint_random                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// In monotonic mode (the default) the random part of IDs within one millisecond counts up from
// a random start by a random increment, and the timestamp is taken under the lock and never
// goes back, so one generator's IDs strictly increase even across goroutines. It is safe for
// concurrent use.
type ULID struct {
	mu      sync.Mutex
	mono    *ulid.MonotonicEntropy // nil when not monotonic
	entropy io.Reader              // read directly when not monotonic
	clock   Clock
	last    uint64 // last millisecond used
}

// NewULID returns a ULID generator. It cannot fail today; the error is kept for settings that
// may.
func NewULID(s ULIDSettings) (*ULID, error) {
	e := s.Entropy
	if e == nil {
		var seed [8]byte
		if _, err := crand.Read(seed[:]); err != nil {
			return nil, fmt.Errorf("%w: seeding entropy: %w", ErrSettings, err)
		}
		// A *math/rand.Rand, as in ulid.Make: ulid.Monotonic draws its increments through
		// its Int63n method, and reads bytes through io.ReadFull for any other reader.
		e = mrand.New(mrand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))
	}
	g := &ULID{entropy: e, clock: s.Clock}
	if !s.NonMonotonic {
		g.mono = ulid.Monotonic(e, 0)
	}
	return g, nil
}

// Next returns a new ULID. It fails only if the entropy reader fails, or if one millisecond's
// monotonic increments overflow the 80 random bits (ulid.ErrMonotonicOverflow), which needs
// about 2^40 IDs in that millisecond.
func (g *ULID) Next() ([16]byte, error) {
	var t time.Time
	if g.clock == nil {
		t = time.Now()
	} else {
		t = g.clock.Now()
	}
	ms := ulid.Timestamp(t)
	// The clock is read outside the lock; a reading that is stale by the time the lock is
	// held is raised to the last millisecond used.
	g.mu.Lock()
	if ms < g.last {
		ms = g.last // never go back: keeps one generator's IDs increasing
	}
	g.last = ms
	// What ulid.New does, with the entropy's concrete type: no interface assertion per ID.
	var id ulid.ULID
	err := id.SetTime(ms)
	if err == nil {
		if g.mono != nil {
			err = g.mono.MonotonicRead(ms, id[6:])
		} else {
			_, err = io.ReadFull(g.entropy, id[6:])
		}
	}
	g.mu.Unlock()
	if err != nil {
		return [16]byte{}, fmt.Errorf("schemes: ulid: %w", err)
	}
	return id, nil
}
