package engine

import (
	"container/heap"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/segment"
)

// Defaults of the fleet simulation (Config.FleetRate, Config.ClockSkew).
const (
	// DefaultFleetRate is the rate at which the whole simulated fleet issues IDs: the seed
	// design's 100,000 IDs/s.
	DefaultFleetRate = 100000
	// DefaultClockSkew is the standard deviation of the simulated nodes' clock offsets: 1 ms,
	// what NTP keeps servers of one network within.
	DefaultClockSkew = time.Millisecond
)

// FleetSettings shape the simulated fleet of one row.
type FleetSettings struct {
	Rate float64       // IDs per second across the fleet
	Skew time.Duration // standard deviation of the node clock offsets
	Seed uint64        // seeds the offsets and arrival times, not the IDs' random bits
}

// Fleet simulates K application servers writing one table, each with its own generator,
// node value and clock. Simulated time starts at the real time the fleet is made. Node i
// issues IDs as a Poisson process of rate R/K, so the fleet as a whole issues R per second;
// its clock reads true time plus a fixed offset drawn from a normal distribution with
// standard deviation skew. Rows reach the table in the true order of issue, so the keys
// interleave as the nodes' clocks (not a round-robin) order them.
//
// Generation of Snowflake-family IDs (snowflake, sonyflake) runs idkit's own Snowflake
// generator on the scheme's layout with the node's clock, ULIDs run idkit's ULID generator
// with that clock, and UUIDv7s are composed per node as google/uuid composes them (RFC 9562
// method 3: 12 bits of sub-millisecond time, kept increasing per process) from the node's
// clock. UUIDv4 keys take no time. It is safe for concurrent use.
type Fleet struct {
	mu    sync.Mutex
	Col   Column
	nodes fleetHeap
	rng   *rand.Rand
	gap   float64   // mean gap between one node's IDs, in nanoseconds
	Start time.Time // true time zero
	// closers release what node generators hold (a segment node's store connections).
	closers []func()
	// Durability reads the class of the store a segment fleet shares; nil for other fleets.
	Durability func() []string
}

// Close releases what the nodes' generators hold, last taken first (the nodes before the
// store they share).
func (f *Fleet) Close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
	f.closers = nil
}

// fleetNode is one simulated server.
type fleetNode struct {
	at     float64 // true time of its next ID, ns after start
	offset time.Duration
	clock  *fleetClock
	Next   func() (Value, error)
}

// fleetClock is a node's clock: true time plus the node's offset, advanced by Sleep (a
// Snowflake generator that uses up a tick sleeps until the next). It never goes back: after
// such a sleep it stays ahead of true time until true time catches up.
type fleetClock struct{ now time.Time }

func (c *fleetClock) Now() time.Time        { return c.now }
func (c *fleetClock) Sleep(d time.Duration) { c.now = c.now.Add(d) }

type fleetHeap []*fleetNode

func (h fleetHeap) Len() int           { return len(h) }
func (h fleetHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h fleetHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fleetHeap) Push(x any)        { *h = append(*h, x.(*fleetNode)) }
func (h *fleetHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// newFleet returns a fleet of k nodes generating the keys of r.
func newFleet(r Row, k int, fs FleetSettings) (*Fleet, error) {
	if fs.Rate <= 0 || math.IsNaN(fs.Rate) || math.IsInf(fs.Rate, 0) {
		return nil, fmt.Errorf("dbbench: fleet rate %v IDs/s: want a positive number", fs.Rate)
	}
	if fs.Skew < 0 {
		return nil, fmt.Errorf("dbbench: clock skew %v: want 0 or more", fs.Skew)
	}
	f := &Fleet{
		Col:   r.Col,
		rng:   rand.New(rand.NewPCG(fs.Seed, uint64(k))),
		gap:   float64(k) / fs.Rate * 1e9,
		Start: time.Now(),
	}
	mk, err := FleetMaker(r, k, &f.closers, &f.Durability)
	if err != nil {
		return nil, err
	}
	for i := range k {
		n := &fleetNode{offset: time.Duration(f.rng.NormFloat64() * float64(fs.Skew))}
		n.at = f.rng.ExpFloat64() * f.gap
		n.clock = &fleetClock{now: f.Start.Add(n.offset)}
		next, err := mk(i, n.clock)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dbbench: scheme %q, simulated node %d: %w", r.Label, i, err)
		}
		n.Next = textForm(r, next)
		f.nodes = append(f.nodes, n)
	}
	heap.Init(&f.nodes)
	return f, nil
}

