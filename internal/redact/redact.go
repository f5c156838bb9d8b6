// Package redact hides the credentials a connection string or a message quoting one holds. It
// is the one implementation behind idkit.Redact, shared with the packages the root package
// imports (schemes/nodeid/...), which cannot import the root.
package redact

import (
	"fmt"
	"sort"
	"strings"
)

// Mask replaces every credential String finds.
const Mask = "xxxxx"

// span is a byte range [start, end) of s to replace with Mask.
type span struct{ start, end int }

// String returns s with every credential it holds replaced by Mask:
//
//   - the password of any URL, scheme://user:password@host… (postgres://, postgresql://, pg://,
//     mysql://, etcd:// or any other scheme), also when the URL sits inside a longer text such
//     as a spec string (snowflake:node=pg://u:pw@h/db) or an error message;
//   - the password of a go-sql-driver/mysql DSN, user:password@tcp(host:3306)/db or
//     user:password@/db;
//   - the value of every key=value pair whose key is pass, pwd, or ends in password or passwd
//     (any case: libpq's password= and sslpassword=, a URL query's ?password=, ODBC's Pwd=),
//     quoted ('it”s', 'a\'b') or not;
//   - the value of an idkit spec's mask= setting unless it is a key reference safe to print
//     (SafeRef: env:NAME with NAME a variable name, file:PATH not shaped like a key): a key
//     written inline or pasted after env: or file:, up to the next ',', blank or '"';
//   - the value of a NAME_env= setting (token_env=) that is not a variable name (EnvName).
//
// Redacting twice gives what redacting once gives.
//
// It errs on the side of hiding too much: where it cannot tell where a password ends, it hides
// up to the next blank (for a URL query value, up to the next '&', '#', '"', '\' or
// ',' that starts a spec's next key=, or the quote closing a quoted value that holds the URL).
// A URL whose query names a credential before its last '@' (pg://u:pw@h/db?password=p@ss/w) is
// hidden from its password to that query value's end, host and path included: such a query
// password cannot be told from a raw URL password holding "?password=". A password that contains
// blanks is only found whole inside a quoted key=value value or a URL (where blanks are
// percent-encoded); pass each command-line argument separately rather than a joined line.
// String never fails and never panics.
func String(s string) string {
	var spans []span
	spans = urlPasswords(s, spans)
	spans = mysqlPasswords(s, spans)
	spans = keyValuePasswords(s, spans) // after the others: a password may hold "key=value"
	spans = inlineKeys(s, spans)
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for i := 0; i < len(spans); {
		start, end := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= end; i++ {
			end = max(end, spans[i].end)
		}
		b.WriteString(s[pos:start])
		b.WriteString(Mask)
		pos = end
	}
	b.WriteString(s[pos:])
	return b.String()
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// tokenEnd returns the index of the first blank in s at or after i, or len(s).
func tokenEnd(s string, i int) int {
	for ; i < len(s); i++ {
		if isBlank(s[i]) {
			return i
		}
	}
	return len(s)
}

// urlPasswords adds the password of every scheme://user:password@host in s. The userinfo ends
// at the last '@' of the URL, since passwords are often written with raw '/', '?', '#' or '@'
// (a query value holding '@' is hidden with it, and a query credential's value holding '@' is
// hidden to its end, '/' or not: queryCredentialEnd). A URL ends at a blank or where the next
// "://" begins.
func urlPasswords(s string, spans []span) []span {
	var quoted []span // quotedValues(s), read at the first URL
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return spans
		}
		sep := from + i
		if from == 0 {
			quoted = quotedValues(s)
		}
		start := sep + 3
		end := tokenEnd(s, start)
		if j := strings.Index(s[start:end], "://"); j >= 0 {
			end = start + j
		}
		from = end
		tok := s[start:end]
		at := strings.LastIndexByte(tok, '@')
		if at < 0 {
			continue
		}
		if c := strings.IndexByte(tok[:at], ':'); c >= 0 && c+1 < at {
			spans = append(spans, span{start + c + 1, queryCredentialEnd(s, start, start+at, quoteEnd(quoted, sep, len(s)))})
		}
	}
}

