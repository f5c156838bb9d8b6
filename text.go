package idkit

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/idkit/idkit/mask"
)

// Formatter is implemented by codecs whose IDs have a public text form: the text an API shows
// for an ID, which a scheme's prefix= and mask= settings (and the typeid scheme) make differ
// from the stored form that ID.String, the binary and SQL forms and the database use. The
// codec's Parse reads the public form back to the stored ID. Every built-in scheme is a
// Formatter; call it through AppendID or FormatID, which work with any Codec.
type Formatter interface {
	// AppendID appends id's public text to b. id is a stored ID of the scheme; errors wrap
	// ErrScheme when it is not one. The zero ID appends nothing.
	AppendID(b []byte, id ID) ([]byte, error)
}

// Every built-in codec and scheme writes its public text.
var (
	_ Formatter = layoutCodec{}
	_ Formatter = (*snowflakeScheme)(nil)
	_ Formatter = (*sonyflakeScheme)(nil)
	_ Formatter = ulidCodec{}
	_ Formatter = (*ulidScheme)(nil)
	_ Formatter = (*uuidScheme)(nil)
	_ Formatter = (*uuidv7Codec)(nil)
	_ Formatter = (*uuidv7Scheme)(nil)
	_ Formatter = (*uuidv4Scheme)(nil)
	_ Formatter = publicCodec{}
	_ Formatter = (*publicScheme)(nil)
)

// AppendID appends the public text of id as codec c shows it: c.AppendID when c is a
// Formatter, otherwise id's canonical text (ID.AppendText). It does not allocate when b has
// room; a server or exporter calls it once per ID. Errors wrap ErrScheme.
func AppendID(c Codec, b []byte, id ID) ([]byte, error) {
	if f, ok := c.(Formatter); ok {
		return f.AppendID(b, id)
	}
	return id.appendText(b), nil
}

