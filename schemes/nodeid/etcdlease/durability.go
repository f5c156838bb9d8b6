package etcdlease

import (
	"context"
	"strconv"
	"sync"

	"github.com/idkit/idkit/schemes/nodeid"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// membership is what a Store last read of its cluster, for Durability.
type membership struct {
	mu  sync.Mutex
	dur nodeid.Durability
}

// readMembers reads the cluster's voting members and id, best effort: a claim already read or
// wrote through a quorum, and a failure here leaves the last reading.
func (s *Store) readMembers(ctx context.Context) {
	res, err := s.cli.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return
	}
	voters := 0
	for _, m := range res.Members {
		if !m.IsLearner {
			voters++
		}
	}
	d := nodeid.Durability{Class: "sync", Epoch: "cluster " + strconv.FormatUint(res.Header.GetClusterId(), 16)}
	if voters <= 1 {
		d.Class, d.Reason = "single", "one etcd member: nothing to fail over to"
	} else {
		d.Reason = strconv.Itoa(voters) + " voting etcd members: a write is acknowledged once a Raft quorum holds it"
	}
	s.members.mu.Lock()
	s.members.dur = d
	s.members.mu.Unlock()
}

// Durability reports the class of the cluster as read at the last claim: "sync" with more
// than one voting member (Raft commits a write on a quorum before etcd acknowledges it),
// "single" with one, "unknown" before a claim could read it. The epoch is the cluster ID.
func (s *Store) Durability() nodeid.Durability {
	s.members.mu.Lock()
	defer s.members.mu.Unlock()
	if s.members.dur.Class == "" {
		return nodeid.Durability{Class: "unknown", Reason: "no claim has read the etcd membership yet"}
	}
	return s.members.dur
}

var _ nodeid.Durabler = (*Store)(nil)
