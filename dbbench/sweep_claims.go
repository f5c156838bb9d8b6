package dbbench

import (
	"fmt"
	"io"
	"strings"
)

// WriterClaim is one claim of the one-server advice ("a time-ordered key takes less space …")
// and, from a sweep of concurrent clients, for how many writers it holds.
type WriterClaim struct {
	// ID names the claim for programs (idbench plan): ordered16, ordered8, dbkey, ordered8-vs-db.
	ID    string `json:"id"`
	Claim string `json:"claim"`
	// HoldsUpTo is the largest client count of the sweep up to which the claim holds at every
	// measured count (0: not even at the first); FailsAt the first count at which it does not
	// (0: it held at every count measured, the largest being Measured).
	HoldsUpTo int `json:"holds_up_to"`
	FailsAt   int `json:"fails_at"`
	Measured  int `json:"measured"`
	// Evidence gives the figures at FailsAt, or at Measured when the claim held throughout.
	Evidence string `json:"evidence"`
}

// writerTolerance is how much a size may grow over its one-writer figure (or exceed the
// database's own keys') and still count as kept.
const writerTolerance = 1.10

// WriterClaims returns the claims of the one-server advice that s can test, in a fixed
// order, with the client counts for which each holds: bytes per operation (app workload) or
// primary-key bytes per row (table workload) of uuidv7 against uuidv4, of snowflake and of the
// database's own keys (bigserial, auto-increment) against their figures with the sweep's first
// client count, and of snowflake against the database's keys. A claim whose schemes the sweep
// lacks is left out.
func WriterClaims(s *Sweep) []WriterClaim {
	if s == nil || len(s.Runs) == 0 {
		return nil
	}
	dbKey := sweepDBKey(s)
	first := s.Runs[0].Clients
	type test = func(rep *Report, base *Report) (ok, have bool, evidence string)
	bytesOf := func(rep *Report, scheme string) (float64, bool) {
		pt := point(rep, scheme)
		return pt.bytes, pt.ok && pt.bytes > 0
	}
	_, _, op := sweepUnits(s)
	below := func(a, b string) test {
		return func(rep, _ *Report) (bool, bool, string) {
			x, ok1 := bytesOf(rep, a)
			y, ok2 := bytesOf(rep, b)
			return x < y, ok1 && ok2, fmt.Sprintf("%s %.1f B/%s, %s %.1f B/%s", a, x, op, b, y, op)
		}
	}
	kept := func(a string) test {
		return func(rep, base *Report) (bool, bool, string) {
			x, ok1 := bytesOf(rep, a)
			y, ok2 := bytesOf(base, a)
			return x <= writerTolerance*y, ok1 && ok2, fmt.Sprintf("%s %.1f B/%s against %.1f with %d client(s)", a, x, op, y, first)
		}
	}
	within := func(a, b string) test {
		return func(rep, _ *Report) (bool, bool, string) {
			x, ok1 := bytesOf(rep, a)
			y, ok2 := bytesOf(rep, b)
			return x <= writerTolerance*y, ok1 && ok2, fmt.Sprintf("%s %.1f B/%s, %s %.1f B/%s", a, x, op, b, y, op)
		}
	}
	claims := []struct {
		id, claim string
		t         test
	}{
		{"ordered16", "a time-ordered UUID (uuidv7) takes less space than a random one (uuidv4)", below("uuidv7", "uuidv4")},
		{"ordered8", "a Snowflake key keeps its one-writer size (within 10%)", kept("snowflake")},
		{"dbkey", "keys made by the database (" + dbKey + ") keep their one-writer size (within 10%)", kept(dbKey)},
		{"ordered8-vs-db", "a Snowflake key takes no more than 10% over the database's own keys (" + dbKey + ")", within("snowflake", dbKey)},
	}
	var tests []claimTest
	for _, c := range claims {
		tests = append(tests, claimTest{c.id, c.claim, c.t})
	}
	return evalClaims(s, tests)
}

