package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
)

// planArgs are the command lines of the golden tests; --epoch keeps them independent of today.
var planArgs = []struct {
	args   []string
	golden string
	code   int
}{
	// The seed design's example, at the unit it names and at every unit.
	{[]string{"plan", "--rate", "100000", "--nodes", "1024", "--years", "70", "--unit", "1ms", "--epoch", "2026-01-01"}, "plan/seed.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "1024", "--years", "70", "--unit", "1ms", "--epoch", "2026-01-01", "--json"}, "plan/seed_json.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "10", "--years", "70", "--epoch", "2026-01-01"}, "plan/seed_10_nodes.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "10", "--years", "70", "--js", "--epoch", "2026-01-01"}, "plan/seed_10_nodes_js.golden", 0},
	{[]string{"plan", "--rate", "5000", "--datacenters", "4", "--nodes", "256", "--shard-bits", "6", "--years", "30", "--epoch", "2026-01-01"}, "plan/shard.golden", 0},
	{[]string{"plan", "--rate", "5000", "--datacenters", "4", "--nodes", "256", "--shard-bits", "6", "--years", "30", "--epoch", "2026-01-01", "--json"}, "plan/shard_json.golden", 0},
	// A hash field on top for a range-partitioned database (TiDB's AUTO_RANDOM shape).
	{[]string{"plan", "--rate", "50000", "--nodes", "64", "--years", "50", "--hash-bits", "4", "--unit", "1ms", "--epoch", "2026-01-01"}, "plan/hash.golden", 0},
	{[]string{"plan", "--rate", "50000", "--nodes", "64", "--years", "50", "--hash-bits", "4", "--epoch", "2026-01-01", "--json"}, "plan/hash_json.golden", 0},
	{[]string{"plan", "--rate", "5000", "--datacenters", "4", "--nodes", "256", "--hash-bits", "5", "--years", "30", "--unsigned", "--epoch", "2026-01-01", "--json"}, "plan/hash_dc_json.golden", 0},
	{[]string{"plan", "--rate", "100000", "--nodes", "1024", "--years", "70", "--hash-bits", "5", "--unit", "1ms", "--epoch", "2026-01-01"}, "plan/hash_refused.golden", 1},
	{[]string{"plan", "--rate", "1", "--years", "70", "--hash-bits", "16"}, "plan/hash_too_wide.golden", 2},
	// Nothing fits: the seed design with 1,024 nodes below 2^53.
	{[]string{"plan", "--rate", "100000", "--nodes", "1024", "--years", "70", "--js", "--epoch", "2026-01-01"}, "plan/refused_js.golden", 1},
	{[]string{"plan", "--rate", "1", "--years", "1000", "--unit", "1ns", "--epoch", "2026-01-01"}, "plan/refused_years.golden", 1},
	{[]string{"plan", "--years", "70"}, "plan/no_rate.golden", 2},
	{[]string{"plan", "--rate", "1", "--years", "70", "--js", "--unsigned"}, "plan/two_limits.golden", 2},
	{[]string{"plan", "--rate", "1", "--years", "70", "--epoch", "yesterday"}, "plan/bad_epoch.golden", 2},
	{[]string{"plan", "--help"}, "help_plan.golden", 0},
}

func TestPlanGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range planArgs {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d (err %v)", r.code, tt.code, r.err)
			}
			golden(t, tt.golden, r.stdout+r.stderr)
		})
	}
}