// quotedValues returns the quoted key=value values of s (key='…' or key="…", blanks allowed
// around '=', as keyValuePasswords reads them: libpq's password='pg://…'), each from its
// opening quote to its closing one (quotedEnd), in order.
func quotedValues(s string) []span {
	var out []span
	for j := 0; j < len(s); j++ {
		if s[j] != '=' {
			continue
		}
		k := j
		for k > 0 && isBlank(s[k-1]) {
			k--
		}
		v := j + 1
		for v < len(s) && isBlank(s[v]) {
			v++
		}
		if k == 0 || !isKeyChar(s[k-1]) || v >= len(s) || s[v] != '\'' && s[v] != '"' {
			continue
		}
		end := quotedEnd(s, v)
		out = append(out, span{v, end})
		j = end
	}
	return out
}

// quoteEnd returns the index of the quote that closes the value of quoted (quotedValues) that
// holds index i, or n when none does.
func quoteEnd(quoted []span, i, n int) int {
	k := sort.Search(len(quoted), func(k int) bool { return quoted[k].end > i })
	if k < len(quoted) && quoted[k].start < i {
		return quoted[k].end
	}
	return n
}

// queryCredentialEnd returns where the URL password span that ends at the '@' s[at] must end.
// The userinfo is taken to end at the URL's last '@'; when a query key naming a credential
// (?password=, &sslpassword=) stands before that '@', the '@' may be the query password's own,
// and its value goes on after it: the span then runs to the value's end (queryValueEnd or a
// blank), hiding more than the password rather than showing the query password's tail. A key
// counts when a '?' starts the query it stands in (a percent-encoded password holds no raw
// '?'). The value ends at limit too: the quote closing a quoted value that holds the URL
// (quoteEnd), which the span would otherwise take in, and with it the rest of the text on a
// second pass.
//
// What follows the '@' does not decide: "pg://u:pw@h/db?password=p@db.internal/x" holds either
// the query password "p@db.internal/x" or the raw password "pw@h/db?password=p" of host
// db.internal and path /x, and no text tells them apart. The span covers both readings, so a
// raw URL password holding "?pass=" hides the host and path after it too (an earlier rule took
// a '/' after the '@' for a host and path, and showed the query password's tail).
func queryCredentialEnd(s string, start, at, limit int) int {
	for i := at - 1; i > start; i-- {
		if s[i] != '=' {
			continue
		}
		ks := i
		for ks > start && isKeyChar(s[ks-1]) {
			ks--
		}
		inQuery := s[ks-1] == '?' || s[ks-1] == '&' && strings.IndexByte(s[start:ks], '?') >= 0
		if ks > start && ks < i && inQuery && secretKey(s[ks:i]) {
			end := at
			for end < limit && !isBlank(s[end]) && !queryValueEnd(s, end) {
				end++
			}
			return end
		}
	}
	return at
}

