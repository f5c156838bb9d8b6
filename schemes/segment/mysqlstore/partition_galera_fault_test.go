//go:build fault

package mysqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/internal/history"
	"github.com/idkit/idkit/internal/netlab"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
)

// galeraProvider is where Debian's galera-4 package installs the wsrep provider.
const galeraProvider = "/usr/lib/galera/libgalera_smm.so"

// envGaleraDir hands the test inside the lab the directory its nodes' directories go in.
const envGaleraDir = "IDKIT_GALERA_DIR"

// galeraDir returns a temporary directory, removed when t ends, that the mysql user can
// reach (t.TempDir and its parent are 0700).
func galeraDir(t *testing.T) string {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// galeraHosts are the lab hosts of the three Galera nodes.
var galeraHosts = []string{"g0", "g1", "g2"}

// TestFaultPartitionGalera cuts one node of a three-node Galera cluster off by a real
// partition: each mariadbd sits in a network namespace of its own (netlab) with its own
// address, group communication and state transfer on the lab's net; g0 bootstraps the cluster
// (--wsrep-new-cluster) and g1 and g2 join it with one rsync state transfer each, as the
// mysql user (the rsync daemon of the transfer cannot write into a root-owned data directory).
// Nine takers, each a Segment on a store of its own, as separate processes would, take IDs of
// one key per row over unix sockets, a path the partition does not touch, and every answer
// goes into a history with its send and receive times. A cut takes the node's link off the
// bridge (silent: no RST, the connections stay open); once the node reports a non-Primary
// component (evs.suspect_timeout, 3 s here) its store must refuse every take: no take through
// it succeeds from then until the heal (or until the writer moves away from it), and no ID it
// hands out then lies in a block taken after the cut. After each heal the node rejoins by IST
// alone. Rows:
//
//   - one-writer-node-cut: every taker reaches the cluster through a proxy to one writer node,
//     as HAProxy or ProxySQL with one writer does; the writer is cut off, its takes are
//     refused for 6 s, then the proxy moves the writer to a majority node and closes the old
//     writer's connections; healed; twice (g0, then g1). The checker (internal/history) must
//     find no ID twice and each Segment's IDs increasing.
//   - node-cut: three takers on every node at once (multi-writer); the store's writer guard
//     lets one node at a time take the key (the package doc, "One writer node per key"). Each
//     round cuts the node the key's row names as its writer, so another must take the key
//     over; twice. The cut-off node must refuse as above, the checker must find no ID twice
//     and each Segment's IDs increasing, and the key must have moved twice.
//   - idle-writer: no fault; takers on every node, and ten times the writer node's takers
//     stop asking for 6 to 8.7 s, around the hand-over delay, so that another node claims the
//     key about when they ask again. The checker must find no ID twice, and the key must have
//     moved from node to node at least three times.
//   - node-cut-no-writer-guard (a control): the same with the guard off (a test hook,
//     NoWriterGuard), as the store was before it; cut rounds (g2, g1, g0, …) until the checker
//     finds a repeat, at most six, and it must find one. Galera's certification does not keep
//     two nodes from committing the same read-modify-write (Jepsen found P4, Lost Update, in
//     MariaDB Galera Cluster 12.1.2 even without faults): without the guard this row repeated
//     IDs in four runs of five with two cuts.
//   - node-cut-ignore-quorum (the control): on the same cluster, pc.ignore_quorum and
//     pc.ignore_sb are set on every node (SET GLOBAL wsrep_provider_options) and fresh stores
//     opened with the store's refusal of them bypassed by a test hook (AllowSplitBrain, which
//     no URL or Settings field reaches); g2 is cut off and stays Primary alone, both halves
//     take blocks of the same counter (the cut-off node's after it took the key over, a
//     failover gap above the majority's), and the checker must find repeats. It is not healed:
//     two Primary components that took different writes cannot merge. Before it, a store
//     opened without the hook before the SET GLOBAL must refuse its next take.
func TestFaultPartitionGalera(t *testing.T) {
	lab := labtest.Inside(t)
	if lab == nil {
		var hosts []labtest.HostSpec
		for _, h := range galeraHosts {
			hosts = append(hosts, labtest.HostSpec{Name: h, Nets: []string{labtest.LAN}})
		}
		// The nodes' directories live in one the test outside makes and removes, so that they
		// go also when the test inside is killed by its timeout before its cleanups run.
		labtest.Outside(t, "TestFaultPartitionGalera", 12*time.Minute, func() []string { return []string{envGaleraDir + "=" + galeraDir(t)} },
			append(hosts, labtest.HostSpec{Name: "ctl", Nets: []string{labtest.MGMT}})...)
		return
	}
	c := startGalera(t, lab)
	c.exec(t, c.nodes[0], "CREATE DATABASE idkit")

	t.Run("one-writer-node-cut", func(t *testing.T) {
		px := newWriterProxy(c.nodes[0])
		run := c.startTakers(t, "k1", px, takerOpts{})
		for _, next := range []*gnode{c.nodes[1], c.nodes[2]} {
			run.waitIDs(t, 500)
			c.cutRound(t, run, px.current(), func() { px.move(next) })
		}
		run.waitIDs(t, 500)
		run.stop(t).check(t, "one-writer-node-cut", protected)
	})

	t.Run("node-cut", func(t *testing.T) {
		// Takers on every node; the writer guard lets one node at a time take the key. Each
		// round cuts the node that writes it, so the others must take it over.
		run := c.startTakers(t, "k2", nil, takerOpts{})
		run.minMoves = 2
		for range 2 {
			run.waitIDs(t, 500)
			c.cutRound(t, run, c.writerOf(t, "k2"), nil)
		}
		run.waitIDs(t, 500)
		run.stop(t).check(t, "node-cut", protected)
	})

	t.Run("idle-writer", func(t *testing.T) {
		// No fault: takers on every node, and ten times the writer node's takers stop asking
		// for IDs for 6 to 8.7 s, the hand-over delay (5 s) and 1 to 3.7 s more (a waiting
		// node's Segment retries every 1.6 s once its takes keep failing, so it claims 5 to
		// 8.2 s after the writer's last take; 6.5 to 7 s in the runs so far), so that another
		// node claims the key about when the writer's takers take again: the race the claim's
		// gap and the hand-over delay after it are for.
		run := c.startTakers(t, "k6", nil, takerOpts{})
		run.minMoves = 3
		stop := c.watchWriter(t, "k6")
		defer stop()
		for i := range 10 {
			run.waitIDs(t, 200)
			w := c.writerOf(t, "k6")
			d := 6*time.Second + time.Duration(i)*300*time.Millisecond
			t.Logf("%s's takers pause for %v at %s", w.name, d, clock(time.Now()))
			run.pause(w.name, d)
		}
		run.waitIDs(t, 200)
		run.stop(t).check(t, "idle-writer", protected)
	})

	t.Run("node-cut-no-writer-guard", func(t *testing.T) {
		// The control: takers on every node with the writer guard off (a test hook no URL or
		// Settings field reaches), as the store was before it; cut rounds until the checker
		// finds a repeat, at most six (the unguarded row repeated in four runs of five with two
		// cuts).
		run := c.startTakers(t, "k5", nil, takerOpts{noGuard: true})
		for i := 0; i < 6; i++ {
			run.waitIDs(t, 500)
			c.cutRound(t, run, c.nodes[(2+2*i)%3], nil)
			if res := history.Check(run.snapshot(), history.Config{}); res.RepeatedN > 0 {
				t.Logf("node-cut-no-writer-guard: repeats found after %d cuts", i+1)
				break
			}
		}
		run.waitIDs(t, 500)
		run.stop(t).check(t, "node-cut-no-writer-guard", control)
	})

	t.Run("node-cut-ignore-quorum", func(t *testing.T) {
		// A store opened before the settings change sees it at its next take.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		early, err := mysqlstore.Open(ctx, mysqlstore.Settings{DSN: c.nodes[2].dsn()})
		if err != nil {
			t.Fatal(err)
		}
		defer early.Close()
		req := segment.Request{Key: "k4", Step: 20, Count: 1}
		// The first take claims the new key for g2 (the writer guard); it takes blocks a
		// hand-over delay later.
		segtest.WaitFor(t, "a take of k4 on g2", 30*time.Second, func() bool {
			_, err = early.Take(ctx, req)
			if errors.Is(err, mysqlstore.ErrNotWriter) {
				time.Sleep(200 * time.Millisecond)
				return false
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.nodes {
			c.exec(t, n, "SET GLOBAL wsrep_provider_options = 'pc.ignore_quorum = true; pc.ignore_sb = true'")
		}
		if _, err := early.Take(ctx, req); !errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), "pc.ignore_") {
			t.Errorf("take after SET GLOBAL wsrep_provider_options = 'pc.ignore_quorum = true; …' on a store opened before: %v; want ErrNotDurable naming the option", err)
		} else {
			t.Logf("a store opened before the SET GLOBAL refuses its next take: %v", err)
		}
		run := c.startTakers(t, "k3", nil, takerOpts{split: true})
		run.waitIDs(t, 500)
		victim := c.nodes[2]
		cutAt := time.Now()
		if err := lab.Cut(context.Background(), victim.name, labtest.LAN); err != nil {
			t.Fatal(err)
		}
		// The majority sees the view without g2; g2 stays Primary alone.
		segtest.WaitFor(t, "the majority's view without "+victim.name, 60*time.Second, func() bool {
			return c.status(c.nodes[0], "wsrep_cluster_size") == "2"
		})
		t.Logf("%s cut off at %s; majority view of 2 after %v; %s: %s, size %s", victim.name, clock(cutAt), time.Since(cutAt).Round(time.Millisecond),
			victim.name, c.status(victim, "wsrep_cluster_status"), c.status(victim, "wsrep_cluster_size"))
		run.addCut(cutRound{victim: victim.name, cut: cutAt, detected: time.Now(), heal: time.Now().Add(time.Hour)})
		// Both halves take blocks until the checker finds a repeat: with the writer guard on,
		// the cut-off node claims the key once it has seen it unchanged for the hand-over
		// delay, a failover gap (1,000 blocks of 20) above the majority's writer, which
		// reaches that range only after as many IDs.
		for i := 0; i < 40; i++ {
			run.waitIDs(t, 2000)
			if res := history.Check(run.snapshot(), history.Config{}); res.RepeatedN > 0 {
				t.Logf("node-cut-ignore-quorum: repeats found after %d IDs", res.Ops)
				break
			}
		}
		run.stop(t).check(t, "node-cut-ignore-quorum", control)
	})
}

// writerProxy sends every store connection to one node, the writer, as a proxy in front of
// a Galera cluster does (HAProxy or ProxySQL with one writer); when the writer moves it
// closes the connections to the old one (HAProxy's on-marked-down shutdown-sessions), so no
// take reaches two nodes at once.
type writerProxy struct {
	name  string // the dialer's name in go-sql-driver/mysql
	mu    sync.Mutex
	node  *gnode
	conns []net.Conn
	moved time.Time
}

var proxies atomic.Int64

func newWriterProxy(n *gnode) *writerProxy {
	p := &writerProxy{name: fmt.Sprintf("galera-writer%d", proxies.Add(1)), node: n}
	mysql.RegisterDialContext(p.name, func(ctx context.Context, _ string) (net.Conn, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", p.node.sock)
		if err == nil {
			p.conns = append(p.conns, conn)
		}
		return conn, err
	})
	return p
}

func (p *writerProxy) current() *gnode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.node
}

// move makes n the writer and closes every connection to the old one.
func (p *writerProxy) move(n *gnode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.node = n
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.moved = time.Now()
}

// gnode is one mariadbd Galera node in a lab host.
type gnode struct {
	name, addr, dir, sock string
	host                  *netlab.Host
	cmd                   *exec.Cmd
	db                    *sql.DB // root over the unix socket, for status and statements
}

// galera is the cluster.
type galera struct {
	lab   *netlab.Lab
	nodes []*gnode
}

// startGalera starts the three nodes and waits until each is Synced in a Primary component
// of three; it skips without the Galera provider, mariadbd or the mysql user.
func startGalera(t *testing.T, lab *netlab.Lab) *galera {
	t.Helper()
	if _, err := os.Stat(galeraProvider); err != nil {
		unavailable(t, "no Galera provider at "+galeraProvider+" (apt-get install galera-4)")
	}
	if _, err := exec.LookPath("wsrep_sst_rsync"); err != nil {
		unavailable(t, "wsrep_sst_rsync not found (it comes with mariadb-server)")
	}
	if _, err := exec.LookPath("rsync"); err != nil {
		unavailable(t, "rsync not found: the state transfer uses it (apt-get install rsync)")
	}
	mysqlUser, err := user.Lookup("mysql")
	if err != nil {
		unavailable(t, "no mysql user: the nodes run as it so that the rsync state transfer can write their data directories")
	}
	tmpl := mtemplate(t)
	c := &galera{lab: lab}
	var addrs []string
	for _, h := range galeraHosts {
		host := lab.Host(h)
		if host == nil {
			t.Fatalf("no lab host %s", h)
		}
		dir, err := os.MkdirTemp(os.Getenv(envGaleraDir), "galera-")
		if err != nil {
			t.Fatal(err)
		}
		n := &gnode{name: h, addr: host.Addrs[labtest.LAN], dir: dir, sock: filepath.Join(dir, "sock"), host: host}
		t.Cleanup(func() {
			n.kill()
			if t.Failed() {
				t.Logf("%s err.log (tail):\n%s", n.name, tailN(filepath.Join(n.dir, "err.log"), 6000))
			}
			os.RemoveAll(dir)
		})
		if out, err := exec.Command("cp", "-a", tmpl, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
			t.Fatal(err)
		}
		// The mysql user must reach and own the node's directory.
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chown", "-R", mysqlUser.Uid+":"+mysqlUser.Gid, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
		c.nodes = append(c.nodes, n)
		addrs = append(addrs, n.addr)
	}
	for i, n := range c.nodes {
		c.start(t, n, strings.Join(addrs, ","), i == 0)
		if i == 0 {
			c.waitSynced(t, n, 1, 2*time.Minute)
		}
	}
	// The joiners' state transfers: one at a time from a donor, each a few seconds on a
	// quiet machine and a minute or two under load (wsrep_sst_rsync is a shell script).
	for _, n := range c.nodes[1:] {
		c.waitSynced(t, n, 0, 6*time.Minute)
	}
	for _, n := range c.nodes {
		c.waitSynced(t, n, 3, time.Minute)
	}
	return c
}

// providerOptions are the group communication settings: the node listens on its lab address,
// and a silent peer is suspected after 3 s (Galera's default is 5 s) so that a cut is seen
// quickly; keepalives every 0.5 s.
func providerOptions(addr string) string {
	return strings.Join([]string{
		"gmcast.listen_addr=tcp://" + addr + ":4567", "ist.recv_addr=" + addr + ":4568",
		"evs.keepalive_period=PT0.5S", "evs.inactive_check_period=PT0.5S", "evs.suspect_timeout=PT3S",
		"evs.inactive_timeout=PT6S", "evs.install_timeout=PT6S", "gcache.size=64M",
	}, "; ")
}

func (c *galera) start(t *testing.T, n *gnode, cluster string, bootstrap bool) {
	t.Helper()
	bin, err := findMariadbd()
	if err != nil {
		unavailable(t, err.Error())
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(n.dir, "data"), "--tmpdir=" + filepath.Join(n.dir, "tmp"),
		"--socket=" + n.sock, "--port=3306", "--bind-address=" + n.addr, "--skip-name-resolve",
		"--pid-file=" + filepath.Join(n.dir, "pid"), "--log-error=" + filepath.Join(n.dir, "err.log"),
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--max-connections=80", "--user=mysql",
		"--binlog-format=ROW", "--innodb-autoinc-lock-mode=2", "--default-storage-engine=InnoDB",
		"--wsrep-on=ON", "--wsrep-provider=" + galeraProvider, "--wsrep-cluster-name=idkit",
		"--wsrep-cluster-address=gcomm://" + cluster, "--wsrep-node-address=" + n.addr, "--wsrep-node-name=" + n.name,
		"--wsrep-sst-method=rsync", "--wsrep-sst-receive-address=" + n.addr + ":4444",
		"--wsrep-provider-options=" + providerOptions(n.addr)}
	if bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	n.cmd = n.host.Command(context.Background(), bin, args...)
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", n.sock
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 2*time.Second, 5*time.Second, 5*time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	n.db = db
	t.Cleanup(func() { db.Close() })
}

// kill ends the node's mariadbd (and so its state transfer script, which watches its parent).
func (n *gnode) kill() {
	if n.cmd != nil && n.cmd.Process != nil {
		n.cmd.Process.Signal(syscall.SIGKILL)
		n.cmd.Wait()
		n.cmd = nil
	}
}

// status reads one global status variable of n ("" when n does not answer).
func (c *galera) status(n *gnode, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var k, v string
	n.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v)
	return v
}

