package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/dbbench/engine"
)

// kvTable is a test engine's table.
type kvTable struct {
	i    int
	name string
}

// fakeDB is a test engine's database: its closeDB counts its calls and returns err.
type fakeDB struct {
	closes int
	err    error
}

// newKV makes a KV named testkv over a fakeDB, closed when the test ends.
func newKV(t *testing.T, o engine.Options) (*engine.KV[kvTable], *fakeDB) {
	t.Helper()
	db := &fakeDB{}
	kv, err := engine.NewKV[kvTable]("testkv", o, errors.New("no app here"), func() error {
		db.closes++
		return db.err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return &kv, db
}

func mkTable(i int, td engine.TableDef) *kvTable { return &kvTable{i: i, name: td.Name} }

func wantErr(t *testing.T, what string, err error, says string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), "dbbench: testkv: ") || !strings.Contains(err.Error(), says) {
		t.Errorf("%s: %v, want an error of testkv saying %q", what, err, says)
	}
}

// TestKVLifecycle: CreateDB opens a database in a directory of its own under the engine's
// root, DropTables closes it through the engine's closeDB and removes it, Close removes the
// root; the tables are there only while a database is open.
func TestKVLifecycle(t *testing.T) {
	ctx := context.Background()
	kv, db := newKV(t, engine.Options{})
	wantErr(t, "CheckOpen before CreateDB", kv.CheckOpen(), "no database open")
	_, err := kv.Table("a")
	wantErr(t, "Table before CreateDB", err, "no database open for table a")

	var dir string
	open := func(d string) error {
		dir = d
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("open given %s, not a directory (%v)", d, err)
		}
		return nil
	}
	if err := kv.CreateDB([]engine.TableDef{{Name: "a"}, {Name: "b"}}, open, mkTable); err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(dir)
	if !strings.HasPrefix(filepath.Base(root), "idbench-testkv-") {
		t.Errorf("database in %s: want it under a root named idbench-testkv-*", dir)
	}
	if err := kv.CheckOpen(); err != nil {
		t.Errorf("CheckOpen after CreateDB: %v", err)
	}
	if b, err := kv.Table("b"); err != nil || *b != (kvTable{i: 1, name: "b"}) {
		t.Errorf("Table(b) = %+v, %v", b, err)
	}
	_, err = kv.Table("c")
	wantErr(t, "Table(c)", err, "no table c")
	wantErr(t, "second CreateDB", kv.CreateDB(nil, open, mkTable), "already open")

	if err := kv.DropTables(ctx, nil); err != nil || db.closes != 1 {
		t.Errorf("DropTables: %v, closeDB called %d times: want nil and once", err, db.closes)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after DropTables: %v, want it removed", dir, err)
	}
	wantErr(t, "CheckOpen after DropTables", kv.CheckOpen(), "no database open")

	refused := errors.New("refused")
	err = kv.CreateDB(nil, func(d string) error { dir = d; return refused }, mkTable)
	if !errors.Is(err, refused) {
		t.Errorf("CreateDB with a failing open: %v, want it wrapped", err)
	}
	wantErr(t, "CreateDB with a failing open", err, "open "+dir)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after a failed open: %v, want it removed", dir, err)
	}
	wantErr(t, "CheckOpen after a failed open", kv.CheckOpen(), "no database open")

	if err := kv.CreateDB(nil, open, mkTable); err != nil {
		t.Fatal(err)
	}
	db.err = errors.New("close failed")
	if err := kv.Close(); !errors.Is(err, db.err) {
		t.Errorf("Close: %v, want closeDB's error", err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root %s after Close: %v, want it removed", root, err)
	}
	if db.closes != 2 {
		t.Errorf("closeDB called %d times, want 2 (DropTables and Close; none for the failed open)", db.closes)
	}
}

// TestKVSettings: the settings every key-value engine reports alike, and the app workload
// refused with the engine's error.
func TestKVSettings(t *testing.T) {
	kv, _ := newKV(t, engine.Options{Rows: 1000, Batch: 250, SecondaryIndex: true})
	var s engine.Settings
	kv.Settings(&s)
	if s.Engine != "testkv" || s.LSMMemTable != "8 MiB" || s.LSMBlockCache != "32 MiB" || s.Batch != 250 || !s.SecondaryIndex ||
		!strings.HasPrefix(s.LoadAverage, "start ") || !strings.Contains(s.LoadAverage, ", end ") {
		t.Errorf("settings %+v", s)
	}
	if kv.BatchSize() != 250 || kv.HasBaseline() {
		t.Errorf("batch %d, baseline %v", kv.BatchSize(), kv.HasBaseline())
	}
	if _, err := kv.RowWriters(context.Background()); err == nil || err.Error() != "no app here" {
		t.Errorf("RowWriters: %v, want the engine's ErrNoApp", err)
	}
}

