package idkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/mask"
	"github.com/idkit/idkit/schemes/segment"
)

// memSegStore is an in-memory block store registered as memseg://NAME, for specs in tests.
type memSegStore struct {
	mu  *sync.Mutex
	max map[string]uint64
}

func (m memSegStore) Take(_ context.Context, r segment.Request) (segment.Block, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.max[r.Key] += r.Step
	return segment.Block{First: m.max[r.Key] - r.Step + 1, Last: m.max[r.Key]}, nil
}

func (memSegStore) Close() error { return nil }

type memSegDriver struct {
	mu     sync.Mutex
	stores map[string]memSegStore
}

func (d *memSegDriver) OpenStore(_ context.Context, url string) (segment.Store, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if strings.Contains(url, "fail") {
		return nil, errors.New("memseg: cannot open " + url)
	}
	st, ok := d.stores[url]
	if !ok {
		st = memSegStore{mu: &sync.Mutex{}, max: map[string]uint64{}}
		d.stores[url] = st
	}
	return st, nil
}

func (d *memSegDriver) DescribeStore(url string) string { return "memory store" }

func init() {
	segment.RegisterStore("memseg", &memSegDriver{stores: map[string]memSegStore{}})
}

// memSegRuns makes memseg URLs unique per call, so that a test run again (-count) starts
// from fresh counters.
var memSegRuns atomic.Int64

// memURL returns a fresh memseg:// URL.
func memURL(name string) string {
	return fmt.Sprintf("memseg://%s-%d", name, memSegRuns.Add(1))
}

func TestSegmentScheme(t *testing.T) {
	u := memURL("a")
	s, err := idkit.New("segment:store=" + u + ",key=orders,step=10")
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	if got, want := s.Name(), "segment:store="+u+",key=orders,step=10"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	ids := make([]idkit.ID, 25)
	if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
		t.Fatal(err)
	}
	id, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if id.Uint64() != 26 || ids[0].Uint64() != 1 || ids[24].Uint64() != 25 {
		t.Fatalf("IDs %v then %v", ids, id)
	}
	p, err := s.Decode(id)
	if err != nil || !p.HasSeq || p.Seq != 26 || p.HasNode || !p.Time.IsZero() {
		t.Fatalf("Decode = %+v, %v", p, err)
	}
	back, err := s.Parse(id.String())
	if err != nil || back != id {
		t.Fatalf("Parse(%s) = %v, %v", id, back, err)
	}
	for _, bad := range []string{"0", "9223372036854775808", "x", ""} {
		if _, err := s.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestSegmentTwoStores(t *testing.T) {
	s, err := idkit.New("segment:store=" + memURL("one") + ",store2=" + memURL("two") + ",key=k,step=5,dynamic=true,max_step=40,buffer=false")
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	classes := map[uint64]int{}
	for range 100 {
		id, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Decode(id)
		if err != nil {
			t.Fatal(err)
		}
		classes[p.Fields[1].Value]++
		if want := (id.Uint64()-1)%2 + 1; p.Fields[1].Value != want {
			t.Fatalf("%v decodes to store %d", id, p.Fields[1].Value)
		}
	}
	if classes[1] == 0 || classes[2] == 0 {
		t.Fatalf("IDs by store: %v", classes)
	}
}

func TestSegmentSpecErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"segment", "store is missing"},
		{"segment:store=memseg://a", "key is missing"},
		{"segment:store=nourl,key=k", "want scheme://"},
		{"segment:store=memseg://a,key=k,step=0", "step=0"},
		{"segment:store=memseg://a,key=k,step=x", "step=x"},
		{"segment:store=memseg://a,key=k,max_step=10", "without dynamic=true"},
		{"segment:store=memseg://a,key=k,dynamic=true,step=100,max_step=10", "below step=100"},
		{"segment:store=memseg://a,key=k,buffer=maybe", "buffer=maybe"},
		{"segment:store=memseg://a,key=k,wait=-1s", "wait=-1s"},
		{"segment:store=memseg://a,key=k,gap=0", "gap=0"},
		{"segment:store=memseg://a,key=k,gap=x", "gap=x"},
		{"segment:store=memseg://a,key=k,node=1", `unknown key "node"`},
		{"segment:store=pg://u:secret@h/db,key=k", "schemes/segment/pgstore"},
		{"segment:store=mysql://u:secret@h/db,key=k", "schemes/segment/mysqlstore"},
		{"segment:store=memseg://fail,key=k", "cannot open"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := idkit.New(tc.spec)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error shows the password: %q", err)
			}
			if !strings.Contains(tc.spec, "fail") && !errors.Is(err, idkit.ErrSpec) {
				t.Errorf("error does not wrap ErrSpec: %v", err)
			}
		})
	}
}