// TestPlanSpecsBuild starts a generator from every spec plan prints, with the node appended
// as the output says, and checks its layout is the one planned.
func TestPlanSpecsBuild(t *testing.T) {
	t.Parallel()
	for _, tt := range planArgs {
		if tt.code != 0 || !strings.Contains(strings.Join(tt.args, " "), "--json") {
			continue
		}
		r := idbench(t, "", tt.args...)
		var got []planJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatalf("%v: no layouts", tt.args)
		}
		for _, j := range got {
			node := strings.ReplaceAll(j.AppendToStart, "=N", "=1")
			s, err := idkit.New(j.Spec + "," + node)
			if err != nil {
				t.Fatalf("%s + %s: %v", j.Spec, node, err)
			}
			l := s.(idkit.Layouter).Layout()
			if l.Bits() != j.Bits || l.Unit.String() != j.Unit || formatTime(l.RunsOut()) != j.RunsOut || l.IDsPerSecond() != j.IDsPerSecond {
				t.Errorf("%s: built %s, runs out %s; planned %s, %s", j.Spec, l, formatTime(l.RunsOut()), j.Bits, j.RunsOut)
			}
			if j.TotalBits > j.RequiredMaxBits || j.Nodes < j.RequiredNodes || j.IDsPerSecond < j.RequiredRate || j.LifeYears < j.RequiredYears {
				t.Errorf("%s does not meet the requirement: %+v", j.Spec, j)
			}
			if c, ok := s.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		}
	}
}

func TestPlanDefaultEpochIsToday(t *testing.T) {
	t.Parallel()
	now := time.Date(2031, 7, 9, 15, 4, 5, 0, time.FixedZone("x", 3600))
	pr, err := parsePlan(&bytes.Buffer{}, []string{"--rate", "1", "--years", "1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2031, 7, 9, 0, 0, 0, 0, time.UTC); !pr.req.Epoch.Equal(want) {
		t.Errorf("epoch %v, want %v", pr.req.Epoch, want)
	}
	if pr.req.MaxBits != 63 {
		t.Errorf("max bits %d, want 63", pr.req.MaxBits)
	}
}

// FuzzPlanFlags feeds plan arbitrary command lines: it must never panic, must refuse with a
// usage error or a no-fit error, and every spec it prints must build.
func FuzzPlanFlags(f *testing.F) {
	for _, tt := range planArgs {
		f.Add(strings.Join(tt.args[1:], "\x00"))
	}
	for _, s := range []string{"--rate\x00NaN\x00--years\x001", "--rate\x001e308\x00--years\x001e308", "--rate\x001\x00--years\x001\x00--unit\x00-1s",
		"--rate\x001\x00--years\x001\x00--max-bits\x0099", "--rate\x001\x00--years\x001\x00--nodes\x0018446744073709551615", "--rate=1\x00--years=0.000001\x00--unit=1h",
		"--rate\x001\x00--years\x001\x00--shard-bits\x0062", "--rate\x001\x00--years\x001\x00--epoch\x009999-12-31T23:59:59Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		var out bytes.Buffer
		pr, err := parsePlan(&out, args, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) && !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("%q: error %v is not a usage error", args, err)
			}
			return
		}
		fits, err := layouts.Plan(pr.req)
		if err != nil {
			if !errors.Is(err, layouts.ErrNoFit) && !errors.Is(err, layouts.ErrInvalid) {
				t.Fatalf("%q: %v", args, err)
			}
			return
		}
		for _, fit := range fits {
			spec := planSpec(fit.Layout)
			if hint := planNodeHint(fit.Layout); !strings.Contains(hint, " ") {
				spec += "," + strings.ReplaceAll(hint, "=N", "=0")
			}
			if now := time.Now(); !fit.Layout.Epoch.Before(now) || !fit.Layout.RunsOut().After(now) {
				// A generator starts only while its time field holds the clock.
				if _, err := idkit.ParseSpec(spec); err != nil {
					t.Fatalf("%q: spec %s: %v", args, spec, err)
				}
				continue
			}
			s, err := idkit.New(spec)
			if err != nil {
				t.Fatalf("%q: spec %s: %v", args, spec, err)
			}
			if got := s.(idkit.Layouter).Layout(); got.Bits() != fit.Layout.Bits() || got.Unit != fit.Layout.Unit || !got.Epoch.Equal(fit.Layout.Epoch) {
				t.Fatalf("%q: spec %s built %s, want %s", args, spec, got, fit.Layout)
			}
		}
		if err := writePlanText(&out, pr.req, fits); err != nil {
			t.Fatal(err)
		}
		if err := writePlanJSON(&out, pr.req, fits); err != nil {
			t.Fatal(err)
		}
	})
}