// waitSynced waits until n is Synced in a Primary component (of size members, when not 0).
func (c *galera) waitSynced(t *testing.T, n *gnode, size int, d time.Duration) {
	t.Helper()
	segtest.WaitFor(t, n.name+" Synced in the Primary component", d, func() bool {
		if n.cmd != nil && n.cmd.ProcessState != nil {
			t.Fatalf("%s exited", n.name)
		}
		ok := c.status(n, "wsrep_local_state_comment") == "Synced" && c.status(n, "wsrep_cluster_status") == "Primary"
		if ok && size > 0 {
			ok = c.status(n, "wsrep_cluster_size") == fmt.Sprint(size)
		}
		if !ok {
			time.Sleep(100 * time.Millisecond)
		}
		return ok
	})
}

func (c *galera) exec(t *testing.T, n *gnode, q string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.db.ExecContext(ctx, q); err != nil {
		t.Fatalf("%s: %s: %v", n.name, q, err)
	}
}

// cutRound cuts victim off, waits until it reports a non-Primary component, holds the cut for
// a few seconds more while its takers keep asking, calls move (when set: the proxy moves the
// writer), heals, and waits until victim is Synced in the Primary component of three again
// and IDs flow again (from victim's own takers, when there is no proxy).
func (c *galera) cutRound(t *testing.T, run *galeraRun, victim *gnode, move func()) {
	t.Helper()
	ctx := context.Background()
	cutAt := time.Now()
	if err := c.lab.Cut(ctx, victim.name, labtest.LAN); err != nil {
		t.Fatal(err)
	}
	segtest.WaitFor(t, victim.name+" outside the Primary component", 60*time.Second, func() bool {
		s := c.status(victim, "wsrep_cluster_status")
		return s != "" && s != "Primary"
	})
	detected := time.Now()
	const hold = 6 * time.Second
	time.Sleep(hold)
	end := time.Now() // the end of the window in which victim must take nothing
	if move != nil {
		move()
		run.waitIDs(t, 200)
	}
	healAt := time.Now()
	if err := c.lab.Heal(ctx, victim.name, labtest.LAN); err != nil {
		t.Fatal(err)
	}
	c.waitSynced(t, victim, 3, 2*time.Minute)
	rejoined := time.Now()
	switch {
	case move == nil && run.opts.noGuard:
		before := run.countOn(victim)
		segtest.WaitFor(t, victim.name+"'s takers issuing again", time.Minute, func() bool { return run.countOn(victim) > before+100 })
	case move == nil:
		// With the writer guard, the victim's takers issue again only if it writes the key
		// again: another node took it over while it was cut off.
		run.waitIDs(t, 100)
	}
	run.addCut(cutRound{victim: victim.name, cut: cutAt, detected: detected, heal: end, rejoined: rejoined})
	t.Logf("%s cut at %s, non-Primary after %v, writer moved or cut held for %v more, healed at %s, Synced in a view of 3 %v after the heal (wsrep_last_committed %s)",
		victim.name, clock(cutAt), detected.Sub(cutAt).Round(time.Millisecond), end.Sub(detected).Round(time.Millisecond), clock(healAt),
		rejoined.Sub(healAt).Round(time.Millisecond), c.status(victim, "wsrep_last_committed"))
}

