package idkit_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// randomStored returns a function making random stored IDs of the scheme a spec describes.
func randomStored(spec string, rng *rand.Rand) func() idkit.ID {
	b16 := func() [16]byte {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], rng.Uint64())
		binary.BigEndian.PutUint64(b[8:], rng.Uint64())
		return b
	}
	switch {
	case strings.HasPrefix(spec, "typeid") && !strings.Contains(spec, "mask="):
		return func() idkit.ID { return idkit.FromUUID(b16()) }
	case strings.HasPrefix(spec, "typeid"), strings.HasPrefix(spec, "uuidv7"):
		return func() idkit.ID {
			b := b16()
			b[6], b[8] = b[6]&0x0f|0x70, b[8]&0x3f|0x80
			return idkit.FromUUID(b)
		}
	case strings.HasPrefix(spec, "ulid"):
		return func() idkit.ID { return idkit.FromULID(b16()) }
	case strings.Contains(spec, "discord"), strings.HasPrefix(spec, "counter"):
		return func() idkit.ID { return idkit.FromUint64(rng.Uint64()) }
	}
	return func() idkit.ID { return idkit.FromUint64(rng.Uint64() >> 1) } // 63-bit layouts
}

// textSpecs are the public text forms the million-ID round trips cover: every kind of mask and
// prefix, and the wrapper New puts around a registered scheme.
var textSpecs = []string{
	"typeid",
	"typeid:prefix=user",
	"uuidv7:mask=" + testMaskRef,
	"typeid:prefix=user,mask=" + testMaskRef,
	"ulid:prefix=x,mask=" + testMaskRef,
	"snowflake:mask=" + testMaskRef,
	"snowflake:layout=discord,prefix=ord,mask=" + testMaskRef,
	"snowflake:fields=time:41/seq:22,prefix=evt",
	"counter:prefix=c,mask=" + testMaskRef,
}

// TestPublicTextMillion sends a million random stored IDs per scheme through the public text
// and back. Without a mask, text order is ID order: each ID's text is compared with the one
// before. Under the race detector, which makes the loop ten times slower and has nothing to
// find in one goroutine, it sends 100,000; `make test` also runs it without the detector.
func TestPublicTextMillion(t *testing.T) {
	setTestMaskKey(t)
	n := 1_000_000
	if raceEnabled {
		n = 100_000
	}
	for i, spec := range textSpecs {
		c, err := idkit.NewCodec(spec)
		if err != nil {
			t.Fatalf("NewCodec(%q): %v", spec, err)
		}
		next := randomStored(spec, rand.New(rand.NewPCG(uint64(i), 7)))
		ordered := !strings.Contains(spec, "mask=")
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			var buf, prev []byte
			var prevID idkit.ID
			for range n {
				id := next()
				var err error
				buf, err = idkit.AppendID(c, buf[:0], id)
				if err != nil {
					t.Fatalf("AppendID(%s): %v", id, err)
				}
				got, err := c.Parse(string(buf))
				if err != nil || got != id {
					t.Fatalf("Parse(%q) = %s, %v; want %s", buf, got, err, id)
				}
				if ordered && prev != nil && (string(prev) < string(buf)) != (idkit.Compare(prevID, id) < 0) {
					t.Fatalf("text order of %q and %q differs from the order of %s and %s", prev, buf, prevID, id)
				}
				prev, buf, prevID = buf, prev, id
			}
		})
	}
}

// TestMaskWrongKey: a codec with another key does not give the stored ID back.
func TestMaskWrongKey(t *testing.T) {
	setTestMaskKey(t)
	t.Setenv("IDKIT_TEST_OTHER_KEY", "0011223344556677:8899aabbccddeefe")
	for _, spec := range []string{"uuidv7:mask=%s", "typeid:prefix=user,mask=%s", "ulid:mask=%s", "snowflake:mask=%s", "snowflake:layout=discord,prefix=ord,mask=%s", "counter:mask=%s"} {
		right, err := idkit.NewCodec(fmt.Sprintf(spec, testMaskRef))
		if err != nil {
			t.Fatal(err)
		}
		wrong, err := idkit.NewCodec(fmt.Sprintf(spec, "env:IDKIT_TEST_OTHER_KEY"))
		if err != nil {
			t.Fatal(err)
		}
		next := randomStored(spec, rand.New(rand.NewPCG(1, 1)))
		for range 10000 {
			id := next()
			text, err := idkit.FormatID(right, id)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := wrong.Parse(text); err == nil && got == id {
				t.Fatalf("%s: the wrong key read %s back as %s", spec, text, id)
			}
			if text2, _ := idkit.FormatID(wrong, id); text2 == text {
				t.Fatalf("%s: both keys show %s as %s", spec, id, text)
			}
		}
	}
}

