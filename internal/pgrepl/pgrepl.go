// Package pgrepl reads what a PostgreSQL server's replication does to a commit: whether a
// standby that could be promoted might lack a commit the server acknowledged (the durability
// class), and which history the server writes (its epoch: the cluster's system identifier and
// the timeline, which a promotion changes). idkit's stores that keep counters or leases in
// PostgreSQL read it on connect and with every write, in the write's own transaction.
//
// It knows what PostgreSQL shows on the primary: the standbys streaming from it
// (pg_stat_replication) and the physical replication slots kept for standbys
// (pg_replication_slots), which outlive a standby's connection. A standby that streams without
// a slot is seen only while it is connected: once a partition or a restart ends its
// connection (the primary's walsender gives up after wal_sender_timeout), nothing on the
// primary shows it. A standby cascading from another standby, or one restoring WAL from an
// archive without streaming, is not seen at all.
package pgrepl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrStandbyNames reports a synchronous_standby_names that ParseStandbyNames cannot read.
var ErrStandbyNames = errors.New("pgrepl: bad synchronous_standby_names")

// Querier runs a query returning one row: *pgx.Conn, pgx.Tx and *pgxpool.Pool are Queriers.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Class says whether a commit the server acknowledged survives a failover to a standby.
type Class int

// The durability classes, weakest first.
const (
	// Unknown: the facts could not be read whole (a role without pg_read_all_stats sees no
	// sync_state), or the server is itself a standby.
	Unknown Class = iota
	// Async: a standby streams from the server, or a physical replication slot keeps WAL for
	// one that is away, and it could be promoted without a commit the server acknowledged (no
	// synchronous_standby_names, a standby in sync_state async or potential, more quorum
	// standbys than a commit waits for, a slot no standby streams through, or a
	// synchronous_commit that does not wait for standbys).
	Async
	// Single: no standby streams from the server and it keeps no physical replication slot.
	// A commit flushed to its disk is the only copy; nothing the server can see could be
	// promoted over it.
	Single
	// Sync: every standby streaming from the server holds a commit on disk before the server
	// acknowledges it, and every physical replication slot is in use.
	Sync
)

// String returns "unknown", "async", "single" or "sync".
func (c Class) String() string {
	switch c {
	case Async:
		return "async"
	case Single:
		return "single"
	case Sync:
		return "sync"
	}
	return "unknown"
}

// Epoch names the history a server writes. Two servers with equal epochs hold the same
// commits up to the older one's end; a promotion gives the promoted standby a new timeline,
// and a new cluster (initdb, pg_dump restore) a new system identifier.
type Epoch struct {
	// SystemID is pg_control_system().system_identifier: made by initdb, kept by standbys
	// made with pg_basebackup.
	SystemID uint64
	// Timeline is the timeline the server writes new WAL on, read from the name of the
	// current WAL file: it is the new one as soon as pg_promote() returns (the checkpoint's
	// timeline in pg_control_checkpoint() changes only at the next checkpoint).
	Timeline uint32
}

// String returns "SYSTEMID/TIMELINE", as in "7312345678901234567/2".
func (e Epoch) String() string {
	return strconv.FormatUint(e.SystemID, 10) + "/" + strconv.FormatUint(uint64(e.Timeline), 10)
}

// Standby is a row of pg_stat_replication.
type Standby struct {
	Name      string // application_name
	State     string // startup, catchup, streaming, backup, stopping
	SyncState string // async, potential, sync, quorum; "" when the role may not read it
}

// Slot is a physical replication slot, a row of pg_replication_slots with slot_type
// 'physical': made for a standby (pg_basebackup -C -S, pg_create_physical_replication_slot,
// Patroni, repmgr) and kept, with the WAL the standby has not received, while the standby is
// away. Logical slots feed decoding clients, not standbys, and are not listed.
type Slot struct {
	Name   string // slot_name
	Active bool   // a walsender streams through it now
}

// Facts are what Read reads.
type Facts struct {
	Epoch                   Epoch
	InRecovery              bool   // pg_is_in_recovery(): the server is a standby
	SynchronousStandbyNames string // the setting, as the server shows it
	SynchronousCommit       string // the reading session's synchronous_commit
	Standbys                []Standby
	Slots                   []Slot // the physical replication slots
}

