//go:build fault

package mysqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/internal/netlab"
	"github.com/idkit/idkit/internal/netlab/labtest"
	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
)

// mnode is a mariadbd for the failover tests: binary log, GTID, semi-sync built in, on a
// unix socket for the test and a loopback port for replication.
type mnode struct {
	dir, sock string
	port, id  int
	cmd       *exec.Cmd
	// addr is the address replication reaches it on: 127.0.0.1, or its lan address in a
	// partition lab, where host is the lab host it runs in (empty outside a lab).
	addr, host string
}

// mtemplate installs one data directory that every node starts from a copy of.
func mtemplate(t *testing.T) string {
	t.Helper()
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		unavailable(t, "mariadb-install-db not found")
	}
	if _, err := findMariadbd(); err != nil {
		unavailable(t, err.Error())
	}
	dir := t.TempDir()
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--tmpdir=" + privateTmp(t, dir), "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	return filepath.Join(dir, "data")
}

func startMNode(t *testing.T, tmpl string, id int, semi bool) *mnode {
	t.Helper()
	return startMNodeIn(t, tmpl, id, semi, nil, 300*time.Millisecond)
}

// startMNodeIn is startMNode with rpl_semi_sync_master_timeout semiTimeout, inside lab host h
// (nil: on loopback), where it listens on port 3306 of its lan address.
func startMNodeIn(t *testing.T, tmpl string, id int, semi bool, h *netlab.Host, semiTimeout time.Duration) *mnode {
	t.Helper()
	dir, err := os.MkdirTemp("", "mfo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if out, err := exec.Command("cp", "-a", tmpl, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &mnode{dir: dir, sock: filepath.Join(dir, "sock"), port: l.Addr().(*net.TCPAddr).Port, id: id, addr: "127.0.0.1"}
	l.Close()
	replHost := "127.0.0.1"
	if h != nil {
		n.port, n.addr, n.host, replHost = 3306, h.Addrs[labtest.LAN], h.Name, "10.%"
	}
	bin, _ := findMariadbd()
	onOff := map[bool]string{true: "ON", false: "OFF"}[semi]
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--tmpdir=" + privateTmp(t, dir), "--socket=" + n.sock,
		"--port=" + strconv.Itoa(n.port), "--bind-address=" + n.addr, "--skip-name-resolve",
		"--pid-file=" + filepath.Join(dir, "pid"), "--log-error=" + filepath.Join(dir, "err.log"),
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--max-connections=60",
		"--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", // the stores say unsafe=true: failover is what is tested
		"--server-id=" + strconv.Itoa(id), "--log-bin=binlog", "--log-slave-updates",
		"--rpl-semi-sync-master-enabled=" + onOff, "--rpl-semi-sync-slave-enabled=" + onOff,
		"--rpl-semi-sync-master-wait-point=AFTER_SYNC", "--rpl-semi-sync-master-timeout=" + strconv.FormatInt(semiTimeout.Milliseconds(), 10)}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	n.cmd = exec.Command(bin, args...)
	if h != nil {
		n.cmd = h.Command(context.Background(), bin, args...)
	}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.kill() })
	segtest.WaitFor(t, "mariadbd answering", 60*time.Second, func() bool {
		db, err := sql.Open("mysql", n.dsn(""))
		if err != nil {
			return false
		}
		defer db.Close()
		return db.Ping() == nil
	})
	n.exec(t, "SET SESSION sql_log_bin = 0", "CREATE USER repl@'"+replHost+"'", "GRANT REPLICATION SLAVE ON *.* TO repl@'"+replHost+"'")
	return n
}

func (n *mnode) dsn(db string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "unix", n.sock, db
	return cfg.FormatDSN()
}

