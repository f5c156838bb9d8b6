package idkit

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
)

// nodeSourceKeys are the snowflake settings that node sources read besides "node".
var nodeSourceKeys = []string{}

// nodeBinding is where a snowflake scheme's node value comes from, and what comes with it: a
// fence and a mark store for lease-backed nodes, and how to let the node go.
type nodeBinding struct {
	node       uint64
	fence      schemes.Fence
	marks      schemes.MarkStore
	markWindow time.Duration
	clock      schemes.Clock
	close      func() error
}

// release lets go of whatever the binding holds; safe on the zero binding.
func (nb nodeBinding) release() error {
	if nb.close == nil {
		return nil
	}
	return nb.close()
}

// bindNode resolves the "node" setting of a snowflake spec against layout l (absent: node 0):
// a number, or env:VAR for a number taken from the environment.
func bindNode(ctx context.Context, sp *spec, l layouts.Layout) (nodeBinding, error) {
	v, ok := sp.take("node")
	if !ok {
		return nodeBinding{}, nil
	}
	maxNode := l.Nodes() - 1
	src := "node=" + v
	if name, isEnv := strings.CutPrefix(v, "env:"); isEnv {
		ev, set := os.LookupEnv(name)
		if !set || strings.TrimSpace(ev) == "" {
			return nodeBinding{}, sp.errf("%s: environment variable %s is not set", src, name)
		}
		v = strings.TrimSpace(ev)
		src += " (" + name + "=" + quote(v) + ")"
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nodeBinding{}, sp.errf("%s: want a node number from 0 to %d or env:VAR", src, maxNode)
	}
	if n > maxNode {
		return nodeBinding{}, sp.errf("%s: layout %s has %d node bits, so nodes run from 0 to %d", src, l.Name, l.NodeBits(), maxNode)
	}
	return nodeBinding{node: n}, nil
}
