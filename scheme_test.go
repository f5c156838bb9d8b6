package idkit_test

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/sony/sonyflake"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
)

// schemeCase is one spec of the shared integrity check and what to expect of its IDs.
type schemeCase struct {
	spec    string
	bits    int
	ordered bool    // IDs strictly increase per generator
	timed   bool    // Decode gives the creation time
	node    *uint64 // the node Decode must report, if any
	topBit  bool    // 64-bit IDs with the top bit set (database/sql needs text for them)
}

func node(n uint64) *uint64 { return &n }

// schemeCases covers every scheme: the snowflake presets (but baidu, which ran out in 2024),
// custom layouts, and the adapters.
var schemeCases = []schemeCase{
	{spec: "snowflake", bits: 64, ordered: true, timed: true, node: node(0)},
	{spec: "snowflake:layout=discord,worker=3,process=1", bits: 64, ordered: true, timed: true, node: node(3<<5 | 1)},
	{spec: "snowflake:layout=instagram,shard=8191", bits: 64, ordered: true, timed: true, node: node(8191)},
	{spec: "snowflake:layout=sonyflake,machine=65535", bits: 64, ordered: true, timed: true, node: node(65535)},
	{spec: "snowflake:layout=mastodon", bits: 64, ordered: true, timed: true},
	{spec: "snowflake:layout=twitter,node=1023,lookahead=4,drift_wait=2ms,drift_continue=off", bits: 64, ordered: true, timed: true, node: node(1023)},
	{spec: "snowflake:time_bits=40,node_bits=11,seq_bits=12,unit=10ms,epoch=2024-01-01,node=2047", bits: 64, ordered: true, timed: true, node: node(2047)},
	{spec: "snowflake:fields=time:40/region:4/host:8/seq:11,epoch=2024-01-01T00:00:00Z,region=2,host=9", bits: 64, ordered: true, timed: true, node: node(2<<8 | 9)},
	{spec: "snowflake:fields=time:41/seq:22,epoch=1704067200000", bits: 64, ordered: true, timed: true},
	{spec: "snowflake:fields=time:41/node:5/worker:5/seq:12,node=100", bits: 64, ordered: true, timed: true, node: node(100)},
	{spec: "snowflake:layout=discord,epoch=1950-01-01", bits: 64, ordered: true, timed: true, node: node(0), topBit: true},
	{spec: "ulid", bits: 128, ordered: true, timed: true},
	{spec: "ulid:monotonic=false", bits: 128, timed: true},
	{spec: "uuidv7", bits: 128, ordered: true, timed: true},
	{spec: "uuidv4", bits: 128},
	{spec: "sonyflake:machine=42", bits: 64, ordered: true, timed: true, node: node(42)},
	{spec: "sonyflake:node=7,start=2020-01-01T00:00:00.005Z", bits: 64, ordered: true, timed: true, node: node(7)},
	// Public text forms: prefixes, masks (under testMaskRef) and the typeid scheme.
	{spec: "typeid", bits: 128, ordered: true, timed: true},
	{spec: "typeid:prefix=user", bits: 128, ordered: true, timed: true},
	{spec: "typeid:prefix=user,mask=" + testMaskRef, bits: 128, ordered: true, timed: true},
	{spec: "uuidv7:mask=" + testMaskRef, bits: 128, ordered: true, timed: true},
	{spec: "uuidv4:prefix=req", bits: 128},
	{spec: "ulid:mask=" + testMaskRef, bits: 128, ordered: true, timed: true},
	{spec: "ulid:monotonic=false,prefix=x,mask=" + testMaskRef, bits: 128, timed: true},
	{spec: "snowflake:mask=" + testMaskRef, bits: 64, ordered: true, timed: true, node: node(0)},
	{spec: "snowflake:layout=discord,worker=3,process=1,prefix=ord,mask=" + testMaskRef, bits: 64, ordered: true, timed: true, node: node(3<<5 | 1)},
	{spec: "snowflake:fields=time:41/seq:22,epoch=1704067200000,prefix=evt", bits: 64, ordered: true, timed: true},
	{spec: "sonyflake:machine=42,prefix=sf,mask=" + testMaskRef, bits: 64, ordered: true, timed: true, node: node(42)},
	// Range-partitioned databases: sharded (a hash field on top) and reversed layouts, whose
	// stored IDs do not increase in issue order.
	{spec: "snowflake:node=3,shard_bits=4", bits: 64, timed: true, node: node(3)},
	{spec: "snowflake:datacenter=1,worker=2,shard_bits=2,shard_from=worker", bits: 64, timed: true, node: node(1<<3 | 2)},
	{spec: "snowflake:fields=hash:3/time:40/node:10/seq:10,epoch=2024-01-01,node=5,prefix=evt,mask=" + testMaskRef, bits: 64, timed: true, node: node(5)},
	{spec: "snowflake:reverse=true,worker=9", bits: 64, timed: true, node: node(9)},
	{spec: "snowflake:layout=discord,worker=3,process=1,reverse=true,prefix=ord,mask=" + testMaskRef, bits: 64, timed: true, node: node(3<<5 | 1)},
	{spec: "snowflake:layout=sonyflake,machine=7,reverse=true", bits: 64, timed: true, node: node(7)},
	// Time-reversed (reverse=time): CockroachDB's unordered_unique_rowid shape, 48 bits of
	// 10 µs ticks since 2015 reversed in place above 15 low bits.
	{spec: "snowflake:reverse=time,worker=9", bits: 64, timed: true, node: node(9)},
	// TiDB's AUTO_RANDOM shares a shard per transaction: shard_by=tick, one shard per tick.
	{spec: "snowflake:node=3,shard_bits=4,shard_by=tick", bits: 64, timed: true, node: node(3)},
	{spec: "snowflake:layout=sonyflake,machine=7,shard_bits=3,shard_by=tick,mask=" + testMaskRef, bits: 64, timed: true, node: node(7)},
	{spec: "snowflake:fields=time:48/node:10/seq:5,unit=10us,epoch=2015-01-01,reverse=time,node=5,prefix=crdb,mask=" + testMaskRef, bits: 64, timed: true, node: node(5)},
}

