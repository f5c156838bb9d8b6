// Package redisstore keeps segment counters in Redis, for the segment scheme of idkit
// (store=redis://…, rediss://…, redis+unix:///path/redis.sock). It uses
// github.com/redis/go-redis/v9. Importing it registers those URL schemes with
// segment.RegisterStore.
//
// Each key is a hash (prefix "idkit:segment:" unless ?prefix= says otherwise) with the fields
// max_id, step, store_index and store_count; a block is one Lua script around HINCRBY, atomic
// on the server.
//
// A counter that a restart forgets hands out its numbers again, and IDs repeat. Open therefore
// refuses, with an error wrapping ErrNotDurable that names the setting, a Redis that does not
// log every write to its append-only file before answering or may drop a counter:
//
//   - appendonly other than yes: a restart loses the counter;
//   - appendfsync other than always: a crash loses up to a second of increments;
//   - no-appendfsync-on-rewrite yes: while the append-only file is rewritten (or a snapshot
//     saved), writes are not fsynced at all, and a crash of the machine loses them;
//   - a maxmemory limit with an allkeys-* maxmemory-policy: a full Redis evicts the counter.
//
// Every Take reads these settings again in the same round trip as its increment (CONFIG SET
// changes them at run time, and a restart with another configuration file too) and drops its
// block if one went wrong: its numbers are lost, never used. The store URL's unsafe=true
// accepts such a Redis anyway, for tests and throwaway data.
//
// # Replication
//
// Redis replicates asynchronously, and "WAIT does not make Redis a strongly consistent
// store" (redis.io, WAIT): a replica promoted with REPLICAOF NO ONE (or by Sentinel) can lack
// increments its primary acknowledged. So a Redis with a replica connected (INFO replication's
// connected_slaves) is never better than class async, and Open and every Take refuse it unless
// durability=async is in the store URL (Settings.AcceptAsync); a Redis that is itself a
// replica (role slave) is refused always. A replica cut off by a partition is dropped from
// connected_slaves after repl-timeout while it can still be promoted, so a primary with no
// replica connected but a replication backlog (repl_backlog_active 1: a replica was attached
// less than repl-backlog-ttl ago, or the server was a replica itself) is class async too; to
// run a Redis whose replicas were taken away on purpose, let its backlog go (CONFIG SET
// repl-backlog-ttl 1, which frees it after a second with no replica). With durability=async, failover fencing is the only
// protection: the take's script reads master_replid in the same atomic step as its increment,
// records it in the hash (field epoch), and first adds Request.Gap blocks when the hash was
// last written under another replication ID; a new hash starts after the gap. Redis draws a
// new replication ID at every restart too, so each restart also skips the gap.
//
// The gap does not protect a key whose hash never reached the replica that is promoted (its
// first take came less than the replication lag before the failover, or while the replica
// was stopped, cut off or lagging): Redis counts no promotions (a new master_replid tells
// that the primary changed, not how often), so the promoted replica makes the hash again at
// the same start, Step × (1 + Gap), and hands out the lost primary's first block again, then
// its later blocks (TestNewHashRepeatsAfterPromotion). Under durability=async, take each key
// once on the primary and check that the replica holds its hash (HGET on the replica) before
// relying on it, and add no key while a replica is away or lagging.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/internal/urlquery"
	"github.com/idkit/idkit/schemes/segment"
)

// DefaultPrefix is put before every key unless the URL gives prefix=.
const DefaultPrefix = "idkit:segment:"

// ErrNotDurable reports a Redis that would forget its counter on restart or crash.
var ErrNotDurable = errors.New("redisstore: Redis does not persist every write")

func init() {
	for _, s := range []string{"redis", "rediss", "redis+unix"} {
		segment.RegisterStore(s, driver{})
	}
}

type driver struct{}

func (driver) OpenStore(ctx context.Context, url string) (segment.Store, error) {
	s, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return Open(ctx, s)
}