// TestMaskUUIDv47Facade: a masked uuidv7 shows the UUIDv47 facade the reference makes (the
// first vector of mask/testdata/uuidv47.jsonl, RFC 9562's example under the extension's test
// key), with or without a prefix.
func TestMaskUUIDv47Facade(t *testing.T) {
	setTestMaskKey(t)
	v7, _ := idkit.Parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
	facade, _ := idkit.Parse("f17f62b4-77d6-4cc3-98c4-dc0c0c07398f")
	c, err := idkit.NewCodec("uuidv7:mask=" + testMaskRef)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := idkit.FormatID(c, v7); err != nil || got != facade.String() {
		t.Errorf("FormatID = %s, %v; want the reference facade %s", got, err, facade)
	}
	if got, err := c.Parse(facade.String()); err != nil || got != v7 {
		t.Errorf("Parse(facade) = %s, %v", got, err)
	}
	tc, err := idkit.NewCodec("typeid:prefix=user,mask=" + testMaskRef)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := idkit.NewCodec("typeid:prefix=user")
	want, _ := idkit.FormatID(plain, facade) // the TypeID of the facade
	if got, err := idkit.FormatID(tc, v7); err != nil || got != want {
		t.Errorf("masked TypeID = %s, %v; want the facade's TypeID %s", got, err, want)
	}
	// A stored UUIDv7 is not a masked one.
	if _, err := c.Parse(v7.String()); !errors.Is(err, idkit.ErrScheme) || !strings.Contains(err.Error(), "version 4") {
		t.Errorf("Parse(stored v7) = %v; want ErrScheme saying masked ones show version 4", err)
	}
}

// TestMaskSettings: what New says of bad mask and prefix settings, never showing a key.
func TestMaskSettings(t *testing.T) {
	const key = "0011223344556677:8899aabbccddeeff"
	dir := t.TempDir()
	badFile := filepath.Join(dir, "k")
	if err := os.WriteFile(badFile, []byte("00112233445566778899aabbccddeeff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IDKIT_TEST_SHORT_KEY", "0011223344556677:8899aabbccddee")
	for _, c := range []struct{ spec, want string }{
		{"snowflake:mask=" + key, "wants env:NAME or file:PATH"},
		{"snowflake:mask=" + key + ",bogus=1", "wants env:NAME or file:PATH"},
		{"snowflake:mask=env:IDKIT_TEST_UNSET_KEY", "environment variable IDKIT_TEST_UNSET_KEY is not set"},
		{"snowflake:mask=env:IDKIT_TEST_SHORT_KEY", "k1 has 14 characters"},
		{"uuidv7:mask=file:" + badFile, "no ':'"},
		{"uuidv7:mask=file:" + filepath.Join(dir, "none"), "no such file"},
		{"uuidv4:mask=file:" + badFile, "no ':'"},
		{"snowflake:fields=time:10/seq:5,mask=env:IDKIT_TEST_SHORT_KEY", "k1 has 14"},
		{"typeid:prefix=User", "is upper case"},
		{"typeid:prefix=user_", "starts or ends with '_'"},
		{"typeid:prefix=" + strings.Repeat("a", 64), "at most 63"},
		{"snowflake:prefix=or-d", "is not a-z or '_'"},
	} {
		_, err := idkit.New(c.spec)
		if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q) = %v; want ErrSpec saying %q", c.spec, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "8899aabb") || strings.Contains(err.Error(), "44556677")) {
			t.Errorf("New(%q): the message shows the key: %v", c.spec, err)
		}
		if _, cerr := idkit.NewCodec(c.spec); cerr == nil {
			t.Errorf("NewCodec(%q) accepted it", c.spec)
		}
	}
	setTestMaskKey(t)
	for _, c := range []struct{ spec, want string }{
		{"uuidv4:mask=" + testMaskRef, "a UUIDv4 is random"},
		{"snowflake:fields=time:10/seq:5,mask=" + testMaskRef, "the IDs have 15 bits; a mask needs at least 20"},
	} {
		if _, err := idkit.New(c.spec); !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q) = %v; want ErrSpec saying %q", c.spec, err, c.want)
		}
	}
}

