package mask_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idkit/idkit/mask"
)

var testKey = mask.NewKey(0x7766554433221100, 0xffeeddccbbaa9988) // "0011223344556677:8899aabbccddeeff"

// TestUUIDv47Vectors checks UUIDv47 and UUIDv7 against vectors computed with the reference C
// implementation (testdata/README.md says how), keys read through ParseKey as the
// PostgreSQL extension reads them.
func TestUUIDv47Vectors(t *testing.T) {
	f, err := os.Open("testdata/uuidv47.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct{ Key, UUIDv7, Facade string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		k, err := mask.ParseKey(v.Key)
		if err != nil {
			t.Fatal(err)
		}
		v7, f4 := uuid.MustParse(v.UUIDv7), uuid.MustParse(v.Facade)
		if got := uuid.UUID(mask.UUIDv47(k, v7)); got != f4 {
			t.Errorf("UUIDv47(%s, %s) = %s, reference %s", v.Key, v7, got, f4)
		}
		if got := uuid.UUID(mask.UUIDv7(k, f4)); got != v7 {
			t.Errorf("UUIDv7(%s, %s) = %s, want %s", v.Key, f4, got, v7)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 36 {
		t.Fatalf("%d vectors, want 36", n)
	}
}

// TestPermutationBijection maps every value of a 16-bit and a 17-bit domain (and a few other
// small widths): all images distinct, inside the domain, and mapped back.
func TestPermutationBijection(t *testing.T) {
	for _, n := range []int{2, 3, 7, 16, 17} {
		p, err := mask.NewPermutation(testKey, n)
		if err != nil {
			t.Fatal(err)
		}
		size := uint64(1) << n
		seen := make([]bool, size)
		fixed := 0
		for x := range size {
			y := p.Mask(x)
			switch {
			case y >= size:
				t.Fatalf("n=%d: Mask(%d) = %d, outside %d bits", n, x, y, n)
			case seen[y]:
				t.Fatalf("n=%d: Mask(%d) = %d, which another value maps to", n, x, y)
			case p.Unmask(y) != x:
				t.Fatalf("n=%d: Unmask(Mask(%d) = %d) = %d", n, x, y, p.Unmask(y))
			}
			seen[y] = true
			if y == x {
				fixed++
			}
		}
		// A random permutation has about one fixed point; many would mean it barely mixes.
		if n >= 16 && fixed > 10 {
			t.Errorf("n=%d: %d fixed points", n, fixed)
		}
	}
}

// TestPermutationRoundTrip: a million random values per width round-trip and stay in width.
func TestPermutationRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{64, 63, 41, 20} {
		p, _ := mask.NewPermutation(testKey, n)
		top := uint64(1)<<n - 1
		if n == 64 {
			top = ^uint64(0)
		}
		for range 1_000_000 / 4 {
			x := rng.Uint64() & top
			y := p.Mask(x)
			if y&^top != 0 || p.Unmask(y) != x {
				t.Fatalf("n=%d: %d → %d → %d", n, x, y, p.Unmask(y))
			}
		}
	}
}

// TestPermutationKnownAnswers pins the permutation: every masked ID already shown to users
// depends on it, so a change must be deliberate. The values were computed by this
// implementation when it was written.
func TestPermutationKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		n       int
		in, out uint64
	}{
		{64, 0, 0x3945efc1ffc197dd},
		{64, 1541815603606036480, 0xa21185b7b0bf12bb},
		{63, 1541815603606036480, 0x3ca63af99e070ce0},
		{63, 1<<63 - 1, 0x7cf5269a75cd79c},
		{20, 12345, 0x1f2c0},
	} {
		p, _ := mask.NewPermutation(testKey, c.n)
		if got := p.Mask(c.in); got != c.out {
			t.Errorf("n=%d: Mask(%d) = %#x, want %#x", c.n, c.in, got, c.out)
		}
	}
}

// TestWrongKey: another key gives other masked values and does not give the original back.
func TestWrongKey(t *testing.T) {
	wrong := mask.NewKey(0x7766554433221100, 0xffeeddccbbaa9989) // one bit off
	rng := rand.New(rand.NewPCG(3, 4))
	p, _ := mask.NewPermutation(testKey, 63)
	q, _ := mask.NewPermutation(wrong, 63)
	same := 0
	for range 10000 {
		x := rng.Uint64() >> 1
		if q.Unmask(p.Mask(x)) == x {
			same++
		}
		var u [16]byte
		for i := range u {
			u[i] = byte(rng.Uint32())
		}
		u[6], u[8] = u[6]&0x0f|0x70, u[8]&0x3f|0x80
		if mask.UUIDv7(wrong, mask.UUIDv47(testKey, u)) == u {
			same++
		}
		if mask.ULIDTime(wrong, mask.ULIDTime(testKey, u)) == u {
			same++
		}
	}
	if same > 0 {
		t.Errorf("the wrong key gave %d originals back out of 30000", same)
	}
}

// TestULIDTime: its own inverse, only the time changes, and the time does change.
func TestULIDTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	changed := 0
	for range 1_000_000 / 4 {
		var u [16]byte
		for i := range u {
			u[i] = byte(rng.Uint32())
		}
		m := mask.ULIDTime(testKey, u)
		if [10]byte(m[6:]) != [10]byte(u[6:]) {
			t.Fatalf("random bits changed: %x → %x", u, m)
		}
		if mask.ULIDTime(testKey, m) != u {
			t.Fatalf("%x → %x → %x", u, m, mask.ULIDTime(testKey, m))
		}
		if [6]byte(m[:6]) != [6]byte(u[:6]) {
			changed++
		}
	}
	if changed < 1_000_000/4-1 {
		t.Errorf("the time changed in only %d of %d ULIDs", changed, 1_000_000/4)
	}
}