func (driver) DescribeStore(url string) string {
	s, err := ParseURL(url)
	if err != nil {
		return "Redis store (unreadable URL)"
	}
	return "Redis at " + s.Options.Addr + ", prefix " + s.Prefix
}

// Settings configures Open.
type Settings struct {
	// Options are go-redis's connection options.
	Options *redis.Options
	// Prefix goes before every key; DefaultPrefix when empty.
	Prefix string
	// Unsafe accepts a Redis that does not persist every write (see the package doc).
	Unsafe bool
	// AcceptAsync runs the store although a replica is connected (durability=async in the
	// URL): failover fencing is then the only protection (see the package doc).
	AcceptAsync bool
}

// ParseURL reads redis://[user:password@]host:port/db, rediss://… (TLS) or
// redis+unix:///path/redis.sock?db=N, with the query parameters prefix= (empty: DefaultPrefix),
// unsafe=true and durability=async (or sync, the default) taken out; every other parameter goes to go-redis's ParseURL, which refuses
// one it does not know. The query is read strictly (internal/urlquery): a pair that does not
// parse (';', %zz) and a key given twice are errors naming the parameter. Errors never show
// the password.
func ParseURL(raw string) (Settings, error) {
	s, err := parseURL(raw)
	return s, redact.Error(err)
}

func parseURL(raw string) (Settings, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Settings{}, errors.New("redisstore: store URL: want redis://host:port/db")
	}
	scheme = strings.ToLower(scheme)
	if scheme == "redis+unix" {
		scheme = "unix"
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil {
		return Settings{}, fmt.Errorf("redisstore: store URL: %w", err)
	}
	// Unknown keys are left to go-redis, which refuses them by name ("unexpected option").
	q, err := urlquery.Parse(u.RawQuery, nil, "")
	if err != nil {
		return Settings{}, fmt.Errorf("redisstore: store URL: %w", err)
	}
	s := Settings{Prefix: DefaultPrefix}
	if p := q["prefix"]; p != "" {
		s.Prefix = p
	}
	if v, ok := q["unsafe"]; ok {
		if s.Unsafe, err = strconv.ParseBool(v); err != nil {
			return Settings{}, fmt.Errorf("redisstore: store URL: unsafe=%.20s: want true or false", v)
		}
	}
	if v, ok := q["durability"]; ok {
		if s.AcceptAsync, err = segment.ParseDurability(v); err != nil {
			return Settings{}, fmt.Errorf("redisstore: store URL: %w", err)
		}
	}
	delete(q, "prefix")
	delete(q, "unsafe")
	delete(q, "durability")
	u.RawQuery = urlquery.Encode(q)
	if s.Options, err = redis.ParseURL(u.String()); err != nil {
		return Settings{}, fmt.Errorf("redisstore: store URL: %w", err)
	}
	return s, nil
}

// takeScript creates the hash on first use with the store's place (and max_id ARGV[5], the
// gap of a new hash), refuses another place, and adds the step to max_id. With ARGV[4] = 1 it
// fences: a hash last written under another master_replid first skips ARGV[6]. It returns
// max_id, master_replid, role, connected_slaves and repl_backlog_active, read in the same
// atomic step.
var takeScript = redis.NewScript(`
local info = redis.call('INFO', 'replication')
local replid = string.match(info, 'master_replid:(%w+)') or ''
local role = string.match(info, 'role:(%w+)') or ''
local replicas = tonumber(string.match(info, 'connected_slaves:(%d+)') or '0')
local backlog = string.match(info, 'repl_backlog_active:(%d+)') or ''
local idx = redis.call('HGET', KEYS[1], 'store_index')
if not idx then
  redis.call('HSET', KEYS[1], 'store_index', ARGV[2], 'store_count', ARGV[3])
  if ARGV[4] == '1' then
    redis.call('HINCRBY', KEYS[1], 'max_id', ARGV[5])
  end
else
  local cnt = redis.call('HGET', KEYS[1], 'store_count')
  if idx ~= ARGV[2] or cnt ~= ARGV[3] then
    return redis.error_reply('IDKITCLASS ' .. idx .. ' ' .. cnt)
  end
end
if ARGV[4] == '1' then
  local ep = redis.call('HGET', KEYS[1], 'epoch')
  if ep and ep ~= replid then
    redis.call('HINCRBY', KEYS[1], 'max_id', ARGV[6])
  end
  redis.call('HSET', KEYS[1], 'epoch', replid)
end
local m = redis.call('HINCRBY', KEYS[1], 'max_id', ARGV[1])
redis.call('HSET', KEYS[1], 'step', ARGV[1])
return {m, replid, role, replicas, backlog}
`)

