package etcdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Cluster is a private etcd cluster of several members on loopback, for tests that kill a
// follower or the leader. Its members are Servers: Stop kills one with SIGKILL, Restart starts
// it again with its data, and it rejoins.
type Cluster struct {
	Members []*Server
}

// StartCluster starts an n-member cluster on loopback, each member with its own data
// directory in one temporary directory (under /dev/shm where there is one), and kills them
// and removes the data when the test ends. It returns once every member answers its health
// check, which needs an elected leader. Without an etcd binary it skips the test, or fails it
// under CI=true.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	return StartClusterOn(t, make([]Member, n))
}

// Member places one member of a cluster started by StartClusterOn. The zero Member is a
// member on loopback on free ports.
type Member struct {
	// Addr is the address the member serves clients and peers on (ports 2379 and 2380, as in
	// a network namespace of its own); empty for loopback on free ports.
	Addr string
	// Probe is another address it serves clients on, which the test's own checks (health,
	// leader) use, so that they keep working while Addr is cut off.
	Probe string
	// Wrap is a command prefix the member runs under, such as "ip netns exec NS".
	Wrap []string
}

// StartClusterOn is StartCluster with each member placed as members says.
func StartClusterOn(t testing.TB, members []Member) *Cluster {
	t.Helper()
	n := len(members)
	bin, err := findBinary()
	if err != nil {
		unavailable(t, err)
	}
	base := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "idkit-etcd-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{}
	t.Cleanup(func() {
		for _, m := range c.Members {
			m.Stop()
		}
		os.RemoveAll(dir)
	})
	var peers []string
	for i := range n {
		p := members[i]
		m := &Server{bin: bin, dir: filepath.Join(dir, strconv.Itoa(i)), name: fmt.Sprintf("m%d", i), token: filepath.Base(dir),
			host: p.Addr, probe: p.Probe, wrap: p.Wrap}
		if err := os.Mkdir(m.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if p.Addr != "" {
			m.cport, m.pport = 2379, 2380
		} else if m.cport, err = freePort(); err == nil {
			m.pport, err = freePort()
		}
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, m.name+"="+m.peerURL())
		c.Members = append(c.Members, m)
	}
	for _, m := range c.Members {
		m.cluster = strings.Join(peers, ",")
		if err := m.launch(); err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
	}
	for _, m := range c.Members {
		if err := m.waitHealthy(30 * time.Second); err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
	}
	return c
}

// HostPorts returns the members' client addresses (host:port).
func (c *Cluster) HostPorts() []string {
	var hp []string
	for _, m := range c.Members {
		hp = append(hp, m.HostPort())
	}
	return hp
}

// Leader returns the index of the member that is leader now, asking the running members,
// and waits up to limit for one to be elected.
func (c *Cluster) Leader(limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		for i, m := range c.Members {
			if id, leader, ok := m.status(); ok && id == leader {
				return i, nil
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("etcdtest: no leader within %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitHealthy waits up to limit for every running member to answer its health check.
func (c *Cluster) WaitHealthy(limit time.Duration) error {
	for _, m := range c.Members {
		m.mu.Lock()
		running := m.cmd != nil
		m.mu.Unlock()
		if running {
			if err := m.waitHealthy(limit); err != nil {
				return err
			}
		}
	}
	return nil
}

// status asks the member for its own ID and the leader's.
func (s *Server) status() (id, leader uint64, ok bool) {
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if !running {
		return 0, 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ProbeURL()}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, 0, false
	}
	defer cli.Close()
	st, err := cli.Status(ctx, s.ProbeURL())
	if err != nil || st.Leader == 0 {
		return 0, 0, false
	}
	return st.Header.MemberId, st.Leader, true
}
