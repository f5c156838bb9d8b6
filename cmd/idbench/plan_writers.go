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
	"postgres": "docs/report-clients-app/sweep.json",
	"innodb":   "docs/report-clients-app-innodb/sweep.json",
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
	state := map[string]string{}
	for _, c := range claims {
		st := claimAt(c, n)
		state[c.ID] = st
		var what string
		switch st {
		case "holds":
			what = fmt.Sprintf("holds (up to %d measured)", max(c.HoldsUpTo, c.Measured*boolInt(c.FailsAt == 0)))
		case "fails":
			what = fmt.Sprintf("does NOT hold from %d writers (%s)", c.FailsAt, c.Evidence)
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
	if n > sizes[len(sizes)-1].Clients {
		lines = append(lines, fmt.Sprintf("(%d writers is beyond the sweep, which stops at %d.)", n, sizes[len(sizes)-1].Clients))
	}
	return lines
}

// writerToleranceAdvice is how close to the smallest key a time-ordered key must come for
// plan to advise keeping the time order.
const writerToleranceAdvice = 1.10

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
