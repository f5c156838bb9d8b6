//go:build fault

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idkit/idkit/internal/netlab"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/redisstore"
)

// redisNode is a redis-server on a loopback port, started and restarted by the test.
type redisNode struct {
	srv  *server
	port string
	// ip is the address replication reaches it on: 127.0.0.1, or its lan address in a
	// partition lab, where host is the lab host it runs in (empty outside a lab).
	ip, host string
}

func startNode(t *testing.T, replicaOf string) *redisNode {
	t.Helper()
	n := &redisNode{port: freePort(t), ip: "127.0.0.1"}
	args := []string{"--port", n.port, "--bind", "127.0.0.1", "--appendonly", "no", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
	if replicaOf != "" {
		args = append(args, "--replicaof", "127.0.0.1", replicaOf)
	}
	n.srv = startRedis(t, args...)
	return n
}

func (n *redisNode) addr() string { return n.ip + ":" + n.port }

// do runs a command on n over its unix socket, which a partition never cuts.
func (n *redisNode) do(t *testing.T, args ...any) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: n.srv.sock})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.Do(ctx, args...).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return fmt.Sprint(v)
}

// redisPair is a primary and a replica that swap roles at each failover; the stores dial
// whichever is the primary.
type redisPair struct {
	t       *testing.T
	prim    *redisNode
	repl    *redisNode
	current atomic.Pointer[string]
	// network is how the stores dial current: "tcp", or in a partition lab (lab set) "unix",
	// the nodes' sockets, a path the nemesis never cuts.
	network string
	lab     *netlab.Lab
}

func startRedisPair(t *testing.T) *redisPair {
	p := &redisPair{t: t, network: "tcp"}
	p.prim = startNode(t, "")
	p.repl = startNode(t, p.prim.port)
	a := p.prim.addr()
	p.current.Store(&a)
	p.waitReplica()
	return p
}

func (p *redisPair) waitReplica() {
	segtest.WaitFor(p.t, "the replica online", 30*time.Second, func() bool {
		info := p.prim.do(p.t, "INFO", "replication")
		return strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online")
	})
}

// cut freezes the replica (SIGSTOP) and has the primary drop it: the primary goes on taking
// writes that the replica never receives.
func (p *redisPair) cut() {
	// The replica must be streaming before the cut: what it lacks is then what the cut kept
	// from it.
	key := redisstore.DefaultPrefix + "k"
	want, _ := strconv.ParseInt(p.prim.do(p.t, "HGET", key, "max_id"), 10, 64)
	segtest.WaitFor(p.t, "the replica caught up", 10*time.Second, func() bool {
		got, _ := strconv.ParseInt(p.repl.do(p.t, "HGET", key, "max_id"), 10, 64)
		return got >= want
	})
	if p.lab != nil {
		if err := p.lab.Cut(context.Background(), p.repl.host, labtest.LAN); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	p.repl.srv.cmd.Process.Signal(syscall.SIGSTOP)
	p.prim.do(p.t, "CLIENT", "KILL", "TYPE", "replica")
}

// fail kills the primary (SIGKILL), thaws the replica, promotes it with REPLICAOF NO ONE,
// points the stores at it, and starts the old primary again as its replica.
func (p *redisPair) fail() {
	lost := p.prim.do(p.t, "HGET", redisstore.DefaultPrefix+"k", "max_id")
	p.prim.srv.stop()
	if p.lab == nil {
		p.repl.srv.cmd.Process.Signal(syscall.SIGCONT)
	}
	p.repl.do(p.t, "REPLICAOF", "NO", "ONE")
	p.t.Logf("the promoted replica has max_id %s, the killed primary had %s", p.repl.do(p.t, "HGET", redisstore.DefaultPrefix+"k", "max_id"), lost)
	a := p.repl.addr()
	if p.lab != nil {
		a = p.repl.srv.sock
		// The promoted node was the one cut off: heal before the old primary follows it.
		if err := p.lab.HealNet(context.Background(), labtest.LAN); err != nil {
			p.t.Fatal(err)
		}
	}
	p.current.Store(&a)
	old := p.prim
	p.prim, p.repl = p.repl, old
	old.srv.args = append(old.srv.args, "--replicaof", p.prim.ip, p.prim.port)
	old.srv.start(p.t)
	p.waitReplica()
}

func (p *redisPair) opener(async, unprotected bool) func() (*segment.Segment, error) {
	return p.openerWith(openOpts{async: async, unprotected: unprotected})
}

// openOpts say how the takers open their stores: durability=async, as before fencing
// (Unprotected), as before the backlog was read (OpenIgnoringBacklog), the failover gap in
// blocks (0: the default).
type openOpts struct {
	async, unprotected, ignoreBacklog bool
	gap                               uint64
}

func (p *redisPair) openerWith(o openOpts) func() (*segment.Segment, error) {
	return func() (*segment.Segment, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		opts := &redis.Options{Addr: "primary", Dialer: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, p.network, *p.current.Load())
		}}
		set := redisstore.Settings{Options: opts, Unsafe: true, AcceptAsync: o.async}
		openStore := redisstore.Open
		if o.ignoreBacklog {
			openStore = redisstore.OpenIgnoringBacklog
		}
		st, err := openStore(ctx, set)
		if err != nil {
			return nil, err
		}
		if o.unprotected {
			redisstore.Unprotected(st)
		}
		s, err := segment.New(segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 50, Timeout: time.Second, FailoverGap: o.gap})
		if err != nil {
			st.Close()
		}
		return s, err
	}
}

// TestFaultFailoverRedis is the Redis failover matrix: three takers take IDs while the
// replica is cut off (SIGSTOP, CLIENT KILL TYPE replica) for a while, the primary is
// SIGKILLed and the replica promoted with REPLICAOF NO ONE, five times per row. The
// unprotected control must repeat IDs; durability=async (fencing on master_replid and the
// gap) must not. A Redis with a replica is refused without durability=async, naming
// connected_slaves.
func TestFaultFailoverRedis(t *testing.T) {
	const rounds = 5
	for _, r := range []struct {
		name        string
		unprotected bool
	}{{"async-unprotected", true}, {"async-fenced", false}} {
		t.Run(r.name, func(t *testing.T) {
			p := startRedisPair(t)
			_, err := redisstore.Open(context.Background(), redisstore.Settings{Options: &redis.Options{Addr: p.prim.addr()}, Unsafe: true})
			if !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), "connected_slaves 1") {
				t.Fatalf("Open on a Redis with a replica: %v; want ErrNotDurable naming connected_slaves", err)
			}
			t.Logf("refused: %v", err)
			res := segtest.RunFailover(t, segtest.Failover{Name: r.name, Rounds: rounds, Open: p.opener(true, r.unprotected),
				Cut: p.cut, CutFor: 300 * time.Millisecond, Fail: p.fail})
			res.Check(t, "redis", r.name, rounds, r.unprotected)
		})
	}
}