// claimTest is one claim and its test on one run of a sweep (against the sweep's first run,
// base): whether it holds, whether the run has the schemes it needs, and the figures.
type claimTest struct {
	id, claim string
	t         func(rep, base *Report) (ok, have bool, evidence string)
}

// evalClaims finds, for every claim, up to how many clients of s it holds; a claim whose
// schemes the sweep lacks is left out.
func evalClaims(s *Sweep, claims []claimTest) []WriterClaim {
	base := s.Runs[0].Report
	var out []WriterClaim
	for _, c := range claims {
		wc := WriterClaim{ID: c.id, Claim: c.claim}
		have := true
		for _, r := range s.Runs {
			ok, h, ev := c.t(r.Report, base)
			if !h {
				have = false
				break
			}
			wc.Measured, wc.Evidence = r.Clients, ev
			if !ok {
				wc.FailsAt = r.Clients
				break
			}
			wc.HoldsUpTo = r.Clients
		}
		if have {
			out = append(out, wc)
		}
	}
	return out
}

// sweepDBKey names the row of the keys the database makes on the sweep's engine.
func sweepDBKey(s *Sweep) string {
	if dialectOf(s.Runs[0].Report.Settings.Engine).Clustered {
		return RowAutoIncrement
	}
	return RowBigserial
}

// rateTolerance is how far below another scheme's operations (rows) per second a scheme may
// write and still count as keeping up with it.
const rateTolerance = 0.90

// WriterRateClaims returns the speed claims of the one-server advice that s can test, with the
// client counts for which each holds: operations (rows) per second of uuidv7 against uuidv4,
// and of snowflake against the fastest scheme of the same run, each within 10%. Rates come
// from single runs on whatever machine made the sweep (its sweep.md gives the load): they are
// noisier than the sizes.
func WriterRateClaims(s *Sweep) []WriterClaim {
	if s == nil || len(s.Runs) == 0 {
		return nil
	}
	_, rateName, _ := sweepUnits(s)
	unit := "ops/s"
	if rateName != "operations per second" {
		unit = "rows/s"
	}
	rateOf := func(rep *Report, scheme string) (float64, bool) {
		pt := point(rep, scheme)
		return pt.rate, pt.ok && pt.rate > 0
	}
	keepsUp := func(rep, _ *Report) (bool, bool, string) {
		x, ok1 := rateOf(rep, "uuidv7")
		y, ok2 := rateOf(rep, "uuidv4")
		return x >= rateTolerance*y, ok1 && ok2, fmt.Sprintf("uuidv7 %s %s, uuidv4 %s", thousands(int64(x+0.5)), unit, thousands(int64(y+0.5)))
	}
	nearFastest := func(rep, _ *Report) (bool, bool, string) {
		x, ok := rateOf(rep, "snowflake")
		best, bestName := 0.0, ""
		for _, n := range sweepSchemes(s) {
			if y, ok := rateOf(rep, n); ok && y > best {
				best, bestName = y, n
			}
		}
		return x >= rateTolerance*best, ok && best > 0, fmt.Sprintf("snowflake %s %s, fastest %s %s", thousands(int64(x+0.5)), unit, bestName, thousands(int64(best+0.5)))
	}
	return evalClaims(s, []claimTest{
		{"rate-ordered16", "a time-ordered UUID (uuidv7) writes at least 90% of the " + rateName + " of a random one (uuidv4)", keepsUp},
		{"rate-ordered8", "a Snowflake key writes at least 90% of the " + rateName + " of the fastest scheme", nearFastest},
	})
}

