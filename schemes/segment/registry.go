package segment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/idkit/idkit/schemes/nodeid"
)

// ErrNoStoreDriver reports a store URL whose scheme no imported package registered. The
// message names the import to add when the scheme is one of idkit's own stores.
var ErrNoStoreDriver = errors.New("segment: no block store registered for URL scheme")

// StoreDriver opens the block stores of one or more URL schemes. A store package registers one
// with RegisterStore from its init function, as database/sql drivers do, so that a program
// links a database client only when it imports the store:
//
//	import _ "github.com/idkit/idkit/schemes/segment/pgstore"    // store=pg://…, postgres://…
//	import _ "github.com/idkit/idkit/schemes/segment/mysqlstore" // store=mysql://…, mariadb://…
//	import _ "github.com/idkit/idkit/schemes/segment/redisstore" // store=redis://…
type StoreDriver interface {
	// OpenStore opens the store url names (the whole URL, scheme included). ctx bounds
	// connecting. The caller closes the store.
	OpenStore(ctx context.Context, url string) (Store, error)
	// DescribeStore names the store url points at, without credentials.
	DescribeStore(url string) string
}

// knownStores names the package that registers each URL scheme of idkit's own stores.
var knownStores = map[string]string{
	"pg":         "github.com/idkit/idkit/schemes/segment/pgstore",
	"postgres":   "github.com/idkit/idkit/schemes/segment/pgstore",
	"postgresql": "github.com/idkit/idkit/schemes/segment/pgstore",
	"mysql":      "github.com/idkit/idkit/schemes/segment/mysqlstore",
	"mariadb":    "github.com/idkit/idkit/schemes/segment/mysqlstore",
	"redis":      "github.com/idkit/idkit/schemes/segment/redisstore",
	"rediss":     "github.com/idkit/idkit/schemes/segment/redisstore",
	"redis+unix": "github.com/idkit/idkit/schemes/segment/redisstore",
}

// drivers is the process-wide registry that init functions fill; only RegisterStore writes it.
var drivers = struct {
	sync.RWMutex
	m map[string]StoreDriver
}{m: map[string]StoreDriver{}}

// RegisterStore makes the block stores of URL scheme (such as "pg", without "://") available
// to OpenStore and so to idkit's segment specs (store=scheme://…). Schemes are matched without
// regard to case. Like database/sql.Register it is meant for init functions and panics when
// scheme is not a valid URL scheme, when d is nil or when scheme is registered twice.
func RegisterStore(scheme string, d StoreDriver) {
	s := strings.ToLower(scheme)
	if !nodeid.IsStoreURL(s + "://") {
		panic(fmt.Sprintf("segment: RegisterStore: invalid URL scheme %q", scheme))
	}
	if d == nil {
		panic("segment: RegisterStore: nil driver for " + s)
	}
	drivers.Lock()
	defer drivers.Unlock()
	if _, dup := drivers.m[s]; dup {
		panic("segment: RegisterStore called twice for " + s)
	}
	drivers.m[s] = d
}

// StoreSchemes returns the registered URL schemes, sorted.
func StoreSchemes() []string {
	drivers.RLock()
	defer drivers.RUnlock()
	out := make([]string, 0, len(drivers.m))
	for s := range drivers.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// CheckStoreURL reports whether url has the form scheme://… with a valid scheme; it does not
// look for a driver. Errors wrap ErrNoStoreDriver.
func CheckStoreURL(url string) error {
	if !nodeid.IsStoreURL(url) {
		return fmt.Errorf("%w: want scheme://… such as pg://… or mysql://…", ErrNoStoreDriver)
	}
	return nil
}

// OpenStore opens the store url names through the driver registered for its scheme. Errors
// wrap ErrNoStoreDriver, naming the package to import, when no driver is registered for the
// scheme; otherwise they are the driver's.
func OpenStore(ctx context.Context, url string) (Store, error) {
	d, err := driverFor(url)
	if err != nil {
		return nil, err
	}
	return d.OpenStore(ctx, url)
}

// DescribeStore names the store url points at, without credentials, through its driver; for
// a URL without a registered driver it returns its scheme only.
func DescribeStore(url string) string {
	d, err := driverFor(url)
	if err != nil {
		scheme, _, _ := strings.Cut(url, "://")
		return scheme + " store"
	}
	return d.DescribeStore(url)
}

func driverFor(url string) (StoreDriver, error) {
	if err := CheckStoreURL(url); err != nil {
		return nil, err
	}
	scheme, _, _ := strings.Cut(url, "://")
	scheme = strings.ToLower(scheme)
	drivers.RLock()
	d, ok := drivers.m[scheme]
	drivers.RUnlock()
	if ok {
		return d, nil
	}
	if pkg, known := knownStores[scheme]; known {
		return nil, fmt.Errorf("%w %s://: add import _ %q to the program", ErrNoStoreDriver, scheme, pkg)
	}
	reg := strings.Join(StoreSchemes(), ", ")
	if reg == "" {
		reg = "none; import a store package such as github.com/idkit/idkit/schemes/segment/pgstore"
	}
	return nil, fmt.Errorf("%w %s:// (registered: %s)", ErrNoStoreDriver, scheme, reg)
}