// testMaskRef names the key of the masked schemes of the tests, set by setTestMaskKey.
const testMaskRef = "env:IDKIT_TEST_MASK_KEY"

// testMaskKey is the uuidv47 PostgreSQL extension's test key.
const testMaskKey = "0011223344556677:8899aabbccddeeff"

func setTestMaskKey(t *testing.T) { t.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey) }

func TestSchemes(t *testing.T) {
	setTestMaskKey(t)
	for _, c := range schemeCases {
		t.Run(c.spec, func(t *testing.T) {
			s, err := idkit.New(c.spec)
			if err != nil {
				t.Fatalf("New(%q): %v", c.spec, err)
			}
			if cl, ok := s.(io.Closer); ok {
				defer cl.Close()
			}
			testScheme(t, s, c)
		})
	}
}

// testScheme is the integrity check every scheme passes: uniqueness, order, round trips
// through every encoding, decoding, the canonical name and batches.
func testScheme(t *testing.T, s idkit.Scheme, c schemeCase) {
	n := 3000
	if strings.HasPrefix(c.spec, "sonyflake") {
		n = 600 // 25,600 IDs per second at most
	}
	before := time.Now()
	ids := make([]idkit.ID, n)
	for i := range ids {
		id, err := s.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		ids[i] = id
	}
	after := time.Now()
	seen := make(map[idkit.ID]bool, 2*n)
	for i, id := range ids {
		if id.IsZero() || id.Bits() != c.bits {
			t.Fatalf("ID %d = %#v: want a %d-bit ID", i, id, c.bits)
		}
		if seen[id] {
			t.Fatalf("ID %s issued twice", id)
		}
		seen[id] = true
		if c.ordered && i > 0 {
			if idkit.Compare(ids[i-1], id) >= 0 {
				t.Fatalf("ID %d: %s not after %s", i, id, ids[i-1])
			}
			a, _ := ids[i-1].MarshalBinary()
			b, _ := id.MarshalBinary()
			if bytes.Compare(a, b) >= 0 {
				t.Fatalf("ID %d: bytes %x not after %x", i, b, a)
			}
		}
		if i < 200 || i%50 == 0 {
			checkRoundTrips(t, s, id)
		}
		p, err := s.Decode(id)
		if err != nil {
			t.Fatalf("Decode(%s): %v", id, err)
		}
		switch {
		case c.timed && (p.Time.Before(before.Add(-time.Second)) || p.Time.After(after.Add(time.Second))):
			t.Fatalf("Decode(%s).Time = %v, generated in [%v, %v]", id, p.Time, before, after)
		case c.timed && p.Time.Location() != time.UTC:
			t.Fatalf("Decode(%s).Time in %v, want UTC", id, p.Time.Location())
		case !c.timed && !p.Time.IsZero():
			t.Fatalf("Decode(%s).Time = %v, want none", id, p.Time)
		case c.node != nil && (!p.HasNode || p.Node != *c.node):
			t.Fatalf("Decode(%s).Node = %d (has %v), want %d", id, p.Node, p.HasNode, *c.node)
		}
		if c.bits == 64 && c.topBit != (id.Uint64()>>63 == 1) {
			t.Fatalf("ID %s: top bit %d, want set=%v", id, id.Uint64()>>63, c.topBit)
		}
	}
	testConcurrent(t, s, c, seen)
	testName(t, s, ids[len(ids)-1])
	testBatch(t, s, c, ids[len(ids)-1], seen)
	testForeign(t, s, c)
}

