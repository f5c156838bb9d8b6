package mysqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/segment"
	"github.com/idkit/idkit/schemes/segment/internal/segtest"
	"github.com/idkit/idkit/schemes/segment/mysqlstore"
)

// refused fails t unless Open refuses set with ErrNotDurable naming want.
func refused(t *testing.T, set mysqlstore.Settings, want string) {
	t.Helper()
	_, err := mysqlstore.Open(context.Background(), set)
	if !errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open(table %s, unsafe=%v): %v; want ErrNotDurable naming %q", set.Table, set.Unsafe, err, want)
	}
	t.Log(err)
}

// TestRefusesNotDurable starts a private server with innodb_flush_log_at_trx_commit = 0 and
// the binary log on with sync_binlog = 0, and changes its settings one by one: Open refuses
// each setting that can lose a commit, naming it, and unsafe=true accepts it; a store opened
// on the durable server refuses the block of a Take made after the flush was turned off
// under it, and a MEMORY table is refused always.
func TestRefusesNotDurable(t *testing.T) {
	dsn, _ := privateDatabase(t, "--innodb-flush-log-at-trx-commit=0", "--log-bin=binlog", "--sync-binlog=0", "--server-id=1")
	set := mysqlstore.Settings{DSN: dsn}
	refused(t, set, "innodb_flush_log_at_trx_commit 0")
	openSettings(t, mysqlstore.Settings{DSN: dsn, Unsafe: true})
	sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 2")
	refused(t, set, "innodb_flush_log_at_trx_commit 2")

	sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 1")
	refused(t, set, "sync_binlog 0")
	sqlExec(t, dsn, "SET GLOBAL sync_binlog = 1")
	st := open(t, dsn)
	req := segment.Request{Key: "k", Step: 10, Count: 1}
	if b, err := st.Take(context.Background(), req); err != nil || b.Last != 10 {
		t.Fatalf("Take on a durable server: %v, %v", b, err)
	}
	// A DSN parameter becomes a SET on every connection.
	refused(t, mysqlstore.Settings{DSN: dsn + "?sql_log_bin=0"}, "sql_log_bin OFF in this session")

	sqlExec(t, dsn, "CREATE TABLE mem_segments (biz_tag VARCHAR(128) PRIMARY KEY, max_id BIGINT, step BIGINT, store_index INT, store_count INT, updated_at DATETIME(6)) ENGINE=MEMORY")
	refused(t, mysqlstore.Settings{DSN: dsn, Table: "mem_segments"}, "MEMORY engine")
	refused(t, mysqlstore.Settings{DSN: dsn, Table: "mem_segments", Unsafe: true}, "MEMORY engine")

	// MariaDB's 3 flushes at prepare and at commit: durable.
	sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 3")
	open(t, dsn)

	// The flush turned off under an open store: the take reads it before its write and
	// takes nothing.
	sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 0")
	_, err := st.Take(context.Background(), req)
	if !errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), "innodb_flush_log_at_trx_commit 0") {
		t.Fatalf("Take after the flush was turned off: %v; want ErrNotDurable", err)
	}
	t.Log(err)
	if got := maxID(t, dsn, "k"); got != 10 {
		t.Fatalf("max_id %d, want 10: the take must refuse before its write", got)
	}
}

// TestTakeBracketsCommit (issue 24 item 9): a SET GLOBAL that turns the flush off after the
// take's write and before its COMMIT makes that COMMIT not durable. The take read the
// settings before COMMIT only; now it reads them again after COMMIT and drops the block. The
// control (flush left on) hands out its block.
func TestTakeBracketsCommit(t *testing.T) {
	dsn, _ := privateDatabase(t)
	st := open(t, dsn)
	req := segment.Request{Key: "k", Step: 10, Count: 1}
	for _, setting := range []string{"innodb_flush_log_at_trx_commit = 1", "innodb_flush_log_at_trx_commit = 2"} {
		mysqlstore.SetBeforeCommit(st, func() { sqlExec(t, dsn, "SET GLOBAL "+setting) })
		b, err := st.Take(context.Background(), req)
		mysqlstore.SetBeforeCommit(st, nil)
		sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 1")
		switch {
		case strings.HasSuffix(setting, "1") && err != nil:
			t.Fatalf("control: %v", err)
		case strings.HasSuffix(setting, "2") && (!errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), "innodb_flush_log_at_trx_commit 2")):
			t.Fatalf("Take with %s set before its COMMIT: %v, %v; want ErrNotDurable naming it", setting, b, err)
		}
		t.Logf("%s before COMMIT: %v, %v", setting, b, err)
	}
	if got := maxID(t, dsn, "k"); got != 20 {
		t.Fatalf("max_id %d, want 20: the dropped block is lost, not given back", got)
	}
}