// TestKVStatements: PrepareRead answers the point lookup and the range scan, CountTable the
// row count, each of its table; the rest is ErrTableStatement, and a prepared read takes one
// []byte key.
func TestKVStatements(t *testing.T) {
	kv, _ := newKV(t, engine.Options{})
	if err := kv.CreateDB([]engine.TableDef{{Name: "t1"}, {Name: "t2"}}, func(string) error { return nil }, mkTable); err != nil {
		t.Fatal(err)
	}
	type read struct {
		table string
		next  int
		key   string
	}
	var got read
	rd := func(_ context.Context, tb *kvTable, next int, key []byte) (int64, error) {
		got = read{tb.name, next, string(key)}
		return int64(next) + 1, nil
	}
	for _, c := range []struct {
		q    string
		want read   // PrepareRead's read, or
		err  string // its error
	}{
		{q: "SELECT payload FROM t1 WHERE id = $1", want: read{"t1", 0, "k"}},
		{q: "SELECT id, payload FROM t2 WHERE id > $1 ORDER BY id LIMIT 7", want: read{"t2", 7, "k"}},
		{q: "SELECT count(*) FROM t1", err: "table workload"},
		{q: "DELETE FROM t1", err: "table workload"},
		{q: "SELECT payload FROM t3 WHERE id = $1", err: "no table t3"},
	} {
		got = read{}
		st, err := kv.PrepareRead(c.q, rd)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("PrepareRead(%q): %v, want an error saying %q", c.q, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("PrepareRead(%q): %v", c.q, err)
			continue
		}
		if n, err := st.Rows(context.Background(), []byte("k")); err != nil || got != c.want || n != int64(c.want.next)+1 {
			t.Errorf("%q: Rows = %d, %v, read %+v; want %+v", c.q, n, err, got, c.want)
		}
		_, err = st.Rows(context.Background())
		wantErr(t, c.q+" without a key", err, "want 1 argument, got 0")
		_, err = st.Rows(context.Background(), "k")
		wantErr(t, c.q+" with a string key", err, "key argument is string, not []byte")
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if tb, err := kv.CountTable("SELECT count(*) FROM t2"); err != nil || tb.name != "t2" {
		t.Errorf("CountTable = %+v, %v; want t2", tb, err)
	}
	if _, err := kv.CountTable("SELECT payload FROM t1 WHERE id = $1"); !errors.Is(err, engine.ErrTableStatement) {
		t.Errorf("CountTable of a lookup: %v, want ErrTableStatement", err)
	}
}

// TestKVFill: Fill's workers write every payload 1..n exactly once, in ranges of at most the
// batch size, count them into the recorder, and stop at the first error; the baseline is
// ErrNoBaseline.
func TestKVFill(t *testing.T) {
	const n, batch, clients = 1000, 7, 3
	kv, _ := newKV(t, engine.Options{Rows: n, Batch: batch, Clients: clients})
	td := engine.TableDef{Name: "t"}
	if err := kv.CreateDB([]engine.TableDef{td}, func(string) error { return nil }, mkTable); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var workers, fullRanges atomic.Int64
	rec := engine.NewRecorder(n, 5, batch, nil)
	err := kv.Fill(context.Background(), td, &engine.Source{}, n, rec, func(tb *kvTable) func(context.Context, int64, int64) error {
		workers.Add(1)
		if tb.name != "t" {
			t.Errorf("worker given table %q", tb.name)
		}
		return func(_ context.Context, start, count int64) error {
			if count < 1 || count > batch {
				t.Errorf("range of %d rows", count)
			}
			if count == batch {
				fullRanges.Add(1)
			}
			mu.Lock()
			defer mu.Unlock()
			for p := start + 1; p <= start+count; p++ {
				seen[p]++
			}
			return nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := int64(1); p <= n; p++ {
		if seen[p] != 1 {
			t.Errorf("payload %d written %d times", p, seen[p])
		}
	}
	if len(seen) != n || workers.Load() != clients || fullRanges.Load() != n/batch {
		t.Errorf("%d payloads by %d workers in %d full ranges, want %d by %d in %d", len(seen), workers.Load(), fullRanges.Load(), n, clients, n/batch)
	}
	if c := rec.Curve(); len(c) == 0 || c[len(c)-1].Rows != n {
		t.Errorf("recorder's curve %+v does not end at %d rows", c, n)
	}

	full := errors.New("disk full")
	var ranges atomic.Int64
	err = kv.Fill(context.Background(), td, &engine.Source{}, n, engine.NewRecorder(n, 5, batch, nil), func(*kvTable) func(context.Context, int64, int64) error {
		return func(context.Context, int64, int64) error { ranges.Add(1); return full }
	})
	if !errors.Is(err, full) || ranges.Load() > clients {
		t.Errorf("failing writes: %v after %d ranges, want the error after at most one range per worker", err, ranges.Load())
	}
	if err := kv.Fill(context.Background(), td, nil, n, rec, nil); !errors.Is(err, engine.ErrNoBaseline) {
		t.Errorf("baseline: %v", err)
	}
	if err := kv.Fill(context.Background(), engine.TableDef{Name: "u"}, &engine.Source{}, n, rec, nil); err == nil || !strings.Contains(err.Error(), "no table u") {
		t.Errorf("unknown table: %v", err)
	}
}

// TestKVSampler: Sample keeps the largest value sampled, StopSampler and DropTables stop it.
func TestKVSampler(t *testing.T) {
	kv, _ := newKV(t, engine.Options{})
	var max, calls, old atomic.Int64
	kv.Sample(&max, func() int64 { return old.Add(1) })
	kv.Sample(&max, func() int64 { return calls.Add(1) }) // stops the first sampler
	oldStopped := old.Load()
	for end := time.Now().Add(10 * time.Second); calls.Load() < 2 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // a loaded machine may delay the sampler's ticks
	}
	if err := kv.DropTables(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	stopped := calls.Load()
	time.Sleep(250 * time.Millisecond)
	if stopped < 2 || calls.Load() != stopped || max.Load() != stopped {
		t.Errorf("after DropTables: %d samples (%d at the stop), max %d: want 2 or more, no more after the stop, and the largest kept", calls.Load(), stopped, max.Load())
	}
	if old.Load() != oldStopped {
		t.Errorf("the first sampler sampled %d times after Sample started another", old.Load()-oldStopped)
	}
}

func TestKVReport(t *testing.T) {
	rt := engine.KVText{
		Title: "Test KV", MemTable: "t memtable", BlockCache: "t cache", Options: "t options", BulkUnit: "T batch",
		TextKeys: "Text keys are bytes.", LSM: engine.LSMText{Engine: "T", L0Name: "L0 runs max"},
	}.Report()
	s := engine.Settings{LSMMemTable: "8 MiB", LSMBlockCache: "32 MiB", LSMOptions: "defaults"}
	var rows []string
	rt.ServerSettings(func(k string, v any) { rows = append(rows, k+"="+v.(string)) }, s)
	if got := strings.Join(rows, ", "); got != "t memtable=8 MiB, t cache=32 MiB, t options=defaults" {
		t.Errorf("server settings %s", got)
	}
	if got := rt.SettingsLine(s); got != "memtable 8 MiB, block cache 32 MiB, defaults" {
		t.Errorf("settings line %q", got)
	}
	if rt.Title != "Test KV" || !rt.Clustered || rt.AppDriver != "none" || rt.AppBulkUnit != "T batch" || rt.LSM == nil || rt.LSM.L0Name != "L0 runs max" {
		t.Errorf("report text %+v", rt)
	}
	for col, want := range map[engine.Column]string{engine.ColText: "Text keys are bytes.", engine.ColPublicText: "Text keys are bytes.", engine.ColBigint: "", engine.ColUUID: ""} {
		if got := rt.TextKeyNote(engine.Row{Col: col}); got != want {
			t.Errorf("text key note of column %v: %q, want %q", col, got, want)
		}
	}
}

func TestLSMSetAmplification(t *testing.T) {
	for _, c := range []struct {
		l          engine.LSM
		write, spc float64
	}{
		{engine.LSM{UserBytes: 100, WALBytes: 110, FlushBytes: 60, CompactionBytes: 30, LiveBytes: 50}, 2, 0.5},
		{engine.LSM{UserBytes: 0, WALBytes: 110, LiveBytes: 50}, 0, 0},
	} {
		c.l.SetAmplification()
		if c.l.WriteAmp != c.write || c.l.SpaceAmp != c.spc {
			t.Errorf("%+v: write amp %v, space amp %v; want %v and %v", c.l, c.l.WriteAmp, c.l.SpaceAmp, c.write, c.spc)
		}
	}
}
