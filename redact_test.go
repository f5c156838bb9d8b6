package idkit_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

var redactTests = []struct{ in, want string }{
	{"", ""},
	{"sqlite", "sqlite"},
	{"pg-local", "pg-local"},
	{"postgres://u:hunter2@db.internal:5432/bench", "postgres://u:xxxxx@db.internal:5432/bench"},
	{"postgresql://u:hunter2@h/db?sslmode=disable", "postgresql://u:xxxxx@h/db?sslmode=disable"},
	{"pg://u:hunter2@h/db?namespace=orders", "pg://u:xxxxx@h/db?namespace=orders"},
	{"mysql://root:hunter2@127.0.0.1:3306/db", "mysql://root:xxxxx@127.0.0.1:3306/db"},
	{"etcd://u:hunter2@h:2379/p", "etcd://u:xxxxx@h:2379/p"},
	{"postgres://:hunter2@h/db", "postgres://:xxxxx@h/db"},
	{"postgres://u@h/db", "postgres://u@h/db"},
	{"postgres://u:@h/db", "postgres://u:@h/db"},
	{"postgres://h:5432/db", "postgres://h:5432/db"},
	{"postgres://u:hunter2@h1:5432,h2:5433/db", "postgres://u:xxxxx@h1:5432,h2:5433/db"},
	{"postgres://u:p%40ss%2Fw@h/db", "postgres://u:xxxxx@h/db"},
	{"postgres://u:p@ss/w?x@h/db", "postgres://u:xxxxx@h/db"},
	{"postgres://u:p@ss@h/db", "postgres://u:xxxxx@h/db"},
	{"postgres://u:pw@h/db?email=a@b", "postgres://u:xxxxx@b"}, // too much rather than too little
	{"postgres://u@h/db?password=hunter2", "postgres://u@h/db?password=xxxxx"},
	{"postgres://u@h/db?sslmode=disable&password=hunter2&application_name=x", "postgres://u@h/db?sslmode=disable&password=xxxxx&application_name=x"},
	{"postgres://u@h/db?sslpassword=hunter2", "postgres://u@h/db?sslpassword=xxxxx"},
	{"snowflake:node=pg://u:hunter2@h/db?namespace=x", "snowflake:node=pg://u:xxxxx@h/db?namespace=x"},
	// A mask key written inline by mistake; references stay.
	{"snowflake:mask=0011223344556677:8899aabbccddeeff", "snowflake:mask=xxxxx"},
	{"uuidv7:MASK = 0011223344556677:8899aabbccddeeff ,prefix=user", "uuidv7:MASK = xxxxx ,prefix=user"},
	{"snowflake:mask=env:IDKIT_KEY,prefix=ord", "snowflake:mask=env:IDKIT_KEY,prefix=ord"},
	{"snowflake:mask=file:/run/secrets/k", "snowflake:mask=file:/run/secrets/k"},
	{"ifconfig netmask=255.0.0.0", "ifconfig netmask=255.0.0.0"},
	{"snowflake:node=pg://u:hunter2@h/db?namespace=x,marks=file:m.txt", "snowflake:node=pg://u:xxxxx@h/db?namespace=x,marks=file:m.txt"},
	{`parse "postgres://u:hunter2@h:x/db": invalid port ":x" after host`, `parse "postgres://u:xxxxx@h:x/db": invalid port ":x" after host`},
	{"a pg://u:one@h/db and etcd://v:two@h:1/p", "a pg://u:xxxxx@h/db and etcd://v:xxxxx@h:1/p"},
	{"pg://u:one@h/db,pg://v:two@h2/db", "pg://u:xxxxx@h/db,pg://v:xxxxx@h2/db"},
	{"root:hunter2@tcp(127.0.0.1:3306)/db?parseTime=true", "root:xxxxx@tcp(127.0.0.1:3306)/db?parseTime=true"},
	{"root:hunter2@unix(/tmp/mysql.sock)/db", "root:xxxxx@unix(/tmp/mysql.sock)/db"},
	{"root:hunter2@/db", "root:xxxxx@/db"},
	{"root:hun:ter@2@tcp(h)/db", "root:xxxxx@tcp(h)/db"},
	{"root@tcp(h)/db", "root@tcp(h)/db"},
	{"--db=root:hunter2@tcp(h:3306)/db", "--db=root:xxxxx@tcp(h:3306)/db"},
	{"host=/tmp dbname=x user=u password=hunter2", "host=/tmp dbname=x user=u password=xxxxx"},
	{"host=/tmp password=hunter2 dbname=x", "host=/tmp password=xxxxx dbname=x"},
	{"host=/tmp password = hunter2 dbname=x", "host=/tmp password = xxxxx dbname=x"},
	{`host=/tmp password='hun ter\'2' dbname=x`, `host=/tmp password='xxxxx' dbname=x`},
	{`host=/tmp password='it''s' dbname=x`, `host=/tmp password='xxxxx' dbname=x`},
	{`host=/tmp password='unclosed dbname=x`, `host=/tmp password='xxxxx`},
	{"host=/tmp PASSWORD=hunter2", "host=/tmp PASSWORD=xxxxx"},
	{"Server=h;Uid=u;Pwd=hunter2", "Server=h;Uid=u;Pwd=xxxxx"},
	{"pass=hunter2 user=u", "pass=xxxxx user=u"},
	{"PGPASSWORD=hunter2 idbench db", "PGPASSWORD=xxxxx idbench db"},
	{"password authentication failed for user \"u\"", "password authentication failed for user \"u\""},
	{"snowflake:node=3,marks=file:m.txt", "snowflake:node=3,marks=file:m.txt"},
	{"user@example.com", "user@example.com"},
}

