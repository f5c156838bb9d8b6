// Package proctest runs the multi-process fault tests: fleets of idwriter processes that
// take node numbers, write IDs to files, get killed with SIGKILL and restart at once, some
// with their clock stepped back; afterwards the union of the files must hold no duplicate.
package proctest

import (
	"bufio"
	"encoding/binary"
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

	"github.com/idkit/idkit/schemes/nodeid/internal/storetest"
)

// Build compiles the idwriter helper into a temporary directory and returns its path.
func Build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "idwriter")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/idkit/idkit/schemes/nodeid/internal/idwriter")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("proctest: building idwriter: %v\n%s", err, out)
	}
	return bin
}

// Proc is one running idwriter.
type Proc struct {
	Name string
	Out  string // its ID file
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	node chan uint64
	done chan error
}

// Start runs bin with args plus -out name.bin in dir.
func Start(t *testing.T, bin, dir, name string, args ...string) *Proc {
	t.Helper()
	return StartIn(t, nil, bin, dir, name, args...)
}

// StartIn is Start with the command run through wrap, a command prefix such as a network
// namespace's "ip netns exec NS" (which execs bin: signals reach it directly).
func StartIn(t *testing.T, wrap []string, bin, dir, name string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, Out: filepath.Join(dir, name+".bin"), node: make(chan uint64, 1), done: make(chan error, 1)}
	argv := append(append(append([]string{}, wrap...), bin), append(args, "-out", p.Out)...)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &lockedWriter{p}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			p.write(line + "\n")
			if v, ok := strings.CutPrefix(line, "node "); ok {
				if n, err := strconv.ParseUint(v, 10, 64); err == nil {
					p.node <- n
				}
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
	})
	return p
}

type lockedWriter struct{ p *Proc }

func (w *lockedWriter) Write(b []byte) (int, error) { w.p.write(string(b)); return len(b), nil }

func (p *Proc) write(s string) {
	p.mu.Lock()
	p.log.WriteString(s)
	p.mu.Unlock()
}

// Log returns what the process printed.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.TrimSpace(p.log.String())
}

// Node waits for the process to report its node number.
func (p *Proc) Node(t *testing.T, limit time.Duration) uint64 {
	t.Helper()
	select {
	case n := <-p.node:
		return n
	case err := <-p.done:
		t.Fatalf("%s exited before taking a node: %v\n%s", p.Name, err, p.Log())
	case <-time.After(limit):
		t.Fatalf("%s took no node within %v\n%s", p.Name, limit, p.Log())
	}
	return 0
}

// Held returns the node the process holds a lease on and when it got it (its "held N since T"
// line), or ok false before it said so.
func (p *Proc) Held() (node uint64, since time.Time, ok bool) {
	for _, line := range strings.Split(p.Log(), "\n") {
		var ns int64
		if _, err := fmt.Sscanf(line, "held %d since %d", &node, &ns); err == nil {
			return node, time.Unix(0, ns), true
		}
	}
	return 0, time.Time{}, false
}

// Done reports whether the process has exited, without waiting.
func (p *Proc) Done() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// Stop asks the process to end now (SIGTERM), as its time running out would; Wait then waits
// for it.
func (p *Proc) Stop() { _ = p.cmd.Process.Signal(syscall.SIGTERM) }

// Kill sends SIGKILL and waits for the process to die.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Wait waits for a normal exit.
func (p *Proc) Wait(t *testing.T, limit time.Duration) {
	t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("%s: %v\n%s", p.Name, err, p.Log())
		}
	case <-time.After(limit):
		t.Errorf("%s still running after %v", p.Name, limit)
	}
}

// Read returns the IDs in a file written by idwriter (a torn last word is dropped).
func Read(t *testing.T, path string) []uint64 {
	t.Helper()
	var ids []uint64
	records(t, path, 8, func(b []byte) { ids = append(ids, binary.LittleEndian.Uint64(b)) })
	return ids
}

// records calls f with each size-byte record of the file at path, which may be missing (no
// records) and whose torn last record is dropped.
func records(t *testing.T, path string, size int, f func([]byte)) {
	t.Helper()
	file, err := os.Open(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r := bufio.NewReader(file)
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		f(buf)
	}
}

// Timed is one ID of a file written by idwriter -timed, with the start and end of its Next call.
type Timed struct {
	ID         uint64
	Send, Recv time.Time
}

// ReadTimed returns the records of a file written by idwriter -timed (a torn last record is
// dropped).
func ReadTimed(t *testing.T, path string) []Timed {
	t.Helper()
	var recs []Timed
	records(t, path, 24, func(b []byte) {
		recs = append(recs, Timed{
			ID:   binary.LittleEndian.Uint64(b[:8]),
			Send: time.Unix(0, int64(binary.LittleEndian.Uint64(b[8:16]))),
			Recv: time.Unix(0, int64(binary.LittleEndian.Uint64(b[16:]))),
		})
	})
	return recs
}

