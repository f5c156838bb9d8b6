package pgstore

import "time"

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
