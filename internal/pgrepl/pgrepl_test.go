package pgrepl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/pglocal"
	"github.com/idkit/idkit/dbbench/pgtest"
	"github.com/idkit/idkit/internal/pgrepl"
	"github.com/idkit/idkit/internal/pgrepl/pgrepltest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var standbyNames = []struct {
	in   string
	want pgrepl.StandbyNames
	err  string
}{
	{"", pgrepl.StandbyNames{}, ""},
	{"   ", pgrepl.StandbyNames{}, ""},
	{"s1", pgrepl.StandbyNames{Num: 1, Names: []string{"s1"}}, ""},
	{"s1, s2", pgrepl.StandbyNames{Num: 1, Names: []string{"s1", "s2"}}, ""},
	{"*", pgrepl.StandbyNames{Num: 1, Names: []string{"*"}}, ""},
	{"first_standby", pgrepl.StandbyNames{Num: 1, Names: []string{"first_standby"}}, ""},
	{"FIRST 2 (s1, s2, s3)", pgrepl.StandbyNames{Num: 2, Names: []string{"s1", "s2", "s3"}}, ""},
	{"2 (s1, s2)", pgrepl.StandbyNames{Num: 2, Names: []string{"s1", "s2"}}, ""},
	{"any 1 (s1,\"S 2\")", pgrepl.StandbyNames{Quorum: true, Num: 1, Names: []string{"s1", "S 2"}}, ""},
	{"ANY 1(s1)", pgrepl.StandbyNames{Quorum: true, Num: 1, Names: []string{"s1"}}, ""},
	{"ANY s1", pgrepl.StandbyNames{}, "want a number"},
	{"FIRST 0 (s1)", pgrepl.StandbyNames{}, "at least 1"},
	{"FIRST 3 (s1, s2)", pgrepl.StandbyNames{}, "waits for 3 standbys of 2"},
	{"ANY 1 (s1, s2", pgrepl.StandbyNames{}, "no closing parenthesis"},
	{"ANY 1 (s1,,s2)", pgrepl.StandbyNames{}, "empty or malformed"},
	{"s1 (x)", pgrepl.StandbyNames{}, "empty or malformed"},
}

