// Package history checks what a fault test recorded: every request for an ID with the times it
// was sent and answered, in the manner of Jepsen's checkers. Check finds
//
//   - repeated IDs: one ID answered twice, across all clients and generators;
//   - IDs that do not increase within one generator: an answer at most equal to one the same
//     generator gave before the request was sent;
//   - stale leases: an ID carrying a node whose lease (held by the generator that answered)
//     had ended, by the store's account, before the request was sent;
//   - time-order breaks, for time-ordered schemes: an ID whose time sorts below that of one
//     answered before its request was sent, by more than the configured skew.
//
// A failure names the conflicting operations, each with its client, generator, node, ID and
// times, so that a reader can find them in the logs.
package history

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Op is one request for an ID and its answer.
type Op struct {
	Client    string    // who asked (a client process, or the generator itself)
	Generator string    // which generator answered: one process's one lease
	Node      int64     // the node number the generator held, or -1
	ID        uint64    // the answer
	Send      time.Time // when the request was sent
	Recv      time.Time // when the answer arrived
}

// String describes op for a failure report.
func (o Op) String() string {
	node := ""
	if o.Node >= 0 {
		node = fmt.Sprintf(" :node %d", o.Node)
	}
	return fmt.Sprintf("{:client %q :generator %q%s :id %d :send %s :recv %s}", o.Client, o.Generator, node, o.ID,
		o.Send.UTC().Format("15:04:05.000000"), o.Recv.UTC().Format("15:04:05.000000"))
}

// Lease is one generator's hold on a node number, as the store saw it.
type Lease struct {
	Generator string
	Node      int64
	Start     time.Time
	// End is when the lease ended by the store's account, or a moment known to be after it (a
	// successor's grant of the same node); zero while it was still held when the run ended.
	End time.Time
}

// Config says what Check can check beyond repeats.
type Config struct {
	// Time, when set, reads an ID's time; with it Check finds time-order breaks beyond Skew.
	Time func(id uint64) time.Time
	Skew time.Duration
	// Leases, when set, are every generator's leases; an Op whose generator held no lease on
	// its node covering its send time is a stale-lease failure. Generators absent from Leases
	// are not checked.
	Leases []Lease
}

// Conflict is one failure: the operation that broke a rule and the earlier one it conflicts
// with (zero for a stale lease, which conflicts with the lease in Detail).
type Conflict struct {
	Later, Earlier Op
	Detail         string
}

// Result is what Check found. Each list keeps the first MaxShown conflicts of its kind; the
// counts are complete.
type Result struct {
	Ops                                                int
	Repeated, NotIncreasing, StaleLease, TimeOrder     []Conflict
	RepeatedN, NotIncreasingN, StaleLeaseN, TimeOrderN int
	Generators                                         int
	LongestGap                                         time.Duration // longest time no answer arrived, over the run
	checkedIncreasing, checkedLeases, checkedTimeOrder bool
}

// MaxShown is how many conflicts of each kind a Result keeps.
const MaxShown = 10

// Valid reports whether no rule was broken.
func (r Result) Valid() bool {
	return r.RepeatedN+r.NotIncreasingN+r.StaleLeaseN+r.TimeOrderN == 0
}

