package dbbench

import (
	"errors"
	"strings"
	"testing"
)

func TestCommitFlushed(t *testing.T) {
	for _, c := range []struct {
		name           string
		s              Settings
		durable, known bool
	}{
		{"pg off", Settings{SynchronousCommit: "off", Fsync: "on"}, false, true},
		{"pg on", Settings{SynchronousCommit: "on", Fsync: "on"}, true, true},
		{"pg local", Settings{SynchronousCommit: "local", Fsync: "on"}, true, true},
		{"pg on without fsync", Settings{SynchronousCommit: "on", Fsync: "off"}, false, true},
		{"innodb 0", Settings{InnoDBFlushLogAtTrxCommit: "0"}, false, true},
		{"innodb 1", Settings{InnoDBFlushLogAtTrxCommit: "1"}, true, true},
		{"innodb 2", Settings{InnoDBFlushLogAtTrxCommit: "2"}, false, true},
		{"mariadb 3", Settings{InnoDBFlushLogAtTrxCommit: "3"}, true, true},
		{"sqlite", Settings{}, false, false},
	} {
		if d, k := commitFlushed(c.s); d != c.durable || k != c.known {
			t.Errorf("%s: commitFlushed = %v, %v; want %v, %v", c.name, d, k, c.durable, c.known)
		}
	}
	if got := serverPinned(Settings{SharedBuffers: "128MB", SynchronousCommit: "off"}); got != "; shared_buffers 128MB, synchronous_commit off (a commit does not wait for its log to reach disk)" {
		t.Errorf("serverPinned: %q", got)
	}
	if got := serverPinned(Settings{}); got != "" {
		t.Errorf("serverPinned of a report without settings: %q", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"128MB": 128 << 20, "128M": 128 << 20, "16384kB": 16 << 20, "1G": 1 << 30, "4096": 4096} {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "MB", "-1M", "lots"} {
		if _, ok := parseSize(in); ok {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// appRep builds an app report of three schemes: snowflake (bigint, ordered), ulid (uuid,
// ordered) and uuidv4 (uuid, random, with a created_at index), with the given operations/s and
// child-table bytes per operation, in that order.
func appRep(clients, rows int, ops, child [3]float64) *Report {
	mk := func(scheme, key string, ordered bool, ops, child float64) AppResult {
		r := AppResult{Scheme: scheme, KeyType: key, TimeOrdered: ordered, CreatedAtIndex: !ordered, OpsPerSec: ops,
			Structures: []Structure{{Name: scheme + "_child_pkey", Role: "child primary key", Bytes: int64(child * float64(rows)), BytesPerOp: child}},
			BytesPerOp: child, WALBytesPerOp: 2 * child,
			TimeQuery: &TimeQuery{Via: "key bounds", Latency: Latency{P50Micros: 100}, RowsP50: 10}}
		if !ordered {
			r.TimeQuery.Via = "created_at index"
		}
		return r
	}
	return &Report{Workload: "app", Settings: Settings{Engine: EnginePGLocal, ServerVersion: "PostgreSQL test", Command: "idbench db …",
		SharedBuffers: "1MB", SynchronousCommit: "on", Fsync: "on", Rows: rows, Children: 4, Mode: ModeTx, Clients: clients, Repeat: 3},
		App: []AppResult{mk("snowflake", "bigint", true, ops[0], child[0]), mk("ulid", "uuid", true, ops[1], child[1]), mk("uuidv4", "uuid", false, ops[2], child[2])}}
}

func TestWriteAppCacheSummary(t *testing.T) {
	small := appRep(4, 1000, [3]float64{1000, 1000, 900}, [3]float64{200, 300, 400})
	large := appRep(4, 100000, [3]float64{1000, 800, 400}, [3]float64{200, 300, 420})
	var b strings.Builder
	if err := WriteAppCacheSummary(&b, small, large); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"synchronous_commit on (a commit waits for its log to reach disk)",
		"**uuidv4 past the cache.**",
		"it ran at 0.90× the operations/s of ulid", // small: 900/1000
		"it ran at 0.50× ulid's",                   // large: 400/800
		"| uuidv4 | uuid | 0.4 → 40.1 | 900 | 400 | 0.44× | 0.90× | 0.40× |",
		"40.1 MB, 40.05× the cache",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	other := appRep(4, 100000, [3]float64{1, 1, 1}, [3]float64{1, 1, 1})
	other.Settings.SynchronousCommit = "off"
	if err := WriteAppCacheSummary(&b, small, other); !errors.Is(err, ErrAppCompare) {
		t.Errorf("runs with other commit settings: %v, want ErrAppCompare", err)
	}
	other = appRep(4, 100000, [3]float64{1, 1, 1}, [3]float64{1, 1, 1})
	other.App = other.App[:2]
	if err := WriteAppCacheSummary(&b, small, other); !errors.Is(err, ErrAppCompare) {
		t.Errorf("runs with other schemes: %v, want ErrAppCompare", err)
	}
}

func TestWriteAppClientsSummary(t *testing.T) {
	one := appRep(1, 1000, [3]float64{1000, 1000, 800}, [3]float64{200, 300, 450})
	four := appRep(4, 1000, [3]float64{2000, 2000, 1000}, [3]float64{260, 450, 450})
	var b strings.Builder
	if err := WriteAppClientsSummary(&b, []*Report{one, four}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| 4 | ulid | uuid | 2,000 | 1.00× | 450.0 | 1.73× |",
		"ulid (uuid, ordered) 1.50× with 1, 1.73× with 4 client(s)",
		"uuidv4 against ulid, the ordered key of its width: child PK 1.50× with 1, 1.00× with 4 client(s); operations/s 0.80× with 1, 0.50× with 4 client(s).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, rep := range []*Report{one, four} {
		r := &rep.App[2]
		r.Scheme, r.KeyType = "bigserial", "bigint identity"
	}
	b.Reset()
	if err := WriteAppClientsSummary(&b, []*Report{one, four}); err != nil {
		t.Fatal(err)
	}
	if want := "bigserial, which needs the created_at index, against snowflake, which answers time ranges from its key: time per operation 1.25× with 1, 2.00× with 4 client(s)."; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	if want := "1 client(s): `idbench db …` (median of 3 runs, no warm-up, "; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	four.Settings.WarmupRows = 200
	if err := WriteAppClientsSummary(&b, []*Report{one, four}); !errors.Is(err, ErrAppCompare) {
		t.Errorf("runs with and without a warm-up: %v, want ErrAppCompare", err)
	}
	four.Settings.WarmupRows = 0
	four.Settings.Rows = 2000
	if err := WriteAppClientsSummary(&b, []*Report{one, four}); !errors.Is(err, ErrAppCompare) {
		t.Errorf("runs of other sizes: %v, want ErrAppCompare", err)
	}
}
