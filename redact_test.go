package idkit_test

import (
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

// redactCases are credentials in the forms idkit echoes, each holding the password "hunter2".
var redactCases = []struct{ in, want string }{
	{"postgres://u:hunter2@127.0.0.1:5432/db", "postgres://u:xxxxx@127.0.0.1:5432/db"},
	{"postgresql://u:hunter2@/db?host=/tmp", "postgresql://u:xxxxx@/db?host=/tmp"},
	{"snowflake:node=pg://u:hunter2@h/db?namespace=x,marks=off", "snowflake:node=pg://u:xxxxx@h/db?namespace=x,marks=off"},
	{"mysql://root:hunter2@127.0.0.1:3306/test", "mysql://root:xxxxx@127.0.0.1:3306/test"},
	{"root:hunter2@tcp(127.0.0.1:3306)/test?parseTime=true", "root:xxxxx@tcp(127.0.0.1:3306)/test?parseTime=true"},
	{"dsn root:hunter2@unix(/run/mysqld.sock)/test", "dsn root:xxxxx@unix(/run/mysqld.sock)/test"},
	{"host=/tmp user=u password=hunter2 dbname=x", "host=/tmp user=u password=xxxxx dbname=x"},
	{"host=/tmp password = 'hunter2 \\' x' dbname=x", "host=/tmp password = xxxxx dbname=x"},
	{"postgres://u@h/db?sslmode=disable&password=hunter2", "postgres://u@h/db?sslmode=disable&password=xxxxx"},
	{"PASSWORD=hunter2", "PASSWORD=xxxxx"},
	{"pwd=hunter2;uid=sa", "pwd=xxxxx;uid=sa"},
	{"etcd://u:hunter2@h:2379/p", "etcd://u:xxxxx@h:2379/p"},
	{"two: pg://a:hunter2@h/x and mysql://b:hunter2@h/y", "two: pg://a:xxxxx@h/x and mysql://b:xxxxx@h/y"},
}

// plainCases carry no credential and come back unchanged.
var plainCases = []string{
	"snowflake:layout=discord,worker=3,process=1",
	"postgres://u@h/db",
	"user@example.com",
	"compass=north", // a key ending in "pass" is not a credential key
	"etcd://127.0.0.1:2379/idkit/orders",
	"",
}

func TestRedact(t *testing.T) {
	for _, c := range redactCases {
		if got := idkit.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, s := range plainCases {
		if got := idkit.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestSpecErrorsRedact checks that no error of New echoes a password from the spec, whatever
// part of the spec the error is about.
func TestSpecErrorsRedact(t *testing.T) {
	for _, spec := range []string{
		"snowflake:node=pg://u:hunter2@127.0.0.1:1/db?namespace=x,bogus=1",
		"snowflake:node=pg://u:hunter2@127.0.0.1:1/db?namespace=x,lease=pg://u:hunter2@h/x",
		"snowflake:node=7,lease=mysql://u:hunter2@h/x",
		"snowflake:node=7,lease=postgres://u:hunter2@127.0.0.1:1/db,lease_ttl=-1s",
		"snowflake:lease=pg://u:hunter2@h/x,marks=file:/tmp/m",
		"nosuch:dsn=postgres://u:hunter2@h/x",
		"snowflake:node=pg://u:hunter2@h/x,,",
		"snowflake:password=hunter2",
		"snowflake:node pg://u:hunter2@h/x",
	} {
		_, err := idkit.New(spec)
		if err == nil {
			t.Errorf("New(%q) succeeded, want an error", spec)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("New(%q) error shows the password: %v", spec, err)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, c := range redactCases {
		f.Add(c.in, "hunter2")
	}
	for _, s := range plainCases {
		f.Add(s, "pw")
	}
	f.Fuzz(func(t *testing.T, prefix, pw string) {
		// A password that cannot end the userinfo early: no '@', '/', blanks or separators.
		if pw == "" || strings.ContainsAny(pw, "@/?#:,;&= \t\r\n'\"\\") || pw == "xxxxx" {
			return
		}
		for _, tmpl := range []string{"postgres://u:%s@h/db", "u:%s@tcp(h:3306)/db", "host=h password=%s user=u", "x?password=%s&y=1"} {
			secret := strings.Replace(tmpl, "%s", pw, 1)
			in := prefix + " " + secret
			out := idkit.Redact(in)
			if strings.Contains(out, secret) {
				t.Fatalf("Redact(%q) = %q still holds %q", in, out, secret)
			}
			// What comes before cannot change how a blank-separated credential is read,
			// unless it opens a quote that swallows it.
			if want := strings.Replace(tmpl, "%s", "xxxxx", 1); !strings.ContainsAny(prefix, "'") && !strings.HasSuffix(out, " "+want) {
				t.Fatalf("Redact(%q) = %q, want it to end in %q", in, out, want)
			}
		}
		_ = idkit.Redact(prefix + pw) // never panics on anything
	})
}