// Query is the statement Read runs: one row of seven columns. A caller that reads the facts in
// its own batch or transaction queues Query and scans its row into Scan.Dest. Any role may run
// it: pg_replication_slots is readable by PUBLIC, and a role without pg_read_all_stats sees
// the rows of pg_stat_replication with sync_state NULL (Class then says Unknown).
const Query = `SELECT (SELECT system_identifier FROM pg_control_system()),
	pg_is_in_recovery(),
	CASE WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint())::bigint
		ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint END,
	current_setting('synchronous_standby_names'),
	current_setting('synchronous_commit'),
	COALESCE((SELECT json_agg(json_build_array(application_name, state, sync_state)) FROM pg_stat_replication), '[]')::text,
	COALESCE((SELECT json_agg(json_build_array(slot_name, active) ORDER BY slot_name) FROM pg_replication_slots WHERE slot_type = 'physical'), '[]')::text`

// EpochSQL is a SQL expression, parenthesized, for a primary's epoch as Epoch.String writes it
// ("SYSTEMID/TIMELINE", the timeline of the current WAL file, which pg_promote() changes at
// once): a store that records the epoch in its own row writes and compares it with this.
const EpochSQL = `((SELECT system_identifier FROM pg_control_system())::text || '/' ||
	('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint::text)`

// RaiseCommit is a SQL expression that sets synchronous_commit to on for the rest of the
// transaction, or keeps remote_apply: a commit then waits for its WAL flush and for the
// synchronous standbys' flush, whatever the server's, database's or role's setting. Any role
// may run it (set_config(…, true) is SET LOCAL).
const RaiseCommit = `set_config('synchronous_commit', CASE current_setting('synchronous_commit') WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)`

// RaiseCommitApply is RaiseCommit with remote_apply: the commit waits until the synchronous
// standbys have applied it, so a read there sees it. Use it when standbys serve reads of what
// was written.
const RaiseCommitApply = `set_config('synchronous_commit', 'remote_apply', true)`

// Read runs Query through q. Run it in the transaction whose commit it vouches for, after
// RaiseCommit, so SynchronousCommit is the one the commit uses.
func Read(ctx context.Context, q Querier) (Facts, error) {
	var f Facts
	var s Scan
	if err := q.QueryRow(ctx, Query).Scan(s.Dest()...); err != nil {
		return f, fmt.Errorf("pgrepl: reading the replication state: %w", err)
	}
	return s.Facts()
}

// Scan holds Query's columns for a caller that selects them in its own statement.
type Scan struct {
	sysID     int64
	recovery  bool
	timeline  *int64
	names, sc string
	standbys  string
	slots     string
}

// Dest returns the scan destinations of Query's seven columns, in order.
func (s *Scan) Dest() []any {
	return []any{&s.sysID, &s.recovery, &s.timeline, &s.names, &s.sc, &s.standbys, &s.slots}
}

// Facts returns what was scanned.
func (s *Scan) Facts() (Facts, error) {
	f := Facts{
		Epoch:                   Epoch{SystemID: uint64(s.sysID)},
		InRecovery:              s.recovery,
		SynchronousStandbyNames: s.names,
		SynchronousCommit:       s.sc,
	}
	if s.timeline != nil {
		f.Epoch.Timeline = uint32(*s.timeline)
	}
	var rows [][3]*string
	if err := json.Unmarshal([]byte(s.standbys), &rows); err != nil {
		return f, fmt.Errorf("pgrepl: reading pg_stat_replication: %w", err)
	}
	for _, r := range rows {
		var sb Standby
		for i, p := range []*string{&sb.Name, &sb.State, &sb.SyncState} {
			if r[i] != nil {
				*p = *r[i]
			}
		}
		f.Standbys = append(f.Standbys, sb)
	}
	var raw [][2]json.RawMessage
	if err := json.Unmarshal([]byte(s.slots), &raw); err != nil {
		return f, fmt.Errorf("pgrepl: reading pg_replication_slots: %w", err)
	}
	for _, r := range raw {
		var sl Slot
		var name *string
		var active *bool
		if err := errors.Join(json.Unmarshal(r[0], &name), json.Unmarshal(r[1], &active)); err != nil {
			return f, fmt.Errorf("pgrepl: reading pg_replication_slots: %w", err)
		}
		if name != nil {
			sl.Name = *name
		}
		// active is never NULL in pg_replication_slots; a NULL would say nothing of a
		// walsender, so it counts as inactive, the side that refuses.
		sl.Active = active != nil && *active
		f.Slots = append(f.Slots, sl)
	}
	return f, nil
}