// isKeyChar reports whether c can be part of a key in key=value.
func isKeyChar(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// secretKey reports whether key names a credential.
func secretKey(key string) bool {
	k := strings.ToLower(key)
	return k == "pass" || k == "pwd" || strings.HasSuffix(k, "password") || strings.HasSuffix(k, "passwd")
}

// keyValuePasswords adds the value of every credential key=value pair in s. Blanks may surround
// '=' as libpq allows. A quoted value ends at its closing quote (” and \' stay inside); an
// unquoted one at the next blank, and in a URL query (key after '?' or '&') also where
// queryValueEnd says.
// An '=' inside a password found before (in spans) is not a key's.
func keyValuePasswords(s string, spans []span) []span {
	found := spans
	for i := 0; i < len(s); i++ {
		if s[i] != '=' || inside(found, i) {
			continue
		}
		k := i
		for k > 0 && isBlank(s[k-1]) {
			k--
		}
		ks := k
		for ks > 0 && isKeyChar(s[ks-1]) {
			ks--
		}
		if ks == k || !secretKey(s[ks:k]) {
			continue
		}
		query := ks > 0 && (s[ks-1] == '?' || s[ks-1] == '&')
		v := i + 1
		for v < len(s) && isBlank(s[v]) && !query {
			v++
		}
		if v < len(s) && (s[v] == '\'' || s[v] == '"') && !query {
			end := quotedEnd(s, v)
			if end > v+1 {
				spans = append(spans, span{v + 1, end})
			}
			i = end
			continue
		}
		end := v
		for end < len(s) && !isBlank(s[end]) && !(query && queryValueEnd(s, end)) {
			end++
		}
		if end > v {
			spans = append(spans, span{v, end})
		}
		i = max(i, end-1)
	}
	return spans
}

// inside reports whether i lies in one of spans.
func inside(spans []span, i int) bool {
	for _, sp := range spans {
		if i >= sp.start && i < sp.end {
			return true
		}
	}
	return false
}

// quotedEnd returns the index of the quote closing the value opened by the quote at s[open]
// (a doubled quote or a backslash escape stays inside), or len(s) when it is not closed.
func quotedEnd(s string, open int) int {
	q := s[open]
	for i := open + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i
		}
	}
	return len(s)
}

// mysqlPasswords adds the password of every go-sql-driver/mysql DSN, user:password@proto(addr)/db
// or user:password@/db, that is not part of a URL. As the driver does, the password runs from
// the first ':' to the last '@' that is followed by "proto(" or '/'.
func mysqlPasswords(s string, spans []span) []span {
	for i := 0; i < len(s); {
		if isBlank(s[i]) {
			i++
			continue
		}
		end := tokenEnd(s, i)
		tok := s[i:end]
		if !strings.Contains(tok, "://") {
			at := -1
			for j := len(tok) - 1; j >= 0; j-- {
				if tok[j] == '@' && mysqlAddr(tok[j+1:]) {
					at = j
					break
				}
			}
			if at > 0 {
				if c := strings.IndexByte(tok[:at], ':'); c >= 0 && c+1 < at {
					spans = append(spans, span{i + c + 1, i + at})
				}
			}
		}
		i = end
	}
	return spans
}

// mysqlAddr reports whether s starts like the part of a mysql DSN after '@': "/" or "proto(".
func mysqlAddr(s string) bool {
	if strings.HasPrefix(s, "/") {
		return true
	}
	j := 0
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	return j > 0 && j < len(s) && s[j] == '('
}

// Error returns err with its message passed through String; errors.Is and errors.As still see
// err through Unwrap. A nil err stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{err: err, msg: String(err.Error())}
}