// TestMaskedIDsStayInWidth: a 63-bit layout's masked IDs stay below 2^63, and masked IDs
// of consecutive stored ones are not in order.
func TestMaskedIDsStayInWidth(t *testing.T) {
	setTestMaskKey(t)
	s, err := idkit.New("snowflake:fields=time:41/seq:22,mask=" + testMaskRef)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]idkit.ID, 10000)
	if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
		t.Fatal(err)
	}
	var prev idkit.ID
	ascending := 0
	for _, id := range ids {
		text, err := idkit.FormatID(s, id)
		if err != nil {
			t.Fatal(err)
		}
		m, err := idkit.Parse(text)
		if err != nil || m.Uint64() >= 1<<63 {
			t.Fatalf("masked %s = %s (%v): not below 2^63", id, text, err)
		}
		if idkit.Compare(prev, m) < 0 {
			ascending++
		}
		prev = m
	}
	if ascending > 5500 || ascending < 4500 {
		t.Errorf("%d of %d masked IDs sort after the one before; a mask should leave about half", ascending, len(ids))
	}
}

// TestRegisteredSchemeText: New gives a registered scheme's IDs the prefix and mask, and the
// scheme keeps its batches.
func TestRegisteredSchemeText(t *testing.T) {
	setTestMaskKey(t)
	s, err := idkit.New("counter:start=5,prefix=c,mask=" + testMaskRef)
	if err != nil {
		t.Fatal(err)
	}
	if want := "counter:start=5,prefix=c,mask=" + testMaskRef; s.Name() != want {
		t.Errorf("Name() = %q, want %q", s.Name(), want)
	}
	if _, ok := s.(idkit.Batcher); !ok {
		t.Error("the wrapped scheme is not a Batcher")
	}
	if _, ok := s.(io.Closer); !ok {
		t.Error("the wrapped scheme is not an io.Closer")
	}
	dst := make([]idkit.ID, 3)
	if err := s.(idkit.Batcher).NextBatch(dst); err != nil || dst[0].Uint64() != 5 || dst[2].Uint64() != 7 {
		t.Fatalf("NextBatch = %v, %v", dst, err)
	}
	text, err := idkit.FormatID(s, dst[0])
	if err != nil || !strings.HasPrefix(text, "c_") || len(text) != 2+13 {
		t.Fatalf("FormatID(5) = %q, %v", text, err)
	}
	if got, err := s.Parse(text); err != nil || got != dst[0] {
		t.Errorf("Parse(%q) = %s, %v", text, got, err)
	}
	if _, err := s.Parse("5"); err == nil {
		t.Error("Parse of the stored text succeeded")
	}
	if _, err := idkit.FormatID(s, idkit.FromUUID([16]byte{1})); !errors.Is(err, idkit.ErrScheme) {
		t.Errorf("FormatID(128-bit) = %v, want ErrScheme", err)
	}
}

// TestAppendIDChecksScheme: a scheme shows only its own IDs.
func TestAppendIDChecksScheme(t *testing.T) {
	v4, _ := idkit.Parse("919108f7-52d1-4320-9bac-f847db4148a8")
	for _, c := range []struct {
		spec string
		id   idkit.ID
	}{
		{"uuidv7", v4},
		{"uuidv7:prefix=user", v4},
		{"snowflake", idkit.FromUint64(1 << 63)},
		{"snowflake:prefix=ord", v4},
		{"ulid", idkit.FromUint64(1)},
		{"typeid", idkit.FromUint64(1)},
	} {
		s, err := idkit.NewCodec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if text, err := idkit.FormatID(s, c.id); !errors.Is(err, idkit.ErrScheme) {
			t.Errorf("%s: FormatID(%s) = %q, %v; want ErrScheme", c.spec, c.id, text, err)
		}
	}
	// The zero ID is no ID: no text.
	s, _ := idkit.NewCodec("typeid:prefix=user")
	if text, err := idkit.FormatID(s, idkit.ID{}); text != "" || err != nil {
		t.Errorf("FormatID(zero) = %q, %v", text, err)
	}
}

// userIDs and orderIDs name the codecs of the Public tests.
type (
	userIDs  struct{}
	orderIDs struct{}
)

var (
	userCodec  = mustCodec("typeid:prefix=user")
	orderCodec = mustCodec("snowflake:prefix=ord")
)

func mustCodec(spec string) idkit.Codec {
	c, err := idkit.NewCodec(spec)
	if err != nil {
		panic(err)
	}
	return c
}

func (userIDs) Codec() idkit.Codec  { return userCodec }
func (orderIDs) Codec() idkit.Codec { return orderCodec }

