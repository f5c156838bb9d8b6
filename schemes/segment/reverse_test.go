package segment_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
)

// TestReverse: with reverse=true a segment ID is the bit reversal of its sequence number's 63
// bits, as Spanner's bit_reversed_positive sequences store theirs: sequence 1 is 2^62, 2 is
// 2^61, 3 is 2^62+2^61. Decode and Parse undo it, the second store's residue class is read off
// the sequence number, the IDs are unique and spread over the top bits, and the canonical
// name keeps the setting.
func TestReverse(t *testing.T) {
	name := fmt.Sprintf("rev%d", memSchemes.Add(1))
	spec := "segment:store=memstore://" + name + "-1,key=k,step=10,reverse=true"
	s, err := idkit.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	if s.Name() != spec {
		t.Errorf("Name() = %q, want %q", s.Name(), spec)
	}
	for i, want := range []uint64{1 << 62, 1 << 61, 1<<62 | 1<<61, 1 << 60} {
		id, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if id.Uint64() != want {
			t.Errorf("ID for sequence %d = %d, want %d", i+1, id.Uint64(), want)
		}
	}
	codec, err := idkit.NewCodec(spec)
	if err != nil {
		t.Fatal(err)
	}
	for seq, id := range map[uint64]uint64{1: 1 << 62, 2: 1 << 61, 3: 1<<62 | 1<<61, 4: 1 << 60, 1<<63 - 1: 1<<63 - 1} {
		parsed, err := codec.Parse(fmt.Sprint(id))
		if err != nil {
			t.Fatal(err)
		}
		p, err := codec.Decode(parsed)
		if err != nil {
			t.Fatal(err)
		}
		if p.Seq != seq {
			t.Errorf("Decode(%d).Seq = %d, want %d", id, p.Seq, seq)
		}
	}

	two, err := idkit.New("segment:store=memstore://" + name + "-a,store2=memstore://" + name + "-b,key=k,step=300,reverse=true")
	if err != nil {
		t.Fatal(err)
	}
	defer two.(io.Closer).Close()
	batch := make([]idkit.ID, 100_000)
	if err := two.(idkit.Batcher).NextBatch(batch); err != nil {
		t.Fatal(err)
	}
	all := make([]uint64, len(batch))
	var top [8]int // IDs by their three top bits (62..60)
	for i, id := range batch {
		all[i] = id.Uint64()
		top[id.Uint64()>>60&7]++
		p, err := two.Decode(id)
		if err != nil {
			t.Fatal(err)
		}
		if layouts.Reverse63(p.Seq) != id.Uint64() {
			t.Fatalf("Decode(%d).Seq = %d, whose reversal is %d", id.Uint64(), p.Seq, layouts.Reverse63(p.Seq))
		}
		if store := p.Fields[1].Value; store != (p.Seq-1)%2+1 {
			t.Fatalf("Decode(%d): store %d for sequence %d", id.Uint64(), store, p.Seq)
		}
	}
	segtest.CheckUnique(t, "reversed batch", all)
	for b, n := range top {
		if n < len(batch)/8*9/10 || n > len(batch)/8*11/10 {
			t.Errorf("%d IDs with top bits %03b, want %d ±10%%: %v", n, b, len(batch)/8, top)
		}
	}

	_, err = idkit.NewCodec("segment:store=memstore://x,key=k,reverse=maybe")
	if !errors.Is(err, idkit.ErrSpec) || !strings.Contains(err.Error(), "reverse") {
		t.Errorf("reverse=maybe: %v, want ErrSpec naming reverse", err)
	}
}