// cutRound is what one cut recorded.
type cutRound struct {
	victim                        string
	cut, detected, heal, rejoined time.Time
}

// take is one Take of a node's store, as a recordingStore saw it.
type take struct {
	node       string
	start, end time.Time
	block      segment.Block
	err        error
}

// recordingStore records every Take of the store it wraps.
type recordingStore struct {
	*mysqlstore.Store
	node func() string // the node the store's connections reach
	run  *galeraRun
}

// Check records a failed check as a refused take: a Segment whose last take failed checks
// the store before it takes again, and does not take while the check fails.
func (r *recordingStore) Check(ctx context.Context) error {
	start, node := time.Now(), r.node()
	err := r.Store.Check(ctx)
	if err != nil {
		r.run.mu.Lock()
		r.run.takes = append(r.run.takes, take{node: node, start: start, end: time.Now(), err: fmt.Errorf("check: %w", err)})
		r.run.mu.Unlock()
	}
	return err
}

func (r *recordingStore) Take(ctx context.Context, req segment.Request) (segment.Block, error) {
	start, node := time.Now(), r.node()
	b, err := r.Store.Take(ctx, req)
	r.run.mu.Lock()
	r.run.takes = append(r.run.takes, take{node: node, start: start, end: time.Now(), block: b, err: err})
	r.run.mu.Unlock()
	return b, err
}

