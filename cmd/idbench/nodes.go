package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idkit/idkit/schemes/nodeid"
)

const nodesHelp = `Usage: idbench nodes --store URL [--all] [--json]

Lists the node slots of a lease store, the shared service from which Snowflake generators
claim their node IDs (spec "snowflake:node=URL", or "node=N,lease=URL" to check a fixed
node): each held slot with its owner, when its lease lapses unless renewed, the claim epoch
and the slot's saved high-water mark. See docs/nodes.md.

Store URLs:
  etcd://host:port[,host:port]/prefix          slots under an etcd key prefix
  postgres://user@host:port/db?namespace=NAME  slots in the idkit_node_slots table (also
                                               postgresql://, pg://; table=NAME overrides)

Flags:
  --store URL   the lease store (required)
  --all         also list released and lapsed slots, with their last owner and mark
  --json        one JSON array of objects, times in RFC 3339

Examples:
  idbench nodes --store etcd://127.0.0.1:2379/idkit/orders
  idbench nodes --store 'postgres://app@db:5432/app?namespace=orders' --all --json
`

// nodeSlot is one slot as "idbench nodes --json" prints it.
type nodeSlot struct {
	Node    uint64     `json:"node"`
	Held    bool       `json:"held"`
	Owner   string     `json:"owner"`
	Expires *time.Time `json:"expires,omitempty"`
	Epoch   int64      `json:"epoch"`
	Mark    *time.Time `json:"mark,omitempty"`
}

// runNodes is "idbench nodes".
func runNodes(ctx context.Context, stdout, _ io.Writer, args []string) error {
	fs := newFlagSet("nodes")
	store := fs.String("store", "", "")
	all := fs.Bool("all", false, "")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseFlags(fs, "nodes", nodesHelp, stdout, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("nodes", "nodes: unexpected argument %q (nodes takes only flags)", pos[0])
	}
	if *store == "" {
		return usagef("nodes", "nodes: --store URL is required")
	}
	if !nodeid.IsStoreURL(*store) {
		return usagef("nodes", "nodes: --store: want a lease store URL, scheme://… (registered: %s)", strings.Join(nodeid.StoreSchemes(), ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := nodeid.OpenStore(ctx, *store)
	if errors.Is(err, nodeid.ErrNoStoreDriver) {
		return usagef("nodes", "nodes: --store: %w", err)
	}
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	defer s.Close()
	slots, err := s.Slots(ctx)
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	var shown []nodeid.Slot
	held := 0
	for _, sl := range slots {
		if sl.Held {
			held++
		}
		if sl.Held || *all {
			shown = append(shown, sl)
		}
	}
	if *asJSON {
		out := make([]nodeSlot, 0, len(shown))
		for _, sl := range shown {
			ns := nodeSlot{Node: sl.Node, Held: sl.Held, Owner: sl.Owner, Epoch: sl.Epoch}
			if sl.Held && !sl.Expires.IsZero() {
				e := sl.Expires.UTC()
				ns.Expires = &e
			}
			if !sl.Mark.IsZero() {
				m := sl.Mark.UTC()
				ns.Mark = &m
			}
			out = append(out, ns)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("nodes: writing: %w", err)
		}
		return nil
	}
	if _, err := fmt.Fprintf(stdout, "%s: %d slots held, %d known\n", nodeid.DescribeStore(*store), held, len(slots)); err != nil {
		return fmt.Errorf("nodes: writing: %w", err)
	}
	if len(shown) == 0 {
		return nil
	}
	now := time.Now()
	t := newTable(stdout, ">NODE", "STATE", "OWNER", "EXPIRES", ">EPOCH", "MARK")
	for _, sl := range shown {
		state, expires := "free", "-"
		if sl.Held {
			state = "held"
			if !sl.Expires.IsZero() {
				expires = fmt.Sprintf("%s (in %v)", sl.Expires.UTC().Format(time.RFC3339), sl.Expires.Sub(now).Round(100*time.Millisecond))
			}
		}
		mark := "-"
		if !sl.Mark.IsZero() {
			mark = sl.Mark.UTC().Format(time.RFC3339Nano)
		}
		owner := sl.Owner
		if owner == "" {
			owner = "-"
		}
		if err := t.row(fmt.Sprint(sl.Node), state, owner, expires, fmt.Sprint(sl.Epoch), mark); err != nil {
			return fmt.Errorf("nodes: writing: %w", err)
		}
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("nodes: writing: %w", err)
	}
	return nil
}
