package idkit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// spec is a parsed spec string: a scheme name and its settings in the order given.
type spec struct {
	raw  string
	name string
	keys []string
	vals map[string]string
	used map[string]bool
}

func knownSchemes() string { return "snowflake, ulid, uuidv7, uuidv4, sonyflake" }

// builder returns the constructor for a scheme name.
func builder(name string) (func(context.Context, *spec) (Scheme, error), bool) {
	switch name {
	case "snowflake":
		return buildSnowflake, true
	case "ulid":
		return buildULID, true
	case "uuidv7":
		return buildUUIDv7, true
	case "uuidv4":
		return buildUUIDv4, true
	case "sonyflake":
		return buildSonyflake, true
	}
	return nil, false
}

// parseSpec splits "name:key=value,key=value". Blanks around names, keys and values are
// ignored; everything else must be well formed.
func parseSpec(s string) (*spec, error) {
	sp := &spec{raw: s, vals: map[string]string{}, used: map[string]bool{}}
	name, rest, hasRest := strings.Cut(s, ":")
	sp.name = strings.ToLower(strings.TrimSpace(name))
	if sp.name == "" {
		return nil, sp.errf("no scheme name (want one of %s)", knownSchemes())
	}
	if !isWord(sp.name) {
		return nil, sp.errf("scheme name %s may hold only letters, digits and '_'", quote(sp.name))
	}
	if !hasRest {
		return sp, nil
	}
	if strings.TrimSpace(rest) == "" {
		return nil, sp.errf("nothing after ':' (want key=value settings, or drop the colon)")
	}
	for i, item := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch {
		case strings.TrimSpace(item) == "":
			return nil, sp.errf("setting %d is empty", i+1)
		case !ok:
			return nil, sp.errf("setting %s has no '=' (want key=value)", quote(strings.TrimSpace(item)))
		case k == "":
			return nil, sp.errf("setting %s has no key", quote(strings.TrimSpace(item)))
		case !isWord(k):
			return nil, sp.errf("key %s may hold only letters, digits and '_'", quote(k))
		case v == "":
			return nil, sp.errf("%s has no value", k)
		}
		if _, dup := sp.vals[k]; dup {
			return nil, sp.errf("%s is given twice", k)
		}
		sp.keys = append(sp.keys, k)
		sp.vals[k] = v
	}
	return sp, nil
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return s != ""
}

// errf returns an error wrapping ErrSpec that quotes the spec.
func (sp *spec) errf(format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrSpec, quote(sp.raw), fmt.Sprintf(format, args...))
}

// wrapf is errf for an underlying error, which stays matchable with errors.Is.
func (sp *spec) wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s: %w", ErrSpec, quote(sp.raw), fmt.Sprintf(format, args...), err)
}

// take returns a setting's value and marks it used.
func (sp *spec) take(key string) (string, bool) {
	v, ok := sp.vals[key]
	if ok {
		sp.used[key] = true
	}
	return v, ok
}

// has reports whether a setting is present, without using it.
func (sp *spec) has(key string) bool { _, ok := sp.vals[key]; return ok }

// done fails on the first setting nobody used, listing the ones that would have been.
func (sp *spec) done(allowed ...string) error {
	for _, k := range sp.keys {
		if !sp.used[k] {
			if len(allowed) == 0 {
				return sp.errf("unknown key %s: scheme %s takes no settings", quote(k), sp.name)
			}
			return sp.errf("unknown key %s for %s (known: %s)", quote(k), sp.name, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// uint reads an unsigned setting no larger than maxV.
func (sp *spec) uint(key string, maxV uint64) (uint64, bool, error) {
	v, ok := sp.take(key)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > maxV {
		return 0, true, sp.errf("%s=%s: want a whole number from 0 to %d", key, v, maxV)
	}
	return n, true, nil
}

// bool reads a true/false setting.
func (sp *spec) bool(key string, def bool) (bool, error) {
	v, ok := sp.take(key)
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, sp.errf("%s=%s: want true or false", key, v)
	}
	return b, nil
}

// duration reads a Go duration; "off" (and "0" when offIsZero) give -1, which the drift
// policy reads as "switched off".
func (sp *spec) duration(key string) (time.Duration, error) {
	v, ok := sp.take(key)
	if !ok {
		return 0, nil
	}
	if v == "off" || v == "0" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, sp.errf("%s=%s: want a positive duration such as 5ms, or off", key, v)
	}
	return d, nil
}

// instant reads an RFC 3339 time, a YYYY-MM-DD date (UTC midnight) or Unix milliseconds.
func (sp *spec) instant(key string) (time.Time, bool, error) {
	v, ok := sp.take(key)
	if !ok {
		return time.Time{}, false, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), true, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, true, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms >= 0 && ms <= math.MaxInt64/int64(time.Millisecond) {
		return time.UnixMilli(ms).UTC(), true, nil
	}
	return time.Time{}, true, sp.errf("%s=%s: want an RFC 3339 time (2015-01-01T00:00:00Z), a date (2015-01-01) or Unix milliseconds", key, v)
}

// sortedKeys returns the keys of m in order, for messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
