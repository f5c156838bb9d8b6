package segment

import (
	"errors"
	"fmt"
)

// Class is a store's durability class: what becomes of an acknowledged take when its server
// fails.
type Class int

// The durability classes, weakest first.
const (
	// ClassUnknown: the store did not say, or could not read its replication state.
	ClassUnknown Class = iota
	// ClassAsync: a standby could be promoted without an acknowledged take (asynchronous
	// replication, MariaDB semi-sync fallen back to asynchronous, any Redis replica). Stores
	// refuse it unless durability=async is in the store URL; failover fencing is then the
	// only protection.
	ClassAsync
	// ClassSingle: no replica is attached; a take is durable on the one server (each store
	// checks its crash settings).
	ClassSingle
	// ClassSync: every standby that could be promoted holds a take before it is acknowledged
	// (PostgreSQL synchronous replication, MariaDB semi-sync AFTER_SYNC, Galera).
	ClassSync
)

// String returns "unknown", "async", "single" or "sync".
func (c Class) String() string {
	switch c {
	case ClassAsync:
		return "async"
	case ClassSingle:
		return "single"
	case ClassSync:
		return "sync"
	}
	return "unknown"
}

// Durability is what a store last learned of its replication: decided on Open and read again
// with every take.
type Durability struct {
	Class Class
	// Reason names the setting, standby or status that decides Class.
	Reason string
	// Epoch is the store's epoch at its last take or check.
	Epoch string
	// AsyncAccepted reports durability=async: the store runs although its class is async.
	AsyncAccepted bool
}

// String describes d in one line, as idbench and idkitd show it.
func (d Durability) String() string {
	s := d.Class.String()
	if d.AsyncAccepted && d.Class < ClassSingle {
		s += " (accepted by durability=async: failover fencing is the only protection)"
	}
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	if d.Epoch != "" {
		s += "; epoch " + d.Epoch
	}
	return s
}

// Durabler is implemented by stores that know their durability class (pgstore, mysqlstore,
// redisstore). It is optional: a Segment reports ClassUnknown for a store without it.
type Durabler interface {
	Durability() Durability
}

// ErrDurabilityParam reports a durability= store URL parameter other than sync or async.
var ErrDurabilityParam = errors.New("segment: bad durability parameter")

// ParseDurability reads the value of a store URL's durability= parameter: "sync" (the
// default: refuse a replica that could be promoted without a take) or "async" (accept it,
// with failover fencing as the only protection), returning whether async was asked for.
// Errors wrap ErrDurabilityParam.
func ParseDurability(v string) (async bool, err error) {
	switch v {
	case "sync":
		return false, nil
	case "async":
		return true, nil
	}
	return false, fmt.Errorf("%w: durability=%.20q: want sync (the default: refuse a replica that could be promoted without a take) or async (accept it, with failover fencing as the only protection)", ErrDurabilityParam, v)
}
