package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/idkit/idkit"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
)

// durability is what the stores g's scheme rests on last reported of their durability class
// (idkit.DurabilityOf): nil for a scheme without a store.
func (g *generator) durability() []idkit.Durability {
	d, _ := idkit.DurabilityOf(g.s)
	return d
}

// durabilityProto is ds as the Generators answer lists it, credentials redacted.
func durabilityProto(ds []idkit.Durability) []*v1.Generator_Durability {
	var out []*v1.Generator_Durability
	for _, d := range ds {
		out = append(out, &v1.Generator_Durability{
			Store: idkit.Redact(d.Store), Class: d.Class, Reason: idkit.Redact(d.Reason), Epoch: d.Epoch,
			AsyncAccepted: d.AsyncAccepted, Failovers: uint64(max(d.Failovers, 0)),
		})
	}
	return out
}

// durabilityLines are the lines /readyz adds for a token holder: one per store of each
// generator that has one, as `generator "NAME" durability: STORE: CLASS: REASON; epoch E`.
func (s *Server) durabilityLines() []string {
	var lines []string
	for _, g := range s.order {
		for _, d := range g.durability() {
			lines = append(lines, durabilityLine(g.name, d))
		}
	}
	return lines
}

func durabilityLine(name string, d idkit.Durability) string {
	return fmt.Sprintf("generator %q durability: %s", name, strings.ReplaceAll(idkit.Redact(d.String()), "\n", " "))
}

// readyReply is textReply followed by detail lines.
func readyReply(w http.ResponseWriter, code int, line string, detail []string) {
	textReply(w, code, line)
	for _, l := range detail {
		io.WriteString(w, l+"\n")
	}
}

// durabilityWatch logs each generator's durability at start and again when a store's class,
// its acceptance of async or its epoch (a failover) changes: a warning when the class is async
// or unknown, at start too.
type durabilityWatch struct {
	s    *Server
	last [][]idkit.Durability // per generator, what was last logged
}

func newDurabilityWatch(s *Server) *durabilityWatch {
	w := &durabilityWatch{s: s, last: make([][]idkit.Durability, len(s.order))}
	w.check(true)
	return w
}

// check logs the generators whose durability changed since the last check (all that have a
// store when first).
func (w *durabilityWatch) check(first bool) {
	for i, g := range w.s.order {
		ds := g.durability()
		if !first && !durabilityChanged(w.last[i], ds) {
			continue
		}
		w.last[i] = ds
		for _, d := range ds {
			attrs := []any{"generator", g.name, "store", idkit.Redact(d.Store), "class", d.Class,
				"reason", idkit.Redact(d.Reason), "epoch", d.Epoch, "async_accepted", d.AsyncAccepted, "failovers", d.Failovers}
			switch {
			case first && (d.Class == "async" || d.Class == "unknown"):
				// Accepted (durability=async) or not known: failover fencing is all that
				// stands between a failover and repeated IDs.
				w.s.log.Warn("generator durability", attrs...)
			case first:
				w.s.log.Info("generator durability", attrs...)
			case d.Class == "async" || d.Class == "unknown":
				w.s.log.Warn("generator durability changed", attrs...)
			default:
				w.s.log.Info("generator durability changed", attrs...)
			}
		}
	}
}

// durabilityChanged reports whether a store's class, async acceptance or epoch differ; a
// changed reason alone (a standby's lag, say) is not logged.
func durabilityChanged(a, b []idkit.Durability) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Class != b[i].Class || a[i].AsyncAccepted != b[i].AsyncAccepted || a[i].Epoch != b[i].Epoch {
			return true
		}
	}
	return false
}
