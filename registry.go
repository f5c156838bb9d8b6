package idkit

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// BuildFunc builds a scheme from its parsed spec. It reads the settings it knows from s, calls
// s.Done to refuse the others, and reports bad values with s.Errorf or s.Wrapf so that the
// messages match the built-in schemes'. The prefix and mask settings, which every scheme
// takes, are read by New before it and applied to the scheme it returns (see New). ctx bounds any network work the spec asks for (New
// passes context.Background, NewContext its caller's context). A scheme that holds resources
// implements io.Closer.
type BuildFunc func(ctx context.Context, s *Settings) (Scheme, error)

// CodecFunc builds a Codec from a spec without starting a generator: no clock is read, no node
// resolved or claimed, no connection made. It reads and checks settings as BuildFunc does.
type CodecFunc func(s *Settings) (Codec, error)

// entry is one registered scheme name.
type entry struct {
	build BuildFunc
	codec CodecFunc
	// text applies the prefix and mask settings around what the scheme builds, unless it took
	// them (Settings.TakeText). Register sets it; the built-in schemes apply them themselves.
	text textWrapper
}

// schemePackages names the package that registers each of idkit's schemes that the root does
// not link, so that a missing import gets a message saying which one.
var schemePackages = map[string]string{
	"segment": "github.com/idkit/idkit/schemes/segment/pgstore", // or mysqlstore, redisstore
	"remote":  "github.com/idkit/idkit/schemes/remote",
}

// registry holds the scheme names New accepts: the built-in ones from the start, and those
// that packages add with Register at init time.
var registry = struct {
	sync.RWMutex
	m map[string]entry
}{m: map[string]entry{
	"snowflake": {build: buildSnowflake, codec: codecSnowflake},
	"ulid":      {build: buildULID, codec: codecULID},
	"uuidv7":    {build: buildUUIDv7, codec: codecUUID(7)},
	"uuidv4":    {build: buildUUIDv4, codec: codecUUID(4)},
	"sonyflake": {build: buildSonyflake, codec: codecSonyflake},
	"typeid":    {build: buildTypeID, codec: codecTypeID},
}}

// Register makes a scheme name available to New, NewContext and NewCodec, in the manner of
// database/sql.Register: a package calls it from an init function, and a program that imports
// the package (for its side effect alone, with a blank import) gets the scheme. The built-in
// names (snowflake, ulid, uuidv7, uuidv4, sonyflake, typeid) need no import beyond this package.
//
// Names are matched without regard to case; name must be a word of letters, digits and '_'.
// Register panics when name is empty or not such a word, when build is nil, or when name is
// already registered (a built-in name included): like sql.Register, these are mistakes in the
// program, found the first time it starts, not errors in its input.
func Register(name string, build BuildFunc) {
	if build == nil {
		panic("idkit: Register: nil BuildFunc for scheme " + quote(name))
	}
	register(name, func(e *entry) bool {
		if e.build != nil {
			return false
		}
		e.build, e.text = build, registeredText{}
		return true
	})
}

// RegisterCodec lets NewCodec read the IDs of a registered scheme without building it. Without
// one, NewCodec builds the scheme and closes it again. It panics as Register does, and when
// name is not registered yet or already has a codec.
func RegisterCodec(name string, codec CodecFunc) {
	if codec == nil {
		panic("idkit: RegisterCodec: nil CodecFunc for scheme " + quote(name))
	}
	register(name, func(e *entry) bool {
		if e.build == nil || e.codec != nil {
			return false
		}
		e.codec = codec
		return true
	})
}

// register applies set to name's entry under the lock, panicking when name is not a word or
// set refuses.
func register(name string, set func(*entry) bool) {
	key := lowerASCII(name)
	if !isWord(key) {
		panic("idkit: scheme name " + quote(name) + " is not a word of letters, digits and '_'")
	}
	registry.Lock()
	defer registry.Unlock()
	e := registry.m[key]
	if !set(&e) {
		if e.build == nil {
			panic("idkit: RegisterCodec: scheme " + quote(key) + " is not registered")
		}
		panic("idkit: scheme " + quote(key) + " is registered twice")
	}
	registry.m[key] = e
}

// lookup returns the entry of a lower-case scheme name.
func lookup(name string) (entry, bool) {
	registry.RLock()
	defer registry.RUnlock()
	e, ok := registry.m[name]
	return e, ok
}

// Schemes returns the names New accepts, sorted: the built-in ones and every registered one.
func Schemes() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewCodec returns a Codec for the IDs a spec describes: it parses and decodes them exactly as
// the Scheme New would return, but starts nothing. A snowflake spec needs only its layout
// settings; its node settings (node=…, lease=…, marks=…) are checked for form and otherwise
// ignored, so that an ID can be taken apart on a machine that could not run the generator: a
// layout that ran out of time (baidu), an epoch in the future, a lease store out of reach.
// Errors wrap ErrSpec. A registered scheme without a CodecFunc is built with New and closed
// again.
func NewCodec(spec string) (Codec, error) {
	sp, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	e, err := sp.entry()
	if err != nil {
		return nil, err
	}
	if err := sp.readText(); err != nil {
		return nil, err
	}
	var c Codec
	if e.codec != nil {
		if c, err = e.codec(sp); err != nil {
			return nil, err
		}
	} else {
		s, err := e.build(context.Background(), sp)
		if err != nil {
			return nil, err
		}
		if cl, ok := s.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				return nil, fmt.Errorf("idkit: closing %s after reading its codec: %w", quote(sp.String()), err)
			}
		}
		c = s
	}
	if e.text != nil {
		return e.text.codec(sp, c)
	}
	return c, nil
}

// entry returns the registry entry of the spec's scheme, or an error naming the known ones.
func (sp *Settings) entry() (entry, error) {
	e, ok := lookup(sp.name)
	if pkg, known := schemePackages[sp.name]; !ok && known {
		return entry{}, sp.Errorf("scheme %q is registered by importing its package: add import _ %q to the program", sp.name, pkg)
	}
	if !ok {
		return entry{}, sp.Errorf("unknown scheme %q (known: %s)", sp.name, strings.Join(Schemes(), ", "))
	}
	return e, nil
}

// lowerASCII lower-cases ASCII letters only, so a name that is not a word stays visibly so.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