// TestRefusesTornPages starts private servers whose settings, fixed at start-up, let a crash of
// the machine tear or lose the counter's page: without the doublewrite buffer, and with
// innodb_flush_method = nosync. Open refuses both, naming the setting; unsafe=true accepts.
func TestRefusesTornPages(t *testing.T) {
	for _, tc := range []struct{ option, want string }{
		{"--skip-innodb-doublewrite", "innodb_doublewrite"},
		{"--innodb-flush-method=nosync", "innodb_flush_method nosync"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			dsn, _ := privateDatabase(t, tc.option)
			refused(t, mysqlstore.Settings{DSN: dsn}, tc.want)
			openSettings(t, mysqlstore.Settings{DSN: dsn, Unsafe: true})
		})
	}
}

// takeUntilKilled takes blocks of 10 from st in a loop while kill runs, and returns the
// blocks whose commits were acknowledged: the last of them right before the kill.
func takeUntilKilled(t *testing.T, st segment.Store, key string, kill func()) []segment.Block {
	t.Helper()
	var mu sync.Mutex
	var acked []segment.Block
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			b, err := st.Take(ctx, segment.Request{Key: key, Step: 10, Count: 1})
			cancel()
			if err != nil {
				return // the server is gone
			}
			mu.Lock()
			acked = append(acked, b)
			mu.Unlock()
		}
	}()
	segtest.WaitFor(t, "50 blocks", 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 50 })
	kill()
	<-done
	return acked
}

