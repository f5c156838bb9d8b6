package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// SchemeSequence is the row for the database's own counter: a bigserial, a CockroachDB
// SERIAL under serial_normalization=sql_sequence, a Spanner or TiDB AUTO_INCREMENT without
// sharding. Its keys are 1, 2, 3, … as INT8.
const SchemeSequence = "sequence"

// DefaultSchemes are the rows the model compares by default: the database's counter, the
// time-ordered idkit schemes (Snowflake on Twitter's layout, ULID, UUIDv7), UUIDv4, and the
// Twitter layout made for range-partitioned stores: bit-reversed (Spanner's
// bit_reversed_positive) and with 5 shard bits on top (TiDB's AUTO_RANDOM default).
func DefaultSchemes() []string {
	return []string{SchemeSequence, "snowflake", "ulid", "uuidv7", "uuidv4", "snowflake:reverse=true", "snowflake:shard_bits=5"}
}

// errScheme reports a spec the model cannot turn into keys.
var errScheme = errors.New("dist: scheme")

// sample is one sampled write: its key in the order the target sorts it, the true time it
// was issued (seconds from the start) and the generator node that issued it.
type sample struct {
	key  []byte
	at   float64
	node int
}

// simClock is a generator node's clock: true time plus the node's offset. A Snowflake
// generator that used up its tick sleeps until the next; the clock then stays ahead until
// true time catches up, so it never goes back.
type simClock struct{ now time.Time }

func (c *simClock) Now() time.Time        { return c.now }
func (c *simClock) Sleep(d time.Duration) { c.now = c.now.Add(d) }

// keyNode is one generator node of the fleet.
type keyNode struct {
	offset time.Duration
	clock  *simClock
	next   func() ([]byte, error)
}

// keySource draws the sampled writes of one scheme: K generator nodes with clock offsets
// drawn from a normal distribution, each issuing as a Poisson process, the fleet together
// perSec samples per second of true time.
type keySource struct {
	nodes  []*keyNode
	rng    *rand.Rand
	start  time.Time
	perSec int
	width  int // 8 for INT8 keys, 16 for UUID bytes
}

// modelStart is the true time at which every model run starts, so that keys, and the
// report, are the same on every run with the same seed.
var modelStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newKeySource returns the sampled key stream of spec for k generator nodes.
func newKeySource(spec string, k, perSec int, skew time.Duration, seed uint64) (*keySource, error) {
	if k < 1 {
		return nil, fmt.Errorf("dist: %d generator nodes: want at least 1", k)
	}
	ks := &keySource{rng: rand.New(rand.NewPCG(seed, 0x6469737431)), start: modelStart, perSec: perSec}
	mk, width, err := nodeMaker(spec, k, seed)
	if err != nil {
		return nil, err
	}
	ks.width = width
	for i := range k {
		off := time.Duration(ks.rng.NormFloat64() * float64(skew))
		n := &keyNode{offset: off, clock: &simClock{now: ks.start.Add(off)}}
		if n.next, err = mk(i, n.clock); err != nil {
			return nil, fmt.Errorf("dist: scheme %q, generator node %d: %w", spec, i, err)
		}
		ks.nodes = append(ks.nodes, n)
	}
	return ks, nil
}

// tick returns the sampled writes of second t (true time t to t+1), in the order issued.
// The samples are spread evenly over the second with a random phase; each comes from a
// node chosen uniformly, which is how a Poisson fleet's next arrival is distributed.
func (ks *keySource) tick(t int) ([]sample, error) {
	out := make([]sample, 0, ks.perSec)
	for j := range ks.perSec {
		at := float64(t) + (float64(j)+ks.rng.Float64())/float64(ks.perSec)
		i := ks.rng.IntN(len(ks.nodes))
		n := ks.nodes[i]
		if now := ks.start.Add(time.Duration(at*1e9) + n.offset); now.After(n.clock.now) {
			n.clock.now = now
		}
		key, err := n.next()
		if err != nil {
			return nil, fmt.Errorf("dist: generate a key: %w", err)
		}
		out = append(out, sample{key: key, at: at, node: i})
	}
	return out, nil
}

// int8Key encodes a 64-bit ID as the INT8 (INT64, BIGINT) column of these databases sorts
// it: the two's-complement value with its sign bit flipped, big-endian, so that byte order
// is numeric order (CockroachDB's and TiDB's key codecs both order integers so).
func int8Key(u uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], u^(1<<63))
	return b[:]
}