func TestParseKey(t *testing.T) {
	good := []struct {
		text   string
		k0, k1 uint64
	}{
		{"0011223344556677:8899aabbccddeeff", 0x7766554433221100, 0xffeeddccbbaa9988},
		{"  0011223344556677:8899AABBCCDDEEFF\n", 0x7766554433221100, 0xffeeddccbbaa9988},
		{"efcdab8967452301:1032547698badcfe", 0x0123456789abcdef, 0xfedcba9876543210},
	}
	for _, c := range good {
		k, err := mask.ParseKey(c.text)
		if err != nil || k != mask.NewKey(c.k0, c.k1) {
			t.Errorf("ParseKey(%q) = %v, %v", c.text, k == mask.NewKey(c.k0, c.k1), err)
		}
	}
	const secret = "0011223344556677"
	for _, text := range []string{
		"", secret, secret + ":", ":" + secret, secret + secret, secret + ":" + secret + "0",
		secret + ":001122334455667g", secret + ": " + secret[1:], "0x" + secret[2:] + ":" + secret, secret + "::" + secret,
	} {
		_, err := mask.ParseKey(text)
		if !errors.Is(err, mask.ErrKey) {
			t.Errorf("ParseKey(%q) = %v, want ErrKey", text, err)
			continue
		}
		if strings.Contains(err.Error(), secret[2:10]) {
			t.Errorf("ParseKey(%q): the message shows the key: %v", text, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	if err := os.WriteFile(file, []byte("0011223344556677:8899aabbccddeeff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("0011223344556677-8899aabbccddeeff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("0011223344556677:8899aabbccddeeff\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IDKIT_TEST_MASK_KEY", "0011223344556677:8899aabbccddeeff")
	t.Setenv("IDKIT_TEST_MASK_BAD", "0011223344556677:8899aabbccddeef")
	for _, ref := range []string{"env:IDKIT_TEST_MASK_KEY", "file:" + file} {
		k, err := mask.Load(ref)
		if err != nil || k != testKey {
			t.Errorf("Load(%q): %v", ref, err)
		}
	}
	for ref, want := range map[string]string{
		"env:IDKIT_TEST_MASK_UNSET":         "IDKIT_TEST_MASK_UNSET is not set",
		"env:IDKIT_TEST_MASK_BAD":           "k1 has 15 characters",
		"file:" + filepath.Join(dir, "nil"): "no such file",
		"file:" + bad:                       "no ':'",
		"file:" + big:                       "larger than",
		"0011223344556677:8899aabbccddeeff": "never written inline",
		"env:":                              "want env:NAME or file:PATH",
		"vault:x":                           "want env:NAME or file:PATH",
		// A key pasted after env: or file: is refused without being shown (issue 24, item 7).
		"env:0011223344556677:8899aabbccddeeff":        "env: wants the name of an environment variable",
		"env:K8899aabbccddeeff":                        "env: wants the name of an environment variable",
		"file:0011223344556677:8899aabbccddeeff":       "file: wants the path of a file holding the key",
		"file:/keys/0011223344556677:8899aabbccddeeff": "file: wants the path of a file holding the key",
	} {
		_, err := mask.Load(ref)
		if !errors.Is(err, mask.ErrKey) || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v, want ErrKey saying %q", ref, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "8899aabb") {
			t.Errorf("Load(%q): the message shows the key: %v", ref, err)
		}
	}
}

// TestKeyDoesNotPrint: no fmt verb shows a key's value.
func TestKeyDoesNotPrint(t *testing.T) {
	k := mask.NewKey(0x1122334455667788, 0x99aabbccddeeff00)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%X", "%q", "%T %v"} {
		out := fmt.Sprintf(verb, k)
		if strings.Contains(out, "1122") || strings.Contains(strings.ToLower(out), "aabb") || strings.Contains(out, "1234605616436508552") {
			t.Errorf("Sprintf(%q, key) = %q", verb, out)
		}
	}
	type holder struct{ K mask.Key }
	if out := fmt.Sprintf("%+v", holder{k}); strings.Contains(out, "1122") {
		t.Errorf("a struct holding a key prints %q", out)
	}
}

func TestNewPermutationWidths(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 65} {
		if _, err := mask.NewPermutation(testKey, n); err == nil {
			t.Errorf("NewPermutation(%d) accepted", n)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"0011223344556677:8899aabbccddeeff", "", ":", "0x00:00", "\xff:\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := mask.ParseKey(s)
		if err != nil {
			if !errors.Is(err, mask.ErrKey) {
				t.Fatalf("ParseKey(%q) = %v, not ErrKey", s, err)
			}
			if tr := strings.TrimSpace(s); len(tr) >= 8 && strings.Contains(err.Error(), tr) {
				t.Fatalf("ParseKey(%q): message quotes the text: %v", s, err)
			}
			return
		}
		if k == (mask.Key{}) && strings.Trim(s, "0: \t\n\r\v\f") != "" {
			t.Fatalf("ParseKey(%q) gave the zero key", s)
		}
	})
}

func BenchmarkPermutation(b *testing.B) {
	p, _ := mask.NewPermutation(testKey, 63)
	b.ReportAllocs()
	var x uint64
	for i := range b.N {
		x += p.Mask(uint64(i))
	}
	_ = x
}

func BenchmarkUUIDv47(b *testing.B) {
	u := [16]byte(uuid.MustParse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"))
	b.ReportAllocs()
	for range b.N {
		u = mask.UUIDv47(testKey, u)
	}
}