func TestParseStandbyNames(t *testing.T) {
	for _, tc := range standbyNames {
		got, err := pgrepl.ParseStandbyNames(tc.in)
		switch {
		case tc.err != "":
			if !errors.Is(err, pgrepl.ErrStandbyNames) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseStandbyNames(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
		case err != nil || got.Quorum != tc.want.Quorum || got.Num != tc.want.Num || !slices.Equal(got.Names, tc.want.Names):
			t.Errorf("ParseStandbyNames(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseStandbyNames(f *testing.F) {
	for _, tc := range standbyNames {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := pgrepl.ParseStandbyNames(in)
		if err != nil {
			if !errors.Is(err, pgrepl.ErrStandbyNames) {
				t.Fatalf("error %v does not wrap ErrStandbyNames", err)
			}
			return
		}
		if n.Num > len(n.Names) || n.Num < 0 || (n.Num == 0) != (strings.TrimSpace(in) == "") {
			t.Fatalf("ParseStandbyNames(%q) = %+v", in, n)
		}
	})
}

func TestClass(t *testing.T) {
	sb := func(name, state, sync string) pgrepl.Standby {
		return pgrepl.Standby{Name: name, State: state, SyncState: sync}
	}
	slot := func(name string, active bool) pgrepl.Slot { return pgrepl.Slot{Name: name, Active: active} }
	for _, tc := range []struct {
		f      pgrepl.Facts
		want   pgrepl.Class
		reason string
	}{
		{pgrepl.Facts{SynchronousCommit: "on"}, pgrepl.Single, "no standby"},
		{pgrepl.Facts{SynchronousCommit: "on", Standbys: []pgrepl.Standby{sb("s1", "streaming", "async")}}, pgrepl.Async, "synchronous_standby_names is empty"},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync")}}, pgrepl.Sync, "each synchronous"},
		{pgrepl.Facts{SynchronousCommit: "remote_apply", SynchronousStandbyNames: "s1"}, pgrepl.Sync, "0 standbys"},
		{pgrepl.Facts{SynchronousCommit: "local", SynchronousStandbyNames: "s1", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync")}}, pgrepl.Async, "synchronous_commit = local"},
		{pgrepl.Facts{SynchronousCommit: "remote_write", SynchronousStandbyNames: "s1", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync")}}, pgrepl.Async, "synchronous_commit = remote_write"},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1, s2", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync"), sb("s2", "streaming", "potential")}}, pgrepl.Async, `standby "s2" is in sync_state potential`},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync"), sb("pg_basebackup", "backup", "async")}}, pgrepl.Async, `"pg_basebackup" is in sync_state async`},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "ANY 1 (s1, s2)", Standbys: []pgrepl.Standby{sb("s1", "streaming", "quorum"), sb("s2", "streaming", "quorum")}}, pgrepl.Async, "waits for 1 of the 2 quorum"},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "ANY 2 (s1, s2)", Standbys: []pgrepl.Standby{sb("s1", "streaming", "quorum"), sb("s2", "streaming", "quorum")}}, pgrepl.Sync, "2 standbys"},
		{pgrepl.Facts{SynchronousCommit: "on", Standbys: []pgrepl.Standby{sb("s1", "streaming", "")}}, pgrepl.Unknown, "pg_monitor"},
		{pgrepl.Facts{SynchronousCommit: "on", InRecovery: true}, pgrepl.Unknown, "is a standby"},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "ANY x"}, pgrepl.Unknown, "bad synchronous_standby_names"},
		// Physical replication slots: a standby that is away (issue 37).
		{pgrepl.Facts{SynchronousCommit: "on", Slots: []pgrepl.Slot{slot("s1", false)}}, pgrepl.Async, `no standby streams from the server, but physical replication slot "s1" (inactive)`},
		{pgrepl.Facts{SynchronousCommit: "on", Slots: []pgrepl.Slot{slot("s1", false)}}, pgrepl.Async, "pg_drop_replication_slot('s1')"},
		{pgrepl.Facts{SynchronousCommit: "on", Slots: []pgrepl.Slot{slot("s1", false)}}, pgrepl.Async, "durability=async"},
		{pgrepl.Facts{SynchronousCommit: "on", Slots: []pgrepl.Slot{slot("s1", true)}}, pgrepl.Async, `"s1" (active)`},
		{pgrepl.Facts{SynchronousCommit: "on", Standbys: []pgrepl.Standby{sb("s1", "streaming", "async")}, Slots: []pgrepl.Slot{slot("s1", true)}}, pgrepl.Async, `standby "s1" streams asynchronously`},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync")}, Slots: []pgrepl.Slot{slot("s1", true)}}, pgrepl.Sync, "each synchronous"},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1", Standbys: []pgrepl.Standby{sb("s1", "streaming", "sync")}, Slots: []pgrepl.Slot{slot("s1", true), slot("s2", false)}}, pgrepl.Async, `under synchronous_standby_names = 's1' a commit waits only for the standbys that stream, and physical replication slot "s2" (inactive)`},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "FIRST 1 (s1, s2)", Standbys: []pgrepl.Standby{sb("s2", "streaming", "sync")}, Slots: []pgrepl.Slot{slot("s1", false), slot("s2", true)}}, pgrepl.Async, `slot "s1" (inactive)`},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1", Slots: []pgrepl.Slot{slot("s1", false)}}, pgrepl.Async, `slot "s1" (inactive)`},
		{pgrepl.Facts{SynchronousCommit: "on", SynchronousStandbyNames: "s1", Slots: []pgrepl.Slot{slot("s1", true)}}, pgrepl.Sync, "0 standbys"},
		{pgrepl.Facts{SynchronousCommit: "local", SynchronousStandbyNames: "s1", Slots: []pgrepl.Slot{slot("s1", false)}}, pgrepl.Async, "synchronous_commit = local"},
		{pgrepl.Facts{SynchronousCommit: "on", InRecovery: true, Slots: []pgrepl.Slot{slot("s1", false)}}, pgrepl.Unknown, "is a standby"},
	} {
		got, reason := tc.f.Class()
		if got != tc.want || !strings.Contains(reason, tc.reason) {
			t.Errorf("%+v: Class() = %v, %q; want %v, %q", tc.f, got, reason, tc.want, tc.reason)
		}
	}
}

