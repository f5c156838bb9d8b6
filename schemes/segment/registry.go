package segment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/idkit/idkit/internal/urlreg"
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

// stores is the process-wide registry that store packages fill from init functions.
var stores = urlreg.New[StoreDriver]("segment", ErrNoStoreDriver, map[string]string{
	"pg":         "github.com/idkit/idkit/schemes/segment/pgstore",
	"postgres":   "github.com/idkit/idkit/schemes/segment/pgstore",
	"postgresql": "github.com/idkit/idkit/schemes/segment/pgstore",
	"mysql":      "github.com/idkit/idkit/schemes/segment/mysqlstore",
	"mariadb":    "github.com/idkit/idkit/schemes/segment/mysqlstore",
	"redis":      "github.com/idkit/idkit/schemes/segment/redisstore",
	"rediss":     "github.com/idkit/idkit/schemes/segment/redisstore",
	"redis+unix": "github.com/idkit/idkit/schemes/segment/redisstore",
}, "github.com/idkit/idkit/schemes/segment/pgstore")

// RegisterStore makes the block stores of URL scheme (such as "pg", without "://") available
// to OpenStore and so to idkit's segment specs (store=scheme://…). Schemes are matched without
// regard to case. Like database/sql.Register it is meant for init functions and panics when
// scheme is not a valid URL scheme, when d is nil or when scheme is registered twice.
func RegisterStore(scheme string, d StoreDriver) { stores.Register(scheme, d) }

// StoreSchemes returns the registered URL schemes, sorted.
func StoreSchemes() []string { return stores.Schemes() }

// CheckStoreURL reports whether url has the form scheme://… with a valid scheme; it does not
// look for a driver. Errors wrap ErrNoStoreDriver.
func CheckStoreURL(url string) error {
	if !urlreg.IsURL(url) {
		return fmt.Errorf("%w: want scheme://… such as pg://… or mysql://…", ErrNoStoreDriver)
	}
	return nil
}

// OpenStore opens the store url names through the driver registered for its scheme. Errors
// wrap ErrNoStoreDriver, naming the package to import, when no driver is registered for the
// scheme; otherwise they are the driver's.
func OpenStore(ctx context.Context, url string) (Store, error) {
	d, url, err := driverFor(url)
	if err != nil {
		return nil, err
	}
	return d.OpenStore(ctx, url)
}

// DescribeStore names the store url points at, without credentials, through its driver; for
// a URL without a registered driver it returns its scheme only.
func DescribeStore(url string) string {
	d, url, err := driverFor(url)
	if err != nil {
		scheme, _, _ := strings.Cut(url, "://")
		return scheme + " store"
	}
	return d.DescribeStore(url)
}

// driverFor returns the driver for url and url with its scheme in lower case.
func driverFor(url string) (StoreDriver, string, error) {
	if err := CheckStoreURL(url); err != nil {
		return nil, url, err
	}
	return stores.Lookup(url)
}