// FormatID returns the public text of id as codec c shows it (see AppendID): with
// "typeid:prefix=user", "user_01h455vb4pex5vsknk084sn02q" for the UUIDv7
// 01890a5d-ac96-774b-bcce-b302099a8057. c.Parse reads it back. Errors wrap ErrScheme.
func FormatID(c Codec, id ID) (string, error) {
	// One allocation: the buffer becomes the string. 48 bytes hold a UUID, or a TypeID with a
	// prefix of up to 21 characters. Only a buffer nobody else holds may become a string, so
	// text a Formatter returned elsewhere (grown, or its own) is copied.
	buf := make([]byte, 0, 48)
	b, err := AppendID(c, buf, id)
	if err != nil || len(b) == 0 {
		return "", err
	}
	if unsafe.SliceData(b) != unsafe.SliceData(buf) {
		return string(b), nil
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// maskKind is what a mask does to a scheme's IDs.
type maskKind uint8

const (
	maskNone    maskKind = iota
	maskPerm             // 64-bit: a keyed permutation of the layout's width
	maskUUIDv47          // UUIDv7: the UUIDv47 facade
	maskULID             // ULID: its time XOR SipHash of its random bits
)

// minMaskBits is the narrowest layout a mask accepts: below about a million values, a table
// of every masked value is easy to collect, and the mask hides nothing.
const minMaskBits = 20

// textForm is a scheme's public text form, from its prefix= and mask= settings. A nil
// *textForm is the stored form.
type textForm struct {
	prefix  string // TypeID type prefix, without '_'
	typeid  bool   // the suffix is in the TypeID alphabet (a prefix is set, or the typeid scheme)
	maskRef string // mask=… as written: a reference, never the key
	key     mask.Key
	kind    maskKind
	perm    mask.Permutation // maskPerm
	bits    int              // width of the masked values (maskPerm)
}

// readText reads the prefix and mask settings every scheme takes, loading the key, before
// the scheme's own BuildFunc or CodecFunc runs. The built-in schemes take the result with one
// of the text… methods below; for a registered scheme New wraps what it builds.
func (sp *Settings) readText() error {
	p, okP := sp.Lookup("prefix")
	ref, okM := sp.Lookup("mask")
	if !okP && !okM {
		return nil
	}
	t := &textForm{}
	if okP {
		if p == "" {
			return sp.Errorf("prefix= is empty; leave it out for no prefix")
		}
		if err := checkPrefix(p); err != nil {
			return sp.Errorf("prefix=%s: %v (TypeID prefixes: 1 to 63 characters of a-z and '_', starting and ending with a letter)", p, err)
		}
		t.prefix, t.typeid = p, true
	}
	if okM {
		if err := mask.CheckRef(ref); err != nil {
			// Not a reference, or one with a key pasted after env: or file:. Neither the
			// message nor the quoted spec (Errorf redacts such mask values) shows it.
			return sp.Wrapf(err, "the mask setting wants env:NAME or file:PATH; a key is never written in a spec, which reaches logs and reports")
		}
		k, err := mask.Load(ref)
		if err != nil {
			return sp.Wrapf(err, "mask=%s", ref)
		}
		t.maskRef, t.key = ref, k
	}
	sp.text = t
	return nil
}

// takeText hands the scheme's text form to a built-in scheme that applies it itself, so that
// New does not wrap the scheme; nil when the spec has neither prefix nor mask.
func (sp *Settings) takeText() *textForm {
	sp.textTaken = true
	return sp.text
}

// textLayout takes the text form for a 64-bit layout: a mask permutes the bits its stored IDs
// use (layouts.Layout.StoredBits: the layout's width, 63 for a reversed layout), so a masked
// ID unmasks to the stored one, whose hash field or reversal the codec then checks.
func (sp *Settings) textLayout(l interface{ StoredBits() uint }) (*textForm, error) {
	t := sp.takeText()
	if t == nil || t.maskRef == "" {
		return t, nil
	}
	return t, t.bindPerm(sp, int(l.StoredBits()))
}

func (t *textForm) bindPerm(sp *Settings, bits int) error {
	if bits < minMaskBits {
		return sp.Errorf("mask=%s: the IDs have %d bits; a mask needs at least %d (below about a million values, a table of every masked value is easy to collect)", t.maskRef, bits, minMaskBits)
	}
	p, err := mask.NewPermutation(t.key, bits)
	if err != nil {
		return sp.Wrapf(err, "mask=%s", t.maskRef)
	}
	t.kind, t.perm, t.bits = maskPerm, p, bits
	return nil
}

// textMasked takes the text form of a 128-bit scheme whose mask is kind.
func (sp *Settings) textMasked(kind maskKind) *textForm {
	t := sp.takeText()
	if t != nil && t.maskRef != "" {
		t.kind = kind
	}
	return t
}

// name returns the canonical spec base with the prefix and mask settings added.
func (t *textForm) name(base string) string {
	if t == nil || t.prefix == "" && t.maskRef == "" {
		return base
	}
	var b strings.Builder
	b.WriteString(base)
	sep := ":"
	if strings.Contains(base, ":") {
		sep = ","
	}
	if t.prefix != "" {
		b.WriteString(sep + "prefix=" + t.prefix)
		sep = ","
	}
	if t.maskRef != "" {
		b.WriteString(sep + "mask=" + t.maskRef)
	}
	return b.String()
}

// append appends the public text of id, an ID the codec has checked.
func (t *textForm) append(b []byte, id ID) []byte {
	if id.IsZero() {
		return b
	}
	id = t.hide(id)
	if !t.typeid {
		return id.appendText(b)
	}
	if t.prefix != "" {
		b = append(b, t.prefix...)
		b = append(b, '_')
	}
	return appendSuffix(b, id)
}

// hide applies the mask.
func (t *textForm) hide(id ID) ID {
	switch t.kind {
	case maskPerm:
		id.lo = t.perm.Mask(id.lo)
	case maskUUIDv47:
		return from16(mask.UUIDv47(t.key, id.Bytes16()), id.f)
	case maskULID:
		return from16(mask.ULIDTime(t.key, id.Bytes16()), id.f)
	}
	return id
}

// parse reads public text into the stored ID of format f. Without a TypeID form, bare reads
// the scheme's canonical text. The result is not checked against the scheme: the codec does
// that.
func (t *textForm) parse(text string, f Format, bare func(string) (ID, error)) (ID, error) {
	if !t.typeid {
		v, err := bare(text)
		if err != nil {
			return ID{}, err
		}
		return t.reveal(v, text)
	}
	tid, err := parseTypeID(text)
	if err != nil {
		return ID{}, err
	}
	if err := t.checkTypeID(tid, text); err != nil {
		return ID{}, err
	}
	if bits := formatBits(f); tid.bits != bits {
		return ID{}, fmt.Errorf("%w: %s holds a %d-bit ID; this scheme's IDs have %d bits (a suffix of %d characters)", ErrScheme, quote(text), tid.bits, bits, map[int]int{64: suffix64, 128: suffix128}[bits])
	}
	return t.reveal(ID{hi: tid.hi, lo: tid.lo, f: f}, text)
}

// checkTypeID accepts only the scheme's own prefix.
func (t *textForm) checkTypeID(tid typeID, text string) error {
	switch {
	case tid.prefix == t.prefix:
		return nil
	case tid.prefix == "":
		return fmt.Errorf("%w: %s has no prefix; want %s", ErrScheme, quote(text), quote(t.prefix+"_…"))
	case t.prefix == "":
		return fmt.Errorf("%w: %s has prefix %s; this scheme's TypeIDs have none", ErrScheme, quote(text), quote(tid.prefix))
	}
	return fmt.Errorf("%w: %s has prefix %s; want %s", ErrScheme, quote(text), quote(tid.prefix), quote(t.prefix))
}

// reveal undoes the mask of v, read from text.
func (t *textForm) reveal(v ID, text string) (ID, error) {
	switch t.kind {
	case maskPerm:
		if v.Bits() != 64 {
			return ID{}, fmt.Errorf("%w: %s is a %d-bit ID; this scheme masks 64-bit IDs", ErrScheme, quote(text), v.Bits())
		}
		if t.bits < 64 && v.lo>>t.bits != 0 {
			return ID{}, fmt.Errorf("%w: %s is not a masked ID of this scheme: it has bits above the %d its IDs have", ErrScheme, quote(text), t.bits)
		}
		v.lo = t.perm.Unmask(v.lo)
	case maskUUIDv47:
		b := v.Bytes16()
		if b[6]>>4 != 4 || b[8]&0xc0 != 0x80 {
			return ID{}, fmt.Errorf("%w: %s is not a masked UUIDv7 of this scheme: UUIDv47 shows them as RFC 9562 version 4, and it is version %d (variant bits %02b)", ErrScheme, quote(text), b[6]>>4, b[8]>>6)
		}
		v = from16(mask.UUIDv7(t.key, b), v.f)
	case maskULID:
		v = from16(mask.ULIDTime(t.key, v.Bytes16()), v.f)
	}
	return v, nil
}

// formatBits is the width of IDs of format f.
func formatBits(f Format) int {
	if f == FormatDecimal {
		return 64
	}
	return 128
}
