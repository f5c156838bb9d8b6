// Package partition runs the partition fault tests of the node lease stores: idwriter processes
// each in a network namespace of its own (netlab), holding node leases in a store whose servers
// sit in namespaces too, while a nemesis cuts links off the bridge, splits the net and heals it.
// Each run's history (every ID with the times its Next call started and returned, and every
// process's lease) goes through internal/history's checker.
//
// The test process itself has no address in the lab's data net: Outside builds the lab and
// re-executes the test binary inside a control host that reaches the servers over a
// management net the nemesis never cuts, as Jepsen's control node reaches its nodes over SSH.
package partition

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/history"
	"github.com/idkit/idkit/internal/netlab"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/nodeid/internal/proctest"
)

// EnvWriter hands the idwriter binary built outside the lab to the test inside it.
const EnvWriter = "IDKIT_PARTITION_IDWRITER"

// Nets of the lease-store labs (labtest's).
const (
	LAN  = labtest.LAN
	MGMT = labtest.MGMT
)

// Inside is labtest.Inside.
func Inside(t *testing.T) *netlab.Lab { return labtest.Inside(t) }

// Outside runs the named test inside a lab (labtest.Outside) of the given hosts: servers on
// lan and mgmt, writers on lan, and the control host "ctl" on mgmt; it builds idwriter for
// the writers.
func Outside(t *testing.T, test string, servers, writers []string, limit time.Duration) {
	t.Helper()
	var hosts []labtest.HostSpec
	for _, s := range servers {
		hosts = append(hosts, labtest.HostSpec{Name: s, Nets: []string{LAN, MGMT}})
	}
	for _, w := range writers {
		hosts = append(hosts, labtest.HostSpec{Name: w, Nets: []string{LAN}})
	}
	labtest.Outside(t, test, limit, func() []string { return []string{EnvWriter + "=" + proctest.Build(t)} },
		append(hosts, labtest.HostSpec{Name: "ctl", Nets: []string{MGMT}})...)
}

// Layout of the idwriter IDs: 41 time bits (ms since 2024-01-01 UTC), node bits, 12 sequence.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Fleet is one run's writer processes inside a lab.
type Fleet struct {
	Lab      *netlab.Lab
	Bin, Dir string
	Common   []string // arguments of every writer
	Procs    []*proctest.Proc
	hosts    map[*proctest.Proc]string
	killed   map[*proctest.Proc]bool
}

// NewFleet prepares a fleet whose writers all take the common arguments.
func NewFleet(t *testing.T, l *netlab.Lab, common ...string) *Fleet {
	return &Fleet{Lab: l, Bin: os.Getenv(EnvWriter), Dir: t.TempDir(), Common: common,
		hosts: map[*proctest.Proc]string{}, killed: map[*proctest.Proc]bool{}}
}

// Start runs a writer named name inside host with the common and extra arguments (and -timed).
func (f *Fleet) Start(t *testing.T, host, name string, extra ...string) *proctest.Proc {
	t.Helper()
	h := f.Lab.Host(host)
	if h == nil {
		t.Fatalf("no host %s", host)
	}
	args := append(append(append([]string{}, f.Common...), "-timed"), extra...)
	p := proctest.StartIn(t, h.Wrap(), f.Bin, f.Dir, name, args...)
	f.Procs = append(f.Procs, p)
	f.hosts[p] = host
	return p
}

// Result is one run's outcome.
type Result struct {
	history.Result
	IDs        int
	NodeGap    time.Duration // longest time the watched node answered nothing
	Report     string        // the checker's report
	ReportPath string
}