// Fleet runs 8 idwriters against the lease store at url on a layout with exactly 8 slots.
// Mid-run one is killed with SIGKILL and restarted at once, and another is killed and
// restarted with its clock 2 s behind. The restarted ones wait for a slot (the killed ones'
// leases lapse after ttl), so they land on a killed process's slot and start against its
// high-water mark. Afterwards the union of all files must hold no duplicate.
func Fleet(t *testing.T, url string, ttl time.Duration) {
	bin := Build(t)
	dir := t.TempDir()
	const n = 8
	run := 6 * time.Second
	common := []string{"-store", url, "-node-bits", "3", "-ttl", ttl.String()}
	procs := make([]*Proc, n)
	start := time.Now()
	for i := range n {
		procs[i] = Start(t, bin, dir, fmt.Sprintf("p%d", i), append(common, "-for", run.String())...)
	}
	// Two processes may report the same node when the first one's lease lapsed before the
	// second took the slot (a 1 s TTL on a loaded machine: the holder not scheduled to renew
	// in time). That is no fault if the first stopped issuing (its generator is fenced: its
	// Next fails) — checked once it is done — and if the IDs of all hold no duplicate.
	seen := map[uint64]*Proc{}
	var lapsed [][2]*Proc // {earlier holder, later holder}
	for _, p := range procs {
		node := p.Node(t, 10*time.Second)
		if other, dup := seen[node]; dup {
			t.Logf("%s took node %d, which %s reported first: %s's lease must have lapsed", p.Name, node, other.Name, other.Name)
			lapsed = append(lapsed, [2]*Proc{other, p})
		}
		seen[node] = p
	}
	t.Logf("%d processes took %d distinct nodes after %v", n, len(seen), time.Since(start))
	time.Sleep(1500 * time.Millisecond)

	restart := func(victim *Proc, name string, extra ...string) (*Proc, time.Duration) {
		victim.Kill()
		killed := time.Now()
		args := append(append(append([]string{}, common...), "-wait", (3*ttl+5*time.Second).String(), "-for", "3s"), extra...)
		p := Start(t, bin, dir, name, args...)
		node := p.Node(t, 3*ttl+10*time.Second)
		took := time.Since(killed)
		t.Logf("%s killed; %s restarted at once and got node %d after %v", victim.Name, name, node, took)
		return p, took
	}
	r1, _ := restart(procs[2], "p2-restarted")
	r2, _ := restart(procs[5], "p5-restarted-clock-2s", "-offset", "-2s", "-drift-wait", "10s")
	for i, p := range procs {
		if i != 2 && i != 5 {
			p.Wait(t, run+10*time.Second)
		}
	}
	r1.Wait(t, 20*time.Second)
	r2.Wait(t, 20*time.Second)
	for _, pair := range lapsed {
		if pair[0] == procs[2] || pair[0] == procs[5] {
			continue // killed on purpose: its log has no end
		}
		var issued, errs int
		log := pair[0].Log()
		if i := strings.LastIndex(log, "done issued="); i < 0 {
			t.Errorf("%s: no end line:\n%s", pair[0].Name, log)
		} else if _, err := fmt.Sscanf(log[i:], "done issued=%d errors=%d", &issued, &errs); err != nil || errs == 0 {
			t.Errorf("%s and %s both held a node and %s was never fenced (%v):\n%s", pair[0].Name, pair[1].Name, pair[0].Name, err, log)
		}
	}
	var lists [][]uint64
	counts := map[string]int{}
	for _, p := range append(procs, r1, r2) {
		ids := Read(t, p.Out)
		counts[p.Name] = len(ids)
		lists = append(lists, ids)
	}
	checked, dups := storetest.Unique(lists...)
	t.Logf("restarted: %s | %s", r1.Log(), r2.Log())
	t.Logf("fleet of %d processes + 2 restarts: %d IDs checked, %d duplicates; per process %v", n, checked, dups, counts)
	if dups != 0 {
		t.Errorf("%d duplicate IDs", dups)
	}
	if counts[r1.Name] == 0 || counts[r2.Name] == 0 {
		t.Errorf("a restarted process issued nothing: %v", counts)
	}
}

// Freeze stops the process with SIGSTOP, as a long pause would; Thaw continues it.
func (p *Proc) Freeze() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw continues a process frozen by Freeze.
func (p *Proc) Thaw() error { return p.cmd.Process.Signal(syscall.SIGCONT) }
