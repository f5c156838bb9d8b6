package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/jackc/pgx/v5"
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
	limits := write("limits.toml", "grpc_listen = \"127.0.0.1:9001\"\nmax_streams = 7\nmax_conn_bytes = 99999\nshutdown_delay = \"0s\"\nwrite_timeout = \"4s\"\n[generators]\na = \"ulid\"\n")
	grpcOff := write("grpc-off.toml", "grpc_listen = \"off\"\n[generators]\na = \"ulid\"\n")
	badDelay := write("bad-delay.toml", "shutdown_delay = \"-2s\"\n[generators]\na = \"ulid\"\n")
	unknown := write("unknown.toml", "listn = \"x\"\n[generators]\na = \"ulid\"\n")
	broken := write("broken.toml", "[generators\n")
	bounds := write("bounds.toml", "max_conns = 10\nmax_total_streams = 11\nmax_total_bytes = 12\nmax_open_streams = 13\nmax_open_watches = 14\nmax_open_conns = 15\nmax_addr_streams = 16\nbody_timeout = \"7s\"\n[generators]\na = \"ulid\"\n")
	unmask := write("unmask.toml", "allow_unmask = true\n[generators]\na = \"ulid\"\n")
	tokens := write("tokens", "# comment\n\nsecret-one\n")
	browser := write("browser.toml", "cors_origins = [\"https://a.example\"]\ncompress_responses = true\nmetrics_tokens_file = \""+tokens+"\"\n[generators]\na = \"ulid\"\n")
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
		{"limits from the file", []string{"--config", limits}, "grpc=127.0.0.1:9001 streams=7 connbytes=99999 delay=-1ns write=4s"},
		{"limits from flags", []string{"--config", limits, "--grpc-listen", ":9", "--max-streams", "8", "--shutdown-delay", "2s", "--write-timeout", "1m"}, "grpc=:9 streams=8 connbytes=99999 delay=2s write=1m0s"},
		{"gRPC port on by default", []string{"--gen", "a=ulid"}, "grpc=127.0.0.1:7071 "},
		{"gRPC port beside a moved main port stays", []string{"--gen", "a=ulid", "--listen", "127.0.0.1:8000"}, "127.0.0.1:8000 10000? a=ulid grpc=127.0.0.1:7071 "},
		{"gRPC port off", []string{"--gen", "a=ulid", "--grpc-listen", "off"}, "grpc= streams"},
		{"gRPC port empty", []string{"--gen", "a=ulid", "--grpc-listen", ""}, "grpc= streams"},
		{"gRPC port off in the file", []string{"--config", grpcOff}, "grpc= streams"},
		{"gRPC port off in the file, on by flag", []string{"--config", grpcOff, "--grpc-listen", "127.0.0.1:0"}, "grpc=127.0.0.1:0 "},
		{"default delay", []string{"--gen", "a=ulid"}, "delay=0s"},
		{"no delay", []string{"--gen", "a=ulid", "--shutdown-delay", "0"}, "delay=-1ns"},
		{"negative delay", []string{"--gen", "a=ulid", "--shutdown-delay", "-1s"}, "--shutdown-delay -1s: want 0 (none) or a positive duration"},
		{"negative delay in the file", []string{"--config", badDelay}, `shutdown_delay = "-2s": want 0 (none)`},
		{"zero drain", []string{"--gen", "a=ulid", "--drain-timeout", "0s"}, "--drain-timeout 0s: want a positive duration"},
		{"browsers, compression and scrape tokens from the file", []string{"--config", browser}, "cors=[https://a.example] compress=true metrics=1"},
		{"browsers from flags", []string{"--config", browser, "--cors-origin", "https://b.example, https://c.example", "--cors-origin", "*", "--compress-responses=false"}, "cors=[https://b.example https://c.example *] compress=false metrics=1"},
		{"scrape tokens from a flag", []string{"--gen", "a=ulid", "--metrics-tokens", tokens}, "cors=[] compress=false metrics=1"},
		{"empty scrape tokens", []string{"--gen", "a=ulid", "--metrics-tokens", write("empty2", "#\n")}, "holds no token"},
		{"negative streams", []string{"--gen", "a=ulid", "--max-streams", "-1"}, "max streams -1"},
		{"bounds from the file", []string{"--config", bounds}, "bounds=10/11/12/13/14/15/16 body=7s"},
		{"bounds from flags", []string{"--config", bounds, "--max-conns", "20", "--max-total-streams", "21", "--max-total-bytes", "22", "--max-open-streams", "23", "--max-open-watches", "24", "--max-open-conns", "25", "--max-addr-streams", "26", "--body-timeout", "8s"}, "bounds=20/21/22/23/24/25/26 body=8s"},
		{"zero body timeout", []string{"--gen", "a=ulid", "--body-timeout", "0"}, "--body-timeout 0s: want a positive duration"},
		{"negative max conns", []string{"--gen", "a=ulid", "--max-conns", "-1"}, "max conns -1"},
		{"masked IDs stay masked", []string{"--gen", "a=ulid"}, "unmask=false"},
		{"allow unmask", []string{"--gen", "a=ulid", "--allow-unmask"}, "unmask=true"},
		{"allow unmask in the file", []string{"--config", unmask}, "unmask=true"},
		{"file's unmask overridden", []string{"--config", unmask, "--allow-unmask=false"}, "unmask=false"},
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
				got += fmt.Sprintf(" grpc=%s streams=%d connbytes=%d delay=%v write=%v unmask=%v", cfg.GRPCListen, cfg.MaxStreams, cfg.MaxConnBytes, cfg.ShutdownDelay, cfg.WriteTimeout, cfg.AllowUnmask)
				got += fmt.Sprintf(" cors=%v compress=%v metrics=%d", cfg.CORSOrigins, cfg.CompressResponses, len(cfg.MetricsTokens))
				got += fmt.Sprintf(" bounds=%d/%d/%d/%d/%d/%d/%d body=%v", cfg.MaxConns, cfg.MaxTotalStreams, cfg.MaxTotalBytes, cfg.MaxOpenStreams, cfg.MaxOpenWatches, cfg.MaxOpenConns, cfg.MaxAddrStreams, cfg.BodyTimeout)
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
	go func() {
		done <- run(ctx, io.Discard, []string{"--gen", "o=snowflake:node=5", "--listen", addr, "--grpc-listen", "127.0.0.1:0", "--shutdown-delay", "0"})
	}()
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

