// Package wraptest checks what idkit.New puts around a registered scheme. It registers a scheme
// of its own, so it lives apart from the root package's tests, whose examples list the
// registered names.
package wraptest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
)

// The "optional" scheme is a registered scheme with every combination of the optional
// interfaces that only a scheme can answer: "optional:has=N" has Layouter when bit 0 of N is
// set, Noder for bit 1, StatsReporter for bit 2, Fenced for bit 3 and TimeRanger for bit 4.

// optBase is the scheme without optional interfaces: 64-bit IDs from a counter.
type optBase struct{ next atomic.Uint64 }

func (b *optBase) Name() string { return "optional" }

func (b *optBase) Next() (idkit.ID, error) { return idkit.FromUint64(b.next.Add(1)), nil }

func (b *optBase) Parse(text string) (idkit.ID, error) {
	id, err := idkit.Parse(text)
	if err != nil {
		return idkit.ID{}, err
	}
	if id.Bits() != 64 {
		return idkit.ID{}, fmt.Errorf("%w: %s is not an optional ID", idkit.ErrScheme, text)
	}
	return id, nil
}

func (b *optBase) Decode(id idkit.ID) (idkit.Parts, error) {
	return idkit.Parts{Seq: id.Uint64(), HasSeq: true}, nil
}

type (
	optLayout struct{}
	optNode   struct{}
	optStats  struct{}
	optFence  struct{}
	optBounds struct{}
)

var errOptFence = errors.New("optional: fenced for the test")

func (optLayout) Layout() layouts.Layout { return layouts.Twitter }
func (optNode) Node() uint64             { return 7 }
func (optStats) Stats() idkit.Stats      { return idkit.Stats{SeqExhausted: 3} }
func (optFence) Err() error              { return errOptFence }
func (optBounds) Bounds(from, to time.Time) (lo, hi idkit.ID, err error) {
	return idkit.FromUint64(1), idkit.FromUint64(2), nil
}

func init() {
	idkit.Register("optional", func(_ context.Context, s *idkit.Settings) (idkit.Scheme, error) {
		has, _, err := s.Uint("has", 31)
		if err != nil {
			return nil, err
		}
		if err := s.Done("has"); err != nil {
			return nil, err
		}
		return optional(&optBase{}, has), nil
	})
}