// nodeMaker returns the constructor of node i's key generator for spec, and the key width.
// 128-bit keys are their 16 bytes, as a UUID column (CockroachDB UUID, YugabyteDB uuid,
// TiDB BINARY(16)) sorts them; their canonical text (UUID hex, ULID Crockford base32)
// sorts in the same order, so a STRING key puts them in the same ranges.
func nodeMaker(spec string, k int, seed uint64) (func(i int, c *simClock) (func() ([]byte, error), error), int, error) {
	if spec == SchemeSequence {
		var n uint64
		return func(int, *simClock) (func() ([]byte, error), error) {
			// One counter shared by every node, as a database sequence is.
			return func() ([]byte, error) { n++; return int8Key(n), nil }, nil
		}, 8, nil
	}
	s, err := idkit.New(spec)
	if err != nil {
		return nil, 0, fmt.Errorf("%w %q: %w", errScheme, spec, err)
	}
	defer func() {
		if c, ok := s.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	if lo, ok := s.(idkit.Layouter); ok {
		l := lo.Layout()
		if uint64(k) > l.Nodes() {
			return nil, 0, fmt.Errorf("%w %q holds %d nodes, fewer than the %d generator nodes asked for", errScheme, spec, l.Nodes(), k)
		}
		return func(i int, c *simClock) (func() ([]byte, error), error) {
			return layoutNode(l, uint64(i), c)
		}, 8, nil
	}
	entropy := func(i int) *seededReader {
		return &seededReader{r: rand.New(rand.NewPCG(seed, uint64(i)+1))}
	}
	switch name := s.Name(); {
	case name == "ulid" || name == "ulid:monotonic=false":
		return func(i int, c *simClock) (func() ([]byte, error), error) {
			g, err := schemes.NewULID(schemes.ULIDSettings{NonMonotonic: name != "ulid", Clock: c, Entropy: entropy(i)})
			if err != nil {
				return nil, err
			}
			return func() ([]byte, error) { b, err := g.Next(); return b[:], err }, nil
		}, 16, nil
	case name == "uuidv7" || name == "typeid" || strings.HasPrefix(name, "typeid:"):
		return func(i int, c *simClock) (func() ([]byte, error), error) { return uuidv7Keys(c, entropy(i)), nil }, 16, nil
	case name == "uuidv4" || strings.HasPrefix(name, "uuidv4:"):
		return func(i int, _ *simClock) (func() ([]byte, error), error) {
			g, err := schemes.NewUUIDv4(schemes.UUIDSettings{Entropy: entropy(i)})
			if err != nil {
				return nil, err
			}
			return func() ([]byte, error) { b, err := g.Next(); return b[:], err }, nil
		}, 16, nil
	default:
		return nil, 0, fmt.Errorf("%w %q: the model sets the clock of snowflake-family, ulid, uuidv7 and typeid generators and runs uuidv4 and the database's sequence; %s has no clock it can set", errScheme, spec, name)
	}
}

// layoutNode is idkit's Snowflake generator for layout l and node, reading clock c; its IDs
// are keyed as INT8.
func layoutNode(l layouts.Layout, node uint64, c *simClock) (func() ([]byte, error), error) {
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Node: node, Clock: c})
	if err != nil {
		return nil, err
	}
	return func() ([]byte, error) {
		u, err := g.Next()
		return int8Key(u), err
	}, nil
}

// uuidv7Keys composes UUIDv7s from clock c with RFC 9562's method 3, as google/uuid does from
// the system clock (which the model cannot set): 48 bits of Unix milliseconds, the version,
// 12 bits of sub-millisecond time raised past the last value so one node's keys increase,
// the variant and 62 random bits from r.
func uuidv7Keys(c *simClock, r *seededReader) func() ([]byte, error) {
	var last int64
	return func() ([]byte, error) {
		ns := c.Now().UnixNano()
		ms := ns / 1e6
		v := ms<<12 | (ns-ms*1e6)*4096/1e6
		if v <= last {
			v = last + 1
		}
		last = v
		b := make([]byte, 16)
		binary.BigEndian.PutUint64(b[:8], uint64(v>>12)<<16|0x7000|uint64(v&0xfff))
		binary.BigEndian.PutUint64(b[8:], r.r.Uint64()&(math.MaxUint64>>2)|1<<63)
		return b, nil
	}
}

// seededReader is an io.Reader of a seeded PCG stream: the model's random bits are the same
// on every run with the same seed.
type seededReader struct{ r *rand.Rand }

func (s *seededReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s.r.Uint32())
	}
	return len(p), nil
}

// bucketOf is the hash bucket of a key among n, as a hash-sharded index computes its hidden
// shard column: FNV-1a of the encoded key, modulo n (CockroachDB's shard column is
// mod(fnv32(...), bucket_count)).
func bucketOf(key []byte, n int) uint16 {
	h := fnv.New32a()
	_, _ = h.Write(key)
	return uint16(h.Sum32() % uint32(n))
}

// prefixed returns key behind a two-byte big-endian prefix p: the shard column of a
// hash-sharded index, or YugabyteDB's 16-bit hash code of a HASH-partitioned key.
func prefixed(p uint16, key []byte) []byte {
	out := make([]byte, 2+len(key))
	binary.BigEndian.PutUint16(out, p)
	copy(out[2:], key)
	return out
}
