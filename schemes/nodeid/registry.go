package nodeid

import (
	"context"
	"errors"
	"strings"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/internal/urlreg"
)

// ErrNoStoreDriver reports a lease store URL whose scheme no imported package registered. The
// message names the import to add when the scheme is one of idkit's own stores.
var ErrNoStoreDriver = errors.New("nodeid: no lease store registered for URL scheme")

// StoreDriver opens the lease stores of one or more URL schemes. A store package registers
// one with RegisterStore from its init function, as database/sql drivers do, so that a
// program links the etcd or PostgreSQL client only when it imports the store:
//
//	import _ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // node=etcd://…
//	import _ "github.com/idkit/idkit/schemes/nodeid/pglease"   // node=postgres://…, pg://…
type StoreDriver interface {
	// OpenStore opens the store url names (the whole URL, its scheme in lower case). The
	// context bounds connecting. The caller closes the store, or hands it to Hold.
	OpenStore(ctx context.Context, url string) (Store, error)
	// DescribeStore names the store url points at, for messages and listings, without
	// credentials: "etcd prefix /idkit/orders at 127.0.0.1:2379".
	DescribeStore(url string) string
}

// stores is the process-wide registry that store packages fill from init functions.
var stores = urlreg.New[StoreDriver]("nodeid", ErrNoStoreDriver, map[string]string{
	"etcd":       "github.com/idkit/idkit/schemes/nodeid/etcdlease",
	"postgres":   "github.com/idkit/idkit/schemes/nodeid/pglease",
	"postgresql": "github.com/idkit/idkit/schemes/nodeid/pglease",
	"pg":         "github.com/idkit/idkit/schemes/nodeid/pglease",
}, "github.com/idkit/idkit/schemes/nodeid/etcdlease")

// RegisterStore makes the lease stores of URL scheme (such as "etcd", without "://") available
// to OpenStore and so to idkit specs (node=scheme://…, lease=scheme://…). Schemes are
// matched without regard to case. Like database/sql.Register it is meant for init functions
// and panics when scheme is not a word of letters, digits, '+', '-' or '.', when d is nil or
// when scheme is registered twice: those are mistakes in a program, not in its input.
func RegisterStore(scheme string, d StoreDriver) { stores.Register(scheme, d) }

// StoreSchemes returns the registered URL schemes, sorted.
func StoreSchemes() []string { return stores.Schemes() }

// IsStoreURL reports whether s has the form of a lease store URL, scheme://…, whether or not
// a driver for the scheme is registered; OpenStore says which import is missing.
func IsStoreURL(s string) bool { return urlreg.IsURL(s) }

// OpenStore opens the lease store url names through the driver registered for its scheme.
// Its errors never show a password the URL holds. It returns an error wrapping ErrNoStoreDriver, which names the package to import, when no
// driver is registered for the scheme; otherwise whatever the driver returns.
func OpenStore(ctx context.Context, url string) (Store, error) {
	d, url, err := stores.Lookup(url)
	if err != nil {
		return nil, err
	}
	s, err := d.OpenStore(ctx, url)
	// Drivers' errors may quote the URL (net/url's parse errors do), password included.
	return s, redact.Error(err)
}

// DescribeStore names the store url points at, without credentials, through its driver; for
// a URL without a registered driver it returns the URL's scheme and host part only.
func DescribeStore(url string) string {
	d, url, err := stores.Lookup(url)
	if err != nil {
		scheme, rest, _ := strings.Cut(url, "://")
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			rest = rest[at+1:]
		}
		host, _, _ := strings.Cut(rest, "/")
		return scheme + "://" + host
	}
	return d.DescribeStore(url)
}
