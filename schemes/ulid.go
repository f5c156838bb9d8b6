package schemes

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
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
// goes back, so one generator's IDs strictly increase even across goroutines, whatever the
// entropy. When the increments of one millisecond overflow the 80 random bits, the generator
// moves on to the next millisecond with a fresh random part, as a lookahead of one: the
// timestamp may run at most one millisecond ahead of the clock. If that millisecond
// overflows too before the clock reaches it, Next fails with ulid.ErrMonotonicOverflow until
// the clock moves on; it never reuses or lowers a random part. (An entropy source that
// returns zeros gets there after one ID per millisecond: the library re-reads a zero random
// part instead of counting up from it.) It is safe for concurrent use.
type ULID struct {
	mu      sync.Mutex
	mono    *ulid.MonotonicEntropy // nil when not monotonic
	entropy io.Reader              // read directly when not monotonic
	clock   Clock
	last    uint64 // last millisecond used
	full    bool   // the random part of millisecond last overflowed: it is used up
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

// Next returns a new ULID. It fails only if the entropy reader fails, or (wrapping
// ulid.ErrMonotonicOverflow) if the random parts of both the clock's millisecond and the next
// one are used up, which with the default entropy needs about 2^40 IDs in a millisecond.
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
	defer g.mu.Unlock()
	clockMs := ms
	if ms < g.last {
		ms = g.last // never go back: keeps one generator's IDs increasing
	}
	var id ulid.ULID
	if g.mono == nil {
		g.last = ms
		// What ulid.New does, with the entropy's concrete type: no interface assertion.
		err := id.SetTime(ms)
		if err == nil {
			_, err = io.ReadFull(g.entropy, id[6:])
		}
		if err != nil {
			return [16]byte{}, fmt.Errorf("schemes: ulid: %w", err)
		}
		return id, nil
	}
	for {
		if ms == g.last && g.full {
			// This millisecond's random part is used up (the library's counter wrapped:
			// reading it again would go back). Move on, at most one ahead of the clock.
			if ms > clockMs {
				return [16]byte{}, fmt.Errorf("schemes: ulid: millisecond %d used up and the next is ahead of the clock: %w", ms, ulid.ErrMonotonicOverflow)
			}
			ms++
		}
		if err := id.SetTime(ms); err != nil {
			return [16]byte{}, fmt.Errorf("schemes: ulid: %w", err)
		}
		err := g.mono.MonotonicRead(ms, id[6:])
		if err == nil {
			if ms != g.last || !zeroRandom(id) {
				g.last, g.full = ms, false
				return id, nil
			}
			// An increment never gives zero (it overflows instead), so this was a fresh
			// read: the library re-reads while its state is zero, and an entropy source
			// that gave zeros once may give them again. It cannot go above this
			// millisecond's earlier IDs: treat the millisecond as used up.
			err = ulid.ErrMonotonicOverflow
		}
		if !errors.Is(err, ulid.ErrMonotonicOverflow) {
			// A failed read leaves the library's state as it was; ms was not used.
			return [16]byte{}, fmt.Errorf("schemes: ulid: %w", err)
		}
		g.last, g.full = ms, true
	}
}

// zeroRandom reports whether the 80 random bits of id are all zero.
func zeroRandom(id ulid.ULID) bool {
	return id[6]|id[7] == 0 && binary.BigEndian.Uint64(id[8:]) == 0
}
