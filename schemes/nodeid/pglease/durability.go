package pglease

import "github.com/idkit/idkit/schemes/nodeid"

// Durability is Replication as nodeid.Durabler reports it, for idkitd and idbench.
func (s *Store) Durability() nodeid.Durability {
	r := s.Replication()
	return nodeid.Durability{Class: r.Class, Reason: r.Reason, Epoch: r.Epoch, AsyncAccepted: r.AsyncAccepted}
}

var _ nodeid.Durabler = (*Store)(nil)