// textForm wraps next for rows stored as text: the 128-bit generators make 16 bytes, which
// such a row stores in their canonical text (ULID or UUID, as the scheme's IDs are).
func textForm(r Row, next func() (Value, error)) func() (Value, error) {
	switch r.Col {
	case ColText, ColTextICU, ColTextDefault:
	case ColPublicText:
		return publicTextForm(r, next)
	default:
		return next
	}
	from := idkit.FromUUID
	if strings.HasPrefix(r.Canon, "ulid") {
		from = idkit.FromULID
	}
	return func() (Value, error) {
		v, err := next()
		if err == nil && v.Str == "" {
			v.Str = from(v.B16).String()
		}
		return v, err
	}
}

// publicTextForm wraps next for rows stored as their public text (ColPublicText): the text
// the scheme's codec writes for the 16 bytes of a 128-bit node's ID, or for the 64 bits of a
// layout's.
func publicTextForm(r Row, next func() (Value, error)) func() (Value, error) {
	c, err := idkit.NewCodec(r.Spec)
	if err != nil {
		return func() (Value, error) { return Value{}, fmt.Errorf("dbbench: scheme %q: %w", r.Label, err) }
	}
	return func() (Value, error) {
		v, err := next()
		if err != nil {
			return v, err
		}
		id := idkit.FromUint64(v.U64)
		if v.U64 == 0 {
			id = idkit.FromUint64(uint64(v.I64)) // a node that fills only i64 (segment)
		}
		if v.B16 != ([16]byte{}) {
			id = idkit.FromUUID(v.B16)
		}
		if v.Str, err = idkit.FormatID(c, id); err != nil {
			return v, fmt.Errorf("dbbench: scheme %q: public text of an ID: %w", r.Label, err)
		}
		return v, nil
	}
}

// FleetMaker returns the constructor of node i's generator for row r. A constructor that opens
// resources appends their release to closers.
func FleetMaker(r Row, k int, closers *[]func(), durability *func() []string) (func(i int, c *fleetClock) (func() (Value, error), error), error) {
	s, err := idkit.New(r.Spec)
	if err != nil {
		return nil, fmt.Errorf("dbbench: scheme %q: %w", r.Label, err)
	}
	defer closeScheme(s)
	if lo, ok := idkit.As[idkit.Layouter](s); ok {
		l := lo.Layout()
		if uint64(k) > l.Nodes() {
			return nil, fmt.Errorf("dbbench: scheme %q holds %d nodes, fewer than --nodes %d", r.Label, l.Nodes(), k)
		}
		return func(i int, c *fleetClock) (func() (Value, error), error) {
			return snowflakeNode(l, uint64(i), c, r)
		}, nil
	}
	switch name := s.Name(); {
	case name == "ulid" || name == "ulid:monotonic=false":
		mono := name == "ulid"
		text := r.Col == ColText || r.Col == ColTextICU
		return func(_ int, c *fleetClock) (func() (Value, error), error) { return ulidNode(mono, text, c) }, nil
	case name == "uuidv7" || name == "typeid" || strings.HasPrefix(name, "typeid:"):
		// A typeid generator is a UUIDv7 generator whose public text is a TypeID; the
		// database stores the UUIDv7 (or, for RowTypeIDText, its text: publicTextForm).
		return func(_ int, c *fleetClock) (func() (Value, error), error) { return uuidv7Node(c) }, nil
	case name == "uuidv4" || strings.HasPrefix(name, "uuidv4:"):
		return func(int, *fleetClock) (func() (Value, error), error) {
			g, err := idkit.New(r.Spec)
			if err != nil {
				return nil, err
			}
			return func() (Value, error) {
				id, err := g.Next()
				return Value{B16: id.Bytes16()}, err
			}, nil
		}, nil
	case strings.HasPrefix(name, "segment:"):
		// A segment node reads no clock: it is a process of its own, counting through its own
		// blocks of the store all nodes share (package pg, serverside.go). The nodes share one store
		// client too, as processes behind one connection pooler would: a connection each would
		// take 1,024 server connections at --nodes 1024.
		sp, err := idkit.ParseSpec(r.Spec)
		if err != nil {
			return nil, fmt.Errorf("dbbench: scheme %q: %w", r.Label, err)
		}
		url, _ := sp.Lookup("store")
		key, _ := sp.Lookup("key")
		step, _, err := sp.Uint("step", segment.MaxID/2)
		if err != nil {
			return nil, fmt.Errorf("dbbench: scheme %q: %w", r.Label, err)
		}
		st, err := segment.OpenStore(context.Background(), url)
		if err != nil {
			return nil, fmt.Errorf("dbbench: scheme %q: %w", r.Label, err)
		}
		*closers = append(*closers, func() { st.Close() })
		if d, ok := st.(segment.Durabler); ok {
			*durability = func() []string {
				return []string{idkit.Redact("store 1 " + segment.DescribeStore(url) + ": " + d.Durability().String())}
			}
		}
		return func(int, *fleetClock) (func() (Value, error), error) {
			g, err := segment.New(segment.Settings{Key: key, Step: step, Stores: []segment.Store{sharedStore{st}}})
			if err != nil {
				return nil, err
			}
			*closers = append(*closers, func() { g.Close() })
			return func() (Value, error) {
				id, err := g.Next()
				return Value{I64: int64(id)}, err
			}, nil
		}, nil
	default:
		return nil, fmt.Errorf("dbbench: scheme %q: the fleet simulation (--nodes above 1) sets the clock of snowflake, sonyflake, ulid, uuidv7 and typeid generators and runs uuidv4; %s has no clock it can set", r.Label, name)
	}
}

