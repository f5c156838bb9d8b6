package idkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
)

// nodeSourceKeys are the snowflake settings that node sources read besides "node":
//
//	lease=URL        a lease store (etcd://…, postgres://…, pg://…, registered by importing its
//	                 package) that checks a fixed node number against every other process
//	                 using it
//	lease_ttl=10s    how long a lease lasts without renewal (etcd rounds up to whole seconds,
//	                 2 s at least)
//	marks=lease|file:PATH|off
//	                 where the high-water mark lives: in the lease store (the default with a
//	                 lease), in a local file (PATH may hold {node}), or nowhere (the default
//	                 without a lease)
//	mark_window=50ms how far ahead of issued time a saved mark reaches (default 50 ms, within
//	                 the default drift policy's 100 ms continue bound)
var nodeSourceKeys = []string{"lease", "lease_ttl", "marks", "mark_window"}

// defaultClaimTimeout bounds claiming a lease when the caller's context has no deadline, so
// that New against an unreachable store fails instead of hanging.
const defaultClaimTimeout = 10 * time.Second

// nodeBinding is where a snowflake scheme's node value comes from, and what comes with it: a
// fence and a mark store for lease-backed nodes, and how to let the node go.
type nodeBinding struct {
	node       uint64
	fence      schemes.Fence
	marks      schemes.MarkStore
	markWindow time.Duration
	clock      schemes.Clock
	close      func() error
	renewals   func() (ok, failed uint64) // lease renewals; nil without a lease
	// lost is closed when the lease lost its slot for good (nil without a lease: never);
	// lease claims a node anew the way this binding was made (nil without a lease).
	lost  <-chan struct{}
	lease *leaseSpec
	// durability reads the lease store's class (nil without a lease, or for a store that is
	// not a nodeid.Durabler).
	durability func() nodeid.Durability
}

// release lets go of whatever the binding holds; safe on the zero binding.
func (nb nodeBinding) release() error {
	if nb.close == nil {
		return nil
	}
	return nb.close()
}

// bindNode resolves the node settings of a snowflake spec against layout l:
//
//	node=N             a fixed number (absent: 0)
//	node=env:VAR       a number from the environment
//	node=ip            the low bits of the host's private IPv4 address (collision risk: see
//	                   nodeid.FromPrivateIPv4)
//	node=etcd://host:port[,host:port]/prefix
//	node=postgres://…?namespace=NAME (also postgresql://, pg://)
//	                   the lowest free slot of a lease store, held while the scheme is open;
//	                   any scheme://… a package registered with nodeid.RegisterStore
//
// plus the keys in nodeSourceKeys. A fixed number with lease=URL claims exactly that slot and
// fails when another process holds it.
func bindNode(ctx context.Context, sp *Settings, l layouts.Layout) (nodeBinding, error) {
	v, hasNode := sp.Lookup("node")
	if hasNode && nodeid.IsStoreURL(v) {
		if sp.Has("lease") {
			return nodeBinding{}, sp.Errorf("node=%s and lease=%s both name a lease store; give one", v, sp.vals["lease"])
		}
		return bindLease(ctx, sp, l, v, false, 0)
	}
	if !hasNode {
		if url, ok := sp.Lookup("lease"); ok {
			// No node setting at all: any free slot will do.
			return bindLease(ctx, sp, l, url, false, 0)
		}
		return bindFixedNode(ctx, sp, l, 0)
	}
	n, err := staticNode(sp, l, v)
	if err != nil {
		return nodeBinding{}, err
	}
	return bindFixedNode(ctx, sp, l, n)
}

