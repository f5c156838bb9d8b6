package dbbench

import (
	"fmt"
	"io"
	"strings"
)

// RemedyName names the remedy a sweep's runs used, from their settings: the client remedies
// of the app workload (Config.ClientBatch, ClientBlock, IDsPerClient), IDs made inside the
// transaction (Config.IDsInTx) and a primary-key fillfactor other than 90; "none" for none.
func RemedyName(s Settings) string {
	var out []string
	if s.ClientBatch > 1 {
		out = append(out, fmt.Sprintf("client batch of %d, sorted", s.ClientBatch))
	}
	if s.ClientBlock > 1 {
		out = append(out, fmt.Sprintf("client block of %d operations", s.ClientBlock))
	}
	if s.IDsPerClient {
		out = append(out, "a generator per client")
	}
	if s.IDsInTx {
		out = append(out, "IDs made inside the transaction")
	}
	if s.Fillfactor != 0 && s.Fillfactor != 90 {
		out = append(out, fmt.Sprintf("fillfactor %d", s.Fillfactor))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// remedyRecovered is the largest size against one writer that WriteRemedies calls recovered:
// 15%, about one 1 MiB extent of an index in 20,000 operations of the app workload (InnoDB
// counts an index past 32 pages in whole extents).
const remedyRecovered = 1.15

// clientRemedy reports whether a run used a client remedy of the app workload
// (Config.ClientBatch, ClientBlock or IDsPerClient).
func clientRemedy(s Settings) bool {
	return s.ClientBatch > 1 || s.ClientBlock > 1 || s.IDsPerClient
}

// WriteRemedies writes, for docs/choosing-an-id.md, remedies measured side by side: one row
// per sweep, client count and scheme, with the remedy (RemedyName), the engine, the size per
// operation (or row) and that size against the scheme's one-writer size without a remedy (the
// first client count of the sweep that used none on the same engine and size; for a scheme no such
// sweep has, the first client count of its own sweep, marked *), the rate, the share of late
// inserts, page splits per operation (InnoDB), the leaf fill of both tables and the
// operations' p99 latency; then, per remedy and client count above one, whether each scheme
// recovered its one-writer size (within remedyRecovered); then each sweep's command and the
// machine's load averages.
func WriteRemedies(w io.Writer, sweeps []*Sweep) error {
	if len(sweeps) == 0 {
		return fmt.Errorf("dbbench: remedies table: %w", ErrNotSweep)
	}
	for _, s := range sweeps {
		if s == nil || len(s.Runs) == 0 {
			return fmt.Errorf("dbbench: remedies table: %w", ErrNotSweep)
		}
	}
	engineOf := func(s *Sweep) string {
		return strings.TrimPrefix(dialectOf(s.Runs[0].Report.Settings.Engine).Title, "MariaDB/MySQL ")
	}
	// The one-writer size of each engine, size of load and scheme, without a remedy.
	type base struct {
		engine string
		rows   int
		scheme string
	}
	rowsOf := func(s *Sweep) int { return s.Runs[0].Report.Settings.Rows }
	one := map[base]float64{}
	for _, s := range sweeps {
		if RemedyName(s.Runs[0].Report.Settings) != "none" {
			continue
		}
		for _, n := range sweepSchemes(s) {
			if pt := point(s.Runs[0].Report, n); pt.ok {
				one[base{engineOf(s), rowsOf(s), n}] = pt.bytes
			}
		}
	}
	// versus is a scheme's size in pt against its one-writer size without a remedy, or, where
	// no sweep without one has the scheme, against its first client count in s (star "*").
	versus := func(s *Sweep, n string, pt sweepPoint) (x float64, star string, ok bool) {
		if !pt.ok {
			return 0, "", false
		}
		if o, ok := one[base{engineOf(s), rowsOf(s), n}]; ok {
			return ratio(pt.bytes, o), "", true
		}
		if o := point(s.Runs[0].Report, n); o.ok {
			return ratio(pt.bytes, o.bytes), "*", true
		}
		return 0, "", false
	}
	_, _, op := sweepUnits(sweeps[0])
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("| remedy | engine | %ss | clients | scheme | B/%s | vs one writer | %s/s | late %% | splits/%s | parent leaf %% | child leaf %% | %s p99 µs |\n", op, op, op, op, op)
	p("|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var marked bool
	for _, s := range sweeps {
		name, eng := RemedyName(s.Runs[0].Report.Settings), engineOf(s)
		for _, r := range s.Runs {
			for _, n := range sweepSchemes(s) {
				pt := point(r.Report, n)
				if !pt.ok {
					continue
				}
				vs := "–"
				if x, star, ok := versus(s, n, pt); ok {
					vs, marked = fmt.Sprintf("%.2f×%s", x, star), marked || star != ""
				}
				late, splits, pleaf, cleaf, p99 := "–", "–", "–", "–", "–"
				if c := pt.contention; c != nil {
					late = fmt.Sprintf("%.1f", c.LatePercent)
					if c.PageSplitsPerOp != nil {
						splits = fmt.Sprintf("%.3f", *c.PageSplitsPerOp)
					}
					if c.ParentLeafDensity != nil {
						pleaf = fmt.Sprintf("%.1f", *c.ParentLeafDensity)
					}
					if c.ChildLeafDensity != nil {
						cleaf = fmt.Sprintf("%.1f", *c.ChildLeafDensity)
					}
					p99 = fmt.Sprintf("%.0f", c.OpLatency.P99Micros)
				}
				p("| %s | %s | %s | %d | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(name), eng, thousands(int64(rowsOf(s))), r.Clients, mdEscape(n),
					pt.bytes, vs, thousands(int64(pt.rate+0.5)), late, splits, pleaf, cleaf, p99)
			}
		}
	}
	p("\n")
	// The verdicts: per remedy, size of load and client count above one, each scheme's size
	// against one writer.
	for _, s := range sweeps {
		name := RemedyName(s.Runs[0].Report.Settings)
		if name == "none" {
			continue
		}
		for _, r := range s.Runs {
			if r.Clients == 1 {
				continue
			}
			var parts []string
			for _, n := range sweepSchemes(s) {
				pt := point(r.Report, n)
				x, star, ok := versus(s, n, pt)
				if !ok {
					continue
				}
				word := "not recovered"
				if x <= remedyRecovered {
					word = "recovered"
				}
				parts = append(parts, fmt.Sprintf("%s %.2f×%s (%s)", mdEscape(n), x, star, word))
			}
			if len(parts) > 0 {
				p("- **%s**, %s, %s %ss, %d clients: %s.\n", mdEscape(name), engineOf(s), thousands(int64(rowsOf(s))), op, r.Clients, strings.Join(parts, "; "))
			}
		}
	}
	p("\nRecovered: within %.0f%% of the scheme's size with one writer and no remedy, on the same engine and load.\n\n", (remedyRecovered-1)*100)
	if marked {
		p("\\* against the scheme's own first client count in the same sweep: no sweep without a remedy has that scheme.\n\n")
	}
	for _, s := range sweeps {
		st := s.Runs[0].Report.Settings
		var loads []string
		for _, r := range s.Runs {
			if r.LoadStart != nil && r.LoadEnd != nil {
				loads = append(loads, fmt.Sprintf("%d: %.1f–%.1f", r.Clients, *r.LoadStart, *r.LoadEnd))
			}
		}
		p("- %s (%s): `%s`", RemedyName(st), st.ServerVersion, s.Command)
		if len(loads) > 0 {
			p("; machine load (1 min) at start–end by clients %s", strings.Join(loads, ", "))
		}
		p(".\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
