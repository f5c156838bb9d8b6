package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/redisstore"
)

// server is a private redis-server in a temporary directory, on a unix socket only.
type server struct {
	dir, sock string
	bin       string
	wrap      []string // what runs it in a lab host's namespace (netlab.Host.Wrap), or nil
	args      []string
	cmd       *exec.Cmd
}

// startRedis starts redis-server with the given persistence settings; it is stopped and its
// directory removed when the test ends. Without redis-server the test skips (fails under
// CI=true).
func startRedis(t *testing.T, persist ...string) *server {
	t.Helper()
	return startRedisIn(t, nil, persist...)
}

// startRedisIn is startRedis with redis-server run by the command prefix wrap (a lab host's
// netlab.Host.Wrap; nil: here).
func startRedisIn(t *testing.T, wrap []string, persist ...string) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redisstore: redis-server not found: install it (apt-get install redis-server)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "rds-")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{dir: dir, sock: filepath.Join(dir, "redis.sock"), bin: bin, wrap: wrap}
	s.args = append([]string{"--port", "0", "--unixsocket", s.sock, "--unixsocketperm", "700", "--dir", dir, "--save", ""}, persist...)
	t.Cleanup(func() { s.stop(); os.RemoveAll(dir) })
	s.start(t)
	return s
}

func (s *server) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	if len(s.wrap) > 0 {
		s.cmd = exec.Command(s.wrap[0], append(append(s.wrap[1:len(s.wrap):len(s.wrap)], s.bin), s.args...)...)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends redis-server with SIGKILL: nothing is saved on the way out, as in a crash.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	s.cmd.Process = nil
}

func (s *server) url(query string) string {
	return "redis+unix://" + s.sock + query
}

var durable = []string{"--appendonly", "yes", "--appendfsync", "always"}

func open(t *testing.T, url string) *redisstore.Store {
	t.Helper()
	set, err := redisstore.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	st, err := redisstore.Open(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func maxID(t *testing.T, s *server) int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	defer c.Close()
	v, err := c.HGet(context.Background(), redisstore.DefaultPrefix+"k", "max_id").Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRefusesNonDurable: a Redis without the append-only file, with fsync every second, without
// fsync while it rewrites the file, or evicting any key when full is refused, naming the
// setting; unsafe=true accepts it.
func TestRefusesNonDurable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		persist []string
		want    string
	}{
		{"no aof", []string{"--appendonly", "no"}, "appendonly"},
		{"aof everysec", []string{"--appendonly", "yes", "--appendfsync", "everysec"}, "appendfsync"},
		{"no fsync on rewrite", append(slices.Clone(durable), "--no-appendfsync-on-rewrite", "yes"), "no-appendfsync-on-rewrite"},
		{"evicting", append(slices.Clone(durable), "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"), "allkeys-lru"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startRedis(t, tc.persist...)
			set, _ := redisstore.ParseURL(s.url(""))
			_, err := redisstore.Open(context.Background(), set)
			if !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrNotDurable naming %s", err, tc.want)
			}
			t.Log(err)
			open(t, s.url("?unsafe=true"))
		})
	}
	// A limit with a policy that evicts only keys with a TTL never touches the counters.
	open(t, startRedis(t, append(slices.Clone(durable), "--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru")...).url(""))
}

