package engine

import (
	"strings"
	"testing"
)

func TestResolveServerRow(t *testing.T) {
	for _, tc := range []struct {
		label string
		ok    bool
		err   string
	}{
		{"instagram-plpgsql", true, ""},
		{"Instagram-PLpgSQL:shard=8191", true, ""},
		{"instagram-plpgsql:shard=8192", true, "shard=8192"},
		{"instagram-plpgsql:seq=3", true, "unknown setting"},
		{"uuidv7-plpgsql", true, ""},
		{"segment", true, ""},
		{"segment:step=50", true, ""},
		{"segment:step=0", true, "step=0"},
		{"segment:store=pg://h/db,key=k", false, ""},
		{"snowflake", false, ""},
	} {
		_, ok, err := resolveServerRow(tc.label)
		if ok != tc.ok || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("resolveServerRow(%q) = %v, %v; want %v, %q", tc.label, ok, err, tc.ok, tc.err)
		}
	}
}
