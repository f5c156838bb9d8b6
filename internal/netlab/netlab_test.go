package netlab_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/netlab"
)

// envEcho makes the test binary an echo server on the given address (a helper process
// started inside a lab host).
const envEcho = "NETLAB_TEST_ECHO"

func TestMain(m *testing.M) {
	if addr := os.Getenv(envEcho); addr != "" {
		os.Exit(echo(addr))
	}
	os.Exit(m.Run())
}

func echo(addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go io.Copy(c, c)
	}
}

// need returns a lab or skips (fails under CI=true) where this machine cannot build one.
func need(t *testing.T, nets ...string) *netlab.Lab {
	t.Helper()
	if err := netlab.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI runs as root with iproute2)", err)
		}
		t.Skipf("%v: run as root with iproute2 installed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := netlab.New(ctx, 201, nets...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// TestSilentPartition shows what a cut is: an established TCP connection between two hosts
// stays open, a write on it is neither refused nor reset, nothing arrives while the link is
// off its bridge, and after the heal TCP's retransmission delivers what was written. The
// control is the same exchange before the cut, which must arrive at once. Run inside host b
// by re-executing this test binary there (the test process itself has no address in the lab).
func TestSilentPartition(t *testing.T) {
	if os.Getenv(netlab.EnvLab) != "" {
		silentPartitionInside(t)
		return
	}
	l := need(t, "lan")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := l.AddHost(ctx, "a", "lan")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.AddHost(ctx, "b", "lan")
	if err != nil {
		t.Fatal(err)
	}
	srv := a.Command(ctx, os.Args[0])
	srv.Env = append(os.Environ(), envEcho+"="+a.Addrs["lan"]+":7000")
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("echo server in host a: %q %v", line, err)
	}
	inner := b.Command(ctx, os.Args[0], "-test.run=^TestSilentPartition$", "-test.v")
	inner.Env = append(os.Environ(), l.Env(), "NETLAB_TEST_PEER="+a.Addrs["lan"]+":7000")
	got, err := inner.CombinedOutput()
	t.Logf("inside host b:\n%s", got)
	if err != nil {
		t.Fatalf("the test inside host b failed: %v", err)
	}
}

func silentPartitionInside(t *testing.T) {
	l, err := netlab.FromEnv()
	if err != nil || l == nil {
		t.Fatalf("lab from env: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, err := net.DialTimeout("tcp", os.Getenv("NETLAB_TEST_PEER"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	exchange := func(msg string, limit time.Duration) error {
		if _, err := io.WriteString(c, msg+"\n"); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		c.SetReadDeadline(time.Now().Add(limit))
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) != msg {
			return fmt.Errorf("echo %q, want %q", line, msg)
		}
		return nil
	}
	if err := exchange("before", 2*time.Second); err != nil {
		t.Fatalf("control: the exchange before the cut: %v", err)
	}
	if err := l.Cut(ctx, "b", "lan"); err != nil {
		t.Fatal(err)
	}
	err = exchange("during", time.Second)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("during the cut: got %v, want a read timeout (no reset, no refusal)", err)
	}
	if err := l.Heal(ctx, "b", "lan"); err != nil {
		t.Fatal(err)
	}
	// The echo of "during" is still owed: TCP retransmits it after the heal.
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || strings.TrimSpace(line) != "during" {
		t.Fatalf("after the heal: %q %v, want the retransmitted echo", line, err)
	}
	if err := exchange("after", 5*time.Second); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
	// A split puts b on a side of its own: the same silence.
	if err := l.Split(ctx, "lan", "b"); err != nil {
		t.Fatal(err)
	}
	if err := exchange("split", time.Second); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("during the split: got %v, want a read timeout", err)
	}
	if err := l.HealNet(ctx, "lan"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || strings.TrimSpace(line) != "split" {
		t.Fatalf("after the split healed: %q %v", line, err)
	}
}

// TestSweep shows that a lab whose owner died is removed by the next New.
func TestSweep(t *testing.T) {
	l := need(t, "lan")
	ctx := context.Background()
	// A process that is gone: a short-lived child's PID.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("iklab%d-9-x", cmd.Process.Pid)
	if err := exec.Command("ip", "netns", "add", stale).Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", stale).Run() })
	netlab.Sweep(ctx)
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), stale) {
		t.Errorf("Sweep left %s", stale)
	}
	if !strings.Contains(string(out), l.Hub) {
		t.Errorf("Sweep removed the live lab's %s", l.Hub)
	}
}

func TestErrors(t *testing.T) {
	l := need(t, "lan")
	ctx := context.Background()
	if _, err := l.AddHost(ctx, "x", "nonet"); err == nil || !strings.Contains(err.Error(), `no net "nonet"`) {
		t.Errorf("AddHost on an unknown net: %v", err)
	}
	if err := l.Cut(ctx, "nohost", "lan"); err == nil || !strings.Contains(err.Error(), `no host "nohost"`) {
		t.Errorf("Cut of an unknown host: %v", err)
	}
	if _, err := l.AddHost(ctx, "bad name", "lan"); err == nil {
		t.Error("AddHost took a name with a blank")
	}
	if _, err := netlab.New(ctx, 0, "lan"); err == nil {
		t.Error("New took base 0")
	}
}