// Finish stops every writer (SIGTERM), waits for it to end, reads the histories, and checks them: repeats, each
// writer's IDs increasing, no ID sent after its lease ended by the store's account (a
// successor's grant of the same node), and time order within skew. watch is the node whose
// longest unavailability is reported.
func (f *Fleet) Finish(t *testing.T, name string, limit time.Duration, watch int64, nodeBits uint, skew time.Duration) Result {
	t.Helper()
	var ops []history.Op
	type hold struct {
		p     *proctest.Proc
		node  int64
		since time.Time
	}
	var holds []hold
	for _, p := range f.Procs {
		if !f.killed[p] {
			p.Stop()
			p.Wait(t, limit)
		}
		node, since, ok := p.Held()
		if !ok {
			t.Logf("%s held no node: %s", p.Name, p.Log())
			continue
		}
		holds = append(holds, hold{p, int64(node), since})
		for _, r := range proctest.ReadTimed(t, p.Out) {
			ops = append(ops, history.Op{Client: p.Name, Generator: p.Name, Node: int64(node), ID: r.ID, Send: r.Send, Recv: r.Recv})
		}
		t.Logf("%s (host %s, node %d since %s): %s", p.Name, f.hosts[p], node, since.UTC().Format("15:04:05.000"), lastLine(p.Log()))
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i].since.Before(holds[j].since) })
	var leases []history.Lease
	for i, h := range holds {
		l := history.Lease{Generator: h.p.Name, Node: h.node, Start: h.since}
		for _, later := range holds[i+1:] {
			if later.node == h.node {
				l.End = later.since // the store granted the node again: this lease had ended
				break
			}
		}
		leases = append(leases, l)
	}
	seqBits := uint(12)
	timeOf := func(id uint64) time.Time {
		return epoch.Add(time.Duration(id>>(seqBits+nodeBits)) * time.Millisecond)
	}
	res := Result{Result: history.Check(ops, history.Config{Time: timeOf, Skew: skew, Leases: leases}), IDs: len(ops)}
	var watched []history.Op
	for _, o := range ops {
		if o.Node == watch {
			watched = append(watched, o)
		}
	}
	res.NodeGap = history.Check(watched, history.Config{}).LongestGap
	var b strings.Builder
	fmt.Fprintf(&b, ";; %s: %d IDs from %d writers; leases (by grant time):\n", name, len(ops), len(holds))
	for _, l := range leases {
		end := "held to the end"
		if !l.End.IsZero() {
			end = "ended by " + l.End.UTC().Format("15:04:05.000000") + " (the next grant of the node)"
		}
		fmt.Fprintf(&b, ";;   %s node %d from %s, %s\n", l.Generator, l.Node, l.Start.UTC().Format("15:04:05.000000"), end)
	}
	fmt.Fprintf(&b, ";; longest time node %d answered nothing: %v\n", watch, res.NodeGap.Round(time.Millisecond))
	res.Result.Write(&b)
	res.Report = b.String()
	if dir := os.Getenv(labtest.EnvOut); dir != "" {
		res.ReportPath = filepath.Join(dir, strings.NewReplacer("/", "-", " ", "-").Replace(name)+".edn")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if err := os.WriteFile(res.ReportPath, []byte(res.Report), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	return res
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// CutHolder is the scenario "holder-cut": w0's link to lan is taken off the bridge while the
// process goes on running, then put back.
func CutHolder(l *netlab.Lab) labtest.Scenario {
	ctx := context.Background()
	return labtest.Scenario{Name: "holder-cut", Act: func(t *testing.T) func() {
		if err := l.Cut(ctx, "w0", LAN); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := l.Heal(ctx, "w0", LAN); err != nil {
				t.Fatal(err)
			}
		}
	}}
}

// Flap is the scenario "flapping": w0's link goes off for each of offs in turn, back for
// 500 ms between them.
func Flap(l *netlab.Lab, offs ...time.Duration) labtest.Scenario {
	ctx := context.Background()
	return labtest.Scenario{Name: "flapping", Long: true, Act: func(t *testing.T) func() {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for _, off := range offs {
				l.Cut(ctx, "w0", LAN)
				select {
				case <-stop:
					return
				case <-time.After(off):
				}
				l.Heal(ctx, "w0", LAN)
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
		}()
		return func() {
			close(stop)
			<-done
			if err := l.Heal(ctx, "w0", LAN); err != nil {
				t.Fatal(err)
			}
		}
	}}
}

// Run runs each scenario twice on the lease store that url(name) names: as idkit runs, and as
// the control, with the writers' fence and high-water marks off (-fence=false
// -lease-marks=false). Writers w0 and w1 hold the two node slots of a 1-bit layout; the
// scenario's fault starts 1.5 s later; a successor in w2 waits for a free slot, which it gets
// only once w0's lease has lapsed in the store; a second after it took the slot the fault
// ends, and a second later every writer is stopped. The checker must find nothing in the first run and repeated IDs in the control.
func Run(t *testing.T, l *netlab.Lab, store string, url func(name string) string, ttl time.Duration, scenarios ...labtest.Scenario) {
	for _, sc := range scenarios {
		for _, safe := range []bool{true, false} {
			name := sc.Name
			if !safe {
				name = "control-fence-off/" + sc.Name
			}
			t.Run(name, func(t *testing.T) {
				labtest.SkipLong(t, sc)
				f := NewFleet(t, l, "-store", url(strings.ReplaceAll(name, "/", "-")), "-node-bits", "1", "-ttl", ttl.String(), "-rate", "5",
					fmt.Sprintf("-fence=%v", safe), fmt.Sprintf("-lease-marks=%v", safe))
				w0 := f.Start(t, "w0", "w0", "-for", "1m")
				node0 := w0.Node(t, 15*time.Second)
				w1 := f.Start(t, "w1", "w1", "-for", "1m")
				w1.Node(t, 15*time.Second)
				time.Sleep(1500 * time.Millisecond)
				fault := time.Now()
				heal := sc.Act(t)
				succ := f.Start(t, "w2", "w2-successor", "-for", "1m", "-wait", "20s")
				got := succ.Node(t, 25*time.Second)
				t.Logf("the successor took node %d %v after the fault began (w0 holds node %d)", got, time.Since(fault).Round(time.Millisecond), node0)
				if got != node0 {
					t.Errorf("the successor took node %d, not w0's %d", got, node0)
				}
				time.Sleep(time.Second) // both run while the fault lasts
				heal()
				time.Sleep(time.Second) // and after it ended
				res := f.Finish(t, store+"-"+strings.ReplaceAll(name, "/", "-"), 30*time.Second, int64(node0), 1, 10*time.Millisecond)
				t.Logf("checker:\n%s", res.Report)
				t.Logf("RESULT partition %s %s safe=%v: %d IDs, %d repeated, %d stale-lease, %d not increasing, %d time-order; node %d unavailable at most %v",
					store, sc.Name, safe, res.IDs, res.RepeatedN, res.StaleLeaseN, res.NotIncreasingN, res.TimeOrderN, node0, res.NodeGap.Round(time.Millisecond))
				if safe && !res.Valid() {
					t.Errorf("the checker found violations (report above)")
				}
				if !safe && res.RepeatedN == 0 {
					t.Errorf("control: no repeated ID with the fence and marks off; the run cannot see a cut-off holder issuing past its lease")
				}
			})
		}
	}
}