// galeraRun is the takers of one row and what they recorded.
type galeraRun struct {
	stopc  chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	ops    []history.Op
	opNode []string       // the node each op's Segment took its blocks from, when it was sent
	count  map[string]int // IDs per node
	errs   map[string]int
	takes  []take
	cuts   []cutRound
	opts   takerOpts
	paused string // the node whose takers pause
	pauses int
	// minMoves is how many times at least the key's successful takes must move from one node
	// to another in the row (the writer guard's hand-overs it must exercise).
	minMoves int
}

// pause keeps the takers of node from asking for IDs for d (it returns after d).
func (run *galeraRun) pause(node string, d time.Duration) {
	run.mu.Lock()
	run.paused, run.pauses = node, run.pauses+1
	run.mu.Unlock()
	time.Sleep(d)
	run.mu.Lock()
	run.paused = ""
	run.mu.Unlock()
}

func (run *galeraRun) isPaused(node string) bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.paused == node
}

// snapshot returns the history so far.
func (run *galeraRun) snapshot() []history.Op {
	run.mu.Lock()
	defer run.mu.Unlock()
	return append([]history.Op(nil), run.ops...)
}

// takersPerNode is how many takers each node serves.
const takersPerNode = 3

// takerOpts are the controls' hooks: split opens the stores with the split-brain refusal
// bypassed, noGuard with the writer guard off.
type takerOpts struct{ split, noGuard bool }

