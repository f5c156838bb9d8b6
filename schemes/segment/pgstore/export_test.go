package pgstore

import (
	"context"
	"errors"
	"strings"
	"time"
)

// WithoutSyncCommit makes s take blocks without raising synchronous_commit, for the control
// run of the crash test.
func WithoutSyncCommit(s *Store) { s.take = takeQuery(s.table, false, true, true, true) }

// Unprotected makes s take blocks as before failover fencing, for the failover tests'
// controls: no epoch or gap, no replication check, no look at a cancelled synchronous wait.
func Unprotected(s *Store) { s.unprotected = true }

// Legacy makes s vouch for a take as before pgrepl.Confirm, for the controls of the hidden
// warning tests: the English text of the cancel warning alone, client_min_messages as the
// session has it, a new row after the gap only under durability=async.
func Legacy(s *Store) { s.legacy = true }

// NoNotice makes s ignore the cancel warning: pgrepl.Confirm alone vouches for a take.
func NoNotice(s *Store) { s.noNotice = true }

// SetConfirmWait sets how long a take waits for its standbys' flush.
func SetConfirmWait(s *Store, d time.Duration) { s.confirmWait = d }

// standbySQLNoSlots is standbySQL as before it counted physical replication slots.
const standbySQLNoSlots = `(EXISTS (SELECT 1 FROM pg_catalog.pg_stat_replication)
	OR pg_catalog.current_setting('synchronous_standby_names') <> ''
	OR ('x' || pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()), 1, 8))::bit(32)::bigint > 1)`

// OpenIgnoringSlots is Open with a store as before physical replication slots were read, for
// the partition test's control: it classes the server by pg_stat_replication and
// synchronous_standby_names alone, and starts a new row after the gap only as it did then.
func OpenIgnoringSlots(ctx context.Context, set Settings) (*Store, error) {
	s, err := open(ctx, set, true)
	if err != nil {
		return nil, err
	}
	take := strings.Replace(s.take, standbySQL, standbySQLNoSlots, 1)
	if take == s.take {
		s.Close()
		return nil, errors.New("pgstore: OpenIgnoringSlots: the take statement holds no standbySQL")
	}
	s.take = take
	return s, nil
}

// StandbySQL is the expression that starts a new row after the gap on a server that has or
// had a standby.
const StandbySQL = standbySQL

// FlatStart makes s start a new row as before the timeline counted, for the new row test's
// control: Step × (1 + Gap) where the gap applies, on every timeline.
func FlatStart(s *Store) error {
	take := strings.Replace(s.take, timelineGap, "$5::bigint", 1)
	if take == s.take {
		return errors.New("pgstore: FlatStart: the take statement holds no timelineGap")
	}
	s.take = take
	return nil
}