// bindFixedNode binds a node number fixed by the spec (node=N, env:VAR, ip, or the layout's
// node fields by name): with lease=URL it claims exactly that slot, failing while another
// process holds it; otherwise it only reads marks=file:PATH|off and mark_window.
func bindFixedNode(ctx context.Context, sp *Settings, l layouts.Layout, n uint64) (nodeBinding, error) {
	if url, ok := sp.Lookup("lease"); ok {
		return bindLease(ctx, sp, l, url, true, n)
	}
	if v, ok := sp.Lookup("lease_ttl"); ok {
		return nodeBinding{}, sp.Errorf("lease_ttl=%s without a lease store (node=etcd://… or lease=URL)", v)
	}
	nb := nodeBinding{node: n}
	if err := bindFileMarks(sp, &nb, fmt.Sprintf("node %d", n)); err != nil {
		return nodeBinding{}, err
	}
	return nb, nil
}

// staticNode reads node=N, node=env:VAR or node=ip.
func staticNode(sp *Settings, l layouts.Layout, v string) (uint64, error) {
	maxNode := l.Nodes() - 1
	src := "node=" + v
	switch {
	case strings.HasPrefix(v, "env:"):
		name := strings.TrimPrefix(v, "env:")
		if name == "" {
			return 0, sp.Errorf("%s names no environment variable (want node=env:NAME)", src)
		}
		ev, set := os.LookupEnv(name)
		if !set || strings.TrimSpace(ev) == "" {
			return 0, sp.Errorf("%s: environment variable %s is not set", src, name)
		}
		v = strings.TrimSpace(ev)
		src += " (" + name + "=" + quote(v) + ")"
	case v == "ip":
		n, err := nodeid.FromPrivateIPv4(nil, l.Nodes())
		if err != nil {
			return 0, sp.Wrapf(err, "%s", src)
		}
		return n, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, sp.Errorf("%s: want a node number from 0 to %d, env:VAR, ip, or a lease store URL (etcd://…, postgres://…)", src, maxNode)
	}
	if n > maxNode {
		return 0, sp.Errorf("%s: layout %s has %d node bits, so nodes run from 0 to %d", src, l.Name, l.NodeBits(), maxNode)
	}
	return n, nil
}

// bindLease claims a slot from the store at url: exactly node when exact, else the lowest
// free one. The binding it returns can claim again (nodeBinding.again) the same way.
func bindLease(ctx context.Context, sp *Settings, l layouts.Layout, url string, exact bool, node uint64) (nodeBinding, error) {
	ttl, err := sp.durationOrOff("lease_ttl")
	if err != nil {
		return nodeBinding{}, err
	}
	if ttl < 0 {
		return nodeBinding{}, sp.Errorf("lease_ttl cannot be off")
	}
	if ttl == 0 {
		ttl = nodeid.DefaultTTL
	}
	ls := &leaseSpec{url: url, exact: exact, node: node, nodes: l.Nodes(), ttl: ttl, marks: "lease"}
	if mv, ok := sp.Lookup("marks"); ok && mv != "lease" {
		if strings.HasPrefix(mv, "file:") && !exact && !strings.Contains(mv, "{node}") {
			return nodeBinding{}, sp.Errorf("marks=%s: the node comes from a lease and may differ between runs, so the path needs {node}", mv)
		}
		// Checked here, with the spec at hand; claim builds it for each node it gets.
		if _, err := fileMarks(sp, mv, node, "lease="+url); err != nil {
			return nodeBinding{}, err
		}
		ls.marks = mv
	}
	if ls.window, err = markWindow(sp); err != nil {
		return nodeBinding{}, err
	}
	if ls.window > 0 && ls.marks == "off" {
		return nodeBinding{}, sp.Errorf("mark_window=%v without marks (marks=file:PATH, or a lease store)", ls.window)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultClaimTimeout)
		defer cancel()
	}
	store, err := nodeid.OpenStore(ctx, url)
	if err != nil {
		return nodeBinding{}, sp.Wrapf(err, "lease store %s", url)
	}
	nb, err := ls.hold(ctx, store)
	if errors.Is(err, nodeid.ErrNoFreeSlot) || errors.Is(err, nodeid.ErrHeld) {
		return nodeBinding{}, sp.Wrapf(err, "claiming a node of layout %s", l.Name)
	}
	return nb, err
}

