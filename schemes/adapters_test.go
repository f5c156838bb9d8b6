package schemes_test

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/sony/sonyflake"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// zeros is an entropy source of zero bytes, so generated IDs are known in advance.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

func TestULIDKnownAnswer(t *testing.T) {
	clk := newFakeClock(time.UnixMilli(1469922850259)) // the ULID spec's example time
	g, err := schemes.NewULID(schemes.ULIDSettings{Entropy: zeros{}, NonMonotonic: true, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Next()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ulid.ULID(b).String(), "01ARZ3NDEK0000000000000000"; got != want {
		t.Errorf("ULID with zero entropy = %s, want %s", got, want)
	}
}

// TestULIDMonotonic: one generator's ULIDs strictly increase, also within one millisecond and
// when its clock steps back, and stay valid for the ulid package.
func TestULIDMonotonic(t *testing.T) {
	clk := newFakeClock(t0)
	g, err := schemes.NewULID(schemes.ULIDSettings{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var prev [16]byte
	for i := range 5000 {
		switch i {
		case 1000:
			clk.Step(-2 * time.Second)
		case 3000:
			clk.Step(3 * time.Second)
		}
		b, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Compare(b[:], prev[:]) <= 0 {
			t.Fatalf("ULID %d: %s not above %s", i, ulid.ULID(b), ulid.ULID(prev))
		}
		prev = b
		u, err := ulid.ParseStrict(ulid.ULID(b).String())
		if err != nil || u != b {
			t.Fatalf("ulid.ParseStrict(%s) = %v, %v", ulid.ULID(b), u, err)
		}
		if i < 1000 && !ulid.Time(u.Time()).Equal(t0) {
			t.Fatalf("ULID %d has time %v, want %v", i, ulid.Time(u.Time()), t0)
		}
	}
}

// scripted is an entropy source that returns its bytes, then 0x01 bytes (not zeros: the
// library's increment draw rejects zero and would read for ever).
type scripted struct{ b []byte }

func (s *scripted) Read(p []byte) (int, error) {
	n := copy(p, s.b)
	s.b = s.b[n:]
	for i := n; i < len(p); i++ {
		p[i] = 1
	}
	return len(p), nil
}

// TestULIDOverflow starts one millisecond's random part near the top of its 80 bits (entropy
// 2^80-3, then increments of 0x01010102) so that the next ID overflows with
// ulid.ErrMonotonicOverflow, then the next millisecond's too, and does the same with an entropy source of zeros (the library
// re-reads a zero state instead of counting up from it). Whatever happens, every ID a generator returns is above the one before; the
// timestamp runs at most one millisecond ahead of the clock; errors wrap
// ulid.ErrMonotonicOverflow until the clock moves on.
func TestULIDOverflow(t *testing.T) {
	// The first ID's random part, one increment (which overflows it), and the random part
	// the generator draws for the next millisecond, which overflows on its first increment
	// too.
	top := bytes.Repeat([]byte{0xff}, 24)
	top[9] = 0xfd
	copy(top[10:], []byte{1, 1, 1, 1})
	for _, tt := range []struct {
		name    string
		entropy io.Reader
	}{
		{"near the top", &scripted{b: top}},
		{"zeros", zeros{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock(t0)
			g, err := schemes.NewULID(schemes.ULIDSettings{Entropy: tt.entropy, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			var prev [16]byte
			issued, failed := 0, 0
			for i := range 40 {
				if i%10 == 9 {
					clk.Step(time.Millisecond)
				}
				b, err := g.Next()
				if err != nil {
					if !errors.Is(err, ulid.ErrMonotonicOverflow) {
						t.Fatalf("call %d: %v, want ulid.ErrMonotonicOverflow", i, err)
					}
					failed++
					continue
				}
				issued++
				if bytes.Compare(b[:], prev[:]) <= 0 {
					t.Fatalf("call %d: %s not above %s", i, ulid.ULID(b), ulid.ULID(prev))
				}
				prev = b
				if ahead := int64(ulid.ULID(b).Time()) - clk.Now().UnixMilli(); ahead > 1 {
					t.Fatalf("call %d: %s is %d ms ahead of the clock, want at most 1", i, ulid.ULID(b), ahead)
				}
			}
			// Each of the four clock milliseconds gives at least one ID; the rest fail
			// until the clock moves.
			if issued < 4 || failed == 0 {
				t.Errorf("%d IDs and %d overflow errors in 40 calls over 4 ms", issued, failed)
			}
		})
	}
}

func TestULIDEntropyError(t *testing.T) {
	for _, mono := range []bool{true, false} {
		g, _ := schemes.NewULID(schemes.ULIDSettings{Entropy: failing{}, NonMonotonic: !mono})
		if _, err := g.Next(); err == nil {
			t.Errorf("monotonic=%v: Next with failing entropy succeeded", mono)
		}
	}
}

func TestUUIDv4(t *testing.T) {
	g, _ := schemes.NewUUIDv4(schemes.UUIDSettings{})
	seen := map[[16]byte]bool{}
	for range 1000 {
		b, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		u, err := uuid.Parse(uuid.UUID(b).String())
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || seen[b] {
			t.Fatalf("UUIDv4 %s: version %d, variant %v, err %v, repeated %v", u, u.Version(), u.Variant(), err, seen[b])
		}
		seen[b] = true
	}
	z, _ := schemes.NewUUIDv4(schemes.UUIDSettings{Entropy: zeros{}})
	if b, _ := z.Next(); uuid.UUID(b).String() != "00000000-0000-4000-8000-000000000000" {
		t.Errorf("UUIDv4 from zero entropy = %s", uuid.UUID(b))
	}
	f, _ := schemes.NewUUIDv4(schemes.UUIDSettings{Entropy: failing{}})
	if _, err := f.Next(); err == nil {
		t.Error("UUIDv4 with failing entropy succeeded")
	}
}

func TestUUIDv7(t *testing.T) {
	g, _ := schemes.NewUUIDv7(schemes.UUIDSettings{})
	var prev [16]byte
	before := time.Now().Add(-time.Millisecond)
	for range 5000 {
		b, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		u, err := uuid.Parse(uuid.UUID(b).String())
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("UUIDv7 %s: version %d, variant %v, err %v", u, u.Version(), u.Variant(), err)
		}
		if bytes.Compare(b[:], prev[:]) <= 0 {
			t.Fatalf("UUIDv7 %s not above %s", u, uuid.UUID(prev))
		}
		prev = b
		sec, nsec := u.Time().UnixTime()
		if tm := time.Unix(sec, nsec); tm.Before(before) || tm.After(time.Now().Add(time.Second)) {
			t.Fatalf("UUIDv7 time %v not near now", tm)
		}
	}
	f, _ := schemes.NewUUIDv7(schemes.UUIDSettings{Entropy: failing{}})
	if _, err := f.Next(); err == nil {
		t.Error("UUIDv7 with failing entropy succeeded")
	}
}

// TestSonyflake checks the adapter's IDs against the library's own decoding.
func TestSonyflake(t *testing.T) {
	g, err := schemes.NewSonyflake(schemes.SonyflakeSettings{Machine: 0xbeef})
	if err != nil {
		t.Fatal(err)
	}
	l := g.Layout()
	if l.Bits() != layouts.Sonyflake.Bits() || !l.Epoch.Equal(layouts.Sonyflake.Epoch) {
		t.Fatalf("layout %v, want the sonyflake preset", l)
	}
	var prev uint64
	for range 600 { // more than one tick's 256
		before := time.Now()
		id, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		if id <= prev {
			t.Fatalf("%d not above %d", id, prev)
		}
		prev = id
		want := sonyflake.Decompose(id)
		p := l.Decompose(id)
		if p.Node != want["machine-id"] || p.Seq != want["sequence"] || uint64(p.Tick) != want["time"] || want["msb"] != 0 {
			t.Fatalf("ID %d: layout says %+v, sonyflake.Decompose %v", id, p, want)
		}
		if p.Time.Before(before.Add(-10*time.Millisecond)) || p.Time.After(after) {
			t.Fatalf("ID %d decodes to %v, generated in [%v, %v]", id, p.Time, before, after)
		}
	}
}

// TestSonyflakeStartTime: the library counts from its start time truncated to 10 ms; the
// adapter's layout must use the same epoch or every decoded time is off.
func TestSonyflakeStartTime(t *testing.T) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 7_654_321, time.UTC) // not on a 10 ms boundary
	g, err := schemes.NewSonyflake(schemes.SonyflakeSettings{Machine: 1, StartTime: start})
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.Next()
	if err != nil {
		t.Fatal(err)
	}
	libEpoch := time.Unix(0, start.UnixNano()/1e7*1e7) // sonyflake's toSonyflakeTime
	want := libEpoch.Add(sonyflake.ElapsedTime(id))
	if got := g.Layout().Decompose(id).Time; !got.Equal(want) {
		t.Errorf("decoded time %v, the library's %v (start %v)", got, want, start)
	}
	if _, err := schemes.NewSonyflake(schemes.SonyflakeSettings{StartTime: time.Now().Add(time.Hour)}); !errors.Is(err, schemes.ErrSettings) {
		t.Errorf("start time in the future: err = %v, want ErrSettings", err)
	}
}

// TestAdaptersConcurrent: each adapter shared by goroutines gives unique IDs, increasing per
// goroutine where the scheme is ordered.
func TestAdaptersConcurrent(t *testing.T) {
	ulidG, _ := schemes.NewULID(schemes.ULIDSettings{})
	v7, _ := schemes.NewUUIDv7(schemes.UUIDSettings{})
	v4, _ := schemes.NewUUIDv4(schemes.UUIDSettings{})
	gens := []struct {
		name    string
		next    func() ([16]byte, error)
		ordered bool
	}{{"ulid", ulidG.Next, true}, {"uuidv7", v7.Next, true}, {"uuidv4", v4.Next, false}}
	n := concurrencyCounts() / 40
	for _, gen := range gens {
		t.Run(gen.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := make(map[[16]byte]bool, n)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					var prev [16]byte
					ids := make([][16]byte, 0, n/8)
					for range n / 8 {
						b, err := gen.next()
						if err != nil {
							t.Error(err)
							return
						}
						if gen.ordered && bytes.Compare(b[:], prev[:]) <= 0 {
							t.Errorf("%x not above %x", b, prev)
							return
						}
						prev = b
						ids = append(ids, b)
					}
					mu.Lock()
					defer mu.Unlock()
					for _, b := range ids {
						if seen[b] {
							t.Errorf("%x issued twice", b)
						}
						seen[b] = true
					}
				})
			}
			wg.Wait()
		})
	}
}

var _ io.Reader = zeros{}
