package pgstore

// WithoutSyncCommit makes s take blocks without raising synchronous_commit, for the control
// run of the crash test.
func WithoutSyncCommit(s *Store) { s.take = takeQuery(s.table, false, true) }

// Unprotected makes s take blocks as before failover fencing, for the failover tests'
// controls: no epoch or gap, no replication check, no look at a cancelled synchronous wait.
func Unprotected(s *Store) { s.unprotected = true }