// Class returns the facts' durability class and the reason, naming the setting, standby or
// slot that decides it, for messages.
//
// A physical replication slot stands for a standby that may be promoted: PostgreSQL keeps it,
// and the WAL its standby has not received, while the standby is away, which a streaming
// standby's row of pg_stat_replication is not (its walsender ends after wal_sender_timeout
// under a partition, or at once when the standby restarts). So:
//
//   - with synchronous_standby_names empty and no standby streaming, any physical slot makes
//     the class Async, naming it: its standby, cut off or down, lacks every commit made since
//     it left and could be promoted. A slot in use (active) while pg_stat_replication shows
//     no standby is its walsender starting or ending, a standby all the same;
//   - in every other case a slot that no walsender uses (not active) makes the class Async
//     too. Under synchronous_standby_names a commit waits only for standbys that stream, so
//     a standby that is away lacks the commits made since it left, synchronous or not before:
//     with FIRST 1 (s1, s2) and s1 gone, s2 becomes the synchronous one and s1's slot is the
//     only sign that s1 exists; with ANY 1 (s1, s2) and s2 gone, s1 alone acknowledges. "Promote
//     only a standby that was synchronous" is the operator's rule, which the class cannot
//     check (a slot's name need not be a standby's application_name), so it refuses what the
//     rule would have to save. A synchronous standby that is away makes a commit wait for it
//     anyway (the take fails either way), and the reason then says which slot to look at;
//   - an active slot is the slot of a walsender listed in pg_stat_replication: its standby is
//     classed by its sync_state, as any streaming standby.
//
// Logical slots are not standbys and are not in Facts. A standby that streams without a slot
// is seen only while it is connected.
func (f Facts) Class() (Class, string) {
	if f.InRecovery {
		return Unknown, "the server is a standby (pg_is_in_recovery() is true)"
	}
	for _, sb := range f.Standbys {
		if sb.SyncState == "" {
			return Unknown, fmt.Sprintf("the role cannot read pg_stat_replication.sync_state of standby %q (grant it pg_monitor or pg_read_all_stats)", sb.Name)
		}
	}
	names, err := ParseStandbyNames(f.SynchronousStandbyNames)
	if err != nil {
		return Unknown, err.Error()
	}
	if names.Num == 0 {
		if len(f.Standbys) > 0 {
			return Async, fmt.Sprintf("standby %q streams asynchronously: synchronous_standby_names is empty", f.Standbys[0].Name)
		}
		if len(f.Slots) > 0 {
			return Async, slotReason(f.Slots[0], "no standby streams from the server, but")
		}
		return Single, "no standby streams from the server, it keeps no physical replication slot, and synchronous_standby_names is empty"
	}
	switch f.SynchronousCommit {
	case "on", "remote_apply":
	default:
		return Async, fmt.Sprintf("synchronous_commit = %s does not wait for the standbys' flush", f.SynchronousCommit)
	}
	quorum := 0
	for _, sb := range f.Standbys {
		switch sb.SyncState {
		case "sync":
		case "quorum":
			quorum++
		default:
			return Async, fmt.Sprintf("standby %q is in sync_state %s (%s) under synchronous_standby_names = '%s'", sb.Name, sb.SyncState, sb.State, f.SynchronousStandbyNames)
		}
	}
	if quorum > names.Num {
		return Async, fmt.Sprintf("a commit waits for %d of the %d quorum standbys (synchronous_standby_names = '%s'), so the others can lack it", names.Num, quorum, f.SynchronousStandbyNames)
	}
	for _, sl := range f.Slots {
		if !sl.Active {
			return Async, slotReason(sl, fmt.Sprintf("under synchronous_standby_names = '%s' a commit waits only for the standbys that stream, and", f.SynchronousStandbyNames))
		}
	}
	return Sync, fmt.Sprintf("synchronous_standby_names = '%s', synchronous_commit = %s, %d standbys, each synchronous", f.SynchronousStandbyNames, f.SynchronousCommit, len(f.Standbys))
}

// slotReason is Class's reason for a slot whose standby is away: what was seen, and what to do.
func slotReason(sl Slot, lead string) string {
	state := "inactive"
	if sl.Active {
		state = "active"
	}
	return fmt.Sprintf("%s physical replication slot %q (%s) is kept for a standby that is away (cut off or down: the primary drops a silent standby's connection after wal_sender_timeout) and lacks the commits since it left, yet could be promoted; drop the slot with pg_drop_replication_slot('%s') if no standby uses it, or list its standby in synchronous_standby_names and let it catch up, or accept it with durability=async", lead, sl.Name, state, sl.Name)
}

// StandbyNames is a parsed synchronous_standby_names.
type StandbyNames struct {
	Quorum bool     // ANY: a commit waits for any Num of Names; else the first Num listed
	Num    int      // how many standbys a commit waits for; 0 when the setting is empty
	Names  []string // as written, double quotes removed
}

