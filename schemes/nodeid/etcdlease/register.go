package etcdlease

import (
	"context"
	"fmt"
	"strings"

	"github.com/idkit/idkit/schemes/nodeid"
)

// Importing this package registers the URL scheme etcd:// with nodeid.RegisterStore, so that
// idkit specs accept node=etcd://host:port/prefix and lease=etcd://….
func init() { nodeid.RegisterStore("etcd", driver{}) }

// driver opens stores from etcd:// URLs for nodeid.OpenStore.
type driver struct{}

// OpenStore parses url with ParseURL and opens the store. nodeid.OpenStore hands it the URL
// with its scheme in lower case.
func (driver) OpenStore(_ context.Context, url string) (nodeid.Store, error) {
	s, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return Open(s)
}

// DescribeStore names the prefix and endpoints: "etcd prefix /idkit/orders at 127.0.0.1:2379".
func (driver) DescribeStore(url string) string {
	s, err := ParseURL(url)
	if err != nil {
		return "etcd store (unreadable URL)"
	}
	p := s.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	hosts := make([]string, len(s.Endpoints))
	for i, e := range s.Endpoints {
		hosts[i] = strings.TrimPrefix(e, "http://")
	}
	return fmt.Sprintf("etcd prefix %s at %s", p, strings.Join(hosts, ","))
}
