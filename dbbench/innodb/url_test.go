package innodb_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/innodb"
)

var parseMySQLURLTests = []struct {
	in, net, addr, user, db, err string
}{
	{in: "mysql://app:pw@db.internal:3307/bench", net: "tcp", addr: "db.internal:3307", user: "app", db: "bench"},
	{in: "mysql://app@db.internal/", net: "tcp", addr: "db.internal:3306", user: "app"},
	{in: "mariadb://root@localhost/?socket=/run/mysqld/mysqld.sock", net: "unix", addr: "/run/mysqld/mysqld.sock", user: "root"},
	{in: "mysql://app:pw@[::1]:3306/x?tls=skip-verify", net: "tcp", addr: "[::1]:3306", user: "app", db: "x"},
	{in: "mysql://:pw@h/", err: "no user name"},
	{in: "mysql://app:pw@/", err: "no host"},
	{in: "mysql://app:pw@h:99999/", err: `bad port "99999"`},
	{in: "mysql://app:pw@h/?timeout=5s", err: `unknown parameter "timeout"`},
	{in: "mysql://app:pw@h/?tls=true;socket=/x", err: `"tls=true;socket=/x": ';' is not a separator`},
	{in: "mysql://app:pw@h/?tls=%zz", err: `invalid URL escape "%zz"`},
	{in: "mysql://app:pw@h/?tls=true&tls=false", err: `"tls" given twice`},
	{in: "mysql://app:pw@h/?socket=/a&socket=/b", err: `"socket" given twice`},
	{in: "mysql://app@h/?password=pwsecret;x", err: `password=xxxxx`},
	{in: "mysql://app:pw@h/?tls=maybe", err: `tls="maybe"`},
	{in: "mysql://app:pw@h/a/b", err: "contains a slash"},
	{in: "mysql://app:p w@h:x/", err: "bad MySQL URL"},
	{in: "mysql:app", err: "want mysql://"},
	{in: "postgres://app@h/", err: "want mysql://"},
}

func TestParseURL(t *testing.T) {
	for _, tt := range parseMySQLURLTests {
		c, err := innodb.ParseURL(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseURL(%q) error %v, want one containing %q", tt.in, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("ParseURL(%q) error shows the password: %v", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tt.in, err)
			continue
		}
		if c.Net != tt.net || c.Addr != tt.addr || c.User != tt.user || c.DBName != tt.db {
			t.Errorf("ParseURL(%q) = %s %s user %q db %q, want %s %s user %q db %q",
				tt.in, c.Net, c.Addr, c.User, c.DBName, tt.net, tt.addr, tt.user, tt.db)
		}
	}
}

// FuzzParseURL: the parser never panics, and its errors never show the
// password.
func FuzzParseURL(f *testing.F) {
	for _, tt := range parseMySQLURLTests {
		f.Add(tt.in, "pw")
	}
	f.Fuzz(func(t *testing.T, rest, password string) {
		// A quote or backslash could be the message's own quoting (%q) next to other text.
		if len(password) < 4 || strings.ContainsAny(password, "@/?#\"\\") {
			return
		}
		in := "mysql://u:" + password + "@" + rest
		_, err := innodb.ParseURL(in)
		if err != nil && strings.Contains(err.Error(), password) && !strings.Contains(rest, password) {
			t.Errorf("error shows the password %q: %v", password, err)
		}
		// What it accepts has a query that parses whole, each key once.
		if _, q, ok := strings.Cut(rest, "?"); err == nil && ok {
			q, _, _ = strings.Cut(q, "#")
			vs, perr := url.ParseQuery(q)
			if perr != nil {
				t.Errorf("ParseURL(%q) accepted a query net/url cannot read whole: %v", in, perr)
			}
			for k, v := range vs {
				if len(v) > 1 {
					t.Errorf("ParseURL(%q) accepted %q given %d times", in, k, len(v))
				}
			}
		}
	})
}
