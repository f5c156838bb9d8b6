// Package etcdlease keeps node slots in etcd (go.etcd.io/etcd/client/v3) for nodeid.Hold.
//
// Under a prefix such as /idkit/orders a Store keeps three kinds of key per slot n:
//
//	/idkit/orders/slots/n    the holding: owner token, attached to an etcd lease with a TTL,
//	                         so it disappears by itself when its process stops renewing
//	/idkit/orders/claims/n   the last claim of the slot (owner, time); its ModRevision is the
//	                         claim's epoch, which tells holdings apart across lapses
//	/idkit/orders/marks/n    the slot's high-water mark in Unix nanoseconds; it outlives holdings
//
// A claim is one transaction: if slots/n does not exist (CreateRevision == 0), put slots/n under
// the lease and claims/n. Renewal is one keep-alive plus a read of slots/n to check it is still
// the same holding; a mark is saved only if slots/n still has the claim's CreateRevision.
//
// Durability and consistency: every decision is a transaction or a linearizable read (the
// client's default; the store never asks for WithSerializable, which could answer from a
// member that is behind), so a claim, a renewal check and a mark load see every write the
// cluster acknowledged. etcd writes its WAL to disk (fsync) before it acknowledges a write;
// a member started with --unsafe-no-fsync (etcd 3.4.10 and later) gives that up, which the
// client cannot detect: never run one under a lease store.
//
// Elections: etcd does not answer a request whose wait a leader change aborted, and may still
// commit it; a new leader extends every lease by an election timeout (etcd #4778, #9395). A
// claim without an answer is therefore re-read (held under the claim's own etcd lease: used;
// otherwise ErrUnknown, and the lease is revoked), a renewal without an answer counts as
// failed, and nodeid.Lease counts its deadline from when it sent the grant or keep-alive, which
// the store's expiry can only follow, never precede.
package etcdlease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/schemes/nodeid"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// DefaultPrefix is the key prefix used when Settings.Prefix is empty.
const DefaultPrefix = "/idkit/default"

// Settings configures Open. A zero field means the default.
type Settings struct {
	// Endpoints are the etcd client URLs, such as "http://127.0.0.1:2379". Required unless
	// Client is set.
	Endpoints []string
	// Prefix is the key prefix under which the slots live; DefaultPrefix when empty.
	// Generators sharing a layout and wanting distinct nodes share a prefix.
	Prefix string
	// DialTimeout bounds connecting; 2 s when zero.
	DialTimeout time.Duration
	// Client, when set, is used instead of dialing Endpoints (for TLS or authentication) and
	// is not closed by Close.
	Client *clientv3.Client
}

// ParseURL reads "etcd://host:port[,host:port...]/prefix" into Settings. Hosts may also be
// separated by '+', which fits inside an idkit spec, whose settings are separated by commas.
// The path is the key prefix (DefaultPrefix when empty); hosts are dialed over plain HTTP.
// Use Settings.Client for TLS or authentication. Errors never show a password the URL holds.
func ParseURL(raw string) (Settings, error) {
	s, err := parseURL(raw)
	return s, redact.Error(err)
}

func parseURL(raw string) (Settings, error) {
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		return Settings{}, fmt.Errorf("etcdlease: store URL %q: want etcd://host:port/prefix", raw)
	}
	if strings.ContainsAny(rest, "?#@ \t\n") {
		return Settings{}, fmt.Errorf("etcdlease: store URL %q: user, query, fragment and blanks are not supported", raw)
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if hosts == "" {
		return Settings{}, fmt.Errorf("etcdlease: store URL %q has no host", raw)
	}
	var s Settings
	for _, h := range strings.FieldsFunc(hosts, func(r rune) bool { return r == ',' || r == '+' }) {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return Settings{}, fmt.Errorf("etcdlease: store URL %q: host %q: want host:port", raw, h)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return Settings{}, fmt.Errorf("etcdlease: store URL %q: port %q", raw, port)
		}
		s.Endpoints = append(s.Endpoints, "http://"+net.JoinHostPort(host, port))
	}
	if strings.Count(hosts, ",")+strings.Count(hosts, "+")+1 != len(s.Endpoints) {
		return Settings{}, fmt.Errorf("etcdlease: store URL %q has an empty host", raw)
	}
	if path != "" {
		s.Prefix = "/" + strings.TrimRight(path, "/")
		if strings.Contains(s.Prefix, "//") {
			return Settings{}, fmt.Errorf("etcdlease: store URL %q: empty element in prefix", raw)
		}
	}
	return s, nil
}