// byGcommUUID maps each node's wsrep_gcomm_uuid, which the writer guard records as a key's
// writer, to the node.
func (c *galera) byGcommUUID() map[string]*gnode {
	m := map[string]*gnode{}
	for _, n := range c.nodes {
		m[c.status(n, "wsrep_gcomm_uuid")] = n
	}
	return m
}

// watchWriter logs each change of the key's writer node, as g0 reads the row every 50 ms,
// until the returned function is called.
func (c *galera) watchWriter(t *testing.T, key string) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		names := map[string]string{}
		for uuid, n := range c.byGcommUUID() {
			names[uuid] = n.name
		}
		last := ""
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			var uuid string
			var maxID int64
			err := c.nodes[0].db.QueryRowContext(ctx, "SELECT COALESCE(writer, ''), max_id FROM idkit.idkit_segments WHERE biz_tag = ?", key).Scan(&uuid, &maxID)
			cancel()
			if err == nil && uuid != last {
				t.Logf("%s: writer %s → %s at %s (max_id %d)", key, orDash(names[last]), orDash(names[uuid]), clock(time.Now()), maxID)
				last = uuid
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writerOf returns the node the key's row names as its writer, waiting until one does.
func (c *galera) writerOf(t *testing.T, key string) *gnode {
	t.Helper()
	var w *gnode
	segtest.WaitFor(t, "a writer node of "+key, time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var uuid string
		c.nodes[0].db.QueryRowContext(ctx, "SELECT COALESCE(writer, '') FROM idkit.idkit_segments WHERE biz_tag = ?", key).Scan(&uuid)
		if w = c.byGcommUUID()[uuid]; uuid != "" && w != nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
		return false
	})
	t.Logf("%s: the writer node is %s", key, w.name)
	return w
}

