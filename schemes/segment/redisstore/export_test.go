package redisstore

// Unprotected makes s take blocks as before failover fencing, for the failover tests'
// controls: no epoch or gap, no replication check.
func Unprotected(s *Store) { s.unprotected = true }
