package idkit

import (
	"fmt"
	"strings"
)

// The TypeID text form (specification 0.3.0): a type prefix, '_', and the ID in a lowercase
// base32 alphabet, fixed width, most significant bits first, so that text order is ID order.
//
//	user_01h455vb4pex5vsknk084sn02q
//	└──┘ └────────────────────────┘
//	prefix      suffix: 128 bits in 26 characters (the first holds 3 bits, so it is 0-7)
//
// A 64-bit ID takes 13 characters (the first holds 4 bits, so it is 0-f). The prefix is 0 to 63
// characters of a-z and '_', starting and ending with a letter; an empty prefix is written
// without the '_'.

// typeidAlphabet is Crockford's base32 alphabet in lower case, as TypeID uses it: no i, l, o, u.
const typeidAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// typeidValue maps a byte to its value in typeidAlphabet, or 0xff. Only lower case is valid.
var typeidValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range len(typeidAlphabet) {
		t[typeidAlphabet[i]] = byte(i)
	}
	return t
}()

// Suffix widths of the TypeID text form.
const (
	suffix128 = 26
	suffix64  = 13
	maxPrefix = 63
)

// appendSuffix appends id's value in the TypeID alphabet: 26 characters for a 128-bit ID, 13
// for a 64-bit one.
func appendSuffix(b []byte, id ID) []byte {
	if id.Bits() == 64 {
		var out [suffix64]byte
		v := id.lo
		for i := suffix64 - 1; i >= 0; i-- {
			out[i] = typeidAlphabet[v&31]
			v >>= 5
		}
		return append(b, out[:]...)
	}
	var out [suffix128]byte
	hi, lo := id.hi, id.lo
	for i := suffix128 - 1; i >= 0; i-- {
		out[i] = typeidAlphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return append(b, out[:]...)
}

// decodeSuffix reads a 26- or 13-character suffix into its 128 or 64 bits.
func decodeSuffix(s string) (hi, lo uint64, err error) {
	first := byte('7') // 128 bits in 130: the first character holds 3
	if len(s) == suffix64 {
		first = 'f' // 64 bits in 65: the first character holds 4
	}
	for i := range len(s) {
		v := typeidValue[s[i]]
		if v == 0xff {
			what := "is not in the TypeID alphabet (0-9 and a-z without i, l, o, u)"
			switch c := s[i]; {
			case c >= 'A' && c <= 'Z':
				what = "is upper case (TypeID text is lower case)"
			case c >= 0x80:
				what = "is not ASCII"
			}
			return 0, 0, fmt.Errorf("character %d of the suffix, %q, %s", i+1, s[i], what)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	if s[0] > first {
		bits := 128
		if len(s) == suffix64 {
			bits = 64
		}
		return 0, 0, fmt.Errorf("the suffix starts with %q: a %d-character suffix holds %d bits, so it starts with 0-%c", s[0], len(s), bits, first)
	}
	return hi, lo, nil
}

// checkPrefix reports what is wrong with a TypeID prefix, or nil.
func checkPrefix(p string) error {
	if len(p) > maxPrefix {
		return fmt.Errorf("prefix of %d characters; at most %d", len(p), maxPrefix)
	}
	for i := range len(p) {
		c := p[i]
		if c >= 'a' && c <= 'z' || c == '_' {
			continue
		}
		what := "is not a-z or '_'"
		switch {
		case c >= 'A' && c <= 'Z':
			what = "is upper case (prefixes are lower case)"
		case c >= 0x80:
			what = "is not ASCII"
		}
		return fmt.Errorf("prefix %q: character %d, %q, %s", p, i+1, c, what)
	}
	if p != "" && (p[0] == '_' || p[len(p)-1] == '_') {
		return fmt.Errorf("prefix %q starts or ends with '_'", p)
	}
	return nil
}

// typeID is TypeID text taken apart.
type typeID struct {
	prefix string
	hi, lo uint64
	bits   int // 128 (26-character suffix) or 64 (13)
}

// parseTypeID reads TypeID text: an optional prefix and '_', then a suffix of 26 characters
// (128 bits) or 13 (64 bits). The prefix is the text before the last '_'. Errors wrap
// ErrSyntax and name what is wrong.
func parseTypeID(s string) (typeID, error) {
	var t typeID
	suffix := s
	if i := strings.LastIndexByte(s, '_'); i >= 0 {
		t.prefix, suffix = s[:i], s[i+1:]
		if t.prefix == "" {
			return t, fmt.Errorf("%w: %s starts with '_': with no prefix, TypeID text has no separator", ErrSyntax, quote(s))
		}
		if err := checkPrefix(t.prefix); err != nil {
			return t, fmt.Errorf("%w: %s: %w", ErrSyntax, quote(s), err)
		}
	}
	switch len(suffix) {
	case suffix128:
		t.bits = 128
	case suffix64:
		t.bits = 64
	default:
		return t, fmt.Errorf("%w: %s: suffix of %d characters; want 26 (a 128-bit ID) or 13 (a 64-bit one)", ErrSyntax, quote(s), len(suffix))
	}
	var err error
	if t.hi, t.lo, err = decodeSuffix(suffix); err != nil {
		return t, fmt.Errorf("%w: %s: %w", ErrSyntax, quote(s), err)
	}
	return t, nil
}