// crashRound takes blocks until mariadbd is killed with SIGKILL, starts it again and takes a
// block in a new store: it returns how many acknowledged blocks the new block overlaps.
func crashRound(t *testing.T, dsn string, srv *server, key string, unsafe, flushOff bool) int {
	t.Helper()
	if flushOff {
		sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 0")
	}
	st := openSettings(t, mysqlstore.Settings{DSN: dsn, Unsafe: unsafe})
	acked := takeUntilKilled(t, st, key, func() { srv.kill(t) })
	srv.start(t)
	if flushOff {
		sqlExec(t, dsn, "SET GLOBAL innodb_flush_log_at_trx_commit = 0")
	}
	b, err := openSettings(t, mysqlstore.Settings{DSN: dsn, Unsafe: unsafe}).Take(context.Background(), segment.Request{Key: key, Step: 10, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	over := 0
	for _, a := range acked {
		if a.Last >= b.First && a.First <= b.Last {
			over++
		}
	}
	last := acked[len(acked)-1]
	t.Logf("%s: %d blocks acknowledged, the last %d..%d; after the restart %d..%d: overlaps %d of them", key, len(acked), last.First, last.Last, b.First, b.Last, over)
	return over
}

// TestFaultCrashFlushLog kills mariadbd with SIGKILL while a store takes blocks in a loop, so
// the last acknowledged commit comes right before the kill, starts it again and takes a block
// from a new store: on the server's durable default (innodb_flush_log_at_trx_commit = 1) the
// new block lies above every acknowledged one, in three crashes. The control runs the same
// crashes with innodb_flush_log_at_trx_commit = 0, which the store refuses, accepted with
// unsafe=true: the new block must repeat acknowledged numbers (the flush runs once a second).
func TestFaultCrashFlushLog(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a MariaDB server")
	}
	dsn, srv := privateDatabase(t)
	const rounds = 3
	for round := range rounds {
		if over := crashRound(t, dsn, srv, fmt.Sprintf("durable-%d", round), false, false); over > 0 {
			t.Fatalf("crash %d: the block taken after the restart repeats %d acknowledged blocks", round+1, over)
		}
	}
	hit := 0
	for round := range rounds {
		if crashRound(t, dsn, srv, fmt.Sprintf("control-%d", round), true, true) > 0 {
			hit++
		}
	}
	if hit == 0 {
		t.Fatalf("control: with innodb_flush_log_at_trx_commit = 0, %d crashes repeated no block: the test cannot see the fault", rounds)
	}
	t.Logf("control: with innodb_flush_log_at_trx_commit = 0 (unsafe=true), %d of %d crashes repeated acknowledged blocks; with 1, 0 of %d", hit, rounds, rounds)
}

// TestCheckVariables runs the settings check over the values MariaDB and MySQL show, including
// a Galera node's (wsrep_on, wsrep_provider_options), which needs a Galera provider to start.
func TestCheckVariables(t *testing.T) {
	durable := map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "OFF", "sync_binlog": "0", "sql_log_bin": "ON",
		"innodb_doublewrite": "ON", "innodb_flush_method": "O_DIRECT", "wsrep_on": "OFF", "wsrep_provider_options": ""}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(durable)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	galera := "base_dir = /var/lib/mysql/; gcache.size = 128M; pc.ignore_quorum = false; pc.ignore_sb = false; pc.weight = 1"
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string // "" when accepted
	}{
		{"defaults", durable, ""},
		{"flush 2", with("innodb_flush_log_at_trx_commit", "2"), "innodb_flush_log_at_trx_commit 2"},
		{"MariaDB flush 3", with("innodb_flush_log_at_trx_commit", "3"), ""},
		{"binlog sync 1", with("log_bin", "ON", "sync_binlog", "1"), ""},
		{"binlog sync 100", with("log_bin", "ON", "sync_binlog", "100"), "sync_binlog 100"},
		{"binlog off in session", with("log_bin", "1", "sync_binlog", "1", "sql_log_bin", "0"), "sql_log_bin 0"},
		{"no binlog, sql_log_bin off", with("sql_log_bin", "OFF"), ""},
		{"MySQL doublewrite detect only", with("innodb_doublewrite", "DETECT_ONLY"), "innodb_doublewrite DETECT_ONLY"},
		{"MySQL doublewrite detect and recover", with("innodb_doublewrite", "DETECT_AND_RECOVER"), ""},
		{"littlesync", with("innodb_flush_method", "littlesync"), "innodb_flush_method littlesync"},
		{"Galera node", with("wsrep_on", "ON", "wsrep_provider_options", galera), ""},
		{"Galera ignore_sb", with("wsrep_on", "ON", "wsrep_provider_options", strings.Replace(galera, "pc.ignore_sb = false", "pc.ignore_sb = true", 1)), "pc.ignore_sb = true"},
		{"Galera ignore_quorum", with("wsrep_on", "ON", "wsrep_provider_options", strings.Replace(galera, "pc.ignore_quorum = false", "pc.ignore_quorum = TRUE", 1)), "pc.ignore_quorum = true"},
		{"Galera off", with("wsrep_provider_options", "pc.ignore_sb = true"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mysqlstore.CheckVariables(tc.vars, false)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, mysqlstore.ErrNotDurable) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want ErrNotDurable naming %q", err, tc.want)
			}
			if err := mysqlstore.CheckVariables(tc.vars, true); err != nil {
				t.Fatalf("unsafe: %v", err)
			}
		})
	}
}

// TestRefusedStoreNotWritten sets read_only = ON under an open store: the store's user (root)
// still commits its increment, and the take is refused after the COMMIT (class unknown, as on
// a replica), the block lost, as with a semi-sync primary fallen back to async. The Segment
// checks the store (Store.Check) before taking again and does not write to it while it
// refuses; the control, the same store without Check, keeps taking and losing blocks
// (segtest.RefusedNotWritten). With read_only OFF again, the Segment issues again. (The crash
// settings are refused before the write, so they lose no block.)
func TestRefusedStoreNotWritten(t *testing.T) {
	dsn, _ := privateDatabase(t)
	segtest.RefusedNotWritten(t, open(t, dsn), open(t, dsn), func(key string) int64 { return maxID(t, dsn, key) },
		func() { sqlExec(t, dsn, "SET GLOBAL read_only = ON") },
		func() { sqlExec(t, dsn, "SET GLOBAL read_only = OFF") },
		mysqlstore.ErrNotDurable, "read_only is ON")
}