// checkRoundTrips sends id through every encoding and back.
func checkRoundTrips(t *testing.T, s idkit.Scheme, id idkit.ID) {
	t.Helper()
	text := id.String()
	switch id.Format() {
	case idkit.FormatDecimal:
		if text != strconv.FormatUint(id.Uint64(), 10) {
			t.Fatalf("String() = %q, want the decimal %d", text, id.Uint64())
		}
	case idkit.FormatULID:
		if len(text) != 26 || strings.ToUpper(text) != text {
			t.Fatalf("String() = %q, want 26 upper-case Crockford characters", text)
		}
	case idkit.FormatUUID:
		if len(text) != 36 || strings.ToLower(text) != text {
			t.Fatalf("String() = %q, want 36 lower-case hex and dashes", text)
		}
	default:
		t.Fatalf("format %v", id.Format())
	}
	// receiver is what a caller scans or unmarshals 16 bytes into: a ULID stays a ULID only
	// when the receiver already holds one (bytes do not say which 128-bit format they are).
	receiver := func() idkit.ID {
		if id.Format() == idkit.FormatULID {
			return idkit.FromULID([16]byte{})
		}
		return idkit.ID{}
	}
	must := func(what string, got idkit.ID, err error) {
		t.Helper()
		if err != nil || got != id {
			t.Fatalf("%s of %s = %#v, %v; want %#v", what, text, got, err, id)
		}
	}
	got, err := idkit.Parse(text)
	must("idkit.Parse", got, err)
	// The scheme reads its public text, which is the canonical text unless the scheme has a
	// prefix or a mask; then the stored text is not the ID to it.
	pub, err := idkit.FormatID(s, id)
	if err != nil {
		t.Fatalf("FormatID(%s): %v", text, err)
	}
	got, err = s.Parse(pub)
	must(s.Name()+".Parse(FormatID)", got, err)
	if pub != text {
		if got, err := s.Parse(text); err == nil && got == id {
			t.Fatalf("%s.Parse(%s) read the stored text as the ID; want only the public %s", s.Name(), text, pub)
		}
		if c, err := idkit.NewCodec(s.Name()); err != nil {
			t.Fatalf("NewCodec(%q): %v", s.Name(), err)
		} else if cpub, err := idkit.FormatID(c, id); err != nil || cpub != pub {
			t.Fatalf("NewCodec(%q) shows %s as %q, %v; the scheme as %q", s.Name(), text, cpub, err, pub)
		}
	}
	if id.Format() != idkit.FormatDecimal && pub == text {
		got, err = s.Parse(strings.ToUpper(text))
		must("Parse(upper case)", got, err)
		got, err = idkit.Parse(strings.ToLower(text))
		must("idkit.Parse(lower case)", got, err)
	}

	mt, _ := id.MarshalText()
	at, _ := id.AppendText([]byte("x"))
	if string(mt) != text || string(at) != "x"+text {
		t.Fatalf("MarshalText = %q, AppendText = %q; want %q", mt, at, text)
	}
	got = idkit.ID{}
	must("UnmarshalText", got, got.UnmarshalText(mt))

	js, _ := json.Marshal(id)
	if string(js) != `"`+text+`"` {
		t.Fatalf("json.Marshal = %s, want the string %q (64-bit IDs too)", js, text)
	}
	got = idkit.ID{}
	must("json.Unmarshal", got, json.Unmarshal(js, &got))
	jn, _ := json.Marshal(idkit.JSONNumber{ID: id})
	want := `"` + text + `"`
	if id.Bits() == 64 {
		want = text
	}
	if string(jn) != want {
		t.Fatalf("json.Marshal(JSONNumber) = %s, want %s", jn, want)
	}
	var num idkit.JSONNumber
	must("json.Unmarshal(JSONNumber)", num.ID, json.Unmarshal(jn, &num))
	got = idkit.ID{}
	must("json.Unmarshal(number form into ID)", got, json.Unmarshal(jn, &got))
	type row struct {
		ID  idkit.ID         `json:"id"`
		Num idkit.JSONNumber `json:"num"`
	}
	rb, _ := json.Marshal(row{id, idkit.JSONNumber{ID: id}})
	var r row
	if err := json.Unmarshal(rb, &r); err != nil || r.ID != id || r.Num.ID != id {
		t.Fatalf("struct JSON %s came back as %+v, %v", rb, r, err)
	}

	bin, _ := id.MarshalBinary()
	if len(bin) != id.Bits()/8 {
		t.Fatalf("MarshalBinary: %d bytes", len(bin))
	}
	if b16 := id.Bytes16(); !bytes.Equal(b16[16-len(bin):], bin) {
		t.Fatalf("Bytes16 %x does not end in MarshalBinary %x", b16, bin)
	}
	got = receiver()
	must("UnmarshalBinary", got, got.UnmarshalBinary(bin))

	v, err := id.Value()
	if err != nil || !driver.IsValue(v) {
		t.Fatalf("Value() = %#v, %v: not a driver.Value", v, err)
	}
	switch x := v.(type) {
	case int64:
		if id.Bits() != 64 || uint64(x) != id.Uint64() {
			t.Fatalf("Value() = int64 %d for %s", x, text)
		}
	case string:
		if id.Bits() != 64 || id.Uint64() <= 1<<63-1 || x != text {
			t.Fatalf("Value() = string %q for %s; want int64 unless the top bit is set", x, text)
		}
	case []byte:
		if id.Bits() != 128 || !bytes.Equal(x, bin) {
			t.Fatalf("Value() = %x for %s; want its 16 bytes", x, text)
		}
	default:
		t.Fatalf("Value() = %T", v)
	}
	got = receiver()
	must("Scan(Value())", got, got.Scan(v))
	var nid idkit.NullID
	nid.ID = receiver()
	if err := nid.Scan(v); err != nil || !nid.Valid || nid.ID != id {
		t.Fatalf("NullID.Scan(%v) = %+v, %v", v, nid, err)
	}
	if nv, err := nid.Value(); err != nil || fmt.Sprint(nv) != fmt.Sprint(v) {
		t.Fatalf("NullID.Value() = %v, %v; want %v", nv, err, v)
	}
	// Drivers hand back text for numeric and uuid columns.
	got = receiver()
	must("Scan(text)", got, got.Scan(text))
	got = receiver()
	must("Scan([]byte text)", got, got.Scan([]byte(text)))
}