// Store is a segment.Store in Redis. It is safe for concurrent use.
type Store struct {
	c      *redis.Client
	prefix string
	addr   string
	unsafe bool
	async  bool // Settings.AcceptAsync

	// unprotected, set by the fault tests' controls only, takes blocks as before failover
	// fencing: no epoch, no gap, no replication check.
	unprotected bool
	// ignoreBacklog, set by a fault test's control only, classes a primary by
	// connected_slaves alone, as before the backlog was read.
	ignoreBacklog bool

	mu  sync.Mutex
	dur segment.Durability
}

var _ segment.Store = (*Store)(nil)

// Open connects and checks that the server persists every write and keeps every counter (see
// the package doc); errors wrap ErrNotDurable otherwise, unless s.Unsafe.
func Open(ctx context.Context, s Settings) (*Store, error) {
	return open(ctx, s, false)
}

// open is Open; ignoreBacklog (the partition test's control only) classes a primary by
// connected_slaves alone.
func open(ctx context.Context, s Settings, ignoreBacklog bool) (*Store, error) {
	if s.Options == nil {
		return nil, errors.New("redisstore: no connection options")
	}
	if s.Prefix == "" {
		s.Prefix = DefaultPrefix
	}
	c := redis.NewClient(s.Options)
	st := &Store{c: c, prefix: s.Prefix, addr: s.Options.Addr, unsafe: s.Unsafe, async: s.AcceptAsync, ignoreBacklog: ignoreBacklog}
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisstore: connecting to %s: %w", st.addr, err)
	}
	if !s.Unsafe {
		if err := st.checkDurable(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("redisstore: reading INFO replication at %s: %w", st.addr, err)
	}
	if err := st.checkReplication(infoField(info, "master_replid"), infoField(info, "role"), infoField(info, "connected_slaves"), infoField(info, "repl_backlog_active")); err != nil {
		c.Close()
		return nil, err
	}
	return st, nil
}

// infoField returns the value of name in an INFO answer.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// checkReplication decides the durability class from INFO replication's fields, records it
// for Durability, and refuses a replica, and a primary with replicas (or a replication backlog)
// unless the store accepts async.
func (s *Store) checkReplication(replid, role, replicas, backlog string) error {
	n, _ := strconv.Atoi(replicas)
	d := segment.Durability{Class: segment.ClassSingle, Reason: "no replica connected (connected_slaves 0, repl_backlog_active 0)", Epoch: replid, AsyncAccepted: s.async}
	switch {
	case role != "master":
		d.Class, d.Reason = segment.ClassUnknown, "role "+role+": this Redis is a replica"
	case n > 0:
		d.Class, d.Reason = segment.ClassAsync, fmt.Sprintf("connected_slaves %d: Redis replicates asynchronously, and WAIT does not make it strongly consistent", n)
	case backlog != "0" && !s.ignoreBacklog:
		// An empty value (a server whose INFO has no such field) counts as a backlog too.
		d.Class, d.Reason = segment.ClassAsync, fmt.Sprintf("connected_slaves 0 but repl_backlog_active %q: a replica was attached less than repl-backlog-ttl ago (a partitioned one is dropped after repl-timeout and can still be promoted), or this server was a replica; CONFIG SET repl-backlog-ttl 1 frees the backlog once no replica is left", backlog)
	}
	s.mu.Lock()
	s.dur = d
	s.mu.Unlock()
	switch {
	case d.Class == segment.ClassSingle, d.Class == segment.ClassAsync && s.async:
		return nil
	case d.Class == segment.ClassUnknown:
		return fmt.Errorf("%w: Redis at %s cannot take blocks: %s", ErrNotDurable, s.addr, d.Reason)
	}
	return fmt.Errorf("%w: Redis at %s has %s, so a replica promoted after a failover can lack acknowledged takes and repeat IDs; take the replicas away, or add durability=async to the store URL to run with failover fencing (a skip of the gap after each failover) as the only protection", ErrNotDurable, s.addr, d.Reason)
}

