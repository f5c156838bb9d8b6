// Package storeurl opens the nodeid lease store a URL names, so that a spec string or a
// command-line flag can choose between etcd and PostgreSQL:
//
//	etcd://host:port[,host:port...]/prefix       package etcdlease
//	postgres://user@host:port/db?namespace=NAME  package pglease (also postgresql://, pg://)
package storeurl

import (
	"context"
	"fmt"
	"strings"

	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/schemes/nodeid"
	"github.com/idkit/idkit/schemes/nodeid/etcdlease"
	"github.com/idkit/idkit/schemes/nodeid/pglease"
)

// Is reports whether s looks like a lease store URL: it starts with etcd://, postgres://,
// postgresql:// or pg:// (in any case).
func Is(s string) bool {
	l := strings.ToLower(s)
	for _, p := range []string{"etcd://", "postgres://", "postgresql://", "pg://"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// Open opens the store url names. The context bounds connecting (PostgreSQL connects at once;
// etcd on first use). The caller closes the store, or hands it to nodeid.Hold. Errors never
// show a password the URL holds.
func Open(ctx context.Context, url string) (nodeid.Store, error) {
	s, err := open(ctx, url)
	return s, redact.Error(err)
}

func open(ctx context.Context, url string) (nodeid.Store, error) {
	if !Is(url) {
		return nil, fmt.Errorf("storeurl: %q is not a lease store URL (want etcd://…, postgres://…, postgresql://… or pg://…)", url)
	}
	if strings.HasPrefix(strings.ToLower(url), "etcd://") {
		s, err := etcdlease.ParseURL("etcd://" + url[len("etcd://"):])
		if err != nil {
			return nil, err
		}
		return etcdlease.Open(s)
	}
	s, err := pglease.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return pglease.Open(ctx, s)
}

// Describe names the store url points at for messages: "etcd prefix /idkit/orders at
// 127.0.0.1:2379" or "PostgreSQL table idkit_node_slots, namespace orders". A URL it cannot
// read comes back with its password hidden.
func Describe(url string) string {
	if strings.HasPrefix(strings.ToLower(url), "etcd://") {
		s, err := etcdlease.ParseURL("etcd://" + url[len("etcd://"):])
		if err != nil {
			return redact.String(url)
		}
		p := s.Prefix
		if p == "" {
			p = etcdlease.DefaultPrefix
		}
		return fmt.Sprintf("etcd prefix %s at %s", p, strings.Join(s.Endpoints, ","))
	}
	s, err := pglease.ParseURL(url)
	if err != nil {
		return redact.String(url)
	}
	t, ns := s.Table, s.Namespace
	if t == "" {
		t = pglease.DefaultTable
	}
	if ns == "" {
		ns = pglease.DefaultNamespace
	}
	return fmt.Sprintf("PostgreSQL table %s, namespace %s", t, ns)
}
