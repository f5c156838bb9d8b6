package dist

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFinder checks the load split finder on its own: it finds a point that halves uniform
// writes and none for append-only ones, whose every write falls right of every sample.
func TestFinder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	uniform, appendOnly := &finder{}, &finder{}
	for i := range 2000 {
		uniform.record(int8Key(rng.Uint64()), 1, rng)
		appendOnly.record(int8Key(uint64(i)), 1, rng)
	}
	if k := uniform.key(); k == nil {
		t.Error("uniform keys: no split point found")
	}
	if k := appendOnly.key(); k != nil {
		t.Errorf("append-only keys: split point %x found; want none", k)
	}
}

func TestSplitPoint(t *testing.T) {
	if got := splitPoint(1, 2); !bytes.Equal(got, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("splitPoint(1, 2) = %x", got)
	}
	if got := splitPoint(1, 4); !bytes.Equal(got, []byte{0x40, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("splitPoint(1, 4) = %x", got)
	}
	if got := splitPoint(2, 3); !bytes.Equal(got, []byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}) {
		t.Errorf("splitPoint(2, 3) = %x", got)
	}
}

// TestInt8KeyOrder checks that the INT8 key sorts as the signed value.
func TestInt8KeyOrder(t *testing.T) {
	vals := []int64{-1 << 63, -5, -1, 0, 1, 1 << 40, 1<<63 - 1}
	for i := 1; i < len(vals); i++ {
		if bytes.Compare(int8Key(uint64(vals[i-1])), int8Key(uint64(vals[i]))) >= 0 {
			t.Errorf("int8Key(%d) does not sort before int8Key(%d)", vals[i-1], vals[i])
		}
	}
}

// TestModelReport runs a small model and checks the report's parts: the label, the
// crossover of a spreading key over a time-ordered one, the summary and the chart.
func TestModelReport(t *testing.T) {
	c := Config{Schemes: []string{"snowflake", "uuidv4"}, Cluster: []int{1, 2, 4}, Seconds: 120, Samples: 100, Rebalance: 20e9, Seed: 3}
	rep, err := Model(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Crossovers) != 1 || rep.Crossovers[0] != (Crossover{Uniform: "uuidv4", Hot: "snowflake", N: 2}) {
		t.Errorf("crossovers %+v; want uuidv4 over snowflake at N=2", rep.Crossovers)
	}
	var sum strings.Builder
	if err := WriteSummary(&sum, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sum.String(), Label) || !strings.Contains(sum.String(), "uuidv4 passes snowflake at N=2") {
		t.Errorf("summary:\n%s", sum.String())
	}
	svg, err := Chart(rep)
	if err != nil || !bytes.Contains(svg, []byte("MODEL")) {
		t.Errorf("chart: %v", err)
	}
	again, err := Model(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var a, b strings.Builder
	_ = WriteText(&a, rep)
	_ = WriteText(&b, again)
	if a.String() != b.String() {
		t.Error("two runs with the same seed differ")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Cluster: []int{0}}, {Capacity: -1}, {Seconds: 5}, {Samples: 1}, {PreSplit: -1}, {Buckets: 1 << 20},
		{IndexShare: 2}, {ScatterCost: -1}, {FixedTier: -1}, {Rebalance: 1}, {Capacities: map[string]float64{"x": 0}},
		{Target: targets[3], Buckets: 8},
	} {
		if _, err := c.Defaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v; want ErrConfig", c, err)
		}
	}
	if _, err := Model(context.Background(), Config{Schemes: []string{"nosuch"}, Cluster: []int{1}, Seconds: 10}); !errors.Is(err, errScheme) {
		t.Errorf("unknown scheme: %v", err)
	}
}