func TestRedact(t *testing.T) {
	for _, tt := range redactTests {
		if got := idkit.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// redactForms build a connection string, a spec or a message around a password. Each form is
// one a user writes: the URL forms percent-encode the password as net/url does, the key=value
// forms quote it as libpq does, the mysql form takes it raw.
var redactForms = []struct {
	name  string
	build func(pw string) string
	ok    func(pw string) bool // the form can carry pw
}{
	{"url", func(pw string) string {
		return "postgres://" + url.UserPassword("u", pw).String() + "@h:5432/db?sslmode=disable"
	}, nil},
	{"url-raw", func(pw string) string { return "postgresql://app:" + pw + "@db.internal/bench" }, rawOK},
	{"pg-spec", func(pw string) string {
		return "snowflake:node=pg://" + url.UserPassword("u", pw).String() + "@h/db?namespace=x,marks=file:m"
	}, nil},
	{"mysql-url", func(pw string) string { return "mysql://root:" + url.QueryEscape(pw) + "@127.0.0.1:3306/db" }, nil},
	{"query", func(pw string) string {
		return "postgres://u@h/db?password=" + url.QueryEscape(pw) + "&sslmode=disable"
	}, nil},
	{"mysql", func(pw string) string { return "root:" + pw + "@tcp(127.0.0.1:3306)/db?parseTime=true" }, rawOK},
	{"libpq", func(pw string) string {
		return "host=/tmp password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "' dbname=x"
	}, nil},
	{"libpq-bare", func(pw string) string { return "host=/tmp user=u password=" + pw + " dbname=x" }, func(pw string) bool { return rawOK(pw) && pw[0] != '\'' && pw[0] != '"' }},
	{"message", func(pw string) string {
		return `dbbench: connect to "postgres://u:` + url.QueryEscape(pw) + `@h/db": failed`
	}, nil},
}

// rawOK reports whether pw can be written unescaped after "user:": it holds no blank (which
// ends a command-line argument) and does not make "://" (which starts another URL).
func rawOK(pw string) bool {
	return !strings.ContainsAny(pw, " \t\n\r\v\f") && !strings.Contains(":"+pw, "://")
}

// FuzzRedact checks that Redact never panics and that a password in any form leaves no trace:
// the redacted text is the same whatever the password was.
func FuzzRedact(f *testing.F) {
	for _, tt := range redactTests {
		f.Add(tt.in)
	}
	f.Add("hunter2")
	f.Add("p@ss:w/o?r#d&x=y 'q' \\")
	f.Fuzz(func(t *testing.T, s string) {
		_ = idkit.Redact(s)
		if s == "" {
			return
		}
		for _, form := range redactForms {
			if form.ok != nil && !form.ok(s) {
				continue
			}
			got, ref := idkit.Redact(form.build(s)), idkit.Redact(form.build("Q"))
			if got != ref {
				t.Errorf("%s: Redact(%q)\n = %q\nwant %q (the same as for password \"Q\")", form.name, form.build(s), got, ref)
			}
		}
	})
}

func ExampleRedact() {
	fmt.Println(idkit.Redact("postgres://app:hunter2@db.internal/bench?sslmode=disable"))
	fmt.Println(idkit.Redact("snowflake:node=pg://app:hunter2@db.internal/ids?namespace=orders"))
	fmt.Println(idkit.Redact("app:hunter2@tcp(db.internal:3306)/bench"))
	fmt.Println(idkit.Redact("host=db.internal user=app password='hunter 2' dbname=bench"))
	// Output:
	// postgres://app:xxxxx@db.internal/bench?sslmode=disable
	// snowflake:node=pg://app:xxxxx@db.internal/ids?namespace=orders
	// app:xxxxx@tcp(db.internal:3306)/bench
	// host=db.internal user=app password='xxxxx' dbname=bench
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