// planDocArgs is the plan docs/choosing-an-id.md shows: the seed design's own arithmetic.
var planDocArgs = []string{"plan", "--rate", "100000", "--nodes", "1024", "--years", "70", "--unit", "1ms", "--epoch", "2026-01-01"}

const (
	planDocBegin = "<!-- BEGIN idbench plan: generated by `go test ./cmd/idbench -run TestPlanDoc -update`; do not edit -->\n"
	planDocEnd   = "<!-- END idbench plan -->\n"
)

// TestPlanDoc keeps the plan quoted in docs/choosing-an-id.md equal to the command's output;
// -update rewrites it.
func TestPlanDoc(t *testing.T) {
	t.Parallel()
	r := idbench(t, "", planDocArgs...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := "\n```\n$ idbench " + strings.Join(planDocArgs, " ") + "\n" + r.stdout + "```\n\n"
	path := filepath.Join("..", "..", "docs", "choosing-an-id.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, planDocBegin)
	j := strings.Index(text, planDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the plan block (%q ... %q)", path, planDocBegin, planDocEnd)
	}
	if got := text[i+len(planDocBegin) : j]; got == want {
		return
	} else if !*update {
		t.Fatalf("the plan in %s is out of date (run go test ./cmd/idbench -run TestPlanDoc -update):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
	text = text[:i+len(planDocBegin)] + want + text[j:]
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPlanRefusalMatchesErrNoFit(t *testing.T) {
	t.Parallel()
	r := idbench(t, "", "plan", "--rate", "100000", "--nodes", "1024", "--years", "70", "--js")
	if !errors.Is(r.err, layouts.ErrNoFit) || r.code != 1 {
		t.Fatalf("err %v, exit %d; want ErrNoFit and 1", r.err, r.code)
	}
	for _, flag := range []string{"--max-bits 58 or more", "--nodes 32 or fewer", "--rate 3200 or less", "--years 2.72 or fewer"} {
		if !strings.Contains(r.err.Error(), flag) {
			t.Errorf("refusal %q does not offer %q", r.err, flag)
		}
	}
}

// TestPlanExactEdges is the CLI side of issue 17 item 12: at a life of exactly 2^41 ms from
// Twitter's epoch (2^39 × 10 ms from Sonyflake's), and at the float64s either side of it, the
// bits plan says are needed and its verdict on the preset agree: the preset fits exactly when
// its time field is as wide as the need.
func TestPlanExactEdges(t *testing.T) {
	t.Parallel()
	for _, p := range []layouts.Layout{layouts.Twitter, layouts.Sonyflake} {
		ns := new(big.Int).Lsh(big.NewInt(int64(p.Unit)), p.TimeBits())
		y, _ := new(big.Rat).SetFrac(ns, big.NewInt(int64(layouts.Year))).Float64()
		for _, y := range []float64{math.Nextafter(y, 0), y, math.Nextafter(y, math.Inf(1))} {
			years := strconv.FormatFloat(y, 'g', -1, 64)
			r := idbench(t, "", "plan", "--rate", "1", "--years", years, "--unit", p.Unit.String(),
				"--epoch", p.Epoch.Format(time.RFC3339Nano), "--unsigned")
			if r.err != nil {
				t.Fatalf("%s, %s years: %v", p.Name, years, r.err)
			}
			need := regexp.MustCompile(`(?m)^  at \S+ +time (\d+) \+`).FindStringSubmatch(r.stdout)
			row := regexp.MustCompile(`(?m)^` + p.Name + ` .* (yes|no)\b`).FindStringSubmatch(r.stdout)
			if need == nil || row == nil {
				t.Fatalf("%s, %s years: no need or no preset row in\n%s", p.Name, years, r.stdout)
			}
			bits, _ := strconv.Atoi(need[1])
			if fits := row[1] == "yes"; fits != (uint(bits) <= p.TimeBits()) {
				t.Errorf("%s, %s years: needs %d time bits, and the %d-bit preset fits: %s", p.Name, years, bits, p.TimeBits(), row[1])
			}
		}
	}
}
