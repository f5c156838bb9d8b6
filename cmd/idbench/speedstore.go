package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench"
	"github.com/idkit/idkit/dbbench/pglocal"
)

// localStore gives speed's segment rows that name no store (--schemes segment or
// segment:step=N) a store: a private PostgreSQL cluster started from the installed server
// binaries on first use, on a unix socket, removed by close.
type localStore struct {
	c   *pglocal.Cluster
	url string
}

// specFor returns name with store=… added when name is a segment spec without a store, and
// name itself otherwise.
func (l *localStore) specFor(ctx context.Context, name string) (string, error) {
	sp, err := idkit.ParseSpec(name)
	if err != nil || sp.Scheme() != "segment" || sp.Has("store") {
		return name, nil // idkit.New reports a bad spec
	}
	if l.c == nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		c, err := pglocal.Start(sctx, pglocal.Options{Settings: map[string]string{"fsync": "off", "shared_buffers": "32MB"}})
		if err != nil {
			return "", fmt.Errorf("speed: %s names no store, and a local PostgreSQL for it did not start (install the PostgreSQL server, or give store=pg://…): %w", name, err)
		}
		l.c = c
		if l.url, err = dbbench.SegmentStoreURL(c.DSN(), ""); err != nil {
			return "", err
		}
	}
	if !strings.Contains(name, ":") {
		return name + ":store=" + l.url + ",key=speed", nil
	}
	spec := name + ",store=" + l.url
	if !sp.Has("key") {
		spec += ",key=speed"
	}
	return spec, nil
}

// close stops the cluster, if one was started.
func (l *localStore) close() {
	if l.c != nil {
		_ = l.c.Close()
		l.c = nil
	}
}
