package pgstore_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
)

// childEnv makes the test binary a writer process: it takes IDs from the spec in the variable
// and appends each, 8 bytes big-endian, to the file named by childOut, until killed.
const (
	childEnv = "IDKIT_SEGMENT_CHILD_SPEC"
	childOut = "IDKIT_SEGMENT_CHILD_OUT"
)

func init() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	os.Exit(child(spec, os.Getenv(childOut)))
}

// childGoroutines is how many goroutines of a writer process take IDs (default 1).
const childGoroutines = "IDKIT_SEGMENT_CHILD_GOROUTINES"

func child(spec, out string) int {
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, err := idkit.New(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	g, _ := strconv.Atoi(os.Getenv(childGoroutines))
	var mu sync.Mutex // one write per ID, unbuffered: what is in the file was issued
	var once sync.Once
	fail := make(chan error, 1)
	for range max(g, 1) {
		go func() {
			var b [8]byte
			for {
				id, err := s.Next()
				if err == nil {
					binary.BigEndian.PutUint64(b[:], id.Uint64())
					mu.Lock()
					_, err = f.Write(b[:])
					mu.Unlock()
				}
				if err != nil {
					select {
					case fail <- err:
					default:
					}
					return
				}
				once.Do(func() { fmt.Println("ready") })
				time.Sleep(20 * time.Microsecond)
			}
		}()
	}
	fmt.Fprintln(os.Stderr, "writer:", <-fail)
	return 1
}

func startChild(t *testing.T, spec, out string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+spec, childOut+"="+out), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "ready" {
			t.Fatalf("writer did not start: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("writer did not start within 30s")
	}
	return cmd
}

func readIDs(t *testing.T, path string) []uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, 0, len(b)/8)
	for i := 0; i+8 <= len(b); i += 8 { // a kill can cut the last write short
		ids = append(ids, binary.BigEndian.Uint64(b[i:]))
	}
	return ids
}

// TestFaultSIGKILL kills writer processes with SIGKILL mid-block and starts them again: the
// rest of each killed block is lost, and no ID repeats across all processes and restarts.
func TestFaultSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs writer processes")
	}
	dsn := pgtest.Schema(t)
	u := storeURL(t, dsn)
	spec := "segment:store=" + u + ",key=k,step=1000"
	dir := t.TempDir()
	var files []string
	var cmds []*exec.Cmd
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("w%d-0.bin", i))
		files = append(files, f)
		cmds = append(cmds, startChild(t, spec, f))
	}
	for round := 1; round <= 4; round++ {
		time.Sleep(150 * time.Millisecond)
		victim := round % 2
		if err := cmds[victim].Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		cmds[victim].Wait()
		var before []uint64
		for _, f := range files {
			before = append(before, readIDs(t, f)...)
		}
		f := filepath.Join(dir, fmt.Sprintf("w%d-%d.bin", victim, round))
		files = append(files, f)
		cmds[victim] = startChild(t, spec, f)
		// The new process starts on a fresh block, above everything issued so far.
		first := readIDs(t, f)[0]
		for _, v := range before {
			if v >= first {
				t.Fatalf("round %d: restarted writer began at %d, but %d was issued before", round, first, v)
			}
		}
	}
	for _, c := range cmds {
		c.Process.Kill()
		c.Wait()
	}
	var all []uint64
	for _, f := range files {
		all = append(all, readIDs(t, f)...)
	}
	segtest.CheckUnique(t, "SIGKILL", all)
	hi := maxID(t, dsn, "k")
	t.Logf("%d processes started, %d IDs written, store max_id %d: %d numbers lost with the rest of killed and preloaded blocks", len(files), len(all), hi, hi-int64(len(all)))
}

// TestFaultRestartProcesses restarts the store under load from 3 writer processes × 4
// goroutines: no writer fails (each exits at its first failed Next), IDs keep coming while the
// server is down, and no ID repeats across the processes.
func TestFaultRestartProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a PostgreSQL server and runs writer processes")
	}
	c := private(t)
	u := storeURL(t, c.DSN())
	spec := "segment:store=" + u + ",key=k,step=20000,timeout=1s,wait=3s"
	dir := t.TempDir()
	var files []string
	var cmds []*exec.Cmd
	for i := range 3 {
		f := filepath.Join(dir, fmt.Sprintf("w%d.bin", i))
		files = append(files, f)
		cmds = append(cmds, startChild(t, spec, f, childGoroutines+"=4"))
	}
	size := func() (n int64) {
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size() / 8
			}
		}
		return n
	}
	time.Sleep(300 * time.Millisecond)
	ctx := context.Background()
	if err := c.Stop(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	before := size()
	time.Sleep(time.Second)
	during := size() - before
	if err := c.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	after := maxID(t, c.DSN(), "k")
	segtest.WaitFor(t, "blocks from the restarted server", 30*time.Second, func() bool { return maxID(t, c.DSN(), "k") >= after+3*20000 })
	for i, cmd := range cmds {
		if cmd.ProcessState != nil {
			t.Errorf("writer %d exited: %v", i, cmd.ProcessState)
		}
		cmd.Process.Kill()
		cmd.Wait()
		if st := cmd.ProcessState; st != nil && st.Exited() {
			t.Errorf("writer %d exited by itself with %v (a failed Next)", i, st)
		}
	}
	if during == 0 {
		t.Error("no ID was written while the server was down")
	}
	var all []uint64
	for _, f := range files {
		all = append(all, readIDs(t, f)...)
	}
	t.Logf("%d IDs written in the second the server was down", during)
	segtest.CheckUnique(t, "restart with writer processes", all)
}