func TestCancelledWait(t *testing.T) {
	// The warning PostgreSQL 15 sends (src/backend/replication/syncrep.c).
	n := &pgconn.Notice{Severity: "WARNING", Code: "01000", Message: "canceling wait for synchronous replication due to user request",
		Detail: "The transaction has already committed locally, but might not have been replicated to the standby."}
	if !pgrepl.CancelledWait(n) {
		t.Error("the cancel warning was not recognised")
	}
	if pgrepl.CancelledWait(&pgconn.Notice{Severity: "NOTICE", Message: `relation "t" already exists, skipping`, File: "tablecmds.c", Routine: "transformCreateStmt"}) || pgrepl.CancelledWait(nil) {
		t.Error("another notice was taken for the cancel warning")
	}
	// lc_messages translates the text, not the routine or file the server names.
	de := &pgconn.Notice{Severity: "WARNUNG", SeverityUnlocalized: "WARNING", Code: "01000", Message: "breche Warten auf synchrone Replikation ab wegen Benutzeraufforderung",
		File: "syncrep.c", Routine: "SyncRepWaitForLSN"}
	if !pgrepl.CancelledWait(de) {
		t.Error("the translated cancel warning was not recognised")
	}
}

// params are runtime parameters (as pgconn.Config.RuntimeParams holds them) and the setting
// CheckParams must name, "" when they are accepted.
var params = []struct {
	in   map[string]string
	name string
}{
	{nil, ""},
	{map[string]string{"application_name": "idkit", "search_path": "s", "options": "-c statement_timeout=5s"}, ""},
	{map[string]string{"options": "-cclient_min_messages=error"}, "options (or PGOPTIONS) sets client_min_messages"},
	{map[string]string{"options": "-c client_min_messages=warning"}, "sets client_min_messages"},
	{map[string]string{"options": "--client-min-messages=error"}, "sets client_min_messages"},
	{map[string]string{"options": `-c Client\_Min\_Messages=error`}, "sets client_min_messages"},
	{map[string]string{"options": "-c statement_timeout=1s -c lc_messages=de_DE"}, "sets lc_messages"},
	{map[string]string{"client_min_messages": "error"}, "parameter client_min_messages"},
	{map[string]string{"LC_MESSAGES": "C"}, "parameter lc_messages"},
}

func TestCheckParams(t *testing.T) {
	for _, tc := range params {
		err := pgrepl.CheckParams(tc.in)
		switch {
		case tc.name == "" && err != nil:
			t.Errorf("CheckParams(%v) = %v, want nil", tc.in, err)
		case tc.name != "" && (!errors.Is(err, pgrepl.ErrOverride) || !strings.Contains(err.Error(), tc.name)):
			t.Errorf("CheckParams(%v) = %v, want ErrOverride naming %q", tc.in, err, tc.name)
		case err != nil && strings.Contains(err.Error(), "=error"):
			t.Errorf("CheckParams(%v) = %v: shows the value", tc.in, err)
		}
	}
}

