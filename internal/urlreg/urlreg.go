// Package urlreg is the registry behind idkit's pluggable stores (lease stores in
// schemes/nodeid, block stores in schemes/segment): drivers registered by URL scheme from init
// functions, as database/sql drivers are, and lookups whose errors name the import a program
// is missing.
package urlreg

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry maps URL schemes ("etcd", "pg") to drivers of type D. The zero value is not usable;
// make one with New. It is safe for concurrent use.
type Registry[D any] struct {
	pkg     string            // the owning package's name, for panics
	errNone error             // the sentinel lookups wrap when no driver fits
	known   map[string]string // URL scheme -> the idkit package that registers it
	example string            // a package to suggest when nothing is registered
	mu      sync.RWMutex
	m       map[string]D
}

// New returns an empty registry for package pkg. Lookups that find no driver wrap errNone;
// known names the package that registers each of idkit's own URL schemes, and example is the
// package suggested when none is registered.
func New[D any](pkg string, errNone error, known map[string]string, example string) *Registry[D] {
	return &Registry[D]{pkg: pkg, errNone: errNone, known: known, example: example, m: map[string]D{}}
}

// Register adds d for scheme, matched without regard to case. It panics, as
// database/sql.Register does, when scheme is not a valid URL scheme, d is nil or scheme is
// registered twice: mistakes in a program, found when it starts.
func (r *Registry[D]) Register(scheme string, d D) {
	s := strings.ToLower(scheme)
	if !ValidScheme(s) {
		panic(fmt.Sprintf("%s: RegisterStore: invalid URL scheme %q", r.pkg, scheme))
	}
	if any(d) == nil {
		panic(r.pkg + ": RegisterStore: nil driver for " + s)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[s]; dup {
		panic(r.pkg + ": RegisterStore called twice for " + s)
	}
	r.m[s] = d
}

// Schemes returns the registered URL schemes, sorted.
func (r *Registry[D]) Schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for s := range r.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the driver for url's scheme and url with that scheme in lower case, the form
// drivers are handed (they register lower-case schemes and need not fold case themselves). Its
// error wraps the registry's sentinel and names the import to add for a known scheme, or the
// registered schemes otherwise.
func (r *Registry[D]) Lookup(url string) (D, string, error) {
	var zero D
	scheme, rest, ok := strings.Cut(url, "://")
	scheme = strings.ToLower(scheme)
	if !ok || !ValidScheme(scheme) {
		return zero, url, fmt.Errorf("%w: want scheme://… (registered: %s)", r.errNone, r.registered())
	}
	url = scheme + "://" + rest
	r.mu.RLock()
	d, found := r.m[scheme]
	r.mu.RUnlock()
	if found {
		return d, url, nil
	}
	if pkg, known := r.known[scheme]; known {
		return zero, url, fmt.Errorf("%w %s://: add import _ %q to the program", r.errNone, scheme, pkg)
	}
	return zero, url, fmt.Errorf("%w %s:// (registered: %s)", r.errNone, scheme, r.registered())
}

func (r *Registry[D]) registered() string {
	if s := r.Schemes(); len(s) > 0 {
		return strings.Join(s, ", ")
	}
	return "none; import a store package such as " + r.example
}

// IsURL reports whether s has the form scheme://… with a valid scheme.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && ValidScheme(strings.ToLower(scheme))
}

// ValidScheme reports whether s is an RFC 3986 scheme in lower case: a letter, then letters,
// digits, '+', '-' or '.'.
func ValidScheme(s string) bool {
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
