package pgstore

// WithoutSyncCommit takes away the store's own synchronous commit, so that its increments
// commit as the server's synchronous_commit says: the control run of the crash test.
func WithoutSyncCommit(s *Store) { s.take = takeQuery(s.table, false) }
