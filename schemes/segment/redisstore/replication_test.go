package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idkit/idkit/schemes/segment"
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