// Check checks ops (in any order) against every rule cfg allows.
func Check(ops []Op, cfg Config) Result {
	r := Result{Ops: len(ops), checkedIncreasing: true}
	add := func(list *[]Conflict, n *int, c Conflict) {
		*n++
		if len(*list) < MaxShown {
			*list = append(*list, c)
		}
	}
	bySend := append([]Op(nil), ops...)
	sort.SliceStable(bySend, func(i, j int) bool { return bySend[i].Send.Before(bySend[j].Send) })

	// Repeats, reported against the first answer (by send time) of the same ID.
	first := make(map[uint64]Op, len(ops))
	for _, o := range bySend {
		if f, ok := first[o.ID]; ok {
			add(&r.Repeated, &r.RepeatedN, Conflict{Later: o, Earlier: f, Detail: "same ID"})
			continue
		}
		first[o.ID] = o
	}

	// Per generator: each answer above every answer that arrived before its request was sent.
	gens := map[string][]Op{}
	for _, o := range bySend {
		gens[o.Generator] = append(gens[o.Generator], o)
	}
	r.Generators = len(gens)
	names := make([]string, 0, len(gens))
	for g := range gens {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		sweep(gens[g], func(o Op) uint64 { return o.ID }, func(later, max Op) {
			if later.ID <= max.ID {
				add(&r.NotIncreasing, &r.NotIncreasingN, Conflict{Later: later, Earlier: max, Detail: "not above an earlier answer of the same generator"})
			}
		})
	}

	// Leases.
	if len(cfg.Leases) > 0 {
		r.checkedLeases = true
		type key struct {
			g string
			n int64
		}
		leases := map[key][]Lease{}
		held := map[string]bool{}
		for _, l := range cfg.Leases {
			leases[key{l.Generator, l.Node}] = append(leases[key{l.Generator, l.Node}], l)
			held[l.Generator] = true
		}
		for _, o := range bySend {
			if !held[o.Generator] {
				continue
			}
			ok := false
			var last Lease
			for _, l := range leases[key{o.Generator, o.Node}] {
				last = l
				if !o.Recv.Before(l.Start) && (l.End.IsZero() || !o.Send.After(l.End)) {
					ok = true
					break
				}
			}
			if !ok {
				d := fmt.Sprintf("generator %s held no lease on node %d at send", o.Generator, o.Node)
				if !last.End.IsZero() {
					d = fmt.Sprintf("lease of %s on node %d ended by %s, %v before the request was sent", o.Generator, o.Node,
						last.End.UTC().Format("15:04:05.000000"), o.Send.Sub(last.End))
				}
				add(&r.StaleLease, &r.StaleLeaseN, Conflict{Later: o, Detail: d})
			}
		}
	}

	// Time order across all generators.
	if cfg.Time != nil {
		r.checkedTimeOrder = true
		ms := func(o Op) uint64 { return uint64(cfg.Time(o.ID).UnixNano()) }
		sweep(bySend, ms, func(later, max Op) {
			lt, mt := cfg.Time(later.ID), cfg.Time(max.ID)
			if mt.Sub(lt) > cfg.Skew {
				add(&r.TimeOrder, &r.TimeOrderN, Conflict{Later: later, Earlier: max,
					Detail: fmt.Sprintf("sorts %v below an ID answered before it was asked for (skew allowed %v)", mt.Sub(lt), cfg.Skew)})
			}
		})
	}

	// The longest time without an answer, from the first answer to the last.
	byRecv := append([]Op(nil), ops...)
	sort.Slice(byRecv, func(i, j int) bool { return byRecv[i].Recv.Before(byRecv[j].Recv) })
	for i := 1; i < len(byRecv); i++ {
		if d := byRecv[i].Recv.Sub(byRecv[i-1].Recv); d > r.LongestGap {
			r.LongestGap = d
		}
	}
	return r
}

// sweep calls f(o, m) for every op o of bySend (sorted by send time) that has an op answered
// before o was sent, with m the one of those with the largest val.
func sweep(bySend []Op, val func(Op) uint64, f func(o, max Op)) {
	byRecv := append([]Op(nil), bySend...)
	sort.SliceStable(byRecv, func(i, j int) bool { return byRecv[i].Recv.Before(byRecv[j].Recv) })
	var max Op
	have := false
	j := 0
	for _, o := range bySend {
		for j < len(byRecv) && byRecv[j].Recv.Before(o.Send) {
			if !have || val(byRecv[j]) > val(max) {
				max, have = byRecv[j], true
			}
			j++
		}
		if have {
			f(o, max)
		}
	}
}

// Write prints r as a Jepsen-style map: :valid?, the counts, and each kept conflict.
func (r Result) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "{:valid? %v\n :ops %d\n :generators %d\n :longest-gap %q\n", r.Valid(), r.Ops, r.Generators, r.LongestGap.String())
	section := func(name string, checked bool, n int, list []Conflict) {
		if !checked {
			fmt.Fprintf(&b, " :%s :not-checked\n", name)
			return
		}
		fmt.Fprintf(&b, " :%s-count %d\n", name, n)
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(&b, " :%s [\n", name)
		for _, c := range list {
			fmt.Fprintf(&b, "   {:detail %q\n    :op %s", c.Detail, c.Later)
			if c.Earlier.Generator != "" || c.Earlier.ID != 0 {
				fmt.Fprintf(&b, "\n    :earlier %s", c.Earlier)
			}
			b.WriteString("}\n")
		}
		b.WriteString("  ]\n")
	}
	section("repeated", true, r.RepeatedN, r.Repeated)
	section("not-increasing", r.checkedIncreasing, r.NotIncreasingN, r.NotIncreasing)
	section("stale-lease", r.checkedLeases, r.StaleLeaseN, r.StaleLease)
	section("time-order", r.checkedTimeOrder, r.TimeOrderN, r.TimeOrder)
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
