// Package labtest runs a test inside a netlab lab: the test builds the lab, then runs itself
// again inside its control host "ctl", which reaches the servers over nets the nemesis never
// cuts, as Jepsen's control node reaches its nodes over SSH. The test process outside has no
// address in the lab at all, so nothing it does can send a packet to a lab address from the
// machine's own network namespace.
package labtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/netlab"
)

// Environment variables handed to the test binary inside the lab.
const (
	// EnvOut names a directory each run's checker report is written to; a relative path is
	// taken from the test's package directory, so give an absolute one. Without it `make
	// fault` leaves them in a temporary directory; docs/bench/partitions/ holds a committed run.
	EnvOut = "IDKIT_PARTITION_OUT"
)

// Nets of every lab: lan carries the store's and the writers' traffic and is what the nemesis
// cuts; mgmt joins the control host to the servers only, and is never cut.
const (
	LAN  = "lan"
	MGMT = "mgmt"
)

// Inside returns the lab this test binary was started in by Outside, or nil outside one.
func Inside(t *testing.T) *netlab.Lab {
	t.Helper()
	l, err := netlab.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// HostSpec names a lab host and the nets it is on.
type HostSpec struct {
	Name string
	Nets []string
}

// Outside builds a lab of the given hosts, "ctl" (the host the test runs in again) included,
// on the nets they name, and runs the named test again inside "ctl" with the lab in its
// environment (Inside returns it there), streaming its output, then removes the lab. Without
// root or iproute2 it skips the test, or fails it under CI=true. env, once the lab is built, returns
// variables (NAME=value) for the test inside, such as the paths of binaries it built.
func Outside(t *testing.T, test string, limit time.Duration, env func() []string, hosts ...HostSpec) {
	t.Helper()
	if err := netlab.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI runs as root with iproute2)", err)
		}
		t.Skipf("%v: run as root with iproute2 installed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+time.Minute)
	defer cancel()
	var nets []string
	for _, h := range hosts {
		for _, n := range h.Nets {
			if !slices.Contains(nets, n) {
				nets = append(nets, n)
			}
		}
	}
	began := time.Now()
	l, err := netlab.New(ctx, 77, nets...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closing := time.Now()
		if err := l.Close(); err != nil {
			t.Errorf("removing the lab: %v", err)
		}
		t.Logf("lab removed in %v", time.Since(closing).Round(time.Millisecond))
	})
	var ctl *netlab.Host
	for _, h := range hosts {
		lh, err := l.AddHost(ctx, h.Name, h.Nets...)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "ctl" {
			ctl = lh
		}
	}
	if ctl == nil {
		t.Fatal("partition: no ctl host")
	}
	built := time.Now()
	extra := env()
	t.Logf("lab of %d hosts built in %v, binaries in %v", len(hosts), built.Sub(began).Round(time.Millisecond), time.Since(built).Round(time.Millisecond))
	out := os.Getenv(EnvOut)
	if out == "" {
		out = t.TempDir()
	} else if out, err = filepath.Abs(out); err != nil {
		t.Fatal(err)
	}
	cmd := ctl.Command(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1", "-test.timeout="+limit.String())
	cmd.Env = append(append(os.Environ(), l.Env(), EnvOut+"="+out), extra...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Println("    | " + sc.Text())
		}
		close(done)
	}()
	inner := time.Now()
	err = cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		t.Fatalf("%s inside the lab: %v (its output is above)", test, err)
	}
	t.Logf("the test inside the lab took %v; checker reports in %s", time.Since(inner).Round(time.Millisecond), out)
}

// Scenario is one nemesis: Act starts the fault (w0 is the holder the faults aim at) and
// returns the function that ends it.
type Scenario struct {
	Name string
	Act  func(t *testing.T) (heal func())
	// Long marks a scenario that runs only with EnvLong=1 (`make fault-long`), to keep
	// `make fault` within its budget.
	Long bool
}

// EnvLong, set to 1, runs the scenarios marked Long too.
const EnvLong = "IDKIT_FAULT_LONG"

// SkipLong skips t when sc is Long and EnvLong is not 1, saying how to run it.
func SkipLong(t *testing.T, sc Scenario) {
	t.Helper()
	if sc.Long && os.Getenv(EnvLong) != "1" {
		t.Skipf("%s runs with %s=1 (make fault-long), outside make fault's budget", sc.Name, EnvLong)
	}
}

// Servers returns the lab this test runs in; outside one it builds a lab of the named server
// hosts, each on LAN, and "ctl" on MGMT, runs the test inside "ctl" (Outside) and returns nil,
// and the caller returns: the shape of a partition test between servers that the test, as
// their client, reaches over unix sockets only.
func Servers(t *testing.T, test string, limit time.Duration, servers ...string) *netlab.Lab {
	t.Helper()
	if lab := Inside(t); lab != nil {
		return lab
	}
	var hosts []HostSpec
	for _, s := range servers {
		hosts = append(hosts, HostSpec{Name: s, Nets: []string{LAN}})
	}
	hosts = append(hosts, HostSpec{Name: "ctl", Nets: []string{MGMT}})
	Outside(t, test, limit, func() []string { return nil }, hosts...)
	return nil
}
