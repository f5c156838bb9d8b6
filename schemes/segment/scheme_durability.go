package segment

import (
	"strconv"

	"github.com/idkit/idkit"
)

// storeFailovers returns each store's count of epoch changes seen, in the order of
// Settings.Stores.
func (s *Segment) storeFailovers() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := make([]int, len(s.stores))
	for i := range s.stores {
		n[i] = s.stores[i].fence
	}
	return n
}

// Durability reports each store's durability class, epoch and failovers seen
// (idkit.Durabler), for idkitd and idbench.
func (s *segmentScheme) Durability() []idkit.Durability {
	ds, fo := s.g.Durability(), s.g.storeFailovers()
	out := make([]idkit.Durability, len(ds))
	for i, d := range ds {
		out[i] = idkit.Durability{Store: "store " + strconv.Itoa(i+1), Class: d.Class.String(), Reason: d.Reason,
			Epoch: d.Epoch, AsyncAccepted: d.AsyncAccepted, Failovers: fo[i]}
		if i < len(s.urls) {
			out[i].Store += " " + idkit.Redact(s.urls[i]) // the URL, as the docs show it, never a credential
		}
		if _, ok := s.g.stores[i].st.(Durabler); !ok {
			out[i].Reason = "the store does not report its durability"
		}
	}
	return out
}

var _ idkit.Durabler = (*segmentScheme)(nil)

// Err reports whether the scheme can issue IDs now (idkit.Fenced): see Segment.Err.
func (s *segmentScheme) Err() error { return s.g.Err() }

var _ idkit.Fenced = (*segmentScheme)(nil)
