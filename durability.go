package idkit

import (
	"strconv"
	"strings"
)

// Durabler is an optional interface of schemes whose uniqueness rests on a store that may be
// replicated: the segment scheme's block stores, a snowflake node held under a lease. A store
// decides its durability class on connect and reads it again with every take (a block, a
// claim, a renewal); Durability returns what each store last reported, in the spec's order.
// idkitd shows it in its Generators answer, to token holders on /readyz and in its log;
// idbench prints it beside the figures of such a scheme.
//
// Wrappers reach it through DurabilityOf, which follows Unwrap.
type Durabler interface {
	Durability() []Durability
}

// Durability is one store's durability as a Durabler reports it.
type Durability struct {
	// Store names the store (its URL with credentials redacted, or a description of it).
	Store string
	// Class is "sync" (a write is acknowledged once a standby or quorum holds it), "single" (one
	// server, no standby that could be promoted), "async" (a standby could be promoted without
	// the write: refused unless the store URL says durability=async) or "unknown".
	Class string
	// Reason names the setting, standby or status that decides Class.
	Reason string
	// Epoch is the store's epoch at its last take: it changes with a failover.
	Epoch string
	// AsyncAccepted reports durability=async: the store runs although its class is async, with
	// failover fencing as its only protection.
	AsyncAccepted bool
	// Failovers counts blocks the segment scheme got from this store in another epoch than the
	// block before (each skipped the safety gap). A lease store reports 0: a failover shows
	// there as a new Epoch, and the slot is quarantined instead.
	Failovers int
}

// String describes d in one line, as idbench and idkitd's log and /readyz show it.
func (d Durability) String() string {
	var b strings.Builder
	if d.Store != "" {
		b.WriteString(d.Store + ": ")
	}
	class := d.Class
	if class == "" {
		class = "unknown"
	}
	b.WriteString(class)
	if d.AsyncAccepted && class == "async" {
		b.WriteString(" (accepted by durability=async: failover fencing is the only protection)")
	}
	if d.Reason != "" {
		b.WriteString(": " + d.Reason)
	}
	if d.Epoch != "" {
		b.WriteString("; epoch " + d.Epoch)
	}
	if d.Failovers > 0 {
		b.WriteString("; failovers seen " + strconv.Itoa(d.Failovers))
	}
	return b.String()
}

// DurabilityOf returns the durability of the stores s rests on, looking through wrappers that
// have an Unwrap() Scheme method (the prefix and mask settings add one), and false when no
// scheme along the chain is a Durabler or it reports no store (a snowflake node without a
// lease).
func DurabilityOf(s Scheme) ([]Durability, bool) {
	d, ok := As[Durabler](s)
	if !ok {
		return nil, false
	}
	ds := d.Durability()
	return ds, len(ds) > 0
}
