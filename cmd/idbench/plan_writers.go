package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/idkit/idkit/dbbench"
)

// writerSweeps are the committed sweeps of idbench db --clients that plan --writers quotes,
// by target; plan_writers_gen.go holds their claims (TestPlanWritersGenerated).
var writerSweeps = map[string]string{
	"postgres": "docs/report-clients-app-past-cache/sweep.json",
	"innodb":   "docs/report-clients-app-innodb-past-cache/sweep.json",
}

// claimAt says whether c holds for n writers by the sweep: "holds", "fails", or
// "unmeasured" for n between the last count that held and the first that did not, or beyond
// the counts measured.
func claimAt(c dbbench.WriterClaim, n int) string {
	switch {
	case n <= c.HoldsUpTo:
		return "holds"
	case c.FailsAt != 0 && n >= c.FailsAt:
		return "fails"
	}
	return "unmeasured"
}

// adviseWriters returns plan's advice for one server (postgres, innodb) with n concurrent
// writing connections, from the claims the committed sweeps measured.
func adviseWriters(target string, n int) []string {
	claims := writerClaims[target]
	src := writerSweeps[target]
	if len(claims) == 0 {
		return []string{
			fmt.Sprintf("No committed sweep of concurrent writers for %s: the advice for one writer is", target),
			"to keep the time order (docs/choosing-an-id.md); measure a pool of this size with",
			fmt.Sprintf("idbench db --workload app --clients 1,%d.", n),
		}
	}
	lines := []string{fmt.Sprintf("With %d concurrent writers, as measured in %s (idbench db --clients):", n, src)}
	if c := writerConditions[target]; c != "" {
		lines = append(lines, "  measured on "+c+".")
	}
	state := map[string]string{}
	for _, c := range claims {
		st := claimAt(c, n)
		state[c.ID] = st
		var what string
		switch st {
		case "holds":
			what = fmt.Sprintf("holds (up to %d measured)", max(c.HoldsUpTo, c.Measured*boolInt(c.FailsAt == 0)))
		case "fails":
			what = fmt.Sprintf("does NOT hold from %d writer%s (%s)", c.FailsAt, plural(c.FailsAt), c.Evidence)
		default:
			if c.FailsAt == 0 {
				what = fmt.Sprintf("held up to %d writers, the most measured; %d not measured", c.Measured, n)
			} else {
				what = fmt.Sprintf("held with %d writers, not with %d; %d not measured", c.HoldsUpTo, c.FailsAt, n)
			}
		}
		lines = append(lines, fmt.Sprintf("  - %s: %s", c.Claim, what))
	}
	return append(lines, rankWriters(target, n)...)
}

// rankWriters orders the schemes by the size the sweep measured at the largest client count
// up to n (the smallest count when n is below it) and advises from the order: keep the time
// order while a time-ordered key is within 10% of the smallest, else the smallest.
func rankWriters(target string, n int) []string {
	sizes := writerSizes[target]
	c := 0
	for _, z := range sizes {
		if z.Clients <= n && z.Clients > c {
			c = z.Clients
		}
	}
	if c == 0 && len(sizes) > 0 {
		c = sizes[0].Clients
	}
	var at []dbbench.SweepSize
	for _, z := range sizes {
		if z.Clients == c {
			at = append(at, z)
		}
	}
	if len(at) == 0 {
		return nil
	}
	slices.SortStableFunc(at, func(a, b dbbench.SweepSize) int { return cmp.Compare(a.Bytes, b.Bytes) })
	var cells []string
	for _, z := range at {
		cells = append(cells, fmt.Sprintf("%s %.1f", z.Scheme, z.Bytes))
	}
	lines := []string{fmt.Sprintf("Bytes per operation with %d writers, smallest first: %s.", c, strings.Join(cells, ", "))}
	best := at[0]
	var ordered *dbbench.SweepSize
	for i, z := range at {
		if z.Scheme == "snowflake" || z.Scheme == "uuidv7" {
			ordered = &at[i]
			break
		}
	}
	switch {
	case ordered != nil && ordered.Bytes <= writerToleranceAdvice*best.Bytes:
		lines = append(lines, fmt.Sprintf("Keep the time order: %s was within 10%% of the smallest key at %d writers.", ordered.Scheme, c))
	case best.Scheme == "bigserial" || best.Scheme == "auto-increment":
		lines = append(lines, fmt.Sprintf("The time order's lead is gone at %d writers: the keys the database made (%s) were the", c, best.Scheme),
			"smallest. Let the database make the primary key, or use fewer writing connections; the sweep",
			"shows how late each key reached the table and the leaf fill it left.")
	default:
		lines = append(lines, fmt.Sprintf("The time order's lead is gone at %d writers: %s was the smallest.", c, best.Scheme))
	}
	lines = append(lines, rateWriters(at, c)...)
	if n > sizes[len(sizes)-1].Clients {
		lines = append(lines, fmt.Sprintf("(%d writers is beyond the sweep, which stops at %d.)", n, sizes[len(sizes)-1].Clients))
	}
	return lines
}

// rateWriters orders the schemes of one client count c by the operations per second the
// sweep measured and says how close the time-ordered keys came to the fastest.
func rateWriters(at []dbbench.SweepSize, c int) []string {
	byRate := slices.Clone(at)
	slices.SortStableFunc(byRate, func(a, b dbbench.SweepSize) int { return cmp.Compare(b.Rate, a.Rate) })
	if len(byRate) == 0 || byRate[0].Rate <= 0 {
		return nil
	}
	var cells []string
	for _, z := range byRate {
		cells = append(cells, fmt.Sprintf("%s %s", z.Scheme, thousands(uint64(z.Rate+0.5))))
	}
	fastest := byRate[0]
	lines := []string{fmt.Sprintf("Operations per second with %d writers, fastest first (one run each): %s.", c, strings.Join(cells, ", "))}
	for _, z := range byRate {
		if z.Scheme != "snowflake" && z.Scheme != "uuidv7" {
			continue
		}
		switch {
		case z.Scheme == fastest.Scheme:
			lines = append(lines, fmt.Sprintf("Speed: %s was the fastest.", z.Scheme))
		case z.Rate >= writerRateAdvice*fastest.Rate:
			lines = append(lines, fmt.Sprintf("Speed: %s kept up, at %.0f%% of the fastest (%s).", z.Scheme, 100*z.Rate/fastest.Rate, fastest.Scheme))
		default:
			lines = append(lines, fmt.Sprintf("Speed: %s fell behind, at %.0f%% of the fastest (%s).", z.Scheme, 100*z.Rate/fastest.Rate, fastest.Scheme))
		}
	}
	return lines
}

// writerRateAdvice is how close to the fastest scheme's rate a time-ordered key must come to
// count as keeping up with it (dbbench's rate claims use the same 10%).
const writerRateAdvice = 0.90

// writerToleranceAdvice is how close to the smallest key a time-ordered key must come for
// plan to advise keeping the time order.
const writerToleranceAdvice = 1.10

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
