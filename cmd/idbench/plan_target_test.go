package main

import (
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// planTargetArgs are the golden command lines of plan --target, run by TestPlanGolden.
var planTargetArgs = []struct {
	args   []string
	golden string
	code   int
}{
	{[]string{"plan", "--rate", "100000", "--nodes", "64", "--years", "50", "--epoch", "2026-01-01", "--target", "postgres"}, "plan/target_postgres.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "64", "--years", "50", "--epoch", "2026-01-01", "--target", "cockroachdb"}, "plan/target_cockroachdb.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "64", "--years", "70", "--epoch", "2026-01-01", "--target", "spanner", "--json"}, "plan/target_spanner_json.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "64", "--years", "50", "--epoch", "2026-01-01", "--target", "tidb"}, "plan/target_tidb.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "64", "--years", "50", "--epoch", "2026-01-01", "--target", "yugabyte"}, "plan/target_yugabyte.golden", 0},
	{[]string{"plan", "--rate", "1", "--years", "70", "--target", "oracle"}, "plan/target_bad.golden", 2},
	{[]string{"plan", "--rate", "5000", "--years", "50", "--epoch", "2026-01-01", "--target", "innodb", "--writers", "16"}, "plan/target_innodb_writers16.golden", 0},
	{[]string{"plan", "--rate", "5000", "--years", "50", "--epoch", "2026-01-01", "--target", "postgres", "--writers", "16"}, "plan/target_postgres_writers16.golden", 0},
	{[]string{"plan", "--rate", "5000", "--years", "50", "--target", "tidb", "--writers", "16"}, "plan/target_writers_bad.golden", 2},
}

// TestPlanGolden runs these too.
func init() { planArgs = append(planArgs, planTargetArgs...) }

// TestPlanTargetAdvice checks that every range-partitioned target is told to spread its
// writes, and that an adapted spec is offered only when this build's layouts take it.
func TestPlanTargetAdvice(t *testing.T) {
	for _, target := range planTargets {
		for _, have := range []bool{false, true} {
			a := adviseTarget(target, have, have)
			text := strings.Join(a.lines, "\n")
			switch target {
			case "postgres", "innodb":
				if !strings.Contains(text, "keep the time order") || a.append != "" {
					t.Errorf("%s: %q, append %q", target, text, a.append)
				}
			default:
				if !strings.Contains(text, "uuidv4") || !strings.Contains(strings.ToLower(text), "split") {
					t.Errorf("%s: advice names neither uuidv4 nor a pre-split:\n%s", target, text)
				}
				if !have && a.append != "" {
					t.Errorf("%s: adapted spec %q offered without the layout setting", target, a.append)
				}
			}
		}
	}
}

// TestPlanTargetSpecBuilds starts a generator from the adapted spec plan prints for each
// range-partitioned target and checks it still issues the planned rate per node.
func TestPlanTargetSpecBuilds(t *testing.T) {
	for _, target := range []string{"cockroachdb", "spanner", "tidb"} {
		r := idbench(t, "", "plan", "--rate", "100000", "--nodes", "64", "--years", "50", "--epoch", "2026-01-01", "--target", target)
		_, spec, ok := strings.Cut(r.stdout, "A layout for "+target+": ")
		if !ok {
			if layoutSetting("reverse=true") {
				t.Errorf("%s: no adapted layout:\n%s", target, r.stdout)
			}
			continue
		}
		spec, _, _ = strings.Cut(spec, "\n")
		s, err := idkit.New(spec + ",node=1")
		if err != nil {
			t.Fatalf("%s: %s: %v", target, spec, err)
		}
		l := s.(idkit.Layouter).Layout()
		if rate := l.IDsPerSecond(); rate < 100000 || (target == "tidb") != (l.ShardBits() == 5) {
			t.Errorf("%s: %s (%s) issues %v IDs/s per node (100000 planned), %d shard bits", target, spec, l.Bits(), rate, l.ShardBits())
		}
		if c, ok := s.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}

// TestPlanWriters: with --writers, the advice for one server follows the committed sweeps:
// "keep the time order" exactly where a time-ordered key (snowflake, uuidv7) came within 10% of
// the smallest key at that many writers, each time-ordered key's speed is said to keep up with
// the fastest scheme exactly where it came within 10% of its ops/s, and every claim the sweep
// refutes (size or speed) is said to fail.
func TestPlanWriters(t *testing.T) {
	for target, sizes := range writerSizes {
		for _, n := range []int{1, 2, 4, 16, 64, 1000} {
			text := strings.Join(adviseWriters(target, n), "\n")
			c := 0
			for _, z := range sizes {
				if z.Clients <= n {
					c = max(c, z.Clients)
				}
			}
			smallest, ordered := 0.0, 0.0
			for _, z := range sizes {
				if z.Clients != c {
					continue
				}
				if smallest == 0 || z.Bytes < smallest {
					smallest = z.Bytes
				}
				if (z.Scheme == "snowflake" || z.Scheme == "uuidv7") && (ordered == 0 || z.Bytes < ordered) {
					ordered = z.Bytes
				}
			}
			if keep := strings.Contains(text, "Keep the time order"); keep != (ordered <= 1.1*smallest) {
				t.Errorf("%s, %d writers: at %d the ordered key took %.1f B/op, the smallest %.1f; advice:\n%s", target, n, c, ordered, smallest, text)
			}
			fastest := 0.0
			for _, z := range sizes {
				if z.Clients == c {
					fastest = max(fastest, z.Rate)
				}
			}
			for _, z := range sizes {
				if z.Clients != c || (z.Scheme != "snowflake" && z.Scheme != "uuidv7") {
					continue
				}
				want := "Speed: " + z.Scheme + " fell behind"
				switch {
				case z.Rate == fastest:
					want = "Speed: " + z.Scheme + " was the fastest"
				case z.Rate >= 0.9*fastest:
					want = "Speed: " + z.Scheme + " kept up"
				}
				if !strings.Contains(text, want) {
					t.Errorf("%s, %d writers: at %d %s wrote %.0f ops/s, the fastest %.0f; advice lacks %q:\n%s", target, n, c, z.Scheme, z.Rate, fastest, want, text)
				}
			}
			for _, cl := range writerClaims[target] {
				if claimAt(cl, n) == "fails" && !strings.Contains(text, cl.Evidence) {
					t.Errorf("%s, %d writers: claim %s fails, advice does not say so:\n%s", target, n, cl.ID, text)
				}
			}
		}
	}
	if len(writerSizes) == 0 {
		t.Error("no committed sweeps in plan_writers_gen.go")
	}
}
