package redisstore

import "context"

// Unprotected makes s take blocks as before failover fencing, for the failover tests'
// controls: no epoch or gap, no replication check.
func Unprotected(s *Store) { s.unprotected = true }

// OpenIgnoringBacklog is Open with a store that classes a primary by connected_slaves alone,
// as before repl_backlog_active was read, for the partition test's control.
func OpenIgnoringBacklog(ctx context.Context, s Settings) (*Store, error) { return open(ctx, s, true) }
