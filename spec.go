package idkit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/internal/redact"
)

// Settings is a parsed spec string, "name:key=value,key=value", as a scheme's BuildFunc or
// CodecFunc receives it: the scheme name in lower case and the settings in the order given,
// keys in lower case, values as written (blanks around them trimmed).
//
// A build function reads each setting it knows with Lookup or one of the typed readers (Uint,
// Bool, Duration, Time), which mark it used, and calls Done last, which fails on any setting
// nobody used. Errors from the readers and from Errorf wrap ErrSpec and quote the spec with
// credentials redacted, so every scheme reports a bad key or value in the same words. A
// Settings is not safe for concurrent use.
type Settings struct {
	raw  string
	name string
	keys []string
	vals map[string]string
	used map[string]bool

	text      *textForm // the prefix and mask settings, read by New before the BuildFunc
	textTaken bool      // the scheme applies text itself (the built-in ones do)
}

// ParseSpec parses a spec string the way New does, without building anything: tools use it
// to read a spec's scheme name and keys (for instance to add a node setting) with the same
// rules New applies. Errors wrap ErrSpec and name the bad part. The scheme name need not be
// registered.
func ParseSpec(spec string) (*Settings, error) { return parseSpec(spec) }

// Scheme returns the scheme name, in lower case.
func (sp *Settings) Scheme() string { return sp.name }

// Keys returns the setting keys in the order given, in lower case.
func (sp *Settings) Keys() []string { return slices.Clone(sp.keys) }

// String returns the spec as written, with credentials in it redacted.
func (sp *Settings) String() string { return Redact(sp.raw) }

// parseSpec splits "name:key=value,key=value". Blanks around names, keys and values are
// ignored; everything else must be well formed.
func parseSpec(s string) (*Settings, error) {
	sp := &Settings{raw: s, vals: map[string]string{}, used: map[string]bool{}}
	name, rest, hasRest := strings.Cut(s, ":")
	sp.name = strings.ToLower(strings.TrimSpace(name))
	if sp.name == "" {
		return nil, sp.Errorf("no scheme name (want one of %s)", strings.Join(Schemes(), ", "))
	}
	if !isWord(sp.name) {
		return nil, sp.Errorf("scheme name %s may hold only letters, digits and '_'", quote(sp.name))
	}
	if !hasRest {
		return sp, nil
	}
	if strings.TrimSpace(rest) == "" {
		return nil, sp.Errorf("nothing after ':' (want key=value settings, or drop the colon)")
	}
	for i, item := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch {
		case strings.TrimSpace(item) == "":
			return nil, sp.Errorf("setting %d is empty", i+1)
		case !ok:
			return nil, sp.Errorf("setting %s has no '=' (want key=value)", quote(Redact(strings.TrimSpace(item))))
		case k == "":
			return nil, sp.Errorf("setting %s has no key", quote(Redact(strings.TrimSpace(item))))
		case !isWord(k):
			return nil, sp.Errorf("key %s may hold only letters, digits and '_'", quote(k))
		case v == "":
			return nil, sp.Errorf("%s has no value", k)
		}
		if _, dup := sp.vals[k]; dup {
			return nil, sp.Errorf("%s is given twice", k)
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

// Errorf returns an error wrapping ErrSpec that quotes the spec (credentials redacted) and
// then the message: `idkit: bad spec "snowflake:worker=40": worker=40: want …`.
func (sp *Settings) Errorf(format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrSpec, quote(Redact(sp.raw)), Redact(fmt.Sprintf(format, args...)))
}

// Wrapf is Errorf for an underlying error, which stays matchable with errors.Is.
func (sp *Settings) Wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s: %w", ErrSpec, quote(Redact(sp.raw)), Redact(fmt.Sprintf(format, args...)), redact.Error(err))
}

// Lookup returns a setting's value and marks it used.
func (sp *Settings) Lookup(key string) (string, bool) {
	v, ok := sp.vals[key]
	if ok {
		sp.used[key] = true
	}
	return v, ok
}

// Has reports whether a setting is present, without marking it used.
func (sp *Settings) Has(key string) bool { _, ok := sp.vals[key]; return ok }

// Done fails on the first setting nobody used, listing the known keys of the scheme and the
// two every scheme takes, prefix and mask.
func (sp *Settings) Done(known ...string) error {
	for _, k := range sp.keys {
		if !sp.used[k] {
			// Every scheme takes prefix and mask, which New reads itself.
			known = append(slices.Clip(known), "prefix", "mask")
			return sp.Errorf("unknown key %s for %s (known: %s)", quote(k), sp.name, strings.Join(known, ", "))
		}
	}
	return nil
}

// Uint reads an unsigned setting no larger than maxV; ok reports whether it was given.
func (sp *Settings) Uint(key string, maxV uint64) (n uint64, ok bool, err error) {
	v, ok := sp.Lookup(key)
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.ParseUint(v, 10, 64)
	if err != nil || n > maxV {
		return 0, true, sp.Errorf("%s=%s: want a whole number from 0 to %d", key, v, maxV)
	}
	return n, true, nil
}