type redacted struct {
	err error
	msg string
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// inlineKeys finds the values of mask= settings that are not safe key references (SafeRef),
// in any case of the key: they may be keys written inline, or keys pasted after env: or file:.
// A value ends at ',', a blank or '"' (the end of a quoted spec), so that redacting a message
// twice changes nothing; a key, k0:k1 in hex, holds none of these. It also finds the value of
// every NAME_env= setting (token_env=) that is not a variable name: a pasted token.
func inlineKeys(s string, spans []span) []span {
	found := spans
	lower := asciiLower(s)
	for _, key := range []string{"mask", "_env"} {
		for i := 0; ; {
			j := strings.Index(lower[i:], key)
			if j < 0 {
				break
			}
			ks := i + j
			i = ks + len(key)
			if key == "mask" && ks > 0 && isKeyChar(s[ks-1]) || inside(found, ks) {
				continue
			}
			if key == "_env" && (ks == 0 || !isKeyChar(s[ks-1])) {
				continue
			}
			e := i
			for e < len(s) && isBlank(s[e]) {
				e++
			}
			if e >= len(s) || s[e] != '=' {
				continue
			}
			v := e + 1
			for v < len(s) && isBlank(s[v]) {
				v++
			}
			end := v
			for end < len(s) && s[end] != ',' && s[end] != '"' && !isBlank(s[end]) {
				end++
			}
			val := s[v:end]
			// A reference quoted in prose ends before its closing punctuation: "(mask=env:K):".
			ref := strings.TrimRight(val, ").;:'")
			safe := SafeRef(ref)
			if key == "_env" {
				safe = EnvName(ref)
			}
			if end > v && !safe && val != Mask {
				spans = append(spans, span{v, end})
			}
			i = max(i, end)
		}
	}
	return spans
}

// asciiLower returns s with its ASCII letters in lower case and every other byte as it is, so
// that an index into it is one into s (strings.ToLower turns a byte of invalid UTF-8 into the
// three of U+FFFD, and inlineKeys then read past the end of s).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// EnvName reports whether name can name an environment variable as a shell writes one (a
// letter or '_', then letters, digits and '_') and does not look like key material (KeyLike).
// A name that fails may be a secret pasted where its name belongs, and must not be printed.
func EnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' || KeyLike(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// KeyLike reports whether s holds what looks like a mask key or half of one: a run of 16 or
// more hex digits (k0 or k1 of a k0:k1 key).
func KeyLike(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if isHex(s[i]) {
			if run++; run >= 16 {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

// pathKeyLike reports whether a file path looks like a key pasted in its place: the path is
// 16 or more hex digits alone, or holds a key's shape (16 hex digits, ':', 16 hex digits).
// Other long hex runs are left alone: container and content-addressed paths hold them.
func pathKeyLike(p string) bool {
	t := strings.TrimSpace(p)
	if len(t) >= 16 && strings.IndexFunc(t, func(r rune) bool { return r > 0x7f || !isHex(byte(r)) }) < 0 {
		return true
	}
	for i := strings.IndexByte(t, ':'); i >= 0; {
		l := i
		for l > 0 && isHex(t[l-1]) {
			l--
		}
		r := i + 1
		for r < len(t) && isHex(t[r]) {
			r++
		}
		if i-l >= 16 && r-i-1 >= 16 {
			return true
		}
		j := strings.IndexByte(t[i+1:], ':')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// RefError says why ref is not a key reference that may be printed, without showing any of
// its text, or returns "" for a safe reference (SafeRef). The text after env: must be a
// variable name (EnvName); the text after file: must not look like a key (16 or more hex
// digits alone, or 16 hex digits, ':', 16 hex digits).
func RefError(ref string) string {
	kind, rest, ok := strings.Cut(ref, ":")
	switch {
	case !ok || kind != "env" && kind != "file" || rest == "":
		return "want env:NAME or file:PATH naming where the key is kept (the value given is not shown: it may be a key, and keys are never written inline)"
	case kind == "env" && !EnvName(rest):
		return fmt.Sprintf("env: wants the name of an environment variable (a letter or '_', then letters, digits and '_'); the %d characters given are not one and are not shown: they may be a key pasted in place of its variable's name", len(rest))
	case kind == "file" && pathKeyLike(rest):
		return fmt.Sprintf("file: wants the path of a file holding the key; the %d characters given look like a key and are not shown: write the key into a file and name the file", len(rest))
	}
	return ""
}

// SafeRef reports whether ref is a key reference, env:NAME or file:PATH, whose text may be
// printed: RefError has nothing to say about it.
func SafeRef(ref string) bool { return RefError(ref) == "" }

// queryValueEnd reports whether s[i] ends a URL query's value: at '&' or '#', which a query
// value cannot hold unencoded; at '"' or '\', which no URL holds unencoded, so a quoted URL or
// spec (%q in an error) keeps its closing quote and what follows; and at a ',' followed by
// key=, where a URL sits inside an idkit spec (store=pg://…?password=pw,key=orders), whose
// settings are split at every ',' before the URL is read, so its value never holds one.
func queryValueEnd(s string, i int) bool {
	switch s[i] {
	case '&', '#', '"', '\\':
		return true
	case ',':
		k := i + 1
		for k < len(s) && (s[k] == '_' || s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
			k++
		}
		return k > i+1 && k < len(s) && s[k] == '='
	}
	return false
}