func FuzzCheckParams(f *testing.F) {
	for _, tc := range params {
		f.Add(tc.in["options"], "application_name")
	}
	f.Fuzz(func(t *testing.T, options, key string) {
		err := pgrepl.CheckParams(map[string]string{"options": options, key: options})
		if err != nil && !errors.Is(err, pgrepl.ErrOverride) {
			t.Fatalf("error %v does not wrap ErrOverride", err)
		}
		if err == nil && (strings.Contains(strings.ToLower(options), "client_min_messages") || strings.Contains(strings.ToLower(options), "lc_messages")) {
			t.Fatalf("options %q accepted", options)
		}
		if err != nil && len(options) > 3 && strings.Contains(err.Error(), options) {
			t.Fatalf("CheckParams shows the value %q: %v", options, err)
		}
	})
}

// TestConfirmRefusesAtOnce: Confirm refuses without reading pg_stat_replication again when
// fewer standbys are synchronous than a commit waits for, or synchronous_standby_names is
// empty or unreadable, and accepts at once what VouchQuery already showed flushed.
func TestConfirmRefusesAtOnce(t *testing.T) {
	for _, tc := range []struct {
		v    pgrepl.Vouch
		want string // "" for nil
	}{
		{pgrepl.Vouch{LSN: "0/10", Names: "s1", Sync: 1, Flushed: 1}, ""},
		{pgrepl.Vouch{LSN: "0/10", Names: "ANY 2 (s1, s2)", Sync: 2, Flushed: 2}, ""},
		{pgrepl.Vouch{LSN: "0/10", Names: "nobody", Sync: 0, Flushed: 0}, "0 of the 1 synchronous standbys"},
		{pgrepl.Vouch{LSN: "0/10", Names: "FIRST 2 (s1, s2)", Sync: 1, Flushed: 1}, "1 of the 2 synchronous standbys"},
		{pgrepl.Vouch{LSN: "0/10", Names: "", Sync: 1, Flushed: 1}, "emptied"},
		{pgrepl.Vouch{LSN: "0/10", Names: "ANY x", Sync: 1, Flushed: 1}, "bad synchronous_standby_names"},
	} {
		// A nil Querier: Confirm must decide without a query.
		err := pgrepl.Confirm(context.Background(), nil, tc.v, time.Second)
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, pgrepl.ErrUnconfirmed) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Confirm(%+v) = %v, want %q", tc.v, err, tc.want)
		}
	}
}