// Store is a nodeid.Store in etcd. It is safe for concurrent use.
type Store struct {
	cli     *clientv3.Client
	own     bool
	prefix  string
	members membership // for Durability
}

var _ nodeid.Store = (*Store)(nil)

// Open connects to etcd. The connection is made lazily: an unreachable etcd shows as an error
// from the first call, bounded by its context.
func Open(s Settings) (*Store, error) {
	prefix := s.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	prefix = strings.TrimRight(prefix, "/")
	if s.Client != nil {
		return &Store{cli: s.Client, prefix: prefix}, nil
	}
	if len(s.Endpoints) == 0 {
		return nil, errors.New("etcdlease: no endpoints")
	}
	dt := s.DialTimeout
	if dt == 0 {
		dt = 2 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   s.Endpoints,
		DialTimeout: dt,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcdlease: connecting to %s: %w", strings.Join(s.Endpoints, ","), err)
	}
	return &Store{cli: cli, own: true, prefix: prefix}, nil
}

// Prefix returns the key prefix the slots live under.
func (s *Store) Prefix() string { return s.prefix }

func (s *Store) slotKey(n uint64) string  { return s.prefix + "/slots/" + strconv.FormatUint(n, 10) }
func (s *Store) claimKey(n uint64) string { return s.prefix + "/claims/" + strconv.FormatUint(n, 10) }
func (s *Store) markKey(n uint64) string  { return s.prefix + "/marks/" + strconv.FormatUint(n, 10) }

// holder is the value of a slots/n and claims/n key.
type holder struct {
	Owner string    `json:"owner"`
	At    time.Time `json:"at"`
	TTL   string    `json:"ttl"`
}

// Claim takes the lowest free slot, or req.Again's slot, under a new etcd lease. Errors wrap
// nodeid.ErrNoFreeSlot when every slot is held and nodeid.ErrTaken when req.Again's slot was
// claimed by someone else since.
func (s *Store) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	secs := int64((req.TTL + time.Second - 1) / time.Second)
	grant, err := s.cli.Grant(ctx, secs)
	if err != nil {
		return nodeid.Claim{}, fmt.Errorf("etcdlease: granting a %ds lease: %w", secs, err)
	}
	c, err := s.claim(ctx, req, grant)
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_, _ = s.cli.Revoke(rctx, grant.ID) // it would expire anyway
		cancel()
		return nodeid.Claim{}, err
	}
	s.readMembers(ctx)
	return c, nil
}

func (s *Store) claim(ctx context.Context, req nodeid.ClaimRequest, grant *clientv3.LeaseGrantResponse) (nodeid.Claim, error) {
	val, err := json.Marshal(holder{Owner: req.Owner, At: time.Now().UTC(), TTL: (time.Duration(grant.TTL) * time.Second).String()})
	if err != nil {
		return nodeid.Claim{}, fmt.Errorf("etcdlease: %w", err)
	}
	put := func(n uint64, cmps ...clientv3.Cmp) (bool, int64, error) {
		resp, err := s.cli.Txn(ctx).
			If(append(cmps, clientv3.Compare(clientv3.CreateRevision(s.slotKey(n)), "=", 0))...).
			Then(clientv3.OpPut(s.slotKey(n), string(val), clientv3.WithLease(grant.ID)),
				clientv3.OpPut(s.claimKey(n), string(val))).
			Commit()
		if err != nil {
			// No answer is not a "no": etcd does not answer a request aborted by a leader
			// change or a timeout, yet the new leader may still commit it. Re-read the slot
			// before deciding.
			return s.reread(ctx, n, grant.ID, err)
		}
		return resp.Succeeded, resp.Header.Revision, nil
	}
	ttl := time.Duration(grant.TTL) * time.Second
	if a := req.Again; a != nil {
		ok, rev, err := put(a.Node, clientv3.Compare(clientv3.ModRevision(s.claimKey(a.Node)), "=", a.Epoch))
		if err != nil {
			return nodeid.Claim{}, err
		}
		if !ok {
			return nodeid.Claim{}, fmt.Errorf("etcdlease: slot %d under %s: %w", a.Node, s.prefix, nodeid.ErrTaken)
		}
		return nodeid.Claim{Node: a.Node, Owner: req.Owner, TTL: ttl, Epoch: rev, Handle: int64(grant.ID)}, nil
	}
	if req.Exact {
		ok, rev, err := put(req.Node)
		if err != nil {
			return nodeid.Claim{}, err
		}
		if !ok {
			return nodeid.Claim{}, fmt.Errorf("%w: slot %d under etcd prefix %s is held by %s", nodeid.ErrHeld, req.Node, s.prefix, s.ownerOf(ctx, req.Node))
		}
		return nodeid.Claim{Node: req.Node, Owner: req.Owner, TTL: ttl, Epoch: rev, Handle: int64(grant.ID)}, nil
	}
	for {
		resp, err := s.cli.Get(ctx, s.prefix+"/slots/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			return nodeid.Claim{}, fmt.Errorf("etcdlease: listing slots under %s: %w", s.prefix, err)
		}
		taken := make([]uint64, 0, len(resp.Kvs))
		for _, kv := range resp.Kvs {
			n, err := strconv.ParseUint(strings.TrimPrefix(string(kv.Key), s.prefix+"/slots/"), 10, 64)
			if err == nil && n < req.Nodes {
				taken = append(taken, n)
			}
		}
		n, ok := lowestFree(taken, req.Nodes)
		if !ok {
			return nodeid.Claim{}, fmt.Errorf("%w: all %d of %d slots under etcd prefix %s are taken", nodeid.ErrNoFreeSlot, len(taken), req.Nodes, s.prefix)
		}
		won, rev, err := put(n)
		if err != nil {
			return nodeid.Claim{}, err
		}
		if won {
			return nodeid.Claim{Node: n, Owner: req.Owner, TTL: ttl, Epoch: rev, Handle: int64(grant.ID)}, nil
		}
		// Another process took n between the listing and the transaction: list again.
	}
}

