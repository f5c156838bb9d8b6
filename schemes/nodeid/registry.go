package nodeid

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/idkit/idkit/internal/redact"
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
	// OpenStore opens the store url names (the whole URL, scheme included). The context
	// bounds connecting. The caller closes the store, or hands it to Hold.
	OpenStore(ctx context.Context, url string) (Store, error)
	// DescribeStore names the store url points at, for messages and listings, without
	// credentials: "etcd prefix /idkit/orders at 127.0.0.1:2379".
	DescribeStore(url string) string
}

// knownStores names the package that registers each URL scheme of idkit's own stores, so
// that a missing import gets a message saying which one.
var knownStores = map[string]string{
	"etcd":       "github.com/idkit/idkit/schemes/nodeid/etcdlease",
	"postgres":   "github.com/idkit/idkit/schemes/nodeid/pglease",
	"postgresql": "github.com/idkit/idkit/schemes/nodeid/pglease",
	"pg":         "github.com/idkit/idkit/schemes/nodeid/pglease",
}

// storeDrivers is the process-wide registry that init functions fill. It is written only by
// RegisterStore, which store packages call at init time.
var storeDrivers = struct {
	sync.RWMutex
	m map[string]StoreDriver
}{m: map[string]StoreDriver{}}

// RegisterStore makes the lease stores of URL scheme (such as "etcd", without "://") available
// to OpenStore and so to idkit specs (node=scheme://…, lease=scheme://…). Schemes are
// matched without regard to case. Like database/sql.Register it is meant for init functions
// and panics when scheme is not a word of letters, digits, '+', '-' or '.', when d is nil or
// when scheme is registered twice: those are mistakes in a program, not in its input.
func RegisterStore(scheme string, d StoreDriver) {
	s := strings.ToLower(scheme)
	if !validURLScheme(s) {
		panic(fmt.Sprintf("nodeid: RegisterStore: invalid URL scheme %q", scheme))
	}
	if d == nil {
		panic("nodeid: RegisterStore: nil driver for " + s)
	}
	storeDrivers.Lock()
	defer storeDrivers.Unlock()
	if _, dup := storeDrivers.m[s]; dup {
		panic("nodeid: RegisterStore called twice for " + s)
	}
	storeDrivers.m[s] = d
}

// StoreSchemes returns the registered URL schemes, sorted.
func StoreSchemes() []string {
	storeDrivers.RLock()
	defer storeDrivers.RUnlock()
	out := make([]string, 0, len(storeDrivers.m))
	for s := range storeDrivers.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// IsStoreURL reports whether s has the form of a lease store URL, scheme://…, whether or not
// a driver for the scheme is registered; OpenStore says which import is missing.
func IsStoreURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && validURLScheme(strings.ToLower(scheme))
}

// OpenStore opens the lease store url names through the driver registered for its scheme.
// Its errors never show a password the URL holds. It returns an error wrapping ErrNoStoreDriver, which names the package to import, when no
// driver is registered for the scheme; otherwise whatever the driver returns.
func OpenStore(ctx context.Context, url string) (Store, error) {
	d, err := storeDriver(url)
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
	d, err := storeDriver(url)
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

func storeDriver(url string) (StoreDriver, error) {
	scheme, _, ok := strings.Cut(url, "://")
	scheme = strings.ToLower(scheme)
	if !ok || !validURLScheme(scheme) {
		return nil, fmt.Errorf("%w: want scheme://… (registered: %s)", ErrNoStoreDriver, registered())
	}
	storeDrivers.RLock()
	d, found := storeDrivers.m[scheme]
	storeDrivers.RUnlock()
	if found {
		return d, nil
	}
	if pkg, known := knownStores[scheme]; known {
		return nil, fmt.Errorf("%w %s://: add import _ %q to the program", ErrNoStoreDriver, scheme, pkg)
	}
	return nil, fmt.Errorf("%w %s:// (registered: %s)", ErrNoStoreDriver, scheme, registered())
}

func registered() string {
	s := StoreSchemes()
	if len(s) == 0 {
		return "none; import a store package such as github.com/idkit/idkit/schemes/nodeid/etcdlease"
	}
	return strings.Join(s, ", ")
}

// validURLScheme reports whether s is an RFC 3986 scheme in lower case: a letter, then
// letters, digits, '+', '-' or '.'.
func validURLScheme(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