func TestPublic(t *testing.T) {
	type row struct {
		User  idkit.Public[userIDs]  `json:"user"`
		Order idkit.Public[orderIDs] `json:"order"`
		None  idkit.Public[userIDs]  `json:"none"`
	}
	u, _ := idkit.Parse("01890a5d-ac96-774b-bcce-b302099a8057")
	r := row{User: idkit.Public[userIDs]{u}, Order: idkit.Public[orderIDs]{idkit.FromUint64(1541815603606036480)}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"user":"user_01h455vb4pex5vsknk084sn02q","order":"ord_1asd13xh1f800","none":null}`
	if string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	var back row
	if err := json.Unmarshal(b, &back); err != nil || back != r {
		t.Errorf("json.Unmarshal = %+v, %v; want %+v", back, err, r)
	}
	if r.User.String() != "user_01h455vb4pex5vsknk084sn02q" || fmt.Sprint(r.Order) != "ord_1asd13xh1f800" {
		t.Errorf("String = %s, %v", r.User, r.Order)
	}
	if v, err := r.Order.Value(); err != nil || v != int64(1541815603606036480) {
		t.Errorf("Value = %v, %v; want the stored int64", v, err)
	}
	var scanned idkit.Public[userIDs]
	ub := u.Bytes16()
	if err := scanned.Scan(ub[:]); err != nil || scanned != r.User {
		t.Errorf("Scan = %v, %v", scanned, err)
	}
	for _, in := range []string{
		`{"user":"order_01h455vb4pex5vsknk084sn02q"}`,     // another prefix
		`{"user":"01890a5d-ac96-774b-bcce-b302099a8057"}`, // the stored form
		`{"order":1541815603606036480}`,                   // a number
		`{"user":""}`,
		`{"user":"user_01h455vb4pex5vsknk084sn02Q"}`,
	} {
		var x row
		if err := json.Unmarshal([]byte(in), &x); err == nil {
			t.Errorf("json.Unmarshal(%s) accepted it: %+v", in, x)
		}
	}
	// An ID the scheme cannot show.
	bad := idkit.Public[orderIDs]{u}
	if _, err := json.Marshal(bad); !errors.Is(err, idkit.ErrScheme) {
		t.Errorf("json.Marshal(a UUID as an order ID) = %v, want ErrScheme", err)
	}
	if s := bad.String(); !strings.HasPrefix(s, "%!(") {
		t.Errorf("String() = %q", s)
	}
}

// FuzzParsePublic feeds arbitrary text to the parsers of every public text form: they may
// refuse it (with ErrSyntax or ErrScheme) but not panic, and what they accept shows as text
// that reads back to the same ID.
func FuzzParsePublic(f *testing.F) {
	f.Setenv("IDKIT_TEST_MASK_KEY", testMaskKey)
	var codecs []idkit.Codec
	for _, spec := range append(textSpecs, "sonyflake:prefix=sf", "uuidv4:prefix=req", "ulid:mask="+testMaskRef) {
		c, err := idkit.NewCodec(spec)
		if err != nil {
			f.Fatal(err)
		}
		codecs = append(codecs, c)
		next := randomStored(spec, rand.New(rand.NewPCG(9, 9)))
		if text, err := idkit.FormatID(c, next()); err == nil {
			f.Add(text)
		}
	}
	// The reversed and sharded layouts, seeded with one of their IDs each.
	for _, rs := range rangeSpecs {
		c, err := idkit.NewCodec(rs.spec)
		if err != nil {
			f.Fatal(err)
		}
		codecs = append(codecs, c)
		l := c.(idkit.Layouter).Layout()
		v, err := l.Compose(l.MaxTick()/2, rs.node, 1)
		if err != nil {
			f.Fatal(err)
		}
		if text, err := idkit.FormatID(c, idkit.FromUint64(v)); err == nil {
			f.Add(text)
		}
	}
	for _, c := range readSpecCases(f, "testdata/typeid/valid.yml") {
		f.Add(c.typeid)
	}
	for _, c := range readSpecCases(f, "testdata/typeid/invalid.yml") {
		f.Add(c.typeid)
	}
	for _, s := range []string{"", "_", "user_", "1541815603606036480", "f17f62b4-77d6-4cc3-98c4-dc0c0c07398f", "ord_zzzzzzzzzzzzz", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range codecs {
			id, err := c.Parse(text)
			if err != nil {
				if !errors.Is(err, idkit.ErrSyntax) && !errors.Is(err, idkit.ErrScheme) {
					t.Fatalf("Parse(%q) = %v: neither ErrSyntax nor ErrScheme", text, err)
				}
				continue
			}
			out, err := idkit.FormatID(c, id)
			if err != nil {
				t.Fatalf("Parse(%q) = %s, which FormatID refuses: %v", text, id, err)
			}
			if back, err := c.Parse(out); err != nil || back != id {
				t.Fatalf("Parse(%q) = %s shown as %q, read back as %s, %v", text, id, out, back, err)
			}
		}
	})
}