// leaseSpec is how a snowflake spec holds its node under a lease, resolved once so that the
// node can be claimed again after the lease is lost.
type leaseSpec struct {
	url    string
	exact  bool   // claim node and no other
	node   uint64 // with exact
	nodes  uint64 // the layout's node count
	ttl    time.Duration
	marks  string        // lease, off or file:PATH
	window time.Duration // mark_window; 0: the default
}

// claim opens the store and claims a slot in it (see hold).
func (ls *leaseSpec) claim(ctx context.Context) (nodeBinding, error) {
	store, err := nodeid.OpenStore(ctx, ls.url)
	if err != nil {
		return nodeBinding{}, err
	}
	return ls.hold(ctx, store)
}

// hold claims a slot of store under a new lease, with the marks the spec asks for. Errors are
// the lease's (ErrNoFreeSlot, ErrHeld) or name the store.
func (ls *leaseSpec) hold(ctx context.Context, store nodeid.Store) (nodeBinding, error) {
	lease, err := nodeid.Hold(ctx, store, nodeid.LeaseSettings{Nodes: ls.nodes, TTL: ls.ttl, Exact: ls.exact, Node: ls.node})
	if err != nil {
		if errors.Is(err, nodeid.ErrNoFreeSlot) || errors.Is(err, nodeid.ErrHeld) {
			return nodeBinding{}, err
		}
		return nodeBinding{}, fmt.Errorf("idkit: claiming a node from %s: %w", nodeid.DescribeStore(ls.url), redact.Error(err))
	}
	nb := nodeBinding{node: lease.Node(), fence: lease, close: lease.Close, renewals: lease.Renewals,
		lost: lease.Lost(), lease: ls, markWindow: ls.window}
	if d, ok := store.(nodeid.Durabler); ok {
		nb.durability = d.Durability
	}
	switch {
	case ls.marks == "lease":
		// The generator's default window (50 ms) stays within the default drift policy's
		// continue bound, so a process that claims a slot another one just released
		// continues on the saved mark instead of failing.
		nb.marks = lease.Marks()
	case strings.HasPrefix(ls.marks, "file:"):
		nb.marks = nodeid.NewFileMarks(strings.TrimPrefix(ls.marks, "file:"), nb.node)
	}
	return nb, nil
}

// bindFileMarks reads marks=file:PATH|off and mark_window for a node without a lease.
func bindFileMarks(sp *Settings, nb *nodeBinding, src string) error {
	if mv, ok := sp.Lookup("marks"); ok {
		var err error
		if nb.marks, err = fileMarks(sp, mv, nb.node, src); err != nil {
			return err
		}
	}
	return applyMarkWindow(sp, nb)
}

// fileMarks reads a marks value other than the lease store's: file:PATH or off.
func fileMarks(sp *Settings, mv string, node uint64, src string) (schemes.MarkStore, error) {
	switch {
	case mv == "off":
		return nil, nil
	case strings.HasPrefix(mv, "file:") && len(mv) > len("file:"):
		return nodeid.NewFileMarks(strings.TrimPrefix(mv, "file:"), node), nil
	case mv == "lease":
		return nil, sp.Errorf("marks=lease without a lease store (%s); use marks=file:PATH or add lease=URL", src)
	}
	return nil, sp.Errorf("marks=%s: want lease, file:PATH or off", mv)
}

// applyMarkWindow reads mark_window into nb.
func applyMarkWindow(sp *Settings, nb *nodeBinding) error {
	w, err := markWindow(sp)
	if err != nil || w == 0 {
		return err
	}
	if nb.marks == nil {
		return sp.Errorf("mark_window=%v without marks (marks=file:PATH, or a lease store)", w)
	}
	nb.markWindow = w
	return nil
}

func markWindow(sp *Settings) (time.Duration, error) {
	if !sp.Has("mark_window") {
		return 0, nil
	}
	w, err := sp.durationOrOff("mark_window")
	if err != nil {
		return 0, err
	}
	if w < 0 {
		return 0, sp.Errorf("mark_window cannot be off; use marks=off")
	}
	return w, nil
}