// exec runs statements on one connection.
func (n *mnode) exec(t *testing.T, stmts ...string) {
	t.Helper()
	db, err := sql.Open("mysql", n.dsn(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func (n *mnode) status(t *testing.T, name string) string {
	t.Helper()
	db, err := sql.Open("mysql", n.dsn(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var k, v string
	db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v)
	return v
}

func (n *mnode) kill() {
	if n.cmd != nil && n.cmd.Process != nil {
		n.cmd.Process.Signal(syscall.SIGKILL)
		n.cmd.Wait()
		n.cmd = nil
	}
}

// follow makes n a replica of p, from the start of p's binary log.
func (n *mnode) follow(t *testing.T, p *mnode) {
	t.Helper()
	n.exec(t, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '%s', MASTER_PORT = %d, MASTER_USER = 'repl', MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos", p.addr, p.port),
		"START SLAVE")
}

// mpair is a primary and a replica that are replaced at each failover: the replica is
// promoted and a fresh node follows it.
type mpair struct {
	t          *testing.T
	tmpl       string
	semi       bool
	prim, repl *mnode
	nextID     int
	current    atomic.Pointer[string] // the primary's socket, which the stores dial
	// In a partition test (TestFaultPartitionMariaDB) the nodes sit in lab's hosts m0 and m1,
	// replicating over its lan; cut takes the replica's link off the net.
	lab         *netlab.Lab
	semiTimeout time.Duration
}

var dialName atomic.Int64

// The driver logs every connection a killed server breaks; the takers count the errors.
func init() { mysql.SetLogger(log.New(io.Discard, "", 0)) }

func startMPair(t *testing.T, semi bool) (*mpair, string) {
	return startMPairIn(t, semi, nil, 300*time.Millisecond)
}

// startMPairIn is startMPair with rpl_semi_sync_master_timeout semiTimeout, the primary in
// lab's host m0 and the replica in m1 (nil lab: on loopback).
func startMPairIn(t *testing.T, semi bool, lab *netlab.Lab, semiTimeout time.Duration) (*mpair, string) {
	p := &mpair{t: t, tmpl: mtemplate(t), semi: semi, nextID: 3, lab: lab, semiTimeout: semiTimeout}
	p.prim = p.node(1, "m0")
	p.repl = p.node(2, "m1")
	p.repl.follow(t, p.prim)
	p.current.Store(&p.prim.sock)
	p.prim.exec(t, "CREATE DATABASE idkit")
	p.waitReplica()
	// The stores reach whichever node is the primary through a dialer of their own.
	name := fmt.Sprintf("failover%d", dialName.Add(1))
	mysql.RegisterDialContext(name, func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", *p.current.Load())
	})
	return p, "root@" + name + "(primary)/idkit"
}

func (p *mpair) waitReplica() {
	defer func() {
		if p.t.Failed() {
			time.Sleep(2 * time.Second)
			p.t.Logf("replica: %s", p.repl.slaveStatus())
			p.t.Logf("replica err.log:\n%s", tail(filepath.Join(p.repl.dir, "err.log")))
			p.t.Logf("primary err.log:\n%s", tail(filepath.Join(p.prim.dir, "err.log")))
		}
	}()
	segtest.WaitFor(p.t, "the replica connected", 60*time.Second, func() bool {
		if p.semi {
			return p.prim.status(p.t, "Rpl_semi_sync_master_clients") == "1"
		}
		return p.prim.status(p.t, "Slaves_connected") == "1"
	})
}

// node starts node id, in lab host host when the pair is in a lab.
func (p *mpair) node(id int, host string) *mnode {
	var h *netlab.Host
	if p.lab != nil {
		h = p.lab.Host(host)
	}
	return startMNodeIn(p.t, p.tmpl, id, p.semi, h, p.semiTimeout)
}

// cut stops the replica's IO thread (in a lab: takes the replica's link off the net, so the
// replication connection goes silent): semi-sync commits wait rpl_semi_sync_master_timeout,
// then MariaDB falls back to asynchronous replication and acknowledges them anyway.
func (p *mpair) cut() {
	if p.lab != nil {
		if err := p.lab.Cut(context.Background(), p.repl.host, labtest.LAN); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	p.repl.exec(p.t, "STOP SLAVE IO_THREAD")
}

// fail kills the primary, promotes the replica once its SQL thread has applied what it
// received, and has a fresh node follow it.
func (p *mpair) fail() {
	p.prim.kill()
	time.Sleep(300 * time.Millisecond)
	p.repl.exec(p.t, "STOP SLAVE", "RESET SLAVE ALL")
	p.current.Store(&p.repl.sock)
	old := p.prim
	p.prim = p.repl
	if p.lab != nil {
		// The promoted node was the one cut off: heal before a new node follows it.
		if err := p.lab.HealNet(context.Background(), labtest.LAN); err != nil {
			p.t.Fatal(err)
		}
	}
	p.repl = p.node(p.nextID, old.host)
	p.nextID++
	p.repl.follow(p.t, p.prim)
	p.waitReplica()
}

// TestFaultFailoverMariaDB is the MariaDB failover matrix: three takers take IDs while the
// replica's IO thread is stopped past rpl_semi_sync_master_timeout, the primary is SIGKILLed
// and the replica promoted, five times per row. Rows: semi-sync falling back to async,
// unprotected (the control: must repeat) and protected (the fall-back is seen in
// Rpl_semi_sync_master_status and Rpl_semi_sync_master_no_tx, the blocks dropped: no
// repeat); asynchronous replication with durability=async (fencing on server_id and the gap:
// no repeat). An asynchronous pair is refused without durability=async, naming
// Rpl_semi_sync_master_status.
func TestFaultFailoverMariaDB(t *testing.T) {
	const rounds = 5
	for _, r := range []struct {
		name               string
		semi, async, unpro bool
	}{
		{name: "semisync-fallback-unprotected", semi: true, unpro: true},
		{name: "semisync-fallback", semi: true},
		{name: "async-fenced", async: true},
	} {
		t.Run(r.name, func(t *testing.T) {
			p, dsn := startMPair(t, r.semi)
			ctx := context.Background()
			st, err := mysqlstore.Open(ctx, mysqlstore.Settings{DSN: dsn, Unsafe: true})
			if r.semi {
				if err != nil {
					t.Fatal(err)
				}
				if d := st.Durability(); d.Class != segment.ClassSync {
					t.Errorf("durability %v, want sync", d)
				}
				t.Logf("durability: %v", st.Durability())
				st.Close()
			} else {
				if !errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), "Rpl_semi_sync_master_status") {
					t.Fatalf("Open on an asynchronous pair: %v; want ErrNotDurable naming Rpl_semi_sync_master_status", err)
				}
				t.Logf("refused: %v", err)
			}
			open := opener(dsn, r.async, r.unpro, time.Second)
			res := segtest.RunFailover(t, segtest.Failover{Name: r.name, Rounds: rounds, Open: open, Cut: p.cut, CutFor: 800 * time.Millisecond, Fail: p.fail})
			res.Check(t, "mariadb", r.name, rounds, r.unpro)
		})
	}
}

// opener returns how the takers open a Segment (key "k", step 50, timeout per take) on the
// pair's dsn: with durability=async if async, as before fencing if unprotected.
func opener(dsn string, async, unprotected bool, timeout time.Duration) func() (*segment.Segment, error) {
	return func() (*segment.Segment, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := mysqlstore.Open(ctx, mysqlstore.Settings{DSN: dsn, Unsafe: true, AcceptAsync: async})
		if err != nil {
			return nil, err
		}
		if unprotected {
			mysqlstore.Unprotected(st)
		}
		s, err := segment.New(segment.Settings{Stores: []segment.Store{st}, Key: "k", Step: 50, Timeout: timeout})
		if err != nil {
			st.Close()
		}
		return s, err
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 20000 {
		b = b[len(b)-20000:]
	}
	return string(b)
}

func (n *mnode) slaveStatus() string {
	db, err := sql.Open("mysql", n.dsn(""))
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	rows, err := db.Query("SHOW SLAVE STATUS")
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rows.Scan(ptrs...)
		for i, c := range cols {
			if vals[i].String != "" {
				fmt.Fprintf(&b, "%s=%s; ", c, vals[i].String)
			}
		}
	}
	return b.String()
}
