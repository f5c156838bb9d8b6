package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit"
)

func TestGen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		spec    string // to parse the output with
		n       int
		format  idkit.Format
		ordered bool // strictly increasing in output order
	}{
		{"default", nil, "snowflake", 10, idkit.FormatDecimal, true},
		{"snowflake batches", []string{"-n", "10000"}, "snowflake", 10000, idkit.FormatDecimal, true},
		{"discord", []string{"--scheme", "snowflake:layout=discord,worker=3,process=1", "-n", "5"}, "snowflake:layout=discord", 5, idkit.FormatDecimal, true},
		{"wide sequence", []string{"--scheme=snowflake:time_bits=41,node_bits=0,seq_bits=22", "-n=5000"}, "snowflake:time_bits=41,node_bits=0,seq_bits=22", 5000, idkit.FormatDecimal, true},
		{"sonyflake", []string{"--scheme", "sonyflake:machine=7", "-n", "300"}, "sonyflake", 300, idkit.FormatDecimal, true},
		{"ulid", []string{"--scheme", "ulid", "-n", "1000"}, "ulid", 1000, idkit.FormatULID, true},
		{"uuidv7", []string{"-n", "1000", "--scheme", "uuidv7"}, "uuidv7", 1000, idkit.FormatUUID, true},
		{"uuidv4", []string{"--scheme", "uuidv4", "-n", "1000"}, "uuidv4", 1000, idkit.FormatUUID, false},
		{"zero", []string{"-n", "0"}, "snowflake", 0, idkit.FormatDecimal, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", append([]string{"gen"}, tt.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q", r.stderr)
			}
			s, err := idkit.New(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(r.stdout, "\n")
			if last := lines[len(lines)-1]; last != "" {
				t.Fatalf("output does not end in a newline: %q", last)
			}
			lines = lines[:len(lines)-1]
			if len(lines) != tt.n {
				t.Fatalf("%d lines, want %d", len(lines), tt.n)
			}
			seen := make(map[idkit.ID]bool, tt.n)
			var prev idkit.ID
			for i, l := range lines {
				text := strings.TrimSuffix(l, "\n")
				id, err := s.Parse(text)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if id.Format() != tt.format || id.String() != text {
					t.Fatalf("line %d: %q is not canonical %v text", i+1, text, tt.format)
				}
				if seen[id] {
					t.Fatalf("line %d: %s repeats", i+1, text)
				}
				seen[id] = true
				if tt.ordered && i > 0 && idkit.Compare(prev, id) >= 0 {
					t.Fatalf("line %d: %s does not follow %s", i+1, id, prev)
				}
				prev = id
			}
		})
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestGenWriteError(t *testing.T) {
	t.Parallel()
	err := runWithStdin(context.Background(), nil, &failWriter{n: 100}, io.Discard, []string{"gen", "-n", "100000"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the write error", err)
	}
}

func TestGenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := idbenchCtx(ctx, t, "", "gen", "-n", "5")
	if !errors.Is(r.err, context.Canceled) || r.code != 1 {
		t.Fatalf("err = %v, code %d; want context.Canceled, 1", r.err, r.code)
	}
}

// TestGenStreams checks that gen writes while it generates rather than at the end.
func TestGenStreams(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runWithStdin(context.Background(), nil, pw, io.Discard, []string{"gen", "--scheme", "snowflake:time_bits=41,node_bits=0,seq_bits=22", "-n", "1000000000"})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for i := 0; i < 3; i++ {
		if !sc.Scan() {
			t.Fatalf("no line %d: %v", i+1, sc.Err())
		}
		if _, err := strconv.ParseUint(sc.Text(), 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	pr.CloseWithError(errors.New("reader gone"))
	if err := <-done; err == nil || !strings.Contains(err.Error(), "reader gone") {
		t.Fatalf("err = %v, want the pipe's error", err)
	}
}

// TestGenRefusedLayouts: layouts whose IDs would break the promises are usage errors that say
// why: a sequence field above the time field, and a unit so long that the first ID could wait
// for a century.
func TestGenRefusedLayouts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ spec, msg string }{
		{"snowflake:fields=seq:2/time:41/w:10", `sequence field "seq" sits above the time field`},
		{"snowflake:unit=1000000h", "longer than 1h0m0s"},
		{"snowflake:unit=61m", "longer than 1h0m0s"},
	} {
		r := idbench(t, "", "gen", "--scheme", tt.spec, "-n", "3")
		if r.code != 2 || !strings.Contains(r.stderr, tt.msg) || r.stdout != "" {
			t.Errorf("gen --scheme %s: code %d, stdout %q, stderr %q; want 2 and a message containing %q", tt.spec, r.code, r.stdout, r.stderr, tt.msg)
		}
	}
}