// startTakers starts takersPerNode takers on each node, each with a Segment on a store of its
// own over the node's unix socket (key key, blocks of 20), recording every answer; with px,
// as many takers all reach the cluster through px's writer. A taker whose Segment cannot be
// opened or fails for good opens another, as a restarted process would. opts holds the
// controls' hooks.
func (c *galera) startTakers(t *testing.T, key string, px *writerProxy, opts takerOpts) *galeraRun {
	run := &galeraRun{stopc: make(chan struct{}), count: map[string]int{}, errs: map[string]int{}, opts: opts}
	for _, n := range c.nodes {
		for i := range takersPerNode {
			client := fmt.Sprintf("%s/t%d", n.name, i)
			dsn, node := n.dsn(), func() string { return n.name }
			if px != nil {
				client = fmt.Sprintf("writer/%s-t%d", n.name, i)
				dsn, node = px.dsn(), func() string { return px.current().name }
			}
			run.wg.Go(func() { run.taker(client, dsn, node, key) })
		}
	}
	t.Cleanup(run.halt)
	return run
}

func (n *gnode) dsn() string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "unix", n.sock, "idkit"
	cfg.Timeout = 2 * time.Second
	return cfg.FormatDSN()
}

func (p *writerProxy) dsn() string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", p.name, "writer", "idkit"
	cfg.Timeout = 2 * time.Second
	return cfg.FormatDSN()
}

func (run *galeraRun) halt() {
	select {
	case <-run.stopc:
	default:
		close(run.stopc)
	}
	run.wg.Wait()
}

func (run *galeraRun) taker(client, dsn string, node func() string, key string) {
	var s *segment.Segment
	gens := 0
	gen := ""
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	for {
		select {
		case <-run.stopc:
			return
		default:
		}
		if s == nil {
			var err error
			if s, err = run.open(dsn, node, key); err != nil {
				run.fail("open: " + errKind(err))
				time.Sleep(100 * time.Millisecond)
				continue
			}
			gens++
			gen = fmt.Sprintf("%s/s%d", client, gens)
		}
		at := node()
		if run.isPaused(at) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		send := time.Now()
		v, err := s.Next()
		recv := time.Now()
		switch {
		case err == nil:
			run.mu.Lock()
			run.ops = append(run.ops, history.Op{Client: client, Generator: gen, Node: -1, ID: v, Send: send, Recv: recv})
			run.opNode = append(run.opNode, at)
			run.count[at]++
			run.mu.Unlock()
			time.Sleep(time.Millisecond)
		case errors.Is(err, segment.ErrUnavailable):
			run.fail(at + " next: " + errKind(err))
			time.Sleep(20 * time.Millisecond)
		default:
			run.fail(at + " next, segment closed: " + errKind(err))
			s.Close()
			s = nil
		}
	}
}