// optional returns b with the optional interfaces the bits of has name.
func optional(b *optBase, has uint64) idkit.Scheme {
	switch has {
	case 0:
		return b
	case 1:
		return struct {
			*optBase
			optLayout
		}{b, optLayout{}}
	case 2:
		return struct {
			*optBase
			optNode
		}{b, optNode{}}
	case 3:
		return struct {
			*optBase
			optLayout
			optNode
		}{b, optLayout{}, optNode{}}
	case 4:
		return struct {
			*optBase
			optStats
		}{b, optStats{}}
	case 5:
		return struct {
			*optBase
			optLayout
			optStats
		}{b, optLayout{}, optStats{}}
	case 6:
		return struct {
			*optBase
			optNode
			optStats
		}{b, optNode{}, optStats{}}
	case 7:
		return struct {
			*optBase
			optLayout
			optNode
			optStats
		}{b, optLayout{}, optNode{}, optStats{}}
	case 8:
		return struct {
			*optBase
			optFence
		}{b, optFence{}}
	case 9:
		return struct {
			*optBase
			optLayout
			optFence
		}{b, optLayout{}, optFence{}}
	case 10:
		return struct {
			*optBase
			optNode
			optFence
		}{b, optNode{}, optFence{}}
	case 11:
		return struct {
			*optBase
			optLayout
			optNode
			optFence
		}{b, optLayout{}, optNode{}, optFence{}}
	case 12:
		return struct {
			*optBase
			optStats
			optFence
		}{b, optStats{}, optFence{}}
	case 13:
		return struct {
			*optBase
			optLayout
			optStats
			optFence
		}{b, optLayout{}, optStats{}, optFence{}}
	case 14:
		return struct {
			*optBase
			optNode
			optStats
			optFence
		}{b, optNode{}, optStats{}, optFence{}}
	case 15:
		return struct {
			*optBase
			optLayout
			optNode
			optStats
			optFence
		}{b, optLayout{}, optNode{}, optStats{}, optFence{}}
	case 16:
		return struct {
			*optBase
			optBounds
		}{b, optBounds{}}
	case 17:
		return struct {
			*optBase
			optLayout
			optBounds
		}{b, optLayout{}, optBounds{}}
	case 18:
		return struct {
			*optBase
			optNode
			optBounds
		}{b, optNode{}, optBounds{}}
	case 19:
		return struct {
			*optBase
			optLayout
			optNode
			optBounds
		}{b, optLayout{}, optNode{}, optBounds{}}
	case 20:
		return struct {
			*optBase
			optStats
			optBounds
		}{b, optStats{}, optBounds{}}
	case 21:
		return struct {
			*optBase
			optLayout
			optStats
			optBounds
		}{b, optLayout{}, optStats{}, optBounds{}}
	case 22:
		return struct {
			*optBase
			optNode
			optStats
			optBounds
		}{b, optNode{}, optStats{}, optBounds{}}
	case 23:
		return struct {
			*optBase
			optLayout
			optNode
			optStats
			optBounds
		}{b, optLayout{}, optNode{}, optStats{}, optBounds{}}
	case 24:
		return struct {
			*optBase
			optFence
			optBounds
		}{b, optFence{}, optBounds{}}
	case 25:
		return struct {
			*optBase
			optLayout
			optFence
			optBounds
		}{b, optLayout{}, optFence{}, optBounds{}}
	case 26:
		return struct {
			*optBase
			optNode
			optFence
			optBounds
		}{b, optNode{}, optFence{}, optBounds{}}
	case 27:
		return struct {
			*optBase
			optLayout
			optNode
			optFence
			optBounds
		}{b, optLayout{}, optNode{}, optFence{}, optBounds{}}
	case 28:
		return struct {
			*optBase
			optStats
			optFence
			optBounds
		}{b, optStats{}, optFence{}, optBounds{}}
	case 29:
		return struct {
			*optBase
			optLayout
			optStats
			optFence
			optBounds
		}{b, optLayout{}, optStats{}, optFence{}, optBounds{}}
	case 30:
		return struct {
			*optBase
			optNode
			optStats
			optFence
			optBounds
		}{b, optNode{}, optStats{}, optFence{}, optBounds{}}
	case 31:
		return struct {
			*optBase
			optLayout
			optNode
			optStats
			optFence
			optBounds
		}{b, optLayout{}, optNode{}, optStats{}, optFence{}, optBounds{}}
	}
	return nil
}