// testConcurrent shares s among goroutines: all unique (also against earlier IDs), and
// increasing per goroutine for ordered schemes.
func testConcurrent(t *testing.T, s idkit.Scheme, c schemeCase, seen map[idkit.ID]bool) {
	const workers, per = 4, 500
	out := make([][]idkit.ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range per {
				id, err := s.Next()
				if err != nil {
					t.Error(err)
					return
				}
				if n := len(out[w]); c.ordered && n > 0 && idkit.Compare(out[w][n-1], id) >= 0 {
					t.Errorf("goroutine %d: %s not after %s", w, id, out[w][n-1])
					return
				}
				out[w] = append(out[w], id)
			}
		})
	}
	wg.Wait()
	for _, ids := range out {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("ID %s issued twice", id)
			}
			seen[id] = true
		}
	}
}

// testName checks that Name is canonical: New accepts it, and the scheme it gives has the
// same name and understands s's IDs the same way.
func testName(t *testing.T, s idkit.Scheme, id idkit.ID) {
	s2, err := idkit.New(s.Name())
	if err != nil {
		t.Fatalf("New(Name() = %q): %v", s.Name(), err)
	}
	if cl, ok := s2.(io.Closer); ok {
		defer cl.Close()
	}
	if s2.Name() != s.Name() {
		t.Errorf("New(%q).Name() = %q", s.Name(), s2.Name())
	}
	p1, err1 := s.Decode(id)
	p2, err2 := s2.Decode(id)
	if err1 != nil || err2 != nil || fmt.Sprint(p1) != fmt.Sprint(p2) {
		t.Errorf("Decode(%s): %+v, %v by %q; %+v, %v by its re-parsed name", id, p1, err1, s.Name(), p2, err2)
	}
	l1, ok1 := s.(idkit.Layouter)
	l2, ok2 := s2.(idkit.Layouter)
	same := func(a, b layouts.Layout) bool { // the name may change ("twitter-custom" → "custom")
		return a.Bits() == b.Bits() && slices.Equal(a.FieldNames(), b.FieldNames()) && a.Unit == b.Unit && a.Epoch.Equal(b.Epoch) && a.Reverse == b.Reverse
	}
	if ok1 != ok2 || ok1 && !same(l1.Layout(), l2.Layout()) {
		t.Errorf("layouts differ after re-parsing %q", s.Name())
	}
}

