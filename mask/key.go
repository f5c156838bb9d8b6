// Package mask hides what an ID tells about its making (time, node, per-tick counts) behind a
// 128-bit key, and gives the ID back to whoever holds the key. These are the transforms behind
// idkit's mask=KEYREF setting: a scheme stores and orders the plain ID and shows only the
// masked one.
//
//   - UUIDv47 and UUIDv7: the UUIDv47 facade of a UUIDv7 (stateless-me/uuidv47): the 48-bit
//     timestamp XOR the low 48 bits of SipHash-2-4 of the UUID's 74 random bits, version
//     shown as 4. Other UUIDv47 implementations read these facades and make the same ones.
//   - ULIDTime: the same idea for a ULID: its 48-bit time XOR SipHash-2-4 of its 80 random
//     bits.
//   - Permutation: a keyed permutation of the integers below 2^n (n from 2 to 64), a
//     10-round Feistel network over SipHash-2-4, for 64-bit layouts: every bit is hidden and
//     masked values stay below 2^n.
//
// Every transform is deterministic: the same ID under the same key always gives the same
// masked value, and it is not encryption of anything but the ID. SipHash-2-4 is
// github.com/dchest/siphash. All values here are safe for concurrent use.
package mask

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/idkit/idkit/internal/redact"
)

// ErrKey reports a key that cannot be used: a reference that names nothing (an unset variable,
// a missing file) or text that is not a key. Messages name what is wrong and never show the
// key's text.
var ErrKey = errors.New("mask: bad key")

// Key is a 128-bit SipHash key. Its halves are read from the key's 16 bytes little-endian, as
// SipHash's reference code does: bytes 0-7 give k0, bytes 8-15 give k1.
//
// A Key never prints its value: fmt shows every Key as "mask.Key(…)" under every verb.
type Key struct{ k0, k1 uint64 }

// NewKey returns the key whose SipHash halves are k0 and k1.
func NewKey(k0, k1 uint64) Key { return Key{k0, k1} }

// Format implements fmt.Formatter so that no verb prints the key.
func (Key) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, "mask.Key(…)") }

// ParseKey reads a key written k0:k1, two groups of 16 hex digits (either case) separated by a
// colon, as the uuidv47 PostgreSQL extension takes its uuid47.key setting: each group is 8
// bytes in the order written, read little-endian, so "0011223344556677:8899aabbccddeeff" is the
// key with bytes 00 11 … ff. Blanks around the whole are ignored (a trailing newline in a key
// file). Errors wrap ErrKey and never quote s.
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Key{}, fmt.Errorf("%w: want k0:k1, two groups of 16 hex digits separated by ':' (the text has %d characters and no ':')", ErrKey, len(s))
	}
	k0, err := hex64(a, "k0")
	if err != nil {
		return Key{}, err
	}
	k1, err := hex64(b, "k1")
	if err != nil {
		return Key{}, err
	}
	return Key{k0, k1}, nil
}

// hex64 reads 16 hex digits as 8 bytes, little-endian.
func hex64(s, name string) (uint64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("%w: %s has %d characters, want 16 hex digits", ErrKey, name, len(s))
	}
	var b [8]byte
	for i := range 16 {
		v, ok := hexVal(s[i])
		if !ok {
			return 0, fmt.Errorf("%w: %s has a character that is not a hex digit at position %d", ErrKey, name, i+1)
		}
		b[i/2] |= v << (4 * (1 - i%2))
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// maxKeyFile bounds what Load reads from a key file: a key is 33 characters.
const maxKeyFile = 4 << 10

// IsRef reports whether ref is a key reference, env:NAME or file:PATH, without resolving it:
// NAME must be a variable name (a letter or '_', then letters, digits and '_', and no run of
// 16 hex digits) and PATH must not look like a key (16 or more hex digits alone, or 16 hex
// digits, ':', 16 hex digits). Text that is not a reference may be a key written inline or
// pasted after env: or file:, which must never be printed.
func IsRef(ref string) bool { return redact.SafeRef(ref) }

// CheckRef returns nil when IsRef(ref), else an error wrapping ErrKey that says what is wrong
// with ref without showing any of its text.
func CheckRef(ref string) error {
	if msg := redact.RefError(ref); msg != "" {
		return fmt.Errorf("%w: %s", ErrKey, msg)
	}
	return nil
}

// Load returns the key a reference names: env:NAME reads the environment variable NAME, and
// file:PATH the file at PATH (at most 4 KiB), each holding a key as ParseKey reads it. A key is
// never written inline: specs reach logs and reports. A reference that IsRef refuses (perhaps
// a key pasted after env: or file:) is refused without being shown; otherwise errors wrap
// ErrKey, name the variable or file, and never show what it holds.
func Load(ref string) (Key, error) {
	if err := CheckRef(ref); err != nil {
		return Key{}, err
	}
	kind, name, _ := strings.Cut(ref, ":")
	var text string
	switch kind {
	case "env":
		v, ok := os.LookupEnv(name)
		if !ok {
			return Key{}, fmt.Errorf("%w: environment variable %s is not set", ErrKey, name)
		}
		text = v
	case "file":
		f, err := os.Open(name)
		if err != nil {
			return Key{}, fmt.Errorf("%w: %w", ErrKey, err)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
		f.Close()
		if err != nil {
			return Key{}, fmt.Errorf("%w: reading %s: %w", ErrKey, name, err)
		}
		if len(b) > maxKeyFile {
			return Key{}, fmt.Errorf("%w: %s is larger than %d bytes; a key file holds one key, k0:k1", ErrKey, name, maxKeyFile)
		}
		text = string(b)
	}
	k, err := ParseKey(text)
	if err != nil {
		return Key{}, fmt.Errorf("%w (in %s)", err, ref)
	}
	return k, nil
}
