package main

import (
	"fmt"
	"strings"

	"github.com/idkit/idkit"
)

// idReader reads the IDs inspect is given: in the scheme's public text (prefixed, masked,
// TypeID), or in the stored form the database holds (decimal, ULID, UUID text), and shows each
// in both.
type idReader struct {
	spec   string
	name   string      // scheme name
	public idkit.Codec // the scheme's codec, reading and writing public text
	stored idkit.Codec // the same scheme without prefix and mask: the stored text; nil for typeid
	// text: the scheme's public text differs from the stored one (prefix, mask, typeid).
	text bool
	// retry: the spec sets no prefix, so TypeID text with one is read with the spec plus that
	// prefix; byPrefix caches those codecs.
	retry      bool
	byPrefix   map[string]idkit.Codec
	onlyStored bool
}

// maxPrefixCodecs bounds the codecs kept for prefixes met in the input.
const maxPrefixCodecs = 64

// newIDReader returns the reader of spec's IDs; onlyStored reads every ID as stored text.
func newIDReader(spec string, onlyStored bool) (*idReader, error) {
	public, err := idkit.NewCodec(spec)
	if err != nil {
		return nil, err
	}
	sp, err := idkit.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	r := &idReader{spec: spec, name: sp.Scheme(), public: public, onlyStored: onlyStored, byPrefix: map[string]idkit.Codec{}}
	var kept []string
	for _, k := range sp.Keys() {
		v, _ := sp.Lookup(k)
		switch k {
		case "prefix", "mask":
			r.text = true
		default:
			kept = append(kept, k+"="+v)
		}
	}
	r.retry = !sp.Has("prefix")
	if r.name == "typeid" {
		r.text = true // TypeID text whatever the settings; stored as a UUID of any version
	} else {
		storedSpec := r.name
		if len(kept) > 0 {
			storedSpec += ":" + strings.Join(kept, ",")
		}
		if r.stored, err = idkit.NewCodec(storedSpec); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readID is one ID read: the stored ID, its public text and the codec that read it.
type readID struct {
	id     idkit.ID
	public string
	codec  idkit.Codec
}

// read reads text as public text, or, where that fails and the scheme's public text differs,
// as stored text; with onlyStored, as stored text alone. Stored 64-bit text parses as a
// masked ID too (both are numbers), so it is read as public text unless onlyStored.
func (r *idReader) read(text string) (readID, error) {
	if r.onlyStored {
		return r.readStored(text, r.public)
	}
	id, err := r.public.Parse(text)
	if err == nil {
		return r.show(id, r.public)
	}
	if c := r.prefixCodec(text); c != nil {
		id, perr := c.Parse(text)
		if perr == nil {
			return r.show(id, c)
		}
		err = perr // it is TypeID text: say what is wrong with it as such
	}
	if r.text {
		if got, serr := r.readStored(text, r.public); serr == nil {
			return got, nil
		}
	}
	return readID{}, err
}

// readStored reads the stored text of an ID of the scheme and shows it through codec c.
func (r *idReader) readStored(text string, c idkit.Codec) (readID, error) {
	var id idkit.ID
	var err error
	if r.stored != nil {
		id, err = r.stored.Parse(text)
	} else if id, err = idkit.Parse(text); err == nil && id.Format() != idkit.FormatUUID {
		err = fmt.Errorf("%w: %q is not a UUID; %s stores UUIDs", idkit.ErrSyntax, text, r.name)
	}
	if err != nil {
		return readID{}, fmt.Errorf("%w (read as a stored ID, as --stored asks)", err)
	}
	return r.show(id, c)
}

func (r *idReader) show(id idkit.ID, c idkit.Codec) (readID, error) {
	pub, err := idkit.FormatID(c, id)
	if err != nil {
		return readID{}, err
	}
	return readID{id: id, public: pub, codec: c}, nil
}

// prefixCodec returns the codec for TypeID text with a prefix the spec does not set: the spec
// with that prefix added. It returns nil for text without one, or when the spec sets a prefix.
func (r *idReader) prefixCodec(text string) idkit.Codec {
	i := strings.LastIndexByte(text, '_')
	if !r.retry || i <= 0 {
		return nil
	}
	p := text[:i]
	if c, ok := r.byPrefix[p]; ok {
		return c
	}
	sep := ":"
	if strings.Contains(r.spec, ":") {
		sep = ","
	}
	c, cerr := idkit.NewCodec(r.spec + sep + "prefix=" + p)
	if cerr != nil {
		return nil
	}
	if len(r.byPrefix) >= maxPrefixCodecs {
		clear(r.byPrefix)
	}
	r.byPrefix[p] = c
	return c
}

// typeIDPrefix returns the prefix of TypeID text and whether the text is a TypeID: one with a
// '_', or 26 characters of the typeid scheme.
func (r *idReader) typeIDPrefix(public string, id idkit.ID) (string, bool) {
	if i := strings.LastIndexByte(public, '_'); i > 0 {
		return public[:i], true
	}
	return "", r.name == "typeid"
}