// TestSegmentCodec reads IDs of a spec whose store package is not linked: NewCodec opens
// nothing.
func TestSegmentCodec(t *testing.T) {
	c, err := idkit.NewCodec("segment:store=pg://u:pw@db.invalid/x,store2=mysql://db.invalid/x,key=k")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Parse("7")
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Decode(id)
	if err != nil || p.Seq != 7 || p.Fields[1] != (idkit.Field{Name: "store", Value: 1}) {
		t.Fatalf("Decode(7) = %+v, %v", p, err)
	}
}

func FuzzSegmentParse(f *testing.F) {
	c, err := idkit.NewCodec("segment:store=memseg://a,key=k")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"1", "0", "9223372036854775807", "9223372036854775808", "-1", "", "1e3", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := c.Parse(s)
		if err != nil {
			if !errors.Is(err, idkit.ErrSyntax) && !errors.Is(err, idkit.ErrScheme) {
				t.Fatalf("Parse(%q): %v wraps neither ErrSyntax nor ErrScheme", s, err)
			}
			return
		}
		if _, err := c.Decode(id); err != nil {
			t.Fatalf("Parse(%q) accepted %v but Decode fails: %v", s, id, err)
		}
	})
}

// A segment scheme counts through blocks its store hands out; memseg:// is this file's
// in-memory store, where a program names pg://…, mysql://… or redis://… and imports the
// store's package. With two stores, store 1 issues odd IDs and store 2 even ones.
func ExampleNew_segment() {
	s, err := idkit.New("segment:store=" + memURL("one") + ",store2=" + memURL("two") + ",key=orders,step=3,buffer=false")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.(io.Closer).Close()
	for range 4 {
		id, _ := s.Next()
		p, _ := s.Decode(id)
		fmt.Println(id, p.Fields)
	}
	// Output:
	// 1 [{seq 1} {store 1}]
	// 3 [{seq 3} {store 1}]
	// 5 [{seq 5} {store 1}]
	// 2 [{seq 2} {store 2}]
}

// TestSegmentPublicText: a segment scheme takes prefix= and mask= as the built-in schemes do.
// Its IDs are 63-bit (they fit a signed BIGINT), so the mask permutes 63 bits and masked IDs
// stay below 2^63; the prefix gives 13 characters of TypeID text, in ID order.
func TestSegmentPublicText(t *testing.T) {
	setTestMaskKey(t)
	for _, text := range []string{"mask=" + testMaskRef, "prefix=ord", "prefix=ord,mask=" + testMaskRef} {
		s, err := idkit.New("segment:store=" + memURL("text") + ",key=orders,step=1000," + text)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]idkit.ID, 5000)
		if err := s.(idkit.Batcher).NextBatch(ids); err != nil {
			t.Fatal(err)
		}
		prev := ""
		for _, id := range ids {
			pub, err := idkit.FormatID(s, id)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(text, "prefix") {
				if !strings.HasPrefix(pub, "ord_") || len(pub) != 4+13 {
					t.Fatalf("%s: %s shows as %q", text, id, pub)
				}
				if !strings.Contains(text, "mask") && pub <= prev {
					t.Fatalf("%s: %q after %q: text order is not ID order", text, pub, prev)
				}
			}
			prev = pub
			if !strings.Contains(text, "prefix") {
				m, err := idkit.Parse(pub)
				if err != nil || m.Uint64() >= 1<<63 {
					t.Fatalf("%s: %s shows as %q (%v): not below 2^63", text, id, pub, err)
				}
			}
			back, err := s.Parse(pub)
			if err != nil || back != id {
				t.Fatalf("%s: Parse(%q) = %s, %v; want %s", text, pub, back, err, id)
			}
		}
		s.(io.Closer).Close()
	}
}

// TestSegmentMaskEdges: the stored IDs whose masked form is 0 and 2^63-1, at the ends of the
// 63 bits, show and read back like any other.
func TestSegmentMaskEdges(t *testing.T) {
	setTestMaskKey(t)
	c, err := idkit.NewCodec("segment:store=" + memURL("edge") + ",key=k,step=10,mask=" + testMaskRef)
	if err != nil {
		t.Fatal(err)
	}
	key, err := mask.Load(testMaskRef)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mask.NewPermutation(key, 63)
	if err != nil {
		t.Fatal(err)
	}
	for _, shown := range []uint64{0, 1<<63 - 1} {
		stored := p.Unmask(shown)
		if stored == 0 {
			continue // not a segment ID
		}
		id := idkit.FromUint64(stored)
		pub, err := idkit.FormatID(c, id)
		if err != nil {
			t.Fatalf("FormatID(%d): %v", stored, err)
		}
		if back, err := c.Parse(pub); err != nil || back != id {
			t.Errorf("stored %d shows as %q, which reads back as %s, %v", stored, pub, back, err)
		}
	}
}