func (run *galeraRun) open(dsn string, node func() string, key string) (*segment.Segment, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	set := mysqlstore.Settings{DSN: dsn}
	if run.opts.split {
		mysqlstore.AllowSplitBrain(&set)
	}
	st, err := mysqlstore.Open(ctx, set)
	if err != nil {
		return nil, err
	}
	if run.opts.noGuard {
		mysqlstore.NoWriterGuard(st)
	}
	s, err := segment.New(segment.Settings{Stores: []segment.Store{&recordingStore{Store: st, node: node, run: run}}, Key: key, Step: 20,
		Timeout: 2 * time.Second, Wait: 3 * time.Second})
	if err != nil {
		st.Close()
	}
	return s, err
}

func (run *galeraRun) fail(kind string) {
	run.mu.Lock()
	run.errs[kind]++
	run.mu.Unlock()
}

// errKind shortens an error to a countable kind: its first line without numbers that vary.
func errKind(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("MariaDB error %d: %s", me.Number, me.Message)
	}
	if errors.Is(err, mysqlstore.ErrNotWriter) {
		switch full := err.Error(); {
		case strings.Contains(full, "claimed the key ("):
			return "refused (ErrNotWriter): this take claimed the key"
		case strings.Contains(full, "after its claim"):
			return "refused (ErrNotWriter): the node's claim is settling"
		case strings.Contains(full, "changed during the take"):
			return "refused (ErrNotWriter): the row changed during the take"
		}
		return "refused (ErrNotWriter): another node writes the key"
	}
	if errors.Is(err, mysqlstore.ErrNotDurable) {
		if _, why, ok := strings.Cut(s, "cannot take blocks safely: "); ok {
			return "refused (ErrNotDurable): " + why
		}
	}
	s = retrying.ReplaceAllString(s, "")
	if len(s) > 220 {
		s = s[:220] + "…"
	}
	return s
}

// retrying matches the part of a Segment's error that changes from one call to the next.
var retrying = regexp.MustCompile(` \(retrying in [^)]*\)|up to \d+|for key "[^"]*"|of key "[^"]*"`)

func (run *galeraRun) countOn(n *gnode) int {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.count[n.name]
}

func (run *galeraRun) addCut(r cutRound) {
	run.mu.Lock()
	run.cuts = append(run.cuts, r)
	run.mu.Unlock()
}

// waitIDs waits until n more IDs were issued.
func (run *galeraRun) waitIDs(t *testing.T, n int) {
	t.Helper()
	total := func() int {
		run.mu.Lock()
		defer run.mu.Unlock()
		return len(run.ops)
	}
	before := total()
	segtest.WaitFor(t, fmt.Sprintf("%d more IDs", n), 2*time.Minute, func() bool { return total() >= before+n })
}

// galeraResult is what a row found.
type galeraResult struct {
	run *galeraRun
	res history.Result
}

// stop ends the takers and checks the history.
func (run *galeraRun) stop(t *testing.T) galeraResult {
	run.halt()
	return galeraResult{run: run, res: history.Check(run.ops, history.Config{})}
}

// rowKind says what a row must show.
type rowKind int

const (
	protected rowKind = iota // no repeat, the cut-off node takes nothing
	control                  // repeats
)

