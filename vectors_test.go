package idkit_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/sony/sonyflake"

	"github.com/idkit/idkit"
)

// vector is one entry of testdata/vectors.json.
type vector struct {
	Source  string            `json:"source"`
	Scheme  string            `json:"scheme"`
	ID      string            `json:"id"`
	Bytes   string            `json:"bytes"`
	Time    string            `json:"time"`
	Node    *uint64           `json:"node"`
	Seq     *uint64           `json:"seq"`
	Version int               `json:"version"`
	Fields  map[string]uint64 `json:"fields"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors []vector }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors in testdata/vectors.json")
	}
	return f.Vectors
}

// TestVectors checks the published vectors: each parses under its scheme and under Parse,
// prints back unchanged, has the published bytes, and decodes to the published parts.
func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Scheme+"/"+v.ID, func(t *testing.T) {
			s, err := idkit.New(v.Scheme)
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.Parse(v.ID)
			if err != nil {
				t.Fatalf("Parse(%q): %v", v.ID, err)
			}
			if any, err := idkit.Parse(v.ID); err != nil || any != id {
				t.Errorf("idkit.Parse(%q) = %v, %v; want %v", v.ID, any, err, id)
			}
			if id.String() != v.ID {
				t.Errorf("String() = %q, want %q", id.String(), v.ID)
			}
			b, _ := id.MarshalBinary()
			if hex.EncodeToString(b) != v.Bytes {
				t.Errorf("bytes %x, want %s", b, v.Bytes)
			}
			p, err := s.Decode(id)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if v.Time == "" {
				if !p.Time.IsZero() {
					t.Errorf("Time = %v, want none", p.Time)
				}
			} else if got := p.Time.Format(time.RFC3339Nano); got != v.Time || p.Time.Location() != time.UTC {
				t.Errorf("Time = %s (%v), want %s in UTC", got, p.Time.Location(), v.Time)
			}
			if v.Node != nil && (!p.HasNode || p.Node != *v.Node) {
				t.Errorf("Node = %d (has %v), want %d", p.Node, p.HasNode, *v.Node)
			}
			if v.Seq != nil && (!p.HasSeq || p.Seq != *v.Seq) {
				t.Errorf("Seq = %d (has %v), want %d", p.Seq, p.HasSeq, *v.Seq)
			}
			if p.Version != v.Version {
				t.Errorf("Version = %d, want %d", p.Version, v.Version)
			}
			got := map[string]uint64{}
			for _, f := range p.Fields {
				got[f.Name] = f.Value
			}
			for name, want := range v.Fields {
				if g, ok := got[name]; !ok || g != want {
					t.Errorf("field %s = %d (present %v), want %d", name, g, ok, want)
				}
			}
			if v.Scheme == "sonyflake" {
				d := sonyflake.Decompose(id.Uint64())
				if d["time"] != v.Fields["time"] || d["sequence"] != v.Fields["seq"] || d["machine-id"] != v.Fields["machine"] {
					t.Errorf("sonyflake.Decompose = %v, vector says %v", d, v.Fields)
				}
			}
		})
	}
}
