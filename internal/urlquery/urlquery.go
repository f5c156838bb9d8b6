// Package urlquery reads the query of a store URL strictly. net/url's ParseQuery skips what it
// cannot read (a pair holding ';' is dropped, and only the first error is returned), keeps
// duplicated keys for the caller to pick one, and accepts any key: a store URL read that way
// can silently lose a setting (?table=a;unsafe=true) or run with another than the one written
// (?table=a&table=b, ?tabel=a). Parse refuses all of these, naming the part at fault.
package urlquery

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/idkit/idkit/internal/redact"
)

// ErrQuery reports a URL query that Parse refuses. The message names the part at fault, with
// any credential it holds hidden (internal/redact).
var ErrQuery = errors.New("bad URL query")

// Parse reads raw, a URL's query without its '?', as key=value pairs separated by '&', each
// key and value percent-decoded as in a form. It returns one value per key. It refuses, with
// an error wrapping ErrQuery: an empty pair (a doubled or trailing '&'), a pair without '=',
// a ';' anywhere, an escape that does not decode (%zz), an empty key, a key given twice, and a
// key for which known returns false (known nil accepts every key); hint, when not empty,
// follows the unknown key in the message and should say which keys are accepted.
func Parse(raw string, known func(key string) bool, hint string) (map[string]string, error) {
	q := map[string]string{}
	if raw == "" {
		return q, nil
	}
	for _, part := range strings.Split(raw, "&") {
		shown := show(part)
		switch {
		case part == "":
			return nil, fmt.Errorf("%w: an empty parameter (a doubled or trailing '&') in %q", ErrQuery, show(raw))
		case strings.Contains(part, ";"):
			return nil, fmt.Errorf("%w: parameter %q: ';' is not a separator, use '&' (or %%3B inside a value)", ErrQuery, shown)
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%w: parameter %q has no '=' (write %s=VALUE)", ErrQuery, shown, shown)
		}
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("%w: parameter %q: the key does not decode: %w", ErrQuery, shown, err)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			if shown != part { // a credential: the decoder's message would quote part of it
				return nil, fmt.Errorf("%w: parameter %q: the value does not decode (a '%%' must start an escape such as %%25)", ErrQuery, shown)
			}
			return nil, fmt.Errorf("%w: parameter %q: the value does not decode: %w", ErrQuery, shown, err)
		}
		switch _, dup := q[key]; {
		case key == "":
			return nil, fmt.Errorf("%w: parameter %q has an empty key", ErrQuery, shown)
		case dup:
			return nil, fmt.Errorf("%w: parameter %q given twice", ErrQuery, show(key))
		case known != nil && !known(key):
			if hint != "" {
				return nil, fmt.Errorf("%w: unknown parameter %q (%s)", ErrQuery, show(key), hint)
			}
			return nil, fmt.Errorf("%w: unknown parameter %q", ErrQuery, show(key))
		}
		q[key] = val
	}
	return q, nil
}

// show is part as an error may quote it: with the value of a credential key hidden.
func show(part string) string {
	return redact.String("&" + part)[1:]
}

// Encode writes q back as a query with its keys sorted, for a driver that takes the
// parameters Parse let through.
func Encode(q map[string]string) string {
	v := url.Values{}
	for k, s := range q {
		v.Set(k, s)
	}
	return v.Encode()
}

// Known returns a function reporting whether a key is one of keys, for Parse.
func Known(keys ...string) func(string) bool {
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return func(k string) bool { return set[k] }
}
