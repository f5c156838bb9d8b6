package redisstore_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/redisstore"
)

// TestDurabilityFence: a Redis without replicas is class single, and a take records its
// master_replid. A restart draws a new replication ID: the next take skips the gap, as after
// a failover.
func TestDurabilityFence(t *testing.T) {
	s := startRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	st := open(t, s.url(""))
	req := segment.Request{Key: "k", Step: 10, Count: 1, Gap: 5}
	b, err := st.Take(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	info, _ := c.Info(context.Background(), "replication").Result()
	c.Close()
	if d := st.Durability(); d.Class != segment.ClassSingle || b.Epoch == "" || !strings.Contains(info, "master_replid:"+b.Epoch) {
		t.Fatalf("durability %v, block %+v; want single, the epoch master_replid of %q", d, b, info)
	}
	s.stop()
	s.start(t)
	b2, err := st.Take(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Epoch == b.Epoch || b2.First != b.Last+1+5*10 {
		t.Fatalf("after a restart: %+v after %+v; want a new epoch and a gap of 5 blocks of 10", b2, b)
	}
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestBacklogIsAReplica: a primary whose replica went away (as a partitioned replica is
// dropped after repl-timeout, while it can still be promoted) keeps its replication backlog,
// and the store keeps it in class async: Open and Take refuse it, naming repl_backlog_active.
// Once the backlog is freed (repl-backlog-ttl 1) it is single again, under a new replication
// ID, so the next take skips the gap.
func TestBacklogIsAReplica(t *testing.T) {
	port := freePort(t)
	p := startRedis(t, "--port", port, "--bind", "127.0.0.1", "--repl-diskless-sync-delay", "0")
	st := open(t, p.url("?unsafe=true"))
	req := segment.Request{Key: "k", Step: 10, Count: 1, Gap: 5}
	b, err := st.Take(context.Background(), req)
	if err != nil || st.Durability().Class != segment.ClassSingle {
		t.Fatalf("a lone primary: %+v, %v, %v; want class single", b, err, st.Durability())
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: p.sock})
	defer c.Close()
	info := func() string { s, _ := c.Info(context.Background(), "replication").Result(); return s }
	r := startRedis(t, "--replicaof", "127.0.0.1", port)
	segtest.WaitFor(t, "the replica online", 20*time.Second, func() bool { return strings.Contains(info(), "state=online") })
	if _, err := st.Take(context.Background(), req); !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), "connected_slaves 1") {
		t.Fatalf("take with a replica: %v; want ErrNotDurable naming connected_slaves 1", err)
	}
	r.stop()
	segtest.WaitFor(t, "the replica gone", 20*time.Second, func() bool { return strings.Contains(info(), "connected_slaves:0") })
	_, err = st.Take(context.Background(), req)
	if !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), `repl_backlog_active "1"`) {
		t.Fatalf("take after the replica went: %v; want ErrNotDurable naming repl_backlog_active", err)
	}
	t.Log(err)
	set, err := redisstore.ParseURL(p.url("?unsafe=true"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := redisstore.Open(context.Background(), set); !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), "repl_backlog_active") {
		t.Fatalf("Open after the replica went: %v; want ErrNotDurable naming repl_backlog_active", err)
	}
	if err := c.ConfigSet(context.Background(), "repl-backlog-ttl", "1").Err(); err != nil {
		t.Fatal(err)
	}
	segtest.WaitFor(t, "the backlog freed", 20*time.Second, func() bool { return strings.Contains(info(), "repl_backlog_active:0") })
	b2, err := st.Take(context.Background(), req)
	if err != nil || st.Durability().Class != segment.ClassSingle || b2.Epoch == b.Epoch || b2.First <= b.Last+5*10 {
		t.Fatalf("once the backlog is freed: %+v after %+v, %v, %v; want class single, a new epoch, the gap skipped", b2, b, err, st.Durability())
	}
}

// TestRefusedStoreNotWritten sets appendfsync everysec under an open store, so that every take
// adds its increment and is refused (the block lost): the Segment checks the store
// (Store.Check) before taking again and does not write to it while it refuses; the control,
// the same store without Check, keeps taking and losing blocks (segtest.RefusedNotWritten).
// With appendfsync always again, the Segment issues again.
func TestRefusedStoreNotWritten(t *testing.T) {
	s := startRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	defer c.Close()
	set := func(v string) func() {
		return func() {
			if err := c.ConfigSet(context.Background(), "appendfsync", v).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	maxID := func(key string) int64 {
		v, err := c.HGet(context.Background(), redisstore.DefaultPrefix+key, "max_id").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	segtest.RefusedNotWritten(t, open(t, s.url("")), open(t, s.url("")), maxID, set("everysec"), set("always"),
		redisstore.ErrNotDurable, `appendfsync "everysec"`)
}

// TestNewHashRepeatsAfterPromotion holds the limit the package doc states: Redis has no
// promotion counter, so under durability=async a key whose hash never reached a replica is
// new again on that replica once it is promoted, and starts where it started on the lost
// primary: the promoted replica's first take hands out the lost primary's first block again.
// The replica is promoted with REPLICAOF NO ONE before the key's first take, as a replica
// that a failover promotes without the last writes; both servers stay up. If this test
// fails because nothing repeats, the hole is closed: update the docs (the package doc and
// docs/segment.md, "Failover fencing and the gap").
func TestNewHashRepeatsAfterPromotion(t *testing.T) {
	port := freePort(t)
	p := startRedis(t, "--port", port, "--bind", "127.0.0.1", "--repl-diskless-sync-delay", "0")
	r := startRedis(t, "--replicaof", "127.0.0.1", port)
	pc := redis.NewClient(&redis.Options{Network: "unix", Addr: p.sock})
	defer pc.Close()
	segtest.WaitFor(t, "the replica online", 20*time.Second, func() bool {
		s, _ := pc.Info(context.Background(), "replication").Result()
		return strings.Contains(s, "state=online")
	})
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: r.sock})
	defer rc.Close()
	if err := rc.Do(context.Background(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	req := segment.Request{Key: "k", Step: 10, Count: 1, Gap: 5}
	var lost []segment.Block
	st := open(t, p.url("?unsafe=true&durability=async"))
	for range req.Gap - 1 {
		b, err := st.Take(context.Background(), req)
		if err != nil {
			t.Fatalf("take on the primary: %v", err)
		}
		lost = append(lost, b)
	}
	b, err := open(t, r.url("?unsafe=true&durability=async")).Take(context.Background(), req)
	if err != nil {
		t.Fatalf("take on the promoted replica: %v", err)
	}
	t.Logf("on the lost primary %v; first take on the promoted replica %v", lost, b)
	if b.First != lost[0].First || b.Last != lost[0].Last || b.Epoch == lost[0].Epoch {
		t.Errorf("first take on the promoted replica %v; want the lost primary's first block %v again, in another epoch (the documented limit)", b, lost[0])
	}
}
