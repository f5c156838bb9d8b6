package dbbench

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// recordingWriter is an engine.RowWriter that keeps what each Insert wrote, in order.
type recordingWriter struct {
	inserts []recordedInsert
	txs     int
}

type recordedInsert struct {
	table string
	n     int
	keys  []engine.Value // row[0] of each row
	refs  []engine.Value // row[1].Key of each row (a child's parent)
}

func (w *recordingWriter) Insert(_ context.Context, t engine.TableDef, _ engine.Path, n int, fill engine.RowFunc) error {
	rec := recordedInsert{table: t.Who, n: n}
	row := make([]engine.Cell, 1+len(t.Columns))
	for i := range n {
		if err := fill(i, row); err != nil {
			return err
		}
		rec.keys = append(rec.keys, *row[0].Key)
		if row[1].Key != nil {
			rec.refs = append(rec.refs, *row[1].Key)
		}
	}
	w.inserts = append(w.inserts, rec)
	return nil
}

func (w *recordingWriter) InsertKey(context.Context, engine.TableDef, engine.RowFunc, *engine.Value) error {
	return engine.ErrKeyRule
}

func (w *recordingWriter) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	w.txs++
	return fn(ctx)
}

// TestClientBatchSorted: a client batch (Config.ClientBatch) is one transaction whose parents
// go as one INSERT in ascending key order and whose children as one in ascending key order,
// each child still with its own parent. Random keys (uuidv4) come in no order, so an unsorted
// batch fails it.
func TestClientBatchSorted(t *testing.T) {
	const k, ops = 4, 25
	s := engine.AppSchema{Label: "uuidv4", Row: engine.Row{Label: "uuidv4", Spec: "uuidv4", Col: engine.ColUUID}, Children: k}
	w := &recordingWriter{}
	wr := newOpWriter(w, s)
	var arrived []engine.Value
	wr.arrived = func(v engine.Value) { arrived = append(arrived, v) }
	batch := make([]appOp, ops)
	parentOf := map[[16]byte][16]byte{}
	for i := range batch {
		rand.Read(batch[i].Parent.B16[:])
		batch[i].Children = make([]engine.Value, k)
		for j := range batch[i].Children {
			rand.Read(batch[i].Children[j].B16[:])
			parentOf[batch[i].Children[j].B16] = batch[i].Parent.B16
		}
	}
	if err := wr.tx(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	if w.txs != 1 || len(w.inserts) != 2 {
		t.Fatalf("%d transaction(s), %d INSERT(s); want 1 transaction of 2 INSERTs (parents, children)", w.txs, len(w.inserts))
	}
	parents, children := w.inserts[0], w.inserts[1]
	if parents.table != "parent" || parents.n != ops || children.table != "child" || children.n != ops*k {
		t.Fatalf("INSERTs %s×%d, %s×%d; want parent×%d, child×%d", parents.table, parents.n, children.table, children.n, ops, ops*k)
	}
	for name, keys := range map[string][]engine.Value{"parent": parents.keys, "child": children.keys, "arrived": arrived} {
		if !slices.IsSortedFunc(keys, compareKeys) {
			t.Errorf("%s keys of the batch not in ascending order", name)
		}
	}
	for i, c := range children.keys {
		if parentOf[c.B16] != children.refs[i].B16 {
			t.Fatalf("child %d written with another operation's parent", i)
		}
	}
}

// TestClientBlockRuns: with Config.ClientBlock, each client's keys of a block are one run of
// the shared generator's IDs that no other client's key falls inside, even when the clients
// take their operations in turn. Without blocks (block 1) taking turns interleaves them, and
// the check fails.
func TestClientBlockRuns(t *testing.T) {
	for _, tc := range []struct {
		block int
		runs  bool
	}{{1, false}, {20, true}} {
		const clients, perClient, k = 4, 60, 2
		r, err := engine.ResolveRow(t.Context(), "snowflake")
		if err != nil {
			t.Fatal(err)
		}
		src, err := engine.NewSource(r, 1)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		keys := make([]*clientKeys, clients)
		for c := range keys {
			keys[c] = newClientKeys(src, &mu, tc.block, k)
		}
		type owned struct {
			key    engine.Value
			client int
		}
		var all []owned
		for range perClient {
			for c := range keys { // the clients take one operation each in turn
				op := appOp{Children: make([]engine.Value, k)}
				if err := keys[c].next(t.Context(), &op); err != nil {
					t.Fatal(err)
				}
				all = append(all, owned{op.Parent, c})
				for _, ch := range op.Children {
					all = append(all, owned{ch, c})
				}
			}
		}
		src.Close()
		slices.SortFunc(all, func(a, b owned) int { return compareKeys(a.key, b.key) })
		// In key order, a client's keys come in runs of a whole block of 20 operations (1+k
		// keys each).
		want := 20 * (1 + k)
		short := 0
		for i := 0; i < len(all); {
			j := i
			for j < len(all) && all[j].client == all[i].client {
				j++
			}
			if j-i < want {
				short++
			}
			i = j
		}
		if got := short == 0; got != tc.runs {
			t.Errorf("block %d: %d runs of one client's keys shorter than %d keys; want runs of whole blocks: %v", tc.block, short, want, tc.runs)
		}
	}
}

// TestIDsPerClientRanges: with Config.IDsPerClient and a layout whose node field is above the
// time, client c's keys carry c in their top bits, a key range of its own; without it every
// client shares one generator (node 0) and the check fails.
func TestIDsPerClientRanges(t *testing.T) {
	const spec = "snowflake:fields=node:6/time:41/seq:16"
	r, err := engine.ResolveRow(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, per := range []bool{false, true} {
		shared, err := engine.NewSource(r, 1)
		if err != nil {
			t.Fatal(err)
		}
		srcs, closeSrcs, err := clientSources(Config{IDsPerClient: per}, r, shared, 8)
		if err != nil {
			t.Fatal(err)
		}
		own := true
		for c, s := range srcs {
			var v engine.Value
			if err := s.NextContext(t.Context(), &v); err != nil {
				t.Fatal(err)
			}
			own = own && v.U64>>57 == uint64(c)
		}
		closeSrcs()
		shared.Close()
		if own != per {
			t.Errorf("ids-per-client %v: every client's keys in its own node range: %v", per, own)
		}
	}
	// A spec that sets its node already cannot take a node per client.
	shared, _ := engine.NewSource(r, 1)
	defer shared.Close()
	fixed := r
	fixed.Spec += ",node=3"
	if _, _, err := clientSources(Config{IDsPerClient: true}, fixed, shared, 4); err == nil || !strings.Contains(err.Error(), "ids-per-client") {
		t.Errorf("a spec with its own node: %v, want an error naming --ids-per-client", err)
	}
}

// TestRemedyConfig checks the validation of the client remedies.
func TestRemedyConfig(t *testing.T) {
	app := Config{DB: EngineSQLite, Workload: WorkloadApp}
	for _, tc := range []struct {
		name string
		set  func(*Config)
		err  string // "" for valid
	}{
		{"batch", func(c *Config) { c.ClientBatch = 10 }, ""},
		{"block", func(c *Config) { c.ClientBlock = 200 }, ""},
		{"per client", func(c *Config) { c.IDsPerClient = true }, ""},
		{"batch and per client", func(c *Config) { c.ClientBatch, c.IDsPerClient = 10, true }, ""},
		{"batch too big", func(c *Config) { c.ClientBatch = 1001 }, "client batch must be between 1 and 1000"},
		{"negative block", func(c *Config) { c.ClientBlock = -2 }, "client block must be between 1 and 100000"},
		{"table workload", func(c *Config) { c.Workload, c.ClientBlock = WorkloadTable, 5 }, "client-block is for the app workload"},
		{"copy mode", func(c *Config) { c.Mode, c.IDsPerClient = ModeCopy, true }, "ids-per-client is for the app workload in mode tx"},
		{"in tx and batch", func(c *Config) { c.IDsInTx, c.ClientBatch = true, 5 }, "exclude each other"},
		{"block and per client", func(c *Config) { c.ClientBlock, c.IDsPerClient = 5, true }, "exclude each other"},
	} {
		c := app
		tc.set(&c)
		_, err := c.withDefaults()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

// TestIDsPerClientLoad runs the app workload on SQLite with 4 clients and the node above the
// time: with --ids-per-client the parent table holds keys of all 4 clients' ranges, so the
// load used a generator per client; without, only node 0's range (the control).
func TestIDsPerClientLoad(t *testing.T) {
	const clients = 4
	for _, per := range []bool{false, true} {
		ranges := 0
		cfg := Config{DB: EngineSQLite, Schemes: []string{"snowflake:fields=node:6/time:41/seq:16"}, Workload: WorkloadApp,
			Rows: 200, Lookups: 5, Repeat: 1, WarmupRows: -1, Clients: clients, IDsPerClient: per}
		cfg.beforeQueries = func(ctx context.Context, d engine.Engine, sc appScheme) error {
			for c := range int64(clients) {
				n, err := d.Count(ctx, d.SQL("SELECT 1 FROM "+d.Qualify(sc.Parent())+" WHERE id >= $1 AND id < $2"), c<<57, (c+1)<<57)
				if err != nil {
					return err
				}
				if n > 0 {
					ranges++
				}
			}
			return nil
		}
		rep, err := Run(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: clients}[per]; ranges != want || rep.Settings.IDsPerClient != per {
			t.Errorf("ids-per-client %v: parent keys in %d node ranges (settings say %v); want %d", per, ranges, rep.Settings.IDsPerClient, want)
		}
	}
}
