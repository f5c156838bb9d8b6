package idkit_test

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/mask"
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
	{"postgres://u:pw@h/db?password=p@ss/word", "postgres://u:xxxxx"}, // the query password's '@' and what follows it
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
	// over, when set, returns what Redact gives for a password that makes the form read as
	// another one, whose secret runs further: more than the password is hidden, and no trace
	// of it is left. "" for any other password (Redact then gives what it gives for "Q").
	over func(pw string) string
}{
	{"url", func(pw string) string {
		return "postgres://" + url.UserPassword("u", pw).String() + "@h:5432/db?sslmode=disable"
	}, nil, nil},
	{"url-raw", func(pw string) string { return "postgresql://app:" + pw + "@db.internal/bench" }, rawOK, func(pw string) string {
		// A raw password holding a URL query's credential key (?pass=) reads as the query
		// password "…@db.internal/bench" (pg://u:pw@h/db?password=p@db.internal/bench), and
		// is hidden to the end of the URL (internal/redact, queryCredentialEnd).
		if rawQueryCredential.MatchString("app:" + pw) {
			return "postgresql://app:xxxxx"
		}
		return ""
	}},
	{"pg-spec", func(pw string) string {
		return "snowflake:node=pg://" + url.UserPassword("u", pw).String() + "@h/db?namespace=x,marks=file:m"
	}, nil, nil},
	{"mysql-url", func(pw string) string { return "mysql://root:" + url.QueryEscape(pw) + "@127.0.0.1:3306/db" }, nil, nil},
	{"query", func(pw string) string {
		return "postgres://u@h/db?password=" + url.QueryEscape(pw) + "&sslmode=disable"
	}, nil, nil},
	{"mysql", func(pw string) string { return "root:" + pw + "@tcp(127.0.0.1:3306)/db?parseTime=true" }, rawOK, nil},
	{"libpq", func(pw string) string {
		return "host=/tmp password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "' dbname=x"
	}, nil, nil},
	{"libpq-bare", func(pw string) string { return "host=/tmp user=u password=" + pw + " dbname=x" }, func(pw string) bool { return rawOK(pw) && pw[0] != '\'' && pw[0] != '"' }, nil},
	{"message", func(pw string) string {
		return `dbbench: connect to "postgres://u:` + url.QueryEscape(pw) + `@h/db": failed`
	}, nil, nil},
}

