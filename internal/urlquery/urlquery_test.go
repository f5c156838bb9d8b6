package urlquery_test

import (
	"errors"
	"maps"
	"net/url"
	"strings"
	"testing"

	"github.com/idkit/idkit/internal/urlquery"
)

var known = urlquery.Known("table", "unsafe", "password", "sslmode")

// cases is shared by the table test and the fuzz seed corpus.
var cases = []struct {
	raw  string
	want map[string]string // nil: refused
	says string            // for a refusal: the part the message must name
}{
	{"", map[string]string{}, ""},
	{"table=a", map[string]string{"table": "a"}, ""},
	{"table=a&unsafe=true", map[string]string{"table": "a", "unsafe": "true"}, ""},
	{"table=a%2Cb&sslmode=disable", map[string]string{"table": "a,b", "sslmode": "disable"}, ""},
	{"table=a+b", map[string]string{"table": "a b"}, ""},
	{"table=", map[string]string{"table": ""}, ""},
	{"table=a;unsafe=true", nil, `"table=a;unsafe=true"`},
	{"table=a&sslmode=disable;", nil, `"sslmode=disable;"`},
	{"table=%zz", nil, `"table=%zz"`},
	{"ta%zzble=a", nil, `"ta%zzble=a"`},
	{"table=a&table=b", nil, `"table" given twice`},
	{"table=a&ta%62le=b", nil, `"table" given twice`},
	{"tabel=a", nil, `unknown parameter "tabel"`},
	{"table=a&", nil, "empty parameter"},
	{"&table=a", nil, "empty parameter"},
	{"table=a&&unsafe=true", nil, "empty parameter"},
	{"table", nil, `"table" has no '='`},
	{"=a", nil, `"=a" has an empty key`},
	{"password=hunter2;x", nil, `"password=xxxxx"`},
	{"password=hun%zzter2", nil, `"password=xxxxx"`},
	{"password=hunter2&password=hunter3", nil, `"password" given twice`},
}

func TestParse(t *testing.T) {
	for _, tc := range cases {
		got, err := urlquery.Parse(tc.raw, known, "want table or unsafe")
		if tc.want != nil {
			if err != nil || !maps.Equal(got, tc.want) {
				t.Errorf("Parse(%q) = %v, %v; want %v", tc.raw, got, err, tc.want)
			}
			continue
		}
		if !errors.Is(err, urlquery.ErrQuery) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%q) = %v, %v; want ErrQuery naming %s", tc.raw, got, err, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), "hunter") {
			t.Errorf("Parse(%q): message shows the password: %v", tc.raw, err)
		}
	}
	if _, err := urlquery.Parse("tabel=a", known, "want table or unsafe"); err == nil || !strings.Contains(err.Error(), "want table or unsafe") {
		t.Errorf("unknown key: %v, want the hint", err)
	}
	if q, err := urlquery.Parse("anything=1", nil, ""); err != nil || q["anything"] != "1" {
		t.Errorf("known nil: %v, %v", q, err)
	}
}

// FuzzParse checks that whatever Parse accepts, net/url reads the same way (so a driver that
// gets Encode's output sees what Parse saw), and that a refusal never quotes a password.
func FuzzParse(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := urlquery.Parse(raw, nil, "")
		if err != nil {
			if !errors.Is(err, urlquery.ErrQuery) {
				t.Fatalf("Parse(%q): %v does not wrap ErrQuery", raw, err)
			}
			if strings.Contains(raw, "password=hunter2") && strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("Parse(%q): message shows the password: %v", raw, err)
			}
			return
		}
		std, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatalf("Parse(%q) accepted what net/url refuses: %v", raw, err)
		}
		if len(std) != len(q) {
			t.Fatalf("Parse(%q) = %v, net/url %v", raw, q, std)
		}
		for k, v := range q {
			if vs := std[k]; len(vs) != 1 || vs[0] != v {
				t.Fatalf("Parse(%q)[%q] = %q, net/url %q", raw, k, v, vs)
			}
		}
		back, err := urlquery.Parse(urlquery.Encode(q), nil, "")
		if err != nil || !maps.Equal(back, q) {
			t.Fatalf("Encode round trip of %v: %v, %v", q, back, err)
		}
	})
}