// ErrUnknown reports a claim whose outcome etcd did not tell and a re-read could not settle.
// The claim's etcd lease is revoked then, so the claim is void whether or not it was
// committed; the slot stays free or lapses with it.
var ErrUnknown = errors.New("etcdlease: claim outcome unknown")

// reread settles a claim transaction that failed with sendErr (a timeout, a lost connection,
// "leader changed"): it may have been committed. A linearizable read of slot n shows whether
// the slot is held under grant, the claim's own etcd lease, which nobody else can use; then
// the claim succeeded at the slot key's CreateRevision, which is also the revision of the
// claims/n record the transaction wrote. Otherwise the claim is reported as failed with an
// error wrapping ErrUnknown, and Claim revokes grant, which makes a transaction still in
// flight fail when it is applied (its lease is gone). The read gets a few seconds of its own
// when ctx has already ended, so that a claim is not abandoned for want of the answer.
func (s *Store) reread(ctx context.Context, n uint64, grant clientv3.LeaseID, sendErr error) (bool, int64, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	resp, err := s.cli.Get(rctx, s.slotKey(n))
	if err != nil {
		return false, 0, fmt.Errorf("%w: claiming slot %d under %s: %w (re-reading the slot: %v)", ErrUnknown, n, s.prefix, sendErr, err)
	}
	if len(resp.Kvs) == 1 && resp.Kvs[0].Lease == int64(grant) {
		return true, resp.Kvs[0].CreateRevision, nil
	}
	return false, 0, fmt.Errorf("%w: claiming slot %d under %s: %w; the slot is not held under this claim's lease", ErrUnknown, n, s.prefix, sendErr)
}

// ownerOf names the holder of slot n for a message.
func (s *Store) ownerOf(ctx context.Context, n uint64) string {
	resp, err := s.cli.Get(ctx, s.slotKey(n))
	if err != nil || len(resp.Kvs) == 0 {
		return "another owner"
	}
	var h holder
	if json.Unmarshal(resp.Kvs[0].Value, &h) != nil || h.Owner == "" {
		return "another owner"
	}
	return fmt.Sprintf("%q (claimed %s)", h.Owner, h.At.Format(time.RFC3339))
}

// lowestFree returns the lowest number in [0, nodes) not in taken.
func lowestFree(taken []uint64, nodes uint64) (uint64, bool) {
	sort.Slice(taken, func(i, j int) bool { return taken[i] < taken[j] })
	var want uint64
	for _, n := range taken {
		if n == want {
			want++
		} else if n > want {
			break
		}
	}
	return want, want < nodes
}

