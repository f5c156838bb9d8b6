package idkit_test

import (
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMaskCostDocMatchesRun holds docs/choosing-an-id.md's mask cost table and TypeID ratio to
// the committed benchmark output: per scheme, the medians over the runs of
// docs/bench/mask-cost.txt's plain-ns/id, masked-ns/id and masked/plain, and the median
// idkit/jetify of docs/bench/typeid-cost.txt.
func TestMaskCostDocMatchesRun(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := strings.Join(strings.Fields(read("docs/choosing-an-id.md")), " ")
	// median returns the median of the values, in ten-thousandths so that halves stay exact.
	median := func(v []float64) int64 {
		if len(v) == 0 {
			t.Fatal("no benchmark lines")
		}
		n := make([]int64, len(v))
		for i, x := range v {
			n[i] = int64(math.Round(x * 1e4))
		}
		slices.Sort(n)
		if len(n)%2 == 1 {
			return n[len(n)/2]
		}
		return (n[len(n)/2-1] + n[len(n)/2]) / 2
	}
	// round writes a value in ten-thousandths with d decimals, halves rounded up.
	round := func(v int64, d int) string {
		unit := int64(math.Pow10(4 - d))
		c := (v + unit/2) / unit
		if d == 0 {
			return strconv.FormatInt(c, 10)
		}
		p := int64(math.Pow10(d))
		return fmt.Sprintf("%d.%0*d", c/p, d, c%p)
	}
	line := regexp.MustCompile(`(?m)^BenchmarkMaskCost/scheme=(\S+)\s.* ([0-9.]+) masked-ns/id\s+([0-9.]+) masked/plain\s+([0-9.]+) plain-ns/id`)
	runs := map[string][3][]float64{}
	for _, m := range line.FindAllStringSubmatch(read("docs/bench/mask-cost.txt"), -1) {
		r := runs[m[1]]
		for i, s := range []string{m[4], m[2], m[3]} { // plain, masked, ratio
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			r[i] = append(r[i], v)
		}
		runs[m[1]] = r
	}
	rows := map[string]string{ // the benchmark's scheme name: the row's first cell
		"uuidv7":            "`uuidv7` (UUIDv47: one SipHash)",
		"typeid":            "`typeid:prefix=user`",
		"snowflake-seq22":   "`snowflake:fields=time:41/seq:22` (10 Feistel rounds, each one SipHash-2-4 call)",
		"snowflake-twitter": "`snowflake` (twitter; blocks of 256 stay under its 4,096 IDs per millisecond)",
	}
	if len(runs) != len(rows) {
		t.Fatalf("docs/bench/mask-cost.txt has the schemes %v, the test knows %d", slices.Sorted(maps.Keys(runs)), len(rows))
	}
	for name, cell := range rows {
		r := runs[name]
		want := fmt.Sprintf("| %s | %s ns | %s ns | %s× |", cell, round(median(r[0]), 1), round(median(r[1]), 1), round(median(r[2]), 2))
		if !strings.Contains(doc, want) {
			t.Errorf("docs/choosing-an-id.md should have the row %q, as docs/bench/mask-cost.txt shows", want)
		}
	}
	var ratios []float64
	for _, m := range regexp.MustCompile(`(?m)^BenchmarkTypeIDCost\s.* ([0-9.]+) idkit/jetify`).FindAllStringSubmatch(read("docs/bench/typeid-cost.txt"), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		ratios = append(ratios, v)
	}
	if want := round(median(ratios), 3) + "× its time, the median ratio"; !strings.Contains(doc, want) {
		t.Errorf("docs/choosing-an-id.md should say %q, as docs/bench/typeid-cost.txt shows", want)
	}
}