// testBatch checks NextBatch where the scheme has it: unique and, for an ordered scheme,
// increasing after what came before.
func testBatch(t *testing.T, s idkit.Scheme, c schemeCase, last idkit.ID, seen map[idkit.ID]bool) {
	b, ok := s.(idkit.Batcher)
	if !ok {
		return
	}
	dst := make([]idkit.ID, 1500) // crosses NextBatch's 512-ID chunks
	if err := b.NextBatch(dst); err != nil {
		t.Fatalf("NextBatch: %v", err)
	}
	prev := last
	for i, id := range dst {
		if c.ordered && idkit.Compare(prev, id) >= 0 || seen[id] {
			t.Fatalf("NextBatch[%d] = %s after %s (seen before: %v)", i, id, prev, seen[id])
		}
		seen[id], prev = true, id
	}
}

// testForeign hands s IDs and text of other schemes.
func testForeign(t *testing.T, s idkit.Scheme, c schemeCase) {
	other := []idkit.ID{idkit.FromUint64(1 << 62), idkit.FromULID([16]byte{15: 1})}
	for _, id := range other {
		if id.Bits() == c.bits {
			continue
		}
		if _, err := s.Decode(id); !errors.Is(err, idkit.ErrScheme) {
			t.Errorf("Decode(%v %s) = %v, want ErrScheme", id.Format(), id, err)
		}
	}
	for _, text := range []string{"", "x", "-1", "18446744073709551616", "01ARZ3NDEKTSV4RRFFQ69G5FA", "017f22e2-79b0-7cc3-98c4-dc0c0c07398"} {
		if id, err := s.Parse(text); err == nil || !errors.Is(err, idkit.ErrSyntax) && !errors.Is(err, idkit.ErrScheme) {
			t.Errorf("Parse(%q) = %v, %v; want ErrSyntax or ErrScheme", text, id, err)
		}
	}
}

