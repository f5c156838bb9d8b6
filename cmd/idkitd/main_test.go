package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.toml", "listen = \"127.0.0.1:9000\"\nmax_count = 50\ndrain_timeout = \"3s\"\n[generators]\nb = \"ulid\"\na = \"snowflake:node=1\"\n")
	unknown := write("unknown.toml", "listn = \"x\"\n[generators]\na = \"ulid\"\n")
	broken := write("broken.toml", "[generators\n")
	tokens := write("tokens", "# comment\n\nsecret-one\n")
	for _, tc := range []struct {
		name string
		args []string
		want string // error text, or the config summary
	}{
		{"flags", []string{"--gen", "o=snowflake:node=2", "--gen", "s=ulid", "--listen", "127.0.0.1:7"}, "127.0.0.1:7 10000? o=snowflake:node=2 s=ulid"},
		{"file", []string{"--config", good}, "127.0.0.1:9000 50 a=snowflake:node=1 b=ulid"},
		{"file and flags", []string{"--config", good, "--max-count", "9", "--gen", "c=uuidv4"}, "127.0.0.1:9000 9 a=snowflake:node=1 b=ulid c=uuidv4"},
		{"tokens", []string{"--gen", "a=ulid", "--tokens", tokens}, "tokens=1"},
		{"no generators", nil, "no generators"},
		{"bad gen", []string{"--gen", "orders"}, "want NAME=SPEC"},
		{"unknown key", []string{"--config", unknown}, `unknown key "listn"`},
		{"broken file", []string{"--config", broken}, "broken.toml"},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.toml")}, "nope.toml"},
		{"argument", []string{"--gen", "a=ulid", "extra"}, `unexpected argument "extra"`},
		{"log format", []string{"--gen", "a=ulid", "--log-format", "xml"}, `log format "xml"`},
		{"empty tokens", []string{"--gen", "a=ulid", "--tokens", write("empty", "\n# none\n")}, "holds no token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := parseArgs(io.Discard, tc.args)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				max := "10000?"
				if cfg.MaxCount != 0 {
					max = strconv.Itoa(cfg.MaxCount)
				}
				got = cfg.Listen + " " + max
				for _, g := range cfg.Generators {
					got += " " + g.Name + "=" + g.Spec
				}
				if len(cfg.Tokens) > 0 {
					got += " tokens=" + strconv.Itoa(len(cfg.Tokens))
				}
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRunServesAndStops runs idkitd on a free loopback port, asks it for IDs and stops it with
// the context, as SIGTERM does.
func TestRunServesAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, io.Discard, []string{"--gen", "o=snowflake:node=5", "--listen", addr}) }()
	var body []byte
	for i := 0; ; i++ {
		res, err := http.Get("http://" + addr + "/v1/next/o?n=2")
		if err == nil {
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
			break
		}
		if i == 100 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(string(body), "\n"); n != 2 {
		t.Fatalf("body %q: want 2 lines", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// FuzzConfigFile reads arbitrary config files: each gives a config with generators or an
// error, never a panic.
func FuzzConfigFile(f *testing.F) {
	f.Add("listen = \"127.0.0.1:9000\"\nmax_count = 50\n[generators]\na = \"ulid\"\n")
	f.Add("drain_timeout = \"-1s\"\n[generators]\na = \"ulid\"\n")
	f.Add("[generators]\na = 5\n")
	f.Add("max_count = -3\n[generators]\nb = \"snowflake:node=1\"\n")
	f.Add("tokens_file = \"/nonexistent\"\n[generators]\na = \"ulid\"\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := parseArgs(io.Discard, []string{"--config", p})
		if err == nil && len(cfg.Generators) == 0 {
			t.Fatalf("%q: accepted without generators", body)
		}
	})
}
