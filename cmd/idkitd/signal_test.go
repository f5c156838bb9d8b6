package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runMainEnv makes this test binary run idkitd's main with the arguments in it (one per
// line), so that a test can signal a real idkitd process without building one.
const runMainEnv = "IDKITD_TEST_RUN_MAIN"

func init() {
	if args, ok := os.LookupEnv(runMainEnv); ok {
		os.Args = append([]string{"idkitd"}, strings.Split(args, "\n")...)
		main()
	}
}

// TestSecondSignal: a second SIGTERM during the shutdown delay ends idkitd at once, killed
// by SIGTERM (exit status 143 as a shell reports it), as --help and docs/service.md say.
func TestSecondSignal(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"="+strings.Join([]string{"--listen", "127.0.0.1:0", "--grpc-listen", "off", "--shutdown-delay", "30s", "--gen", "a=ulid"}, "\n"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "msg=serving") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the first signal is taken: the shutdown delay runs
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("after a second SIGTERM: %v; want killed by SIGTERM", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM || time.Since(start) > 10*time.Second {
		t.Errorf("after a second SIGTERM: %v after %v; want killed by SIGTERM at once (exit status 143 in a shell), not the 30 s delay", err, time.Since(start))
	}
	for _, f := range []string{"../../docs/service.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), "exit status 143 for SIGTERM") {
			t.Errorf("%s does not say that a second SIGTERM exits 143", f)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(usageHead), " "), "exit status 143 for SIGTERM") {
		t.Errorf("--help does not say that a second SIGTERM exits 143")
	}
}
