package dbbench

import (
	"strconv"
	"strings"
)

// maxLabel is the longest table label: PostgreSQL truncates identifiers at 63 bytes, and the
// longest name built from a label is "<label>_parent_created_at" (18 more bytes), so 40
// leaves room for a collision number too.
const maxLabel = 40

// tableLabels returns, for each row name, the label its tables are named after: the name in
// lower case with every run of characters outside [a-z0-9] turned into one underscore, no
// underscore at either end, at most maxLabel bytes, starting with a letter ("t" is put before a
// leading digit, "s" stands for a name with no letter or digit at all). Names whose labels
// would collide, with each other or with a reserved label, get "_2", "_3", … in order.
func tableLabels(names []string, reserved ...string) []string {
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[r] = true
	}
	out := make([]string, len(names))
	for i, n := range names {
		base := labelOf(n)
		l := base
		for k := 2; taken[l]; k++ {
			suffix := "_" + strconv.Itoa(k)
			b := base
			if len(b)+len(suffix) > maxLabel {
				b = strings.TrimRight(b[:maxLabel-len(suffix)], "_")
			}
			l = b + suffix
		}
		taken[l] = true
		out[i] = l
	}
	return out
}

// labelOf is the label of one name, before collisions are resolved.
func labelOf(name string) string {
	var b strings.Builder
	under := false
	for _, c := range strings.ToLower(name) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(c)
		default:
			under = true
		}
	}
	l := b.String()
	switch {
	case l == "":
		l = "s"
	case l[0] >= '0' && l[0] <= '9':
		l = "t" + l
	}
	if len(l) > maxLabel {
		l = strings.TrimRight(l[:maxLabel], "_")
	}
	return l
}
