package idkit

import "strings"

// redacted replaces every credential Redact finds.
const redacted = "xxxxx"

// Redact returns s with every credential it holds replaced by "xxxxx": the password of a URL
// (scheme://user:pass@host), the values of password=, pass= and pwd= in key=value
// connection strings and URL queries (quoted values included), and the password of a
// go-sql-driver/mysql DSN (user:pass@tcp(host)/db). It is meant for anything that echoes a
// spec or a connection string: messages, logs, reports. Text without credentials comes back
// unchanged.
func Redact(s string) string {
	if !strings.ContainsAny(s, "@=") {
		return s
	}
	s = redactUserinfo(s)
	return redactKeyValues(s)
}

// redactUserinfo replaces the password in user:pass@ before a URL's host, or before a mysql
// DSN's tcp( or unix( address.
func redactUserinfo(s string) string {
	var b strings.Builder
	for {
		at := strings.IndexByte(s, '@')
		if at < 0 {
			b.WriteString(s)
			return b.String()
		}
		// The userinfo starts after "://" or at the start of the token holding the '@'.
		start := strings.LastIndexAny(s[:at], " \t\r\n,;=&?\"'")
		if i := strings.LastIndex(s[:at], "://"); i >= 0 && i+3 > start {
			start = i + 2
		}
		start++
		rest := s[at+1:]
		isURL := start >= 3 && s[start-3:start] == "://"
		isDSN := strings.HasPrefix(rest, "tcp(") || strings.HasPrefix(rest, "unix(")
		if colon := strings.IndexByte(s[start:at], ':'); colon >= 0 && (isURL || isDSN) {
			b.WriteString(s[:start+colon+1])
			b.WriteString(redacted)
		} else {
			b.WriteString(s[:at])
		}
		b.WriteByte('@')
		s = rest
	}
}

// redactKeyValues replaces the values of password=, pass= and pwd= wherever such a key starts
// a token (at the start, or after a blank, '?', '&', ',', ';' or ':').
func redactKeyValues(s string) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		if i == 0 || strings.IndexByte(" \t\r\n?&,;:", s[i-1]) >= 0 {
			if n := credentialKey(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				b.WriteString(redacted)
				i += n + valueLen(s[i+n:])
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// credentialKey returns the length of "password=" (or pass=, pwd=, with blanks before '=' as
// libpq allows) at the start of s, or 0.
func credentialKey(s string) int {
	for _, k := range []string{"password", "pass", "pwd"} {
		if len(s) < len(k) || !strings.EqualFold(s[:len(k)], k) {
			continue
		}
		n := len(k)
		for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
			n++
		}
		if n < len(s) && s[n] == '=' {
			n++
			for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
				n++
			}
			return n
		}
	}
	return 0
}

// valueLen returns the length of the value at the start of s: a single-quoted string with
// backslash escapes (libpq), or everything up to a blank, '&', ',' or ';'.
func valueLen(s string) int {
	if strings.HasPrefix(s, "'") {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				return i + 1
			}
		}
		return len(s)
	}
	if i := strings.IndexAny(s, " \t\r\n&,;"); i >= 0 {
		return i
	}
	return len(s)
}