// TestRefusesConfigSetLater: a store opened on a durable Redis refuses the block of a Take
// made after CONFIG SET turned a setting off; the increment happened, its numbers are lost.
func TestRefusesConfigSetLater(t *testing.T) {
	s := startRedis(t, durable...)
	st := open(t, s.url(""))
	req := segment.Request{Key: "k", Step: 10, Count: 1}
	if _, err := st.Take(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	defer c.Close()
	for _, kv := range [][2]string{{"appendfsync", "everysec"}, {"maxmemory", "64mb"}} {
		if err := c.ConfigSet(context.Background(), kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ConfigSet(context.Background(), "maxmemory-policy", "allkeys-random").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := st.Take(context.Background(), req)
	if !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), "appendfsync") {
		t.Fatalf("Take after CONFIG SET appendfsync everysec: %v, want ErrNotDurable", err)
	}
	t.Log(err)
	c.ConfigSet(context.Background(), "appendfsync", "always")
	if _, err = st.Take(context.Background(), req); !errors.Is(err, redisstore.ErrNotDurable) || !strings.Contains(err.Error(), "allkeys-random") {
		t.Fatalf("Take after CONFIG SET maxmemory-policy allkeys-random: %v, want ErrNotDurable", err)
	}
	if got := maxID(t, s); got != 30 {
		t.Fatalf("max_id %d, want 30: refused blocks are lost, not given back", got)
	}
}

// TestFaultEvictionUnsafe is why Open refuses an evicting Redis: with unsafe=true, a Redis
// whose maxmemory-policy is allkeys-lru drops the counter once other data fills it, and a new
// process repeats IDs.
func TestFaultEvictionUnsafe(t *testing.T) {
	s := startRedis(t, append(slices.Clone(durable), "--maxmemory", "4mb", "--maxmemory-policy", "allkeys-lru")...)
	set := segment.Settings{Stores: []segment.Store{open(t, s.url("?unsafe=true"))}, Key: "k", Step: 100, NoBuffer: true}
	first := make([]uint64, 250)
	if err := segtest.NewSegment(t, set).NextBatch(first); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	defer c.Close()
	// Write 64 KiB values into the 4 MB Redis until it has evicted the counter: its LRU is
	// approximate (it samples a few keys), so 12.5 MB once was not always enough; give up
	// after 125 MB.
	junk := strings.Repeat("x", 64<<10)
	written := 0
	for i := range 2000 {
		if err := c.Set(context.Background(), fmt.Sprintf("junk:%d", i), junk, 0).Err(); err != nil {
			t.Fatal(err)
		}
		written++
		if i%50 != 49 {
			continue
		}
		n, err := c.Exists(context.Background(), redisstore.DefaultPrefix+"k").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	set.Stores = []segment.Store{open(t, s.url("?unsafe=true"))}
	after := make([]uint64, 250)
	if err := segtest.NewSegment(t, set).NextBatch(after); err != nil {
		t.Fatal(err)
	}
	d := segtest.Dups(append(first, after...))
	if len(d) == 0 {
		t.Fatalf("the counter survived %d MB written to a 4 MB allkeys-lru Redis (new process from %d): the test shows nothing", written>>4, after[0])
	}
	t.Logf("unsafe=true, allkeys-lru: after the counter was evicted (%d MB written) a new process repeated %d IDs (from %d)", written>>4, len(d), after[0])
}

func TestTake(t *testing.T) {
	s := startRedis(t, durable...)
	segtest.TakeConcurrent(t, open(t, s.url("")), open(t, s.url("")))
}

func TestTakeErrors(t *testing.T) {
	s := startRedis(t, durable...)
	segtest.TakeErrors(t, open(t, s.url("")), func(v int64) {
		c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
		defer c.Close()
		if err := c.HSet(context.Background(), redisstore.DefaultPrefix+"k", "max_id", v).Err(); err != nil {
			t.Fatal(err)
		}
	})
}

var urlCases = []segtest.URLCase{
	{In: "redis://h:6380/2", Want: "tcp h:6380 db 2 prefix idkit:segment: unsafe false"},
	{In: "Redis+Unix:///tmp/r.sock?db=1&prefix=x:&unsafe=true", Want: "unix /tmp/r.sock db 1 prefix x: unsafe true"},
	{In: "rediss://u:p@h/0?prefix=", Want: "tcp h:6379 db 0 prefix idkit:segment: unsafe false"},
	{In: "redis://h/0?unsafe=maybe", Err: "unsafe=maybe"},
	{In: "redis://h/0?bogus=1", Err: "bogus"},
	{In: "redis:h", Err: "want redis://"},
	{In: "redis://u:hunter2@h/0?prefix=a&prefix=b", Err: `"prefix" given twice`},
	{In: "redis://u:hunter2@h/0?db=1&db=2", Err: `"db" given twice`},
	{In: "redis://u:hunter2@h/0?prefix=a;unsafe=true", Err: `';' is not a separator`},
	{In: "redis://h/0?durability=async", Want: "tcp h:6379 db 0 prefix idkit:segment: unsafe false durability=async"},
	{In: "redis://h/0?durability=sync", Want: "tcp h:6379 db 0 prefix idkit:segment: unsafe false"},
	{In: "redis://h/0?durability=wait", Err: `durability="wait": want sync`},
}

func parseURL(in string) (string, error) {
	s, err := redisstore.ParseURL(in)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("%s %s db %d prefix %s unsafe %v", s.Options.Network, s.Options.Addr, s.Options.DB, s.Prefix, s.Unsafe)
	if s.AcceptAsync {
		out += " durability=async"
	}
	return out, nil
}

func TestParseURL(t *testing.T) {
	segtest.ParseURLs(t, parseURL, urlCases)
	segtest.ParseURLs(t, parseURL, segtest.StrictCases("redis://u:hunter2@h/0"))
}

func FuzzParseURL(f *testing.F) {
	segtest.FuzzURLs(f, parseURL, append(urlCases, segtest.StrictCases("redis://u:hunter2@h/0")...))
}

func TestSpec(t *testing.T) {
	s := startRedis(t, durable...)
	g, err := idkit.New("segment:store=" + s.url("") + ",key=orders,step=10")
	if err != nil {
		t.Fatal(err)
	}
	defer g.(io.Closer).Close()
	for want := uint64(1); want <= 25; want++ {
		id, err := g.Next()
		if err != nil || id.Uint64() != want {
			t.Fatalf("ID %v, %v; want %d", id, err, want)
		}
	}
	if _, err := idkit.New("segment:store=redis+unix://" + filepath.Join(s.dir, "nothing.sock") + ",key=k"); err == nil || !strings.Contains(err.Error(), "connecting") {
		t.Fatalf("no server: %v", err)
	}
}

// TestFaultRestart kills a durable Redis (SIGKILL) under load and starts it again: the
// counter survives in the append-only file and no ID repeats.
func TestFaultRestart(t *testing.T) {
	s := startRedis(t, durable...)
	segtest.RestartUnderLoad(t, func() segment.Store { return open(t, s.url("")) },
		s.stop, func() { s.start(t) }, func() int64 { return maxID(t, s) })
}

// TestFaultRestartNonDurable is why Open refuses a Redis without the AOF: with unsafe=true,
// killing it forgets the counter. The processes that were running refuse the blocks that went
// back (ErrBackwards); a process started after the restart cannot tell, and repeats IDs.
func TestFaultRestartNonDurable(t *testing.T) {
	s := startRedis(t, "--appendonly", "no")
	set := func() segment.Settings {
		return segment.Settings{Stores: []segment.Store{open(t, s.url("?unsafe=true"))}, Key: "k", Step: 100, Timeout: time.Second, Wait: 2 * time.Second}
	}
	before := segtest.Start([]*segment.Segment{segtest.NewSegment(t, set()), segtest.NewSegment(t, set())}, 2, 50*time.Microsecond)
	time.Sleep(300 * time.Millisecond)
	s.stop()
	s.start(t)
	time.Sleep(300 * time.Millisecond)
	ids, errs := before.Stop()
	backwards := 0
	for _, err := range errs {
		if errors.Is(err, segment.ErrBackwards) {
			backwards++
		}
	}
	after := segtest.Start([]*segment.Segment{segtest.NewSegment(t, set())}, 1, 0)
	time.Sleep(100 * time.Millisecond)
	more, errs2 := after.Stop()
	if len(errs2) > 0 {
		t.Fatal(errs2[0])
	}
	d := segtest.Dups(append(ids, more...))
	if len(d) == 0 {
		t.Fatalf("%d IDs and no duplicate after a Redis without persistence restarted", len(ids)+len(more))
	}
	t.Logf("unsafe=true, no AOF, killed and restarted: the running processes failed %d Next calls with ErrBackwards; a new process repeated %d IDs", backwards, len(d))
}