// WriteSweepSummary writes, for docs/choosing-an-id.md, what a sweep of concurrent clients
// says of each claim of the one-server advice: up to how many writers it holds, and the
// figures where it stops holding.
func WriteSweepSummary(w io.Writer, s *Sweep) error {
	if s == nil || len(s.Runs) == 0 {
		return fmt.Errorf("dbbench: sweep summary: %w", ErrNotSweep)
	}
	st := s.Runs[0].Report.Settings
	var counts []string
	for _, r := range s.Runs {
		counts = append(counts, fmt.Sprint(r.Clients))
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	what, warm := "rows", ""
	if s.Runs[0].Report.Workload == WorkloadApp {
		what, warm = "operations", appWarmup(st)
	}
	p("`%s`: %s, %s %s per scheme, %s client(s), %s%s.\n\n", s.Command, st.ServerVersion, thousands(int64(st.Rows)), what, strings.Join(counts, ", "), runsWord(st), warm)
	writeClaimLines(&b, WriterClaims(s))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeClaimLines writes one bullet per claim: up to how many writers it held, and the
// figures where it stopped holding.
func writeClaimLines(b *strings.Builder, claims []WriterClaim) {
	for _, c := range claims {
		switch {
		case c.FailsAt == 0:
			fmt.Fprintf(b, "- %s: **holds up to %s**, the most measured (%s).\n", upperFirst(c.Claim), writersWord(c.Measured), c.Evidence)
		case c.HoldsUpTo == 0:
			fmt.Fprintf(b, "- %s: **does not hold** even with %s (%s).\n", upperFirst(c.Claim), writersWord(c.FailsAt), c.Evidence)
		default:
			fmt.Fprintf(b, "- %s: **holds up to %s**, not with %d (%s).\n", upperFirst(c.Claim), writersWord(c.HoldsUpTo), c.FailsAt, c.Evidence)
		}
	}
}

// WriteSweepAdvice writes, for the opening advice of docs/choosing-an-id.md, what one
// engine's sweep says of the one-server advice: the conditions it was measured under
// (SweepConditions) and, for each claim on size (WriterClaims) and speed
// (WriterRateClaims), up to how many concurrent writers it held.
func WriteSweepAdvice(w io.Writer, s *Sweep) error {
	if s == nil || len(s.Runs) == 0 {
		return fmt.Errorf("dbbench: sweep advice: %w", ErrNotSweep)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** (%s; `%s`):\n\n", dialectOf(s.Runs[0].Report.Settings.Engine).Title, SweepConditions(s), s.Command)
	writeClaimLines(&b, append(WriterClaims(s), WriterRateClaims(s)...))
	_, err := io.WriteString(w, b.String())
	return err
}

// writersWord is "1 writer" or "N writers".
func writersWord(n int) string {
	if n == 1 {
		return "1 writer"
	}
	return fmt.Sprintf("%d writers", n)
}

// SweepSize is one scheme's size in one run of a sweep: bytes per operation (app workload) or
// primary-key bytes per row (table workload), and its operations (rows) per second.
type SweepSize struct {
	Clients int     `json:"clients"`
	Scheme  string  `json:"scheme"`
	Bytes   float64 `json:"bytes"`
	Rate    float64 `json:"rate"`
}

// SweepSizes returns every scheme's size and rate in every run of s, run by run, schemes in the
// order of the report.
func SweepSizes(s *Sweep) []SweepSize {
	var out []SweepSize
	for _, r := range s.Runs {
		for _, n := range sweepSchemes(s) {
			if pt := point(r.Report, n); pt.ok {
				out = append(out, SweepSize{Clients: r.Clients, Scheme: n, Bytes: pt.bytes, Rate: pt.rate})
			}
		}
	}
	return out
}

// WriteSweepRemedy writes, for docs/choosing-an-id.md, a remedy measured against the sweep it
// remedies: for every client count and scheme both have, the size (bytes per operation or per
// row) and the share of late inserts without and with the remedy, and each scheme's size with
// the remedy against its size with the first client count without it (the one-writer figure
// a remedy would recover). remedy names it ("IDs made inside the transaction").
func WriteSweepRemedy(w io.Writer, base, with *Sweep, remedy string) error {
	if base == nil || with == nil || len(base.Runs) == 0 || len(with.Runs) == 0 {
		return fmt.Errorf("dbbench: remedy summary: %w", ErrNotSweep)
	}
	_, _, op := sweepUnits(base)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("Without: `%s`. With %s: `%s`. %s.\n\n", base.Command, remedy, with.Command, base.Runs[0].Report.Settings.ServerVersion)
	p("| clients | scheme | B/%s without | B/%s with | with / one writer | late %% without | late %% with |\n|--:|---|--:|--:|--:|--:|--:|\n", op, op)
	one := base.Runs[0].Report
	for _, r := range with.Runs {
		var br *Report
		for _, x := range base.Runs {
			if x.Clients == r.Clients {
				br = x.Report
			}
		}
		if br == nil {
			continue
		}
		for _, n := range sweepSchemes(with) {
			a, c, o := point(br, n), point(r.Report, n), point(one, n)
			if !a.ok || !c.ok || !o.ok {
				continue
			}
			late := func(pt sweepPoint) string {
				if pt.contention == nil {
					return "–"
				}
				return fmt.Sprintf("%.1f", pt.contention.LatePercent)
			}
			p("| %d | %s | %.1f | %.1f | %.2f× | %s | %s |\n", r.Clients, mdEscape(n), a.bytes, c.bytes, ratio(c.bytes, o.bytes), late(a), late(c))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// claimShort names each claim in a few words, for WriteSweepHeadline.
var claimShort = map[string]string{
	"ordered16":      "uuidv7 smaller than uuidv4",
	"ordered8":       "snowflake keeps its one-writer size",
	"dbkey":          "the database's keys keep theirs",
	"ordered8-vs-db": "snowflake within 10% of the database's keys",
	"rate-ordered16": "uuidv7 at 90% of uuidv4's speed or more",
	"rate-ordered8":  "snowflake at 90% of the fastest speed or more",
}

// WriteSweepHeadline writes, for README.md, one line of what a sweep says of the one-server
// advice: the engine, the conditions in brief (workload size, data against the cache, commit
// setting) and, per claim (WriterClaims, WriterRateClaims), up to how many writers it held.
func WriteSweepHeadline(w io.Writer, s *Sweep) error {
	if s == nil || len(s.Runs) == 0 {
		return fmt.Errorf("dbbench: sweep headline: %w", ErrNotSweep)
	}
	first := s.Runs[0].Report
	st := first.Settings
	what := "rows"
	if first.Workload == WorkloadApp {
		what = "operations"
	}
	cond := fmt.Sprintf("%s %s per scheme", thousands(int64(st.Rows)), what)
	if name, value, cache, lo, hi, ok := sweepCacheSpan(s); ok {
		cond += fmt.Sprintf(", data %.2f–%.2f× %s %s", float64(lo.bytes)/float64(cache), float64(hi.bytes)/float64(cache), name, value)
	}
	if durable, known := commitFlushed(st); known {
		cond += map[bool]string{true: ", commits flushed", false: ", commits not flushed"}[durable]
	}
	var parts []string
	for _, c := range append(WriterClaims(s), WriterRateClaims(s)...) {
		short := claimShort[c.ID]
		if short == "" {
			short = c.Claim
		}
		switch {
		case c.FailsAt == 0:
			parts = append(parts, fmt.Sprintf("%s up to %s (all measured)", short, writersWord(c.Measured)))
		case c.HoldsUpTo == 0:
			parts = append(parts, fmt.Sprintf("%s not even with %s", short, writersWord(c.FailsAt)))
		default:
			parts = append(parts, fmt.Sprintf("%s up to %s, not %d", short, writersWord(c.HoldsUpTo), c.FailsAt))
		}
	}
	_, err := fmt.Fprintf(w, "- **%s** (%s): %s.\n", dialectOf(st.Engine).Title, cond, strings.Join(parts, "; "))
	return err
}
