package mysqlstore

import (
	"fmt"
	"time"
)

// The writer guard of a Galera node (package doc, "One writer node per key").
//
// Galera certifies a commit against the write-sets ordered before it, yet two nodes can both
// commit the same read-modify-write of a row (Jepsen's Lost Update in MariaDB Galera Cluster
// 12.1.2; TestFaultPartitionGalera saw two nodes commit the same increment about a second
// after a membership change). Takes of a key made through one node at a time are serialised
// by that node's row lock and never met it. So each row records its writer node
// (wsrep_gcomm_uuid, which a restarted node draws anew), and a take goes through only on that
// node. Another node takes the key over in three steps, each a take of its own:
//
//  1. it sees the row unchanged (same writer, same max_id) for the hand-over delay, read
//     in takes whose first statement waited until the node applied every write-set the
//     cluster committed before it (wsrep_sync_wait):
//     the writer has taken nothing for that long, because it is cut off, stopped or idle.
//     When the writer is one it had not seen before (and when it first looks), twice the
//     delay: the writer may have just claimed the key, and takes nothing while its claim
//     settles (step 3); counting that as idle would take keys from claimants before they
//     served;
//  2. it claims the row: writer set to itself, max_id moved on by a failover gap (at least
//     segment.DefaultFailoverGap blocks), nothing handed out. A take of the old writer that
//     raced the claim, and that Galera let both commit, lies below the gap;
//  3. a hand-over delay after its claim, by its own clock, it reads the row again: if it is
//     still the writer (a racing take of the old writer that was ordered after the claim
//     would have written the old writer back), it takes as the writer from then on.
//
// A row without a writer (new, or written before the guard) is claimed at once, and served
// a hand-over delay later. The old writer's takes, once the claim reached its node, find
// another writer and are refused. Every refusal wraps ErrNotWriter and writes nothing.

// guarded reports whether the store's takes go through the writer guard: on a Galera node,
// unless a test's control turned it off.
func (s *Store) guarded() bool { return s.galera && !s.noWriterGuard && !s.unprotected }

// action is what a take on a Galera node does with the key's row.
type action int

const (
	actTake  action = iota // this node is the writer: take a block
	actWait                // another node is the writer, or this node's claim is settling
	actClaim               // claim the key for this node
)

// writerRow is the key's row as a take on a Galera node reads it.
type writerRow struct {
	maxID  int64
	writer string // wsrep_gcomm_uuid of the writer node; "" when the row records none
	// sinceClaim is the time since writer_since by the node's clock (NOW(6)); claimed is
	// false when writer_since is NULL. They are read only when the writer is this node, which
	// set them. A clock stepped back makes sinceClaim negative: the claim is still settling.
	sinceClaim time.Duration
	claimed    bool
}

// sighting is a row as a store last saw it on a node that is not the key's writer.
type sighting struct {
	writer string
	maxID  int64
	at     time.Time     // when the store first saw this writer and max_id (monotonic)
	need   time.Duration // how long the row must stay so before this node claims it
}

// decide says what a take of key through the node me does with row r, read at now, and why
// when it does not take. It records what it saw in s.seen.
func (s *Store) decide(key, me string, r writerRow, now time.Time) (action, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case me == "":
		return actWait, "the node's wsrep_gcomm_uuid is unreadable, so its takes cannot be told from another node's"
	case r.writer == me:
		delete(s.seen, key)
		if r.claimed && r.sinceClaim < s.handover {
			return actWait, fmt.Sprintf("this node claimed the key %v ago and takes it %v after its claim", r.sinceClaim.Round(time.Millisecond), s.handover)
		}
		return actTake, ""
	case r.writer == "":
		delete(s.seen, key)
		return actClaim, ""
	}
	sg, ok := s.seen[key]
	if !ok || sg.writer != r.writer || sg.maxID != r.maxID {
		// A writer this store had not seen may have just claimed the key, and it takes
		// nothing while its claim settles (one hand-over delay): wait that out too.
		need := s.handover
		if !ok || sg.writer != r.writer {
			need = 2 * s.handover
		}
		s.seen[key] = sighting{writer: r.writer, maxID: r.maxID, at: now, need: need}
		return actWait, fmt.Sprintf("node %s writes the key (max_id %d); this node takes it over once it has seen no take for %v", r.writer, r.maxID, need)
	}
	if idle := now.Sub(sg.at); idle < sg.need {
		return actWait, fmt.Sprintf("node %s writes the key (max_id %d, unchanged for %v); this node takes it over once it has seen no take for %v", r.writer, r.maxID, idle.Round(time.Millisecond), sg.need)
	}
	delete(s.seen, key)
	return actClaim, ""
}