// TestRead reads a private server with no standby, as a superuser and as a role without
// privileges: class single, timeline 1, the system identifier of the cluster.
func TestRead(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var sysID uint64
	if err := conn.QueryRow(ctx, `SELECT system_identifier FROM pg_control_system()`).Scan(&sysID); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("pgrepl_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, `CREATE ROLE `+role+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
	for _, who := range []string{"superuser", role} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if who == role {
			if _, err := tx.Exec(ctx, `SET LOCAL ROLE `+role); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.Exec(ctx, `SELECT `+pgrepl.RaiseCommit); err != nil {
			t.Fatal(err)
		}
		f, err := pgrepl.Read(ctx, tx)
		tx.Rollback(ctx)
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		class, reason := f.Class()
		t.Logf("%s: epoch %v, class %v (%s), synchronous_commit %s", who, f.Epoch, class, reason, f.SynchronousCommit)
		if f.Epoch != (pgrepl.Epoch{SystemID: sysID, Timeline: 1}) || class != pgrepl.Single || f.SynchronousCommit != "on" || f.InRecovery {
			t.Errorf("%s: facts %+v, class %v", who, f, class)
		}
	}
}

func ExampleParseStandbyNames() {
	n, err := pgrepl.ParseStandbyNames(`ANY 2 (s1, s2, "s 3")`)
	fmt.Println(n.Quorum, n.Num, n.Names, err)
	// Output: true 2 [s1 s2 s 3] <nil>
}

// TestReadSlot: a physical replication slot on a private server with no standby, as a
// pg_basebackup -C -S or Patroni leaves one for a standby that is away, makes the class async,
// naming the slot, for a superuser and for a role without privileges (pg_replication_slots is
// readable by PUBLIC); once the slot is dropped the class is single again. Before slots were
// read the server was single throughout (issue 37).
func TestReadSlot(t *testing.T) {
	dsn := slotServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	role := fmt.Sprintf("pgrepl_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, `CREATE ROLE `+role+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
	slot, drop := pgrepltest.Slot(t, conn, "pgrepl_slot")
	read := func(who string) (pgrepl.Facts, pgrepl.Class, string) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if who == role {
			if _, err := tx.Exec(ctx, `SET LOCAL ROLE `+role); err != nil {
				t.Fatal(err)
			}
		}
		f, err := pgrepl.Read(ctx, tx)
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		class, reason := f.Class()
		t.Logf("%s: slots %+v, class %v (%s)", who, f.Slots, class, reason)
		return f, class, reason
	}
	for _, who := range []string{"superuser", role} {
		f, class, reason := read(who)
		if !slices.Contains(f.Slots, pgrepl.Slot{Name: slot}) || class != pgrepl.Async ||
			!strings.Contains(reason, fmt.Sprintf("slot %q (inactive)", slot)) || !strings.Contains(reason, "pg_drop_replication_slot") {
			t.Errorf("%s, with slot %s: class %v (%s); want async naming the slot and pg_drop_replication_slot", who, slot, class, reason)
		}
	}
	drop()
	for _, who := range []string{"superuser", role} {
		if f, class, reason := read(who); class != pgrepl.Single || len(f.Slots) != 0 {
			t.Errorf("%s, slot dropped: slots %+v, class %v (%s); want single", who, f.Slots, class, reason)
		}
	}
}

// FuzzScanFacts feeds Scan.Facts the two JSON columns of Query: it returns an error or facts
// with one standby per pg_stat_replication row and one slot per pg_replication_slots row,
// never panics.
func FuzzScanFacts(f *testing.F) {
	f.Add(`[]`, `[]`)
	f.Add(`[["s1","streaming","async"]]`, `[["s1",true]]`)
	f.Add(`[[null,null,null]]`, `[["s1",false],["s2",null]]`)
	f.Add(`[["s1"]]`, `[["s1"]]`)
	f.Add(`[]`, `[[1,"x"]]`)
	f.Add(`null`, `null`)
	f.Fuzz(func(t *testing.T, standbys, slots string) {
		var s pgrepl.Scan
		d := s.Dest()
		*d[3].(*string), *d[4].(*string) = "", "on"
		*d[5].(*string), *d[6].(*string) = standbys, slots
		facts, err := s.Facts()
		if err != nil {
			return
		}
		var rows, slotRows []json.RawMessage
		if json.Unmarshal([]byte(standbys), &rows) != nil || json.Unmarshal([]byte(slots), &slotRows) != nil {
			t.Fatalf("Facts accepted columns that are not JSON arrays: %q, %q", standbys, slots)
		}
		if len(facts.Standbys) != len(rows) || len(facts.Slots) != len(slotRows) {
			t.Fatalf("Facts(%q, %q): %d standbys, %d slots", standbys, slots, len(facts.Standbys), len(facts.Slots))
		}
		if c, _ := facts.Class(); len(facts.Slots) > 0 && c == pgrepl.Single {
			t.Fatalf("Facts(%q, %q): single with slots %+v", standbys, slots, facts.Slots)
		}
	})
}

// slotServer returns a DSN of a server on which a test may make a replication slot for a
// while: the binary's shared private cluster (tests of a package run one at a time), or, when
// IDKIT_TEST_PG names a server other packages' tests share, a private cluster of the test's
// own, since a slot is seen cluster-wide and would turn their class async.
func slotServer(t *testing.T) string {
	t.Helper()
	if os.Getenv(pgtest.EnvDSN) == "" {
		return pgtest.Database(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pglocal.Start(ctx, pglocal.Options{Settings: pgtest.Settings()})
	if err != nil {
		t.Skipf("%s is shared with other tests, and no private cluster for a replication slot: %v", pgtest.EnvDSN, err)
	}
	t.Cleanup(func() { c.Close() })
	return c.DSN()
}
