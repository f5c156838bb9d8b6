//go:build fault

// The etcd cluster fault test runs with `make fault` (go test -tags fault), not in
// `make test`: it starts a 3-member etcd cluster and 9 writer processes per run, kills
// members and writers and freezes writers, and takes about two minutes.

package etcdlease_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid/etcdlease/etcdtest"
	"github.com/idkit/idkit/schemes/nodeid/internal/proctest"
	"github.com/idkit/idkit/schemes/nodeid/internal/storetest"
)

// clusterTTL is the writers' lease TTL: 3 s, so that a 1 s election (etcd's default election
// timeout) does not fence a healthy holder, whose deadline is TTL/2 after its last renewal.
const clusterTTL = 3 * time.Second

// successorLag is how far behind the first holder's clock a successor's clock reads: a wall
// clock stepped back, or another host's clock. More than the TTL, so that without the
// high-water mark the successor issues times its predecessor issued before it stopped: the
// takeover took up to 7 s after the leader was killed (the new leader restores every lease to
// its full TTL plus an election timeout, etcd #9395).
const successorLag = 10 * time.Second

// TestFaultCluster is issue 25's etcd reproduction: 8 writer processes hold the 8 node slots
// of a 3-bit layout in a 3-member etcd cluster on loopback and write IDs to files, while
//
//   - follower-killed: a follower is killed with SIGKILL, one writer is killed and a successor
//     claims its slot while the member is down, then the member restarts;
//   - leader-killed: the leader is killed and a writer with it; the successor's claim waits out
//     the lapse across the election (which extends every lease, etcd #4778), the old leader
//     restarts as a follower;
//   - holder-frozen: a writer is frozen with SIGSTOP past its lease, a successor claims its
//     slot and issues, and the frozen writer is thawed while the successor runs.
//
// Each successor's clock reads successorLag behind, so only the high-water mark kept in etcd
// beside the slot (marks/n, which the successor loads and waits out) keeps it off the times
// its predecessor issued. Every run must show 0 repeated IDs across all processes. Each
// scenario's control is the same run with the writers' marks off (-lease-marks=false): the
// successor then reissues its predecessor's IDs, which shows the run can see a repeat.
func TestFaultCluster(t *testing.T) {
	cl := etcdtest.StartCluster(t, 3)
	bin := proctest.Build(t)
	hosts := strings.Join(cl.HostPorts(), "+")
	run := time.Now().UnixNano()
	for _, sc := range []struct {
		name string
		act  func(t *testing.T, f *clusterFleet)
	}{
		{"follower-killed", func(t *testing.T, f *clusterFleet) {
			m := f.member(t, false)
			t.Logf("killing follower m%d", m)
			cl.Members[m].Stop()
			f.kill(f.procs[1])
			f.replace(t, 1, time.Now())
			time.Sleep(2 * time.Second)
			f.restart(t, m)
		}},
		{"leader-killed", func(t *testing.T, f *clusterFleet) {
			m := f.member(t, true)
			t.Logf("killing leader m%d", m)
			cl.Members[m].Stop()
			killed := time.Now()
			f.kill(f.procs[1])
			if l, err := cl.Leader(10 * time.Second); err == nil {
				t.Logf("m%d leads %v after the kill", l, time.Since(killed))
			}
			f.replace(t, 1, killed)
			f.restart(t, m)
		}},
		{"holder-frozen", func(t *testing.T, f *clusterFleet) {
			victim := f.procs[3]
			if err := victim.Freeze(); err != nil {
				t.Fatal(err)
			}
			frozen := time.Now()
			f.replace(t, 3, frozen)
			time.Sleep(time.Second) // the successor issues while the holder is frozen
			t.Logf("thawing %s after %v (TTL %v)", victim.Name, time.Since(frozen), clusterTTL)
			if err := victim.Thaw(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, marks := range []bool{true, false} {
			name := sc.name
			if !marks {
				name = "control-marks-off/" + sc.name
			}
			t.Run(name, func(t *testing.T) {
				url := fmt.Sprintf("etcd://%s/idkit-fault/%d/%s", hosts, run, strings.ReplaceAll(name, "/", "-"))
				f := startFleet(t, bin, cl, url, marks)
				sc.act(t, f)
				checked, dups := f.finish(t)
				t.Logf("RESULT etcd-cluster %s marks=%v: %d IDs from %d processes, %d repeated", sc.name, marks, checked, len(f.procs), dups)
				if marks && dups != 0 {
					t.Errorf("%d IDs issued twice", dups)
				}
				if !marks && dups == 0 {
					t.Errorf("control: no repeated ID with the marks off; the run cannot see a successor reissuing its predecessor's IDs")
				}
			})
		}
	}
}

// clusterFleet is one run's writer processes.
type clusterFleet struct {
	bin, dir, url string
	marks         bool
	cl            *etcdtest.Cluster
	procs         []*proctest.Proc // every process started, killed ones included
	nodes         map[*proctest.Proc]uint64
	killed        map[*proctest.Proc]bool
}

const fleetRun = 9 * time.Second

func startFleet(t *testing.T, bin string, cl *etcdtest.Cluster, url string, marks bool) *clusterFleet {
	f := &clusterFleet{bin: bin, dir: t.TempDir(), url: url, marks: marks, cl: cl, nodes: map[*proctest.Proc]uint64{}, killed: map[*proctest.Proc]bool{}}
	for i := range 8 {
		f.procs = append(f.procs, proctest.Start(t, bin, f.dir, fmt.Sprintf("p%d", i), f.args("-for", fleetRun.String())...))
	}
	for _, p := range f.procs {
		f.nodes[p] = p.Node(t, 15*time.Second)
	}
	time.Sleep(1500 * time.Millisecond)
	return f
}

func (f *clusterFleet) args(extra ...string) []string {
	a := []string{"-store", f.url, "-node-bits", "3", "-ttl", clusterTTL.String(), fmt.Sprintf("-lease-marks=%v", f.marks)}
	return append(a, extra...)
}

// kill kills writer p with SIGKILL.
func (f *clusterFleet) kill(p *proctest.Proc) {
	p.Kill()
	f.killed[p] = true
}

// member returns the index of the leader, or of a follower.
func (f *clusterFleet) member(t *testing.T, leader bool) int {
	t.Helper()
	l, err := f.cl.Leader(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if leader {
		return l
	}
	return (l + 1) % len(f.cl.Members)
}

// replace starts a successor to writer i, stopped at the given time, whose clock lags; it
// waits for a free slot: the one writer i held, once its lease has lapsed.
func (f *clusterFleet) replace(t *testing.T, i int, stopped time.Time) {
	t.Helper()
	victim := f.procs[i]
	p := proctest.Start(t, f.bin, f.dir, victim.Name+"-successor",
		f.args("-for", (successorLag+2*time.Second).String(), "-wait", "20s", "-offset", (-successorLag).String(), "-drift-wait", "15s")...)
	f.procs = append(f.procs, p)
	f.nodes[p] = p.Node(t, 25*time.Second)
	t.Logf("%s took node %d of %s %v after it stopped", p.Name, f.nodes[p], victim.Name, time.Since(stopped))
	if f.nodes[p] != f.nodes[victim] {
		t.Fatalf("%s took node %d, not %s's node %d", p.Name, f.nodes[p], victim.Name, f.nodes[victim])
	}
}

// restart starts member m again and waits for the cluster to be healthy.
func (f *clusterFleet) restart(t *testing.T, m int) {
	t.Helper()
	if err := f.cl.Members[m].Restart(); err != nil {
		t.Fatal(err)
	}
	if err := f.cl.WaitHealthy(20 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// finish waits for every writer to end and counts the IDs of all of them and the repeats.
func (f *clusterFleet) finish(t *testing.T) (checked, dups int) {
	t.Helper()
	var lists [][]uint64
	for _, p := range f.procs {
		if !f.killed[p] {
			p.Wait(t, fleetRun+successorLag+30*time.Second)
		}
		ids := proctest.Read(t, p.Out)
		lists = append(lists, ids)
		if strings.Contains(p.Name, "successor") || len(ids) == 0 {
			t.Logf("%s (node %d): %d IDs; %s", p.Name, f.nodes[p], len(ids), p.Log())
		}
	}
	return storetest.Unique(lists...)
}
