package etcdlease_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// lossyClient is an etcd client whose next Txn reply is replaced by "leader changed" while
// drop is set: the transaction reaches etcd and is committed, the holder never learns it, as
// when an election aborts the request's wait for its answer.
func lossyClient(t *testing.T, drop *atomic.Bool) *clientv3.Client {
	t.Helper()
	lose := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if method == "/etcdserverpb.KV/Txn" && err == nil && drop.CompareAndSwap(true, false) {
			return rpctypes.ErrGRPCLeaderChanged
		}
		return err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{etcdtest.Endpoint(t)}, DialTimeout: 2 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(lose)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// TestClaimReplyLost loses the answer to a committed claim transaction, for a first claim and
// for a claim of the same slot again after a lapse. The claim must be re-read and used: it
// holds the slot under the claim's own etcd lease. Before, the claim failed and its lease was
// revoked; for the claim again, the lost answer counted as someone else's claim, so the next
// attempt failed with ErrTaken and the holder lost its node for good.
func TestClaimReplyLost(t *testing.T) {
	var drop atomic.Bool
	cli := lossyClient(t, &drop)
	s, err := etcdlease.Open(etcdlease.Settings{Client: cli, Prefix: fmt.Sprintf("/idkit-test/lost/%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := nodeid.ClaimRequest{Nodes: 4, Owner: "A", TTL: 2 * time.Second}

	drop.Store(true)
	c, err := s.Claim(ctx, req)
	if err != nil {
		t.Fatalf("first claim with its answer lost: %v; want the claim, found by re-reading the slot", err)
	}
	if drop.Load() {
		t.Fatal("the claim sent no transaction")
	}
	if err := s.Renew(ctx, c); err != nil {
		t.Fatalf("renewing the re-read claim: %v", err)
	}

	// The holding lapses (its lease is revoked, as an expiry would); A claims the slot again.
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(c.Handle)); err != nil {
		t.Fatal(err)
	}
	if err := s.Renew(ctx, c); !errors.Is(err, nodeid.ErrLost) {
		t.Fatalf("renewal after the lapse: %v, want ErrLost", err)
	}
	again := req
	again.Again = &c
	drop.Store(true)
	c2, err := s.Claim(ctx, again)
	if err != nil {
		t.Fatalf("claim again with its answer lost: %v; want the claim", err)
	}
	if c2.Node != c.Node || c2.Epoch <= c.Epoch {
		t.Fatalf("claim again: %+v after %+v; want the same slot at a later epoch", c2, c)
	}
	if err := s.Renew(ctx, c2); err != nil {
		t.Fatalf("renewing the claim again: %v", err)
	}
	slots, err := s.Slots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 1 || !slots[0].Held || slots[0].Owner != "A" || slots[0].Epoch != c2.Epoch {
		t.Fatalf("slots after the claims: %+v; want slot %d held by A at epoch %d", slots, c.Node, c2.Epoch)
	}
}

// TestClaimUnknownRevokes fails a claim transaction before it reaches etcd and makes its
// outcome look unknown: the re-read finds the slot free, the claim reports ErrUnknown, and
// its etcd lease is revoked, so a transaction still in flight could not commit later (etcd
// refuses a put under a revoked lease, which the test checks too).
func TestClaimUnknownRevokes(t *testing.T) {
	var granted atomic.Int64
	fail := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/etcdserverpb.KV/Txn" {
			return rpctypes.ErrGRPCLeaderChanged
		}
		err := invoker(ctx, method, req, reply, cc, opts...)
		if method == "/etcdserverpb.Lease/LeaseGrant" && err == nil {
			granted.Store(reply.(interface{ GetID() int64 }).GetID())
		}
		return err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{etcdtest.Endpoint(t)}, DialTimeout: 2 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(fail)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, err := etcdlease.Open(etcdlease.Settings{Client: cli, Prefix: fmt.Sprintf("/idkit-test/unknown/%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = s.Claim(ctx, nodeid.ClaimRequest{Nodes: 4, Owner: "A", TTL: 2 * time.Second})
	if !errors.Is(err, etcdlease.ErrUnknown) {
		t.Fatalf("claim whose transaction never arrived: %v, want ErrUnknown", err)
	}
	ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(granted.Load()))
	if err != nil {
		t.Fatal(err)
	}
	if ttl.TTL != -1 {
		t.Errorf("the failed claim's lease %x still lives (TTL %d s); want it revoked", granted.Load(), ttl.TTL)
	}
	// A claim transaction still in flight would fail when applied: a put under a revoked lease
	// is refused.
	plain, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdtest.Endpoint(t)}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	_, err = plain.Txn(ctx).Then(clientv3.OpPut(fmt.Sprintf("/idkit-test/unknown-probe/%d", time.Now().UnixNano()), "x", clientv3.WithLease(clientv3.LeaseID(granted.Load())))).Commit()
	if !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		t.Errorf("a transaction putting under the revoked lease: %v, want %v", err, rpctypes.ErrLeaseNotFound)
	}
}