// TestAdaptersStayValid: what the adapters make is valid for the wrapped library itself.
func TestAdaptersStayValid(t *testing.T) {
	for _, spec := range []string{"ulid", "ulid:monotonic=false", "uuidv7", "uuidv4", "sonyflake:machine=513"} {
		t.Run(spec, func(t *testing.T) {
			s, err := idkit.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			for range 300 {
				id, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				p, err := s.Decode(id)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case strings.HasPrefix(spec, "ulid"):
					u, err := ulid.Parse(id.String())
					if err != nil || u != ulid.ULID(id.Bytes16()) || !ulid.Time(u.Time()).Equal(p.Time) {
						t.Fatalf("ulid.Parse(%s) = %v, %v; time %v, Decode says %v", id, u, err, ulid.Time(u.Time()), p.Time)
					}
				case strings.HasPrefix(spec, "uuid"):
					u, err := uuid.Parse(id.String())
					want := uuid.Version(7)
					if spec == "uuidv4" {
						want = 4
					}
					if err != nil || u != uuid.UUID(id.Bytes16()) || u.Version() != want || u.Variant() != uuid.RFC4122 || int(want) != p.Version {
						t.Fatalf("uuid.Parse(%s) = %v, %v: version %v variant %v; Decode version %d", id, u, err, u.Version(), u.Variant(), p.Version)
					}
					if want == 7 {
						sec, nsec := u.Time().UnixTime()
						if tm := time.Unix(sec, nsec); !tm.Equal(p.Time) {
							t.Fatalf("uuid time %v, Decode says %v", tm, p.Time)
						}
					}
				case strings.HasPrefix(spec, "sonyflake"):
					d := sonyflake.Decompose(id.Uint64())
					got := map[string]uint64{}
					for _, f := range p.Fields {
						got[f.Name] = f.Value
					}
					if d["time"] != got["time"] || d["sequence"] != p.Seq || d["machine-id"] != p.Node || p.Node != 513 {
						t.Fatalf("sonyflake.Decompose(%s) = %v; Decode says %+v", id, d, p)
					}
					lt, ok := s.(idkit.Layouter)
					if !ok {
						t.Fatal("sonyflake scheme is not a Layouter")
					}
					if want := lt.Layout().Epoch.Add(sonyflake.ElapsedTime(id.Uint64())); !want.Equal(p.Time) {
						t.Fatalf("time %v, library says %v", p.Time, want)
					}
				}
			}
		})
	}
}

// TestBaiduRanOut: the baidu preset's time field ended in 2024; New says so instead of
// wrapping.
func TestBaiduRanOut(t *testing.T) {
	_, err := idkit.New("snowflake:layout=baidu")
	if err == nil || !strings.Contains(err.Error(), "ran out") || !strings.Contains(err.Error(), "2024-11-20") {
		t.Errorf("New(baidu) = %v; want an error saying it ran out on 2024-11-20", err)
	}
}

func TestCompare(t *testing.T) {
	ids := []idkit.ID{
		{},
		idkit.FromUint64(0),
		idkit.FromUint64(1),
		idkit.FromUint64(1<<64 - 1),
		idkit.FromULID([16]byte{15: 1}), // same value: by format, ULID before UUID
		idkit.FromUUID([16]byte{15: 1}),
		idkit.FromULID([16]byte{0: 1}),
	}
	sorted := slices.Clone(ids)
	slices.Reverse(sorted)
	slices.SortFunc(sorted, idkit.Compare)
	if !slices.Equal(sorted, ids) {
		t.Errorf("sorted: %v\nwant:   %v", sorted, ids)
	}
}

// TestNoderFenced checks which schemes report a node and a fence: snowflake both (a fixed node
// is never fenced), sonyflake its machine (never fenced), the others neither.
func TestNoderFenced(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		node   uint64
		noder  bool
		fenced bool
	}{
		{"snowflake:layout=twitter,datacenter=2,worker=3", 2<<5 | 3, true, true},
		{"snowflake:layout=discord,node=77", 77, true, true},
		{"ulid", 0, false, false},
		{"uuidv7", 0, false, false},
		{"sonyflake:machine=5", 5, true, false},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			s, err := idkit.New(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			n, ok := s.(idkit.Noder)
			if ok != tc.noder || ok && n.Node() != tc.node {
				t.Errorf("Noder: %v, want %v with node %d", ok, tc.noder, tc.node)
			}
			f, ok := s.(idkit.Fenced)
			if ok != tc.fenced || ok && f.Err() != nil {
				t.Errorf("Fenced: %v, want %v and no error", ok, tc.fenced)
			}
		})
	}
}