// ParseStandbyNames reads synchronous_standby_names: "", "[FIRST] N (name, …)",
// "ANY N (name, …)" or "name, …" (FIRST 1). Errors wrap ErrStandbyNames and name the part.
func ParseStandbyNames(s string) (StandbyNames, error) {
	var n StandbyNames
	rest := strings.TrimSpace(s)
	if rest == "" {
		return n, nil
	}
	word, after := cutWord(rest)
	switch strings.ToUpper(word) {
	case "ANY":
		n.Quorum = true
		rest = after
	case "FIRST":
		rest = after
	}
	word, after = cutWord(rest)
	if num, err := strconv.Atoi(word); err == nil && strings.HasPrefix(strings.TrimSpace(after), "(") {
		if num < 1 {
			return n, fmt.Errorf("%w: %q: the number of standbys must be at least 1", ErrStandbyNames, s)
		}
		n.Num = num
		rest = strings.TrimSpace(after)
		if !strings.HasSuffix(rest, ")") {
			return n, fmt.Errorf("%w: %q: no closing parenthesis", ErrStandbyNames, s)
		}
		rest = rest[1 : len(rest)-1]
	} else if n.Quorum || len(rest) != len(strings.TrimSpace(s)) {
		return n, fmt.Errorf("%w: %q: want a number of standbys and a list in parentheses after FIRST or ANY", ErrStandbyNames, s)
	} else {
		n.Num = 1
	}
	for _, name := range strings.Split(rest, ",") {
		name = strings.TrimSpace(name)
		if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
			name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
		}
		if name == "" || strings.ContainsAny(name, "()") {
			return n, fmt.Errorf("%w: %q: an empty or malformed standby name", ErrStandbyNames, s)
		}
		n.Names = append(n.Names, name)
	}
	if n.Num > len(n.Names) {
		return n, fmt.Errorf("%w: %q: waits for %d standbys of %d named", ErrStandbyNames, s, n.Num, len(n.Names))
	}
	return n, nil
}

// cutWord splits off the first run of identifier characters (a keyword, a number or a name).
func cutWord(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_' || s[i] == '$') {
		i++
	}
	return s[:i], s[i:]
}

// CancelledWait reports whether n is PostgreSQL's warning that a commit stopped waiting for
// its synchronous standbys ("canceling wait for synchronous replication …", sent by
// SyncRepWaitForLSN in syncrep.c): the commit has then happened on the server only, and a
// failover can lose it although it was acknowledged. It recognises the warning by the
// routine and source file the server names in every notice, which lc_messages does not
// translate, and by its English text. Watch for it with pgconn.Config.OnNotice on the
// connection that commits; but a session's client_min_messages = error (a role's or
// database's default, or the options connection parameter) keeps the warning from the
// client, so a store vouches for a commit with Confirm, and counts the warning only as a
// second sign.
func CancelledWait(n *pgconn.Notice) bool {
	return n != nil && (n.Routine == "SyncRepWaitForLSN" || n.File == "syncrep.c" ||
		strings.Contains(n.Message, "wait for synchronous replication"))
}

// ForceNotices is a SQL expression that sets client_min_messages to warning for the rest of
// the transaction (set_config(…, true) is SET LOCAL, allowed to any role), so the warning
// CancelledWait looks for reaches the client whatever the session's setting.
const ForceNotices = `pg_catalog.set_config('client_min_messages', 'warning', true)`

// ErrUnconfirmed reports a commit that Confirm could not find on as many synchronous
// standbys as synchronous_standby_names makes a commit wait for: its wait was cancelled (or
// the standbys left), and it may be on the primary only.
var ErrUnconfirmed = errors.New("pgrepl: no synchronous standby confirmed the commit")

// VouchQuery is the statement to run right after COMMIT on the connection that committed
// (in the same batch: no other statement of the session in between). It reads the server's
// WAL flush position, which is at or past the end of the commit's record (a commit flushes
// its record locally before it waits for the standbys), and what pg_stat_replication shows
// of the synchronous standbys against it. Every name is schema-qualified, so a search_path
// cannot put another object in the place of the catalog's. Scan its row into Vouch.Dest.
const VouchQuery = `SELECT l.lsn::pg_catalog.text, pg_catalog.current_setting('synchronous_standby_names'),
	(SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_replication r WHERE ` + syncState + `),
	(SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_replication r WHERE ` + syncState + `
		AND r.flush_lsn OPERATOR(pg_catalog.>=) l.lsn)
	FROM (SELECT pg_catalog.pg_current_wal_flush_lsn() AS lsn) AS l`

