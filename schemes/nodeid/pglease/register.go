package pglease

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/schemes/nodeid"
)

// Importing this package registers the URL schemes postgres://, postgresql:// and pg:// with
// nodeid.RegisterStore, so that idkit specs accept node=postgres://…?namespace=NAME and
// lease=postgres://….
func init() {
	for _, s := range []string{"postgres", "postgresql", "pg"} {
		nodeid.RegisterStore(s, driver{})
	}
}

// driver opens stores from PostgreSQL URLs for nodeid.OpenStore.
type driver struct{}

// OpenStore parses url with ParseURL and opens the store, creating its table if needed.
func (driver) OpenStore(ctx context.Context, url string) (nodeid.Store, error) {
	s, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return Open(ctx, s)
}

// DescribeStore names the table and namespace: "PostgreSQL table idkit_node_slots, namespace
// orders". It never shows the URL, which may hold a password.
func (driver) DescribeStore(url string) string {
	s, err := ParseURL(url)
	if err != nil {
		return "PostgreSQL store (unreadable URL)"
	}
	t, ns := s.Table, s.Namespace
	if t == "" {
		t = DefaultTable
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	return fmt.Sprintf("PostgreSQL table %s, namespace %s", t, ns)
}