// sharedStore is a segment store that several simulated processes use; closing it through
// one of them leaves it open for the others (the fleet closes it once, at the end).
type sharedStore struct{ segment.Store }

func (sharedStore) Close() error { return nil }

// snowflakeNode is idkit's Snowflake generator for layout l and node, reading clock c, making
// values for row r's column (ColUint64, or unsigned on InnoDB, for layouts whose IDs set bit 63).
func snowflakeNode(l layouts.Layout, node uint64, c *fleetClock, r Row) (func() (Value, error), error) {
	g, err := schemes.NewSnowflake(schemes.SnowflakeSettings{Layout: l, Node: node, Clock: c})
	if err != nil {
		return nil, err
	}
	return func() (Value, error) {
		u, err := g.Next()
		if err != nil {
			return Value{}, err
		}
		if u > math.MaxInt64 && r.Col == ColBigint && !r.Unsigned {
			return Value{}, fmt.Errorf("layout %s made ID %d, which does not fit a signed bigint column", l.Name, u)
		}
		return Value{I64: int64(u), U64: u}, nil
	}, nil
}

// ulidNode is idkit's ULID generator reading clock c, with its own entropy.
func ulidNode(mono, text bool, c *fleetClock) (func() (Value, error), error) {
	g, err := schemes.NewULID(schemes.ULIDSettings{NonMonotonic: !mono, Clock: c, Entropy: seededMathRand()})
	if err != nil {
		return nil, err
	}
	return func() (Value, error) {
		b, err := g.Next()
		if err != nil {
			return Value{}, err
		}
		if text {
			return Value{Str: ulid.ULID(b).String()}, nil
		}
		return Value{B16: b}, nil
	}, nil
}

// seededMathRand returns a math/rand generator seeded from crypto/rand, the entropy idkit's
// ULID generator uses by default; ulid.Monotonic draws from its Int63n.
func seededMathRand() *mrand.Rand {
	var seed [8]byte
	_, _ = crand.Read(seed[:]) // crypto/rand.Read does not fail
	return mrand.New(mrand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))
}

// uuidv7Node composes UUIDv7s from clock c as google/uuid's NewV7 does from the system clock:
// 48 bits of Unix milliseconds, version 7, 12 bits of the sub-millisecond nanoseconds >> 8,
// raised past the last value when the clock has not moved (so one node's UUIDs increase),
// the variant, and 62 random bits.
func uuidv7Node(c *fleetClock) (func() (Value, error), error) {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // crypto/rand.Read does not fail
	rnd := rand.NewChaCha8(seed)
	var last int64
	return func() (Value, error) {
		nano := c.Now().UnixNano()
		milli := nano / 1e6
		now := milli<<12 + (nano-milli*1e6)>>8
		if now <= last {
			now = last + 1
		}
		last = now
		var u [16]byte
		binary.BigEndian.PutUint64(u[8:], rnd.Uint64())
		binary.BigEndian.PutUint64(u[:8], uint64(now>>12)<<16|0x7000|uint64(now&0xfff))
		u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
		return Value{B16: u}, nil
	}, nil
}

// Next fills v with the key the next node in true time issues.
func (f *Fleet) Next(v *Value) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.nodes[0]
	// The node's clock reads the true time of this arrival plus its offset, unless its
	// generator already slept past that (a used-up tick): a clock never goes back, and the
	// request waits as it would on a real server.
	if t := f.Start.Add(time.Duration(n.at) + n.offset); t.After(n.clock.now) {
		n.clock.now = t
	}
	got, err := n.Next()
	if err != nil {
		return fmt.Errorf("dbbench: generate ID: %w", err)
	}
	*v = got
	n.at += f.rng.ExpFloat64() * f.gap
	heap.Fix(&f.nodes, 0)
	return nil
}