// TestRegisteredKeepsInterfaces builds every combination of optional interfaces with prefix=
// and with mask=: idkit.As finds each interface on the scheme New returns exactly when the
// registered scheme has it, answered by it; the scheme is always a Batcher, ContextScheme,
// ContextBatcher, io.Closer and Formatter, by type assertion too. NewCodec's codec keeps
// Layouter and TimeRanger the same way, and idkit.Bounds reaches the scheme's.
func TestRegisteredKeepsInterfaces(t *testing.T) {
	t.Setenv("IDKIT_TEST_MASK_KEY", "0011223344556677:8899aabbccddeeff")
	const testMaskRef = "env:IDKIT_TEST_MASK_KEY"
	for has := range 32 {
		for _, text := range []string{"prefix=opt", "mask=" + testMaskRef} {
			spec := fmt.Sprintf("optional:has=%d,%s", has, text)
			s, err := idkit.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			c, err := idkit.NewCodec(spec)
			if err != nil {
				t.Fatal(err)
			}
			want := func(bit int) bool { return has>>bit&1 == 1 }
			check := func(what string, got, want bool) {
				t.Helper()
				if got != want {
					t.Errorf("%s: %s is %v, want %v", spec, what, got, want)
				}
			}
			l, ok := idkit.As[idkit.Layouter](s)
			check("Layouter", ok, want(0))
			if ok && l.Layout().Name != "twitter" {
				t.Errorf("%s: Layout() = %s, not the scheme's", spec, l.Layout().Name)
			}
			n, ok := idkit.As[idkit.Noder](s)
			check("Noder", ok, want(1))
			if ok && n.Node() != 7 {
				t.Errorf("%s: Node() = %d, not the scheme's", spec, n.Node())
			}
			st, ok := idkit.As[idkit.StatsReporter](s)
			check("StatsReporter", ok, want(2))
			if ok && st.Stats().SeqExhausted != 3 {
				t.Errorf("%s: Stats() = %+v, not the scheme's", spec, st.Stats())
			}
			f, ok := idkit.As[idkit.Fenced](s)
			check("Fenced", ok, want(3))
			if ok && !errors.Is(f.Err(), errOptFence) {
				t.Errorf("%s: Err() = %v, not the scheme's", spec, f.Err())
			}
			tr, ok := idkit.As[idkit.TimeRanger](s)
			check("TimeRanger", ok, want(4))
			if ok {
				if lo, hi, err := tr.Bounds(time.Now(), time.Now().Add(time.Hour)); err != nil || lo.Uint64() != 1 || hi.Uint64() != 2 {
					t.Errorf("%s: Bounds() = %v, %v, %v, not the scheme's", spec, lo, hi, err)
				}
			}
			if lo, hi, err := idkit.Bounds(c, time.Now(), time.Now().Add(time.Hour)); (err == nil) != want(4) || err == nil && (lo.Uint64() != 1 || hi.Uint64() != 2) {
				t.Errorf("%s: idkit.Bounds(codec) = %v, %v, %v", spec, lo, hi, err)
			}
			_, ok = idkit.As[idkit.Layouter](c)
			check("the codec's Layouter", ok, want(0))
			_, ok = idkit.As[idkit.TimeRanger](c)
			check("the codec's TimeRanger", ok, want(4))
			_, ok = s.(idkit.Batcher)
			check("Batcher", ok, true)
			_, ok = s.(idkit.ContextScheme)
			check("ContextScheme", ok, true)
			_, ok = s.(idkit.ContextBatcher)
			check("ContextBatcher", ok, true)
			_, ok = s.(io.Closer)
			check("io.Closer", ok, true)
			_, ok = s.(idkit.Formatter)
			check("Formatter", ok, true)
			// The text form applies whatever the combination.
			id, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			pub, err := idkit.FormatID(s, id)
			if err != nil || pub == id.String() || strings.HasPrefix(text, "prefix") != strings.HasPrefix(pub, "opt_") {
				t.Errorf("%s: public text of %s = %q, %v", spec, id, pub, err)
			}
			if back, err := s.Parse(pub); err != nil || back != id {
				t.Errorf("%s: Parse(%q) = %s, %v; want %s", spec, pub, back, err, id)
			}
		}
	}
}

// wrapper is a user's own Scheme wrapper: Unwrap lets idkit.As reach through it.
type wrapper struct{ idkit.Scheme }

func (w wrapper) Unwrap() idkit.Scheme { return w.Scheme }

// loop unwraps to itself.
type loop struct{ *optBase }

func (l loop) Unwrap() idkit.Scheme { return l }

// TestAsChain: As walks a chain of wrappers (a user's around New's around the registered
// scheme), stops at the first value that has the interface, and ends on a chain that loops.
func TestAsChain(t *testing.T) {
	s, err := idkit.New("optional:has=2,prefix=opt")
	if err != nil {
		t.Fatal(err)
	}
	w := wrapper{wrapper{s}}
	if n, ok := idkit.As[idkit.Noder](w); !ok || n.Node() != 7 {
		t.Errorf("As[Noder] through two wrappers = %v, %v", n, ok)
	}
	if _, ok := idkit.As[idkit.Layouter](w); ok {
		t.Error("As[Layouter] found one the scheme does not have")
	}
	if f, ok := idkit.As[idkit.Formatter](w); !ok || f != s.(idkit.Formatter) {
		t.Errorf("As[Formatter] = %v, %v; want New's wrapper, the first along the chain", f, ok)
	}
	if _, ok := idkit.As[*optBase](w); ok {
		t.Error("As[*optBase] found the base inside the struct scheme") // it is a field, not a link
	}
	if _, ok := idkit.As[idkit.Noder](loop{&optBase{}}); ok {
		t.Error("As[Noder] on a loop found one")
	}
	if _, ok := idkit.As[idkit.Noder](nil); ok {
		t.Error("As[Noder](nil) found one")
	}
	if _, ok := idkit.As[idkit.Noder](wrapper{}); ok {
		t.Error("As[Noder] of a wrapper around nil found one")
	}
}