// Bool reads a true/false setting (as strconv.ParseBool does); def when it is absent.
func (sp *Settings) Bool(key string, def bool) (bool, error) {
	v, ok := sp.Lookup(key)
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return def, sp.Errorf("%s=%s: want true or false", key, v)
	}
	return b, nil
}

// Duration reads a positive Go duration such as 10s or 250ms; ok reports whether it was given.
func (sp *Settings) Duration(key string) (d time.Duration, ok bool, err error) {
	v, ok := sp.Lookup(key)
	if !ok {
		return 0, false, nil
	}
	d, err = time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, true, sp.Errorf("%s=%s: want a positive duration such as 10s or 250ms", key, v)
	}
	return d, true, nil
}

// durationOrOff reads a duration that may be switched off: absent gives 0 (the default),
// "off" (any case) or any zero duration ("0", "0s") gives -1, which the drift policy reads as
// "switched off".
func (sp *Settings) durationOrOff(key string) (time.Duration, error) {
	v, ok := sp.Lookup(key)
	if !ok {
		return 0, nil
	}
	if strings.EqualFold(v, "off") || v == "0" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err == nil && d == 0:
		return -1, nil
	case err != nil || d < 0:
		return 0, sp.Errorf("%s=%s: want a positive duration such as 5ms, or off (also 0)", key, v)
	}
	return d, nil
}

// Time reads an instant: an RFC 3339 time, a YYYY-MM-DD date (UTC midnight) or Unix
// milliseconds; ok reports whether it was given.
func (sp *Settings) Time(key string) (t time.Time, ok bool, err error) {
	v, ok := sp.Lookup(key)
	if !ok {
		return time.Time{}, false, nil
	}
	t, err = parseTime(v)
	if err != nil {
		return time.Time{}, true, sp.Errorf("%s=%s: %s", key, v, timeForms)
	}
	return t, true, nil
}

// timeForms says what ParseTime reads, for error messages.
const timeForms = "want an RFC 3339 time (2015-01-01T00:00:00Z), a date (2015-01-01) or Unix milliseconds"

// ParseTime reads a time as a spec's epoch= and start= do (and idbench inspect's --from, --to
// and --at): an RFC 3339 time with optional fractional seconds (2015-01-01T00:00:00.5Z), a
// date (2015-01-01, midnight UTC) or Unix milliseconds (1420070400000, 0 or more). Years past
// 9999 are read with all their digits (10889-08-02T08:49:00Z), and years before 1 with a '-'
// sign, as FormatTime writes them, so that ParseTime reads every time FormatTime writes. The
// result is in UTC. Errors wrap ErrTime and quote the input.
func ParseTime(s string) (time.Time, error) {
	t, err := parseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s: %s", ErrTime, quote(s), timeForms)
	}
	return t, nil
}

// FormatTime writes t as idkit's tools print times (idbench inspect, idkitd's Decode and
// Bounds): RFC 3339 in UTC with the milliseconds always shown, 2026-01-01T09:30:26.890Z, and
// more digits only when t has them (…26.890123Z). A year past 9999 is written with all its
// digits (10889-08-02T08:49:00.000Z, the open end of a layout that runs out then) and one
// before year 1 with a '-' sign, as time.Format does. Every form it writes is one ParseTime
// reads, for every time.Time.
func FormatTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.Format(time.RFC3339Nano)
}

func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, ok := parseWideYear(v); ok {
		return t, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms >= 0 && ms <= math.MaxInt64/int64(time.Millisecond) {
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Time{}, errors.New(timeForms)
}

// parseWideYear reads an RFC 3339 time or a date whose year time.Parse does not take: more
// than four digits (after 9999) or a '-' sign (before year 1, "-0001" is 2 BC), as
// time.Format, and so FormatTime, writes them. The rest is read by time.Parse in a
// stand-in year of the same leap-ness, so that February 29 is checked as in the real year.
func parseWideYear(v string) (time.Time, bool) {
	s, neg := strings.CutPrefix(v, "-")
	n, year := 0, 0
	for ; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
		year = year*10 + int(s[n]-'0')
	}
	// A year of 4 digits without a sign is time.Parse's; 12 digits hold time.Time's last
	// year, 292277026596.
	if n < 4 || n > 12 || n == 4 && !neg || n == len(s) || s[n] != '-' {
		return time.Time{}, false
	}
	if neg {
		year = -year
	}
	stand := "2001"
	if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		stand = "2000"
	}
	t, err := time.Parse(time.RFC3339Nano, stand+s[n:])
	if err != nil {
		if t, err = time.Parse(time.DateOnly, stand+s[n:]); err != nil {
			return time.Time{}, false
		}
	}
	// The wall clock as written, in the real year, less the offset it was written in.
	_, off := t.Zone()
	_, mo, d := t.Date()
	w := time.Date(year, mo, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	if y, m, wd := w.Date(); y != year || m != mo || wd != d {
		return time.Time{}, false // beyond time.Time's range: the arithmetic wrapped
	}
	return w.Add(-time.Duration(off) * time.Second), true
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