// builtIdbench is the idbench binary the process tests share, built once per test binary
// (linking it takes several seconds) into a directory TestMain removes.
var builtIdbench struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildIdbench compiles this command, once for all the tests that run it, and returns its path.
func buildIdbench(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the idbench binary; skipped with -short")
	}
	b := &builtIdbench
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "idbench-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "idbench")
		if out, err := exec.Command("go", "build", "-o", b.bin, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// TestMain removes the shared idbench binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtIdbench.dir != "" {
		os.RemoveAll(builtIdbench.dir)
	}
	os.Exit(code)
}

// TestGenProcessSignal runs the real binary on a layout whose tick is an hour, so its first ID
// waits up to an hour for the next tick (the unit=1m waited ~30 s and then printed the
// ID with status 0). A SIGINT or SIGTERM during that wait must end it at once with status 1,
// "interrupted" on stderr and nothing on stdout. idbench speed, whose measuring loops call
// the generator the same way, is checked too.
func TestGenProcessSignal(t *testing.T) {
	t.Parallel()
	bin := buildIdbench(t)
	cmds := map[string][]string{
		"gen":   {"gen", "--scheme", "snowflake:unit=1h", "-n", "1"},
		"speed": {"speed", "--schemes", "snowflake:unit=1h", "--count", "1", "--libs=false"},
		// db makes one ID of each scheme before it loads, to learn its column type.
		"db": {"db", "--db", "sqlite", "--schemes", "snowflake:unit=1h", "--rows", "1000", "--out", filepath.Join(t.TempDir(), "report")},
	}
	for name, args := range cmds {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(name+"/"+sig.String(), func(t *testing.T) {
				signalDuringWait(t, bin, args, sig)
			})
		}
	}
}

// signalDuringWait starts bin with args, sends sig once it is waiting, and checks that it
// exits at once with status 1, says it was interrupted and printed nothing.
func signalDuringWait(t *testing.T, bin string, args []string, sig syscall.Signal) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Let it start and reach the wait (an hour-long tick ends within this half
	// second once in 7200 runs; the test then reports an ID printed).
	select {
	case err := <-done:
		t.Fatalf("exited before the signal: %v; stdout %q, stderr %q", err, stdout.String(), stderr.String())
	case <-time.After(500 * time.Millisecond):
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running 10 s after %v", sig)
	}
	took := time.Since(sent)
	t.Logf("exited %v after %v", err, took)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit = %v, want status 1", err)
	}
	if took > 2*time.Second {
		t.Errorf("exited %v after %v, want well under a second", took, sig)
	}
	if stdout.Len() != 0 {
		t.Errorf("printed %q after %v", stdout.String(), sig)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr = %q, want it to say interrupted", stderr.String())
	}
}

// TestGenProcessMarkRestart is the reproduction: two runs of the real binary one after
// the other with a mark file and mark_window=1s. The second starts on a clock that did not
// move, against the mark the first saved up to a second ahead; it must wait that out and
// issue IDs above every ID of the first, not fail with "clock moved backwards".
func TestGenProcessMarkRestart(t *testing.T) {
	t.Parallel()
	bin := buildIdbench(t)
	dir := t.TempDir()
	spec := "snowflake:node=3,marks=file:" + filepath.Join(dir, "mk.txt") + ",mark_window=1s"
	run := func(n string) []uint64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, "gen", "--scheme", spec, "-n", n)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("gen -n %s: %v\n%s", n, err, stderr.String())
		}
		t.Logf("gen -n %s took %v", n, time.Since(start))
		var ids []uint64
		for _, f := range strings.Fields(stdout.String()) {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, v)
		}
		return ids
	}
	first := run("100000")
	second := run("3")
	if len(first) != 100000 || len(second) != 3 {
		t.Fatalf("got %d and %d IDs", len(first), len(second))
	}
	if second[0] <= first[len(first)-1] {
		t.Errorf("restart issued %d, not above the first run's last ID %d", second[0], first[len(first)-1])
	}
	if _, err := os.Stat(filepath.Join(dir, "mk.txt")); err != nil {
		t.Errorf("no mark file: %v", err)
	}
}