// rawQueryCredential matches a URL query's key naming a credential, as Redact reads one in a
// URL's text: a key (its whole run of letters, digits, '_', '-' and '.') that is pass or pwd or
// ends in password or passwd, in any case, after the '?' that starts a query or after a '&'
// that follows it, then '='.
var rawQueryCredential = regexp.MustCompile(`(?i)\?(?:.*[?&])?(?:pass|pwd|[\w.-]*passw(?:or)?d)=`)

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
	f.Add("0/?pAss=") // a raw URL password holding a query credential key (url-raw's over)
	f.Add("a@b/?x=1&db_password=c")
	f.Fuzz(func(t *testing.T, s string) {
		_ = idkit.Redact(s)
		if s == "" {
			return
		}
		for _, form := range redactForms {
			if form.ok != nil && !form.ok(s) {
				continue
			}
			got, want := idkit.Redact(form.build(s)), idkit.Redact(form.build("Q"))
			if form.over != nil && form.over(s) != "" {
				want = form.over(s)
			}
			if got != want {
				t.Errorf("%s: Redact(%q)\n = %q\nwant %q (the same as for password \"Q\", or more hidden where the form reads as another)", form.name, form.build(s), got, want)
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

// keyRefSpecs build specs that carry a mask key where a reference belongs, or inline: pasted
// after env: or file:, half of it, inside a path, beside other mistakes, and with a good
// reference whose file is missing beside an inline key in another setting.
var keyRefSpecs = []func(scheme, key, half string) string{
	func(s, k, _ string) string { return s + ":mask=" + k },
	func(s, k, _ string) string { return s + ":mask=env:" + k },
	func(s, k, _ string) string { return s + ":mask=file:" + k },
	func(s, _, h string) string { return s + ":mask=env:" + h },
	func(s, _, h string) string { return s + ":mask=env:K_" + h },
	func(s, _, h string) string { return s + ":mask=file:" + h },
	func(s, k, _ string) string { return s + ":mask=file:/run/keys/" + k },
	func(s, k, _ string) string { return s + ":mask=env:" + k + ",bogus=1" },
	func(s, k, _ string) string { return s + ":prefix=Bad!,mask=env:" + k },
	func(s, k, _ string) string { return s + ":mask=file:" + k + ",prefix=user" },
	func(s, k, _ string) string { return s + ":mask= env:" + k },
	func(s, k, _ string) string { return s + ":mask=env:" + k + ",," },
	func(s, k, _ string) string { return s + ":mask=env:" + k + ",mask=env:X" },
	func(s, k, _ string) string { return s + ":mask=env:" + k + " trailing" },
	func(s, k, _ string) string { return s + ":node=x,mask=" + k },
	func(s, k, _ string) string { return s + ":mask=env:" + strings.ToUpper(k) },
}

var keyRefSchemes = []string{"snowflake", "uuidv7", "ulid", "typeid", "mastodon", "sonyflake", "nosuch"}

// checkNoKey fails when msg shows either half of a key (in any case), or when redacting msg
// again changes it: every error is redacted already, and a second pass must not eat the end of
// the quoted spec.
func checkNoKey(t *testing.T, what, msg string, halves ...string) {
	t.Helper()
	low := strings.ToLower(msg)
	for _, h := range halves {
		if strings.Contains(low, strings.ToLower(h)) {
			t.Errorf("%s shows the key: %s", what, msg)
		}
	}
	if again := idkit.Redact(msg); again != msg {
		t.Errorf("%s: redacting the message again changes it:\n got %q\nfrom %q", what, again, msg)
	}
}

// TestMaskKeyNeverEchoed: a key written in a spec in place of a reference (issue 24, item 7)
// is refused, and neither New, NewCodec, ParseSpec nor Settings.String shows it.
func TestMaskKeyNeverEchoed(t *testing.T) {
	const k0, k1 = "0011223344556677", "8899aabbccddeeff"
	for _, scheme := range keyRefSchemes {
		for _, build := range keyRefSpecs {
			spec := build(scheme, k0+":"+k1, k1)
			_, err := idkit.New(spec)
			if err == nil {
				t.Errorf("New(%q) succeeded", spec)
				continue
			}
			checkNoKey(t, "New", err.Error(), k0, k1)
			if _, err := idkit.NewCodec(spec); err != nil {
				checkNoKey(t, "NewCodec", err.Error(), k0, k1)
			}
			if sp, err := idkit.ParseSpec(spec); err != nil {
				checkNoKey(t, "ParseSpec", err.Error(), k0, k1)
			} else {
				checkNoKey(t, "Settings.String", sp.String(), k0, k1)
			}
		}
	}
}

// TestMaskRefErrorsSayWhy: a refused reference says what is wrong with it.
func TestMaskRefErrorsSayWhy(t *testing.T) {
	for spec, want := range map[string]string{
		"snowflake:mask=env:0011223344556677:8899aabbccddeeff":  "env: wants the name of an environment variable",
		"snowflake:mask=file:0011223344556677:8899aabbccddeeff": "file: wants the path of a file holding the key",
		"snowflake:mask=0011223344556677:8899aabbccddeeff":      "want env:NAME or file:PATH",
		"uuidv7:mask=env:IDKIT_TEST_SURELY_UNSET":               "environment variable IDKIT_TEST_SURELY_UNSET is not set",
	} {
		_, err := idkit.New(spec)
		if !errors.Is(err, idkit.ErrSpec) || !errors.Is(err, mask.ErrKey) || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) = %v, want ErrSpec and mask.ErrKey saying %q", spec, err, want)
		}
	}
}

// FuzzMaskKeyNeverEchoed is TestMaskKeyNeverEchoed over any key.
func FuzzMaskKeyNeverEchoed(f *testing.F) {
	f.Add(uint64(0x0011223344556677), uint64(0x8899aabbccddeeff), uint8(0), uint8(1))
	f.Add(uint64(0), uint64(0), uint8(3), uint8(2))
	f.Add(^uint64(0), uint64(0xabcdef), uint8(9), uint8(0))
	f.Fuzz(func(t *testing.T, a, b uint64, form, scheme uint8) {
		k0, k1 := fmt.Sprintf("%016x", a), fmt.Sprintf("%016x", b)
		spec := keyRefSpecs[int(form)%len(keyRefSpecs)](keyRefSchemes[int(scheme)%len(keyRefSchemes)], k0+":"+k1, k1)
		if _, err := idkit.New(spec); err == nil {
			t.Fatalf("New(%q) succeeded", spec)
		} else {
			checkNoKey(t, "New", err.Error(), k0, k1)
		}
		if _, err := idkit.NewCodec(spec); err != nil {
			checkNoKey(t, "NewCodec", err.Error(), k0, k1)
		}
		checkNoKey(t, "Redact", idkit.Redact(spec), k0, k1)
	})
}