// Durability returns the durability class the store read at Open or its last take
// (segment.Durabler): never better than single, async with a replica.
func (s *Store) Durability() segment.Durability {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dur
}

// durabilityConfig are the CONFIG GET patterns of the settings checkConfig reads.
var durabilityConfig = []string{"append*", "no-appendfsync-on-rewrite", "maxmemory*"}

// getConfig queues CONFIG GET for the durability settings on p.
func getConfig(ctx context.Context, p redis.Pipeliner) []*redis.MapStringStringCmd {
	cmds := make([]*redis.MapStringStringCmd, len(durabilityConfig))
	for i, pat := range durabilityConfig {
		cmds[i] = p.ConfigGet(ctx, pat)
	}
	return cmds
}

func (s *Store) checkDurable(ctx context.Context) error {
	var cmds []*redis.MapStringStringCmd
	s.c.Pipelined(ctx, func(p redis.Pipeliner) error { cmds = getConfig(ctx, p); return nil })
	return s.checkConfig(cmds)
}

// checkConfig refuses the configuration the commands read when Redis could lose or drop a
// counter.
func (s *Store) checkConfig(cmds []*redis.MapStringStringCmd) error {
	cfg := map[string]string{}
	for _, c := range cmds {
		m, err := c.Result()
		if err != nil {
			return fmt.Errorf("%w: cannot read its configuration at %s (%w); add unsafe=true to the store URL only if you know it persists every write", ErrNotDurable, s.addr, err)
		}
		maps.Copy(cfg, m)
	}
	switch {
	case cfg["appendonly"] != "yes":
		return fmt.Errorf("%w: Redis at %s has appendonly %q, so a restart forgets the counters and repeats IDs; set appendonly yes and appendfsync always, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.addr, cfg["appendonly"])
	case cfg["appendfsync"] != "always":
		return fmt.Errorf("%w: Redis at %s has appendfsync %q, so a crash loses the last increments and repeats IDs; set appendfsync always, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.addr, cfg["appendfsync"])
	case cfg["no-appendfsync-on-rewrite"] != "no":
		return fmt.Errorf("%w: Redis at %s has no-appendfsync-on-rewrite %q, so while it rewrites its append-only file it does not fsync, a crash of its machine loses those increments and IDs repeat; set no-appendfsync-on-rewrite no, or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.addr, cfg["no-appendfsync-on-rewrite"])
	case cfg["maxmemory"] != "0" && strings.HasPrefix(cfg["maxmemory-policy"], "allkeys-"):
		return fmt.Errorf("%w: Redis at %s has maxmemory-policy %q with maxmemory %s, so a full Redis evicts a counter and repeats IDs; set maxmemory-policy noeviction (or a volatile-* one), or add unsafe=true to the store URL for throwaway data", ErrNotDurable, s.addr, cfg["maxmemory-policy"], cfg["maxmemory"])
	}
	return nil
}

// Take adds req.Step to the key's max_id and returns the numbers in between. Errors wrap
// segment.ErrClass when the key belongs to another store position, segment.ErrExhausted
// when max_id would overflow, and ErrNotDurable when a durability setting went wrong since
// Open (the block is then lost, never used).
func (s *Store) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	key := s.prefix + req.Key
	// One round trip: the settings, then the increment (EVAL: a pipeline cannot fall back
	// from EVALSHA).
	var cfg []*redis.MapStringStringCmd
	var take *redis.Cmd
	s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		if !s.unsafe {
			cfg = getConfig(ctx, p)
		}
		fence, newGap, gap := "1", uint64(0), req.Gap*req.Step
		if s.async {
			newGap = gap
		}
		if s.unprotected {
			fence = "0"
		}
		take = takeScript.Eval(ctx, p, []string{key}, req.Step, req.Index, req.Count, fence, newGap, gap)
		return nil
	})
	var m int64
	var replid, role string
	var replicas int64
	var backlog string
	res, err := take.Slice()
	if err == nil {
		if len(res) != 5 {
			err = fmt.Errorf("the take script answered %d values, want 5", len(res))
		} else {
			var ok [5]bool
			m, ok[0] = res[0].(int64)
			replid, ok[1] = res[1].(string)
			role, ok[2] = res[2].(string)
			replicas, ok[3] = res[3].(int64)
			backlog, ok[4] = res[4].(string)
			if ok != [5]bool{true, true, true, true, true} {
				err = fmt.Errorf("the take script answered %v", res)
			}
		}
	}
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "IDKITCLASS"):
			f := strings.Fields(msg[strings.Index(msg, "IDKITCLASS"):])
			idx, cnt := "?", "?"
			if len(f) >= 3 {
				if n, err := strconv.Atoi(f[1]); err == nil {
					idx = strconv.Itoa(n + 1)
				}
				cnt = f[2]
			}
			return segment.Block{}, fmt.Errorf("redisstore: key %q belongs to store %s of %s, asked as store %d of %d: %w", key, idx, cnt, req.Index+1, req.Count, segment.ErrClass)
		case strings.Contains(msg, "overflow"):
			return segment.Block{}, fmt.Errorf("redisstore: key %q: max_id + %d overflows: %w", key, req.Step, segment.ErrExhausted)
		}
		return segment.Block{}, fmt.Errorf("redisstore: taking %d of key %q at %s: %w", req.Step, key, s.addr, err)
	}
	if err := s.checkConfig(cfg); !s.unsafe && err != nil {
		return segment.Block{}, fmt.Errorf("redisstore: key %q: block up to %d dropped: %w", key, m, err)
	}
	blk := segment.Block{First: uint64(m) - req.Step + 1, Last: uint64(m)}
	if !s.unprotected {
		if err := s.checkReplication(replid, role, strconv.FormatInt(replicas, 10), backlog); err != nil {
			return segment.Block{}, fmt.Errorf("redisstore: key %q: block up to %d dropped: %w", key, m, err)
		}
		blk.Epoch = replid
	}
	if m < int64(req.Step) {
		return segment.Block{}, fmt.Errorf("redisstore: key %q: max_id %d after adding %d: %w", key, m, req.Step, segment.ErrBackwards)
	}
	return blk, nil
}

// Check reports whether a Take would be refused now, without taking a block
// (segment.Checker): it reads the durability settings and INFO replication as a take does,
// in one round trip that writes nothing. A Segment calls it before taking again after a
// failed take, so that a Redis that refuses (each refused take loses its block) is not
// written to while it stays refused. Errors wrap ErrNotDurable as Take's refusals do, or are
// the connection's.
func (s *Store) Check(ctx context.Context) error {
	if s.unprotected {
		return nil
	}
	var cfg []*redis.MapStringStringCmd
	var info *redis.StringCmd
	s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		if !s.unsafe {
			cfg = getConfig(ctx, p)
		}
		info = p.Info(ctx, "replication")
		return nil
	})
	v, err := info.Result()
	if err != nil {
		return fmt.Errorf("redisstore: checking %s: %w", s.addr, err)
	}
	if !s.unsafe {
		if err := s.checkConfig(cfg); err != nil {
			return err
		}
	}
	return s.checkReplication(infoField(v, "master_replid"), infoField(v, "role"), infoField(v, "connected_slaves"), infoField(v, "repl_backlog_active"))
}

var _ segment.Checker = (*Store)(nil)

// Close closes the connections.
func (s *Store) Close() error { return s.c.Close() }
