package engine

import (
	"regexp"
	"strings"
)

// dsnPassword matches the password of a URL's user information
// (scheme://user:password@) and a key/value password=… setting.
var dsnPassword = regexp.MustCompile(`(://[^:/@?#\s]*:)[^/?#\s]*@|(password\s*=\s*)('(\\.|[^'])*'|[^\s]*)`)

// RedactDSN returns s with the password of every connection URL
// (scheme://user:password@host) and key/value password=… setting in it
// replaced by "xxxxx", so that a command line or connection string can be
// echoed without leaking the password.
func RedactDSN(s string) string {
	return dsnPassword.ReplaceAllStringFunc(s, func(m string) string {
		if i := strings.Index(m, "://"); i == 0 {
			j := strings.Index(m[3:], ":")
			return m[:3+j+1] + "xxxxx@"
		}
		k, _, _ := strings.Cut(m, "=")
		return k + "=xxxxx"
	})
}

// RedactURL returns one connection URL with everything between the user
// name's colon and the last "@" replaced by "xxxxx", whatever characters
// the password holds.
func RedactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return RedactDSN(s)
	}
	rest := s[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	colon := strings.Index(rest[:at], ":")
	if colon < 0 {
		return s
	}
	return s[:i+3] + rest[:colon+1] + "xxxxx" + rest[at:]
}

// PasswordOf returns what RedactURL hides in s, or "".
func PasswordOf(s string) string {
	r := RedactURL(s)
	if r == s {
		return ""
	}
	i := strings.Index(r, "xxxxx")
	return s[i : len(s)-(len(r)-i-5)]
}