// Renew sends one keep-alive for c's lease and checks that c still holds its slot. Errors wrap
// nodeid.ErrLost when the lease expired or the slot key is no longer c's.
func (s *Store) Renew(ctx context.Context, c nodeid.Claim) error {
	if _, err := s.cli.KeepAliveOnce(ctx, clientv3.LeaseID(c.Handle)); err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return fmt.Errorf("etcdlease: slot %d under %s: lease %x expired: %w", c.Node, s.prefix, c.Handle, nodeid.ErrLost)
		}
		return fmt.Errorf("etcdlease: renewing slot %d under %s: %w", c.Node, s.prefix, err)
	}
	resp, err := s.cli.Get(ctx, s.slotKey(c.Node))
	if err != nil {
		return fmt.Errorf("etcdlease: renewing slot %d under %s: %w", c.Node, s.prefix, err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != c.Epoch || resp.Kvs[0].Lease != c.Handle {
		return fmt.Errorf("etcdlease: slot %d under %s: key %s was removed or replaced: %w", c.Node, s.prefix, s.slotKey(c.Node), nodeid.ErrLost)
	}
	return nil
}

// Release revokes c's lease, which deletes its slot key.
func (s *Store) Release(ctx context.Context, c nodeid.Claim) error {
	if _, err := s.cli.Revoke(ctx, clientv3.LeaseID(c.Handle)); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("etcdlease: releasing slot %d under %s: %w", c.Node, s.prefix, err)
	}
	return nil
}

// LoadMark returns slot node's saved mark, or the zero time.
func (s *Store) LoadMark(ctx context.Context, node uint64) (time.Time, error) {
	resp, err := s.cli.Get(ctx, s.markKey(node))
	if err != nil {
		return time.Time{}, fmt.Errorf("etcdlease: loading the mark of slot %d under %s: %w", node, s.prefix, err)
	}
	if len(resp.Kvs) == 0 {
		return time.Time{}, nil
	}
	ns, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	if err != nil || ns <= 0 {
		return time.Time{}, fmt.Errorf("etcdlease: the mark of slot %d under %s is %.40q, not Unix nanoseconds", node, s.prefix, resp.Kvs[0].Value)
	}
	return time.Unix(0, ns).UTC(), nil
}

// SaveMark stores mark for c's slot if c still holds it. Errors wrap nodeid.ErrLost otherwise.
func (s *Store) SaveMark(ctx context.Context, c nodeid.Claim, mark time.Time) error {
	ns := mark.UnixNano()
	if ns <= 0 {
		return fmt.Errorf("etcdlease: mark %v is not after 1970", mark)
	}
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.slotKey(c.Node)), "=", c.Epoch)).
		Then(clientv3.OpPut(s.markKey(c.Node), strconv.FormatInt(ns, 10))).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdlease: saving the mark of slot %d under %s: %w", c.Node, s.prefix, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcdlease: saving the mark of slot %d under %s: %w", c.Node, s.prefix, nodeid.ErrLost)
	}
	return nil
}

// Slots lists every slot that was ever claimed under the prefix, with its last owner, whether
// it is held now, when the holding lapses and its mark.
func (s *Store) Slots(ctx context.Context) ([]nodeid.Slot, error) {
	resp, err := s.cli.Get(ctx, s.prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcdlease: listing %s: %w", s.prefix, err)
	}
	bySlot := map[uint64]*nodeid.Slot{}
	get := func(n uint64) *nodeid.Slot {
		if bySlot[n] == nil {
			bySlot[n] = &nodeid.Slot{Node: n}
		}
		return bySlot[n]
	}
	leases := map[uint64]int64{}
	for _, kv := range resp.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), s.prefix+"/")
		kind, num, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			continue
		}
		var h holder
		switch kind {
		case "slots":
			sl := get(n)
			sl.Held = true
			if json.Unmarshal(kv.Value, &h) == nil {
				sl.Owner = h.Owner
			}
			leases[n] = kv.Lease
			sl.Epoch = kv.CreateRevision
		case "claims":
			sl := get(n)
			if sl.Owner == "" && json.Unmarshal(kv.Value, &h) == nil {
				sl.Owner = h.Owner
			}
			if sl.Epoch == 0 {
				sl.Epoch = kv.ModRevision
			}
		case "marks":
			if ns, err := strconv.ParseInt(string(kv.Value), 10, 64); err == nil && ns > 0 {
				get(n).Mark = time.Unix(0, ns).UTC()
			}
		}
	}
	for n, id := range leases {
		ttl, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(id))
		if err != nil {
			return nil, fmt.Errorf("etcdlease: reading the lease of slot %d under %s: %w", n, s.prefix, err)
		}
		if ttl.TTL > 0 {
			bySlot[n].Expires = time.Now().Add(time.Duration(ttl.TTL) * time.Second).UTC()
		}
	}
	out := make([]nodeid.Slot, 0, len(bySlot))
	for _, sl := range bySlot {
		out = append(out, *sl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// Close closes the etcd client unless it came from Settings.Client.
func (s *Store) Close() error {
	if !s.own {
		return nil
	}
	if err := s.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcdlease: closing the client: %w", err)
	}
	return nil
}