// check logs the row (the ROW line docs/segment.md's partition table quotes), writes the
// checker's report, and fails t unless a control repeated and a protected row did not, and,
// outside the control, unless the cut-off node took no block between seeing itself outside
// the Primary component and the heal (or the move of the writer) and issued no ID from a
// block taken after its cut, and its takers asked it for blocks in that window.
func (g galeraResult) check(t *testing.T, row string, kind rowKind) {
	t.Helper()
	run, res := g.run, g.res
	kinds := make([]string, 0, len(run.errs))
	for k := range run.errs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%s: %d× %s", row, run.errs[k], k)
	}
	per := make([]string, 0, len(run.count))
	for _, n := range galeraHosts {
		per = append(per, fmt.Sprintf("%s %d", n, run.count[n]))
	}
	t.Logf("%s: IDs per node: %s; %d takes and failed checks, %d of them failed", row, strings.Join(per, ", "), len(run.takes), failed(run.takes))
	for _, cr := range run.cuts {
		var ok, refused int
		var lateIDs, fromLate int
		for _, tk := range run.takes {
			if tk.node != cr.victim || tk.end.Before(cr.detected) || tk.end.After(cr.heal) {
				continue
			}
			if tk.err == nil {
				ok++
			} else {
				refused++
			}
		}
		// IDs the cut-off node issued after its cut and before its heal, and how many of
		// them lie in a block one of its takes returned after the cut.
		for i, o := range run.ops {
			if run.opNode[i] != cr.victim || o.Recv.Before(cr.detected) || o.Recv.After(cr.heal) {
				continue
			}
			lateIDs++
			for _, tk := range run.takes {
				if tk.node == cr.victim && tk.err == nil && tk.end.After(cr.cut) && o.ID >= tk.block.First && o.ID <= tk.block.Last {
					fromLate++
					break
				}
			}
		}
		t.Logf("%s: %s outside the Primary component, until the heal or the writer's move: %d takes or checks refused, %d takes succeeded; %d IDs issued from blocks taken before the cut, %d from blocks taken after it",
			row, cr.victim, refused, ok, lateIDs-fromLate, fromLate)
		if kind != control {
			if ok > 0 || fromLate > 0 {
				t.Errorf("%s, cut off outside the Primary component, took %d blocks and issued %d IDs from blocks taken after the cut", cr.victim, ok, fromLate)
			}
			if refused == 0 {
				t.Errorf("%s's takers asked for no block while it was cut off: the row did not exercise the refusal", cr.victim)
			}
		}
	}
	// How often the key's blocks moved from one node to another: the hand-overs of the
	// writer guard, or the interleaving of nodes without it.
	var ok []take
	for _, tk := range run.takes {
		if tk.err == nil {
			ok = append(ok, tk)
		}
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].end.Before(ok[j].end) })
	var moves []string
	for i := 1; i < len(ok); i++ {
		if ok[i].node != ok[i-1].node {
			moves = append(moves, fmt.Sprintf("%s→%s at %s", ok[i-1].node, ok[i].node, clock(ok[i].end)))
		}
	}
	n := len(moves)
	if n > 8 {
		moves = append(moves[:8], "…")
	}
	t.Logf("%s: successful takes moved between nodes %d times: %s", row, n, strings.Join(moves, ", "))
	if n < run.minMoves {
		t.Errorf("%s: successful takes moved between nodes %d times, want at least %d: the row did not exercise the hand-over", row, n, run.minMoves)
	}
	// The takes behind the first repeats: which nodes handed out the same block.
	for i, c := range res.Repeated {
		if i == 3 {
			break
		}
		var who []string
		for _, tk := range run.takes {
			if tk.err == nil && c.Later.ID >= tk.block.First && c.Later.ID <= tk.block.Last {
				who = append(who, fmt.Sprintf("%s took %d-%d (%s to %s)", tk.node, tk.block.First, tk.block.Last, clock(tk.start), clock(tk.end)))
			}
		}
		t.Logf("%s: ID %d repeated; takes whose block holds it: %s", row, c.Later.ID, strings.Join(who, "; "))
	}
	var b strings.Builder
	res.Write(&b)
	t.Logf("%s: checker: valid %v, %d ops, %d generators, longest gap %v, %d repeated, %d not increasing", row, res.Valid(), res.Ops,
		res.Generators, res.LongestGap.Round(time.Millisecond), res.RepeatedN, res.NotIncreasingN)
	events := fmt.Sprintf("%d cuts", len(run.cuts))
	if run.pauses > 0 {
		events = fmt.Sprintf("%d pauses", run.pauses)
	}
	t.Logf("ROW galera-partition %s: %s, %d IDs, %d repeated", row, events, res.Ops, res.RepeatedN)
	if dir := os.Getenv(labtest.EnvOut); dir != "" {
		name := "segment-galera-" + row + ".edn"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	switch {
	case kind == control && res.RepeatedN == 0:
		t.Errorf("control: no repeated ID with both halves Primary: the test cannot see what it looks for")
	case kind == protected && !res.Valid():
		t.Errorf("the history is not valid:\n%s", b.String())
	}
}

func failed(takes []take) int {
	n := 0
	for _, tk := range takes {
		if tk.err != nil {
			n++
		}
	}
	return n
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

func tailN(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
