package nodeid

// Durabler is an optional interface of a Store that knows how durable its writes are across a
// failover of a replicated store (pglease, etcdlease). A Store without it is shown as of
// unknown durability.
type Durabler interface {
	// Durability returns what the store learned of its replication on connect and at its
	// last write (claim, renewal, mark); it is safe for concurrent use.
	Durability() Durability
}

// Durability is a lease store's durability class, as idkitd and idbench show it.
type Durability struct {
	// Class is "sync" (a write is acknowledged once a standby or a quorum holds it),
	// "single" (one server, no standby that could be promoted), "async" (a standby could be
	// promoted without the write) or "unknown".
	Class string
	// Reason names the setting, standby or status that decides Class.
	Reason string
	// Epoch is the store's epoch at its last write: it changes with a failover.
	Epoch string
	// AsyncAccepted reports durability=async: the store runs although its class is async.
	AsyncAccepted bool
}
