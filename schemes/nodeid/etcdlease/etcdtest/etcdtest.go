// Package etcdtest gives tests an etcd server to talk to.
//
// Endpoint returns, in order of preference, the client URL in the environment variable
// IDKIT_TEST_ETCD, or the URL of a private etcd started from the installed binary (etcd on
// PATH or /usr/bin/etcd, Debian package etcd-server) on loopback with free ports and a
// throwaway data directory, stopped when the test ends. Without either the test is skipped,
// except when the environment variable CI is "true", where it fails.
//
// Start always starts a private server, for tests that stop and restart it. A TestMain that
// calls Run lets Endpoint share one server across the package's tests.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvEndpoint is the environment variable holding an existing etcd's client URL.
const EnvEndpoint = "IDKIT_TEST_ETCD"

// shared is the per-test-binary server when TestMain calls Run: the one piece of package
// state, owned by the test binary's TestMain.
var shared struct {
	mu      sync.Mutex
	inMain  bool
	started bool
	srv     *Server
	err     error
}

// Run runs the tests of m, letting Endpoint share one private server across them, and stops
// it afterwards. Call it from TestMain: os.Exit(etcdtest.Run(m)).
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
		os.RemoveAll(shared.srv.dir)
	}
	return code
}

// Endpoint returns an etcd client URL such as "http://127.0.0.1:2379" (see the package doc).
func Endpoint(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvEndpoint); u != "" {
		return u
	}
	shared.mu.Lock()
	if shared.inMain {
		defer shared.mu.Unlock()
		if !shared.started {
			shared.started = true
			shared.srv, shared.err = start()
		}
		if shared.err != nil {
			unavailable(t, shared.err)
		}
		return shared.srv.URL()
	}
	shared.mu.Unlock()
	return Start(t).URL()
}

// Server is a private etcd process.
type Server struct {
	bin, dir   string
	cport      int
	pport      int
	name       string // member name; "idkit-test" for a single server
	cluster    string // --initial-cluster; this member alone for a single server
	token      string // --initial-cluster-token, the same for every member of a cluster
	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	stderrPath string
	host       string   // the address it serves on; "" for 127.0.0.1
	probe      string   // another address it serves clients on, for the test's own checks
	wrap       []string // command prefix, such as ip netns exec NS
}

var errNoBinary = errors.New("no etcd binary on PATH or at /usr/bin/etcd (Debian: apt-get install etcd-server)")

// Start starts a private single-member etcd on loopback and stops it (and removes its data)
// when the test ends. It skips the test when no etcd binary is installed, or fails it under
// CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if errors.Is(err, errNoBinary) {
		unavailable(t, err)
	}
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	t.Cleanup(func() {
		s.Stop()
		os.RemoveAll(s.dir)
	})
	return s
}

func start() (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	base := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm" // etcd fsyncs every write; memory keeps the tests fast
	}
	dir, err := os.MkdirTemp(base, "idkit-etcd-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, name: "idkit-test"}
	if s.cport, err = freePort(); err == nil {
		s.pport, err = freePort()
	}
	s.cluster, s.token = s.name+"="+s.peerURL(), "idkit-test-"+filepath.Base(dir)
	if err == nil {
		err = s.Restart()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// URL returns the client URL.
func (s *Server) URL() string { return "http://" + s.HostPort() }

// HostPort returns the client address as host:port.
func (s *Server) HostPort() string { return net.JoinHostPort(s.addr(), strconv.Itoa(s.cport)) }

func (s *Server) addr() string {
	if s.host != "" {
		return s.host
	}
	return "127.0.0.1"
}

func (s *Server) peerURL() string {
	return "http://" + net.JoinHostPort(s.addr(), strconv.Itoa(s.pport))
}

// ProbeURL returns the client URL the test itself reaches the server by: the probe address a
// cluster member placed with StartClusterOn serves on besides its own, or URL.
func (s *Server) ProbeURL() string {
	if s.probe == "" {
		return s.URL()
	}
	return "http://" + net.JoinHostPort(s.probe, strconv.Itoa(s.cport))
}

// Restart starts the server again after Stop, with its data; it is a no-op while it runs. It
// returns once the server answers its health check, which a cluster member does only while
// the cluster has a leader.
func (s *Server) Restart() error {
	if err := s.launch(); err != nil {
		return err
	}
	return s.waitHealthy(15 * time.Second)
}

// launch starts the process without waiting for it to serve.
func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	listen := s.URL()
	if s.probe != "" {
		listen += "," + s.ProbeURL()
	}
	argv := append(append([]string{}, s.wrap...), s.bin,
		"--name", s.name,
		"--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", listen,
		"--advertise-client-urls", s.URL(),
		"--listen-peer-urls", s.peerURL(),
		"--initial-advertise-peer-urls", s.peerURL(),
		"--initial-cluster", s.cluster,
		"--initial-cluster-token", s.token,
		"--logger", "zap", "--log-level", "error",
	)
	cmd := exec.Command(argv[0], argv[1:]...)
	s.stderrPath = filepath.Join(s.dir, "etcd.log")
	logf, err := os.OpenFile(s.stderrPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	return nil
}

// waitHealthy waits up to limit for the server to answer its health check.
func (s *Server) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		exited := s.exited
		s.mu.Unlock()
		select {
		case <-exited:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			b, _ := os.ReadFile(s.stderrPath)
			return fmt.Errorf("etcd %s exited at start: %s", s.name, tail(b))
		default:
		}
		if healthy(s.ProbeURL()) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("etcd %s did not become healthy within %v", s.name, limit)
}

// Stop kills the server (SIGKILL, like a crash) and waits for it to exit. Its data stays for
// Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

func healthy(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func findBinary() (string, error) {
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/etcd"); err == nil {
		return "/usr/bin/etcd", nil
	}
	return "", errNoBinary
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("etcdtest: no etcd: %v; set %s to an etcd client URL or install etcd-server", err, EnvEndpoint)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