// TestFlagErrorsRedacted gives idkitd flag values that hold a password and that it refuses,
// and config files that do: what it prints (the flag package's own message included) and the
// exit status main uses show no password.
func TestFlagErrorsRedacted(t *testing.T) {
	const pw = "hunter2-Sekr1t"
	dir := t.TempDir()
	conf := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(conf, []byte("listen = \"postgres://u:"+pw+"@h/db\"\nmax_count = \"postgres://u:"+pw+"@h/db\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"postgres://u:" + pw + "@127.0.0.1:1/db", "host=h password=" + pw + " dbname=x"} {
		for _, args := range [][]string{
			{"--gen", bad},
			{"--gen", "orders=snowflake:node=" + bad},
			{"--max-count", bad},
			{"--drain-timeout", bad},
			{"--shutdown-delay", bad},
			{"--max-streams", bad},
			{"--gen", "a=ulid", bad},
			{"--config", conf},
			{"--" + bad},
		} {
			var stderr strings.Builder
			err := run(context.Background(), &stderr, args)
			code := report(&stderr, err)
			if code == 0 {
				t.Errorf("%q: accepted", args)
			}
			if strings.Contains(stderr.String(), pw) {
				t.Errorf("%q: stderr shows the password:\n%s", args, stderr.String())
			}
		}
	}
}

// TestKeyRefNotEchoed: a mask key pasted after env: or file: in a generator's spec (issue 24,
// item 7) stops idkitd with an error that does not show it, from a flag or the config file.
func TestKeyRefNotEchoed(t *testing.T) {
	const k0, k1 = "0011223344556677", "8899aabbccddeeff"
	dir := t.TempDir()
	conf := filepath.Join(dir, "gens.toml")
	if err := os.WriteFile(conf, []byte("[generators]\norders = \"snowflake:node=1,mask=env:"+k0+":"+k1+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--gen", "orders=snowflake:node=1,mask=env:" + k0 + ":" + k1},
		{"--gen", "orders=uuidv7:mask=file:" + k0 + ":" + k1},
		{"--gen", "orders=typeid:prefix=user,mask=env:K_" + k1},
		{"--gen", "orders=ulid:mask=" + k0 + ":" + k1},
		{"--config", conf},
	} {
		var stderr strings.Builder
		err := run(context.Background(), &stderr, args)
		if report(&stderr, err) == 0 {
			t.Errorf("%q: accepted", args)
		}
		if strings.Contains(stderr.String(), k0) || strings.Contains(stderr.String(), k1) {
			t.Errorf("%q: stderr shows the key:\n%s", args, stderr.String())
		}
		if !strings.Contains(stderr.String(), "bad spec") {
			t.Errorf("%q: stderr does not say what is wrong:\n%s", args, stderr.String())
		}
	}
}

// serveInProcess runs idkitd with args on a free loopback port until the test ends and returns
// the address once it answers /readyz.
func serveInProcess(t *testing.T, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logs strings.Builder
	go func() {
		done <- run(ctx, &lockedWriter{w: &logs}, append([]string{"--listen", addr, "--grpc-listen", "127.0.0.1:0", "--shutdown-delay", "0"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("idkitd %s: %v", idkit.Redact(strings.Join(args, " ")), err)
		}
	})
	for i := 0; ; i++ {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return addr
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("idkitd exited: %v", err)
		default:
		}
		if i == 500 {
			t.Fatalf("idkitd not ready after 10s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// nextIDs asks an idkitd at addr for n IDs of a generator over plain HTTP.
func nextIDs(t *testing.T, addr, gen string, n int) []uint64 {
	t.Helper()
	res, err := http.Get(fmt.Sprintf("http://%s/v1/next/%s?n=%d", addr, gen, n))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("%s: %s %s", gen, res.Status, b)
	}
	var ids []uint64
	for _, l := range strings.Fields(string(b)) {
		v, err := strconv.ParseUint(l, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v)
	}
	if len(ids) != n {
		t.Fatalf("%s: %d IDs, want %d", gen, len(ids), n)
	}
	return ids
}

// TestServesSegmentAndRemote: idkitd serves a segment generator on a real PostgreSQL store
// (Leaf's own deployment: range allocation behind a service), and a second idkitd serves the
// first through the remote scheme. IDs are unique and, from one generator, increasing.
func TestServesSegmentAndRemote(t *testing.T) {
	cfg, err := pgx.ParseConfig(pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	// unsafe=true: the private test cluster runs with fsync off, which pgstore refuses for data
	// that matters.
	q := url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}, "unsafe": {"true"}}
	for k, v := range cfg.RuntimeParams {
		q.Set(k, v)
	}
	store := url.URL{Scheme: "pg", User: url.UserPassword(cfg.User, cfg.Password), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.Password == "" {
		store.User = url.User(cfg.User)
	}
	back := serveInProcess(t, "--gen", "orders=segment:store="+store.String()+",key=idkitd_test,step=100")
	front := serveInProcess(t, "--gen", "orders=remote:addr="+back+",generator=orders,prefetch=150")
	seen := map[uint64]bool{}
	for i, addr := range []string{back, front, back, front} {
		ids := nextIDs(t, addr, "orders", 250)
		for j, id := range ids {
			if seen[id] {
				t.Fatalf("round %d: %d issued twice", i, id)
			}
			seen[id] = true
			if j > 0 && id <= ids[j-1] {
				t.Fatalf("round %d: %d after %d", i, id, ids[j-1])
			}
		}
	}
	res, err := http.Post("http://"+back+"/idkit.v1.IDService/Generators", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), `"scheme":"segment:`) {
		t.Errorf("Generators: %s", b)
	}
}

// httpGet fetches url and returns its status.
func httpGet(url string) (int, error) {
	res, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

var netListenConfig net.ListenConfig

// TestTokenPathNotEchoed: a bearer token pasted where the path of a tokens file belongs
// (--tokens, --metrics-tokens, tokens_file) stops idkitd with an error that says what is wrong
// without showing it. Control: an existing file that holds no token is named.
func TestTokenPathNotEchoed(t *testing.T) {
	const tok = "Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZQ"
	dir := t.TempDir()
	conf := filepath.Join(dir, "idkitd.toml")
	if err := os.WriteFile(conf, []byte("tokens_file = \""+tok+"\"\n[generators]\norders = \"snowflake:node=1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gen := []string{"--gen", "orders=snowflake:node=1"}
	for _, args := range [][]string{
		append([]string{"--tokens", tok}, gen...),
		append([]string{"--metrics-tokens", tok}, gen...),
		{"--config", conf},
	} {
		var stderr strings.Builder
		err := run(context.Background(), &stderr, args)
		if report(&stderr, err) == 0 {
			t.Fatalf("%q: accepted", args)
		}
		if strings.Contains(stderr.String(), tok) {
			t.Errorf("%q: stderr shows the token:\n%s", args, stderr.String())
		}
		if !strings.Contains(stderr.String(), "tokens file") || !strings.Contains(stderr.String(), "no such file") {
			t.Errorf("%q: stderr does not say what is wrong:\n%s", args, stderr.String())
		}
	}
	empty := filepath.Join(dir, "empty-tokens")
	if err := os.WriteFile(empty, []byte("# none yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if report(&stderr, run(context.Background(), &stderr, append([]string{"--tokens", empty}, gen...))) == 0 ||
		!strings.Contains(stderr.String(), empty) {
		t.Errorf("a tokens file without a token: want its path named, got:\n%s", stderr.String())
	}
}
