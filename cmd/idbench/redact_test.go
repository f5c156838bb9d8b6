package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestDBNoPasswordInOutput runs idbench db against a private PostgreSQL with connection strings
// and a lease URL that carry a password, and searches stdout, stderr and every file of --out
// for it, on success and on failure.
//
// The private cluster trusts local connections, so the server does not check the password;
// what matters here is that idbench is handed one and repeats it nowhere.
func TestDBNoPasswordInOutput(t *testing.T) {
	const pw = "hunter2-Sekr1t"
	base := pgtest.DSN(t)
	kv := map[string]string{}
	for _, f := range strings.Fields(base) {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	role := "idbench_pw_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD '"+pw+"'; GRANT CREATE ON DATABASE "+kv["dbname"]+" TO "+role+"; GRANT CREATE ON SCHEMA public TO "+role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = conn.Exec(ctx, "DROP OWNED BY "+role)
		if _, err := conn.Exec(ctx, "DROP ROLE "+role); err != nil {
			t.Errorf("drop role: %v", err)
		}
		conn.Close(ctx)
	})
	q := url.Values{"host": {kv["host"]}, "port": {kv["port"]}, "sslmode": {"disable"}}
	pgURL := "postgres://" + url.UserPassword(role, pw).String() + "@/" + kv["dbname"] + "?" + q.Encode()
	kvDSN := "host=" + kv["host"] + " port=" + kv["port"] + " dbname=" + kv["dbname"] + " user=" + role + " password='" + pw + " x' sslmode=disable"

	runs := []struct {
		name string
		args []string
		ok   bool
	}{
		{"url", []string{"--db", pgURL, "--schemes", "snowflake,uuidv4"}, true},
		{"keyvalue", []string{"--db", kvDSN, "--schemes", "ulid", "-v"}, true},
		// unsafe=true: pgtest's private cluster runs with fsync=off, which the lease store
		// refuses otherwise.
		{"lease-spec", []string{"--db", pgURL, "--schemes", "snowflake:node=" + strings.Replace(pgURL, "?", "?namespace=idbench_test&unsafe=true&", 1)}, true},
		{"refused", []string{"--db", "postgres://u:" + pw + "@127.0.0.1:1/db?connect_timeout=2"}, false},
		{"bad-url", []string{"--db", "postgres://u:" + pw + "@h:x/db"}, false},
		{"bad-keyvalue", []string{"--db", "host=/nonexistent port=1 password=" + pw + " connect_timeout=2"}, false},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"db", "--rows", "500", "--repeat", "1", "--warmup", "-1", "--lookups", "5", "--json", "--out", out}, r.args...)
			res := idbench(t, "", args...)
			if (res.code == 0) != r.ok {
				t.Fatalf("exit code %d, stderr %q", res.code, res.stderr)
			}
			if strings.Contains(res.stdout, pw) {
				t.Errorf("stdout shows the password:\n%s", res.stdout)
			}
			if strings.Contains(res.stderr, pw) {
				t.Errorf("stderr shows the password:\n%s", res.stderr)
			}
			if r.ok && !strings.Contains(res.stdout, "xxxxx") {
				t.Errorf("--json output does not record the (redacted) connection string:\n%s", res.stdout)
			}
			files := 0
			err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files++
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if strings.Contains(string(b), pw) {
					t.Errorf("%s shows the password", filepath.Base(path))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.ok && files < 3 {
				t.Errorf("--out holds %d files, want report.md, report.json, benchstat.txt and charts", files)
			}
		})
	}
}

// TestFlagErrorsRedacted gives every subcommand a flag value that holds a password and that the
// flag package refuses (its error quotes the value): the usage error says which flag, and no
// password reaches stderr or stdout.
func TestFlagErrorsRedacted(t *testing.T) {
	const pw = "hunter2-Sekr1t"
	for _, bad := range []string{
		"postgres://u:" + pw + "@127.0.0.1:1/db",
		"host=h password=" + pw + " dbname=x",
		"u:" + pw + "@tcp(127.0.0.1:3306)/db",
	} {
		for _, args := range [][]string{
			{"--count", bad}, // the whole comparison
			{"gen", "-n", bad},
			{"gen", "--scheme", "snowflake", "-n", bad},
			{"inspect", "--json=" + bad, "1"},
			{"layouts", "--markdown=" + bad},
			{"speed", "--count", bad},
			{"db", "--rows", bad},
			{"scale", "--clock-skew", bad},
			{"plan", "--rate", bad},
			{"nodes", "--all=" + bad},
			{"load", "--clients", bad},
			{"load", "--spawn", "--gen", bad},
			{"help", bad},
			{bad},
		} {
			r := idbench(t, "", args...)
			if r.code == 0 {
				t.Errorf("%q: accepted; stdout %s", args, r.stdout)
			}
			if strings.Contains(r.stderr, pw) || strings.Contains(r.stdout, pw) {
				t.Errorf("%q: the output shows the password:\n%s%s", args, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "xxxxx") && !strings.Contains(r.stderr, "flag") {
				t.Errorf("%q: the error names neither the value (redacted) nor the flag: %s", args, r.stderr)
			}
		}
	}
}

// TestKeyRefNotEchoed: a mask key pasted after env: or file: (issue 24, item 7) makes every
// idbench command that takes a spec fail without showing it.
func TestKeyRefNotEchoed(t *testing.T) {
	const k0, k1 = "0011223344556677", "8899aabbccddeeff"
	for _, spec := range []string{
		"snowflake:mask=env:" + k0 + ":" + k1,
		"uuidv7:mask=file:" + k0 + ":" + k1,
		"typeid:prefix=user,mask=env:" + k1,
		"ulid:mask=" + k0 + ":" + k1,
	} {
		for _, args := range [][]string{
			{"gen", "--scheme", spec, "-n", "1"},
			{"inspect", "--scheme", spec, "--stored", "1"},
			{"inspect", "--scheme", spec, "--from", "2024-01-01T00:00:00Z", "--to", "2024-01-02T00:00:00Z"},
			{"speed", "--schemes", spec, "--benchtime", "1x", "--count", "1"},
		} {
			res := idbench(t, "", args...)
			if res.code == 0 {
				t.Errorf("%q: accepted", args)
			}
			if out := res.stdout + res.stderr; strings.Contains(out, k0) || strings.Contains(out, k1) {
				t.Errorf("%q: output shows the key:\n%s", args, out)
			}
		}
	}
}