// syncState selects the standbys a commit waits for (sync_state sync under FIRST n,
// quorum under ANY n).
const syncState = `(r.sync_state OPERATOR(pg_catalog.=) 'sync' OR r.sync_state OPERATOR(pg_catalog.=) 'quorum')`

// waitQuery is VouchQuery's standby counts again, for the LSN it read.
const waitQuery = `SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_replication r WHERE ` + syncState + `),
	(SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_replication r WHERE ` + syncState + `
		AND r.flush_lsn OPERATOR(pg_catalog.>=) $1::pg_catalog.pg_lsn)`

// Vouch is VouchQuery's row: what Confirm checks.
type Vouch struct {
	LSN   string // the server's WAL flush position right after the commit
	Names string // synchronous_standby_names
	// Sync counts the standbys in sync_state sync or quorum; Flushed those of them whose
	// flush_lsn is at or past LSN.
	Sync, Flushed int64
}

// Dest returns the scan destinations of VouchQuery's four columns, in order.
func (v *Vouch) Dest() []any { return []any{&v.LSN, &v.Names, &v.Sync, &v.Flushed} }

// Confirm checks that a commit v was read after is on disk on as many synchronous standbys
// as synchronous_standby_names makes a commit wait for (FIRST n: the n in sync_state sync;
// ANY n: n of those in quorum), reading pg_stat_replication again through q until they have
// flushed WAL up to v.LSN, for at most limit or until ctx ends. Flushed is what a failover
// needs: a promoted standby replays every record it flushed. Nothing a session sets hides the
// result, unlike the warning CancelledWait recognises. Call it only when the facts read in
// the commit's transaction have class Sync. Errors wrap ErrUnconfirmed, or are q's.
func Confirm(ctx context.Context, q Querier, v Vouch, limit time.Duration) error {
	names, err := ParseStandbyNames(v.Names)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnconfirmed, err)
	}
	need := int64(names.Num)
	if need == 0 {
		return fmt.Errorf("%w: synchronous_standby_names was emptied, so the commit may not have waited for any standby", ErrUnconfirmed)
	}
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for v.Flushed < need {
		if v.Sync < need || !time.Now().Before(deadline) {
			return fmt.Errorf("%w: %d of the %d synchronous standbys a commit waits for (synchronous_standby_names = '%s') flushed WAL up to %s after the commit (%d in sync_state sync or quorum): its wait was cancelled, or the standbys left", ErrUnconfirmed, v.Flushed, need, v.Names, v.LSN, v.Sync)
		}
		t := time.NewTimer(min(pause, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: waiting for the synchronous standbys to flush WAL up to %s: %w", ErrUnconfirmed, v.LSN, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
		if err := q.QueryRow(ctx, waitQuery, v.LSN).Scan(&v.Sync, &v.Flushed); err != nil {
			return fmt.Errorf("pgrepl: reading pg_stat_replication: %w", err)
		}
	}
	return nil
}

// ErrOverride reports connection parameters that set what a store's check of its commits
// relies on: the options parameter (or PGOPTIONS) or a startup parameter setting
// client_min_messages or lc_messages, which hide or translate the warning CancelledWait
// looks for.
var ErrOverride = errors.New("pgrepl: a connection parameter overrides a setting the durability check relies on")

// guarded are the settings CheckParams refuses.
var guarded = []string{"client_min_messages", "lc_messages"}

// CheckParams refuses, with an error wrapping ErrOverride that names the parameter and the
// setting but never a value, runtime parameters (pgconn.Config.RuntimeParams: the
// connection string's settings, PGOPTIONS included) that set client_min_messages or
// lc_messages, directly or in options (-c name=value, --name=value, in any case, with '-'
// for '_' or backslash escapes, as the server reads it).
func CheckParams(params map[string]string) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key := normalize(k)
		for _, g := range guarded {
			switch {
			case key == g:
				return fmt.Errorf("%w: parameter %s: the store needs the server's warnings in full, so it does not let a connection set %s", ErrOverride, g, g)
			case key == "options" && strings.Contains(normalize(params[k]), g):
				return fmt.Errorf("%w: parameter options (or PGOPTIONS) sets %s: the store needs the server's warnings in full, so it does not let a connection set %s", ErrOverride, g, g)
			}
		}
	}
	return nil
}

// normalize reads a setting's name as the server does: case does not matter, '-' stands for
// '_' in a long option, and a backslash escapes the next character in options.
func normalize(s string) string {
	return strings.NewReplacer(`\`, "", "-", "_").Replace(strings.ToLower(s))
}
