package dbbench

import (
	"maps"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// TestLoadFigures checks how a table-workload load's report figures come from the named
// counters and structures the engines report: the primary key's size from its own B-tree or
// the clustered index, the table's from its heap or, clustered, from all its indexes, the
// secondary indexes' from every other structure, and the log, full-page-image and checkpoint
// figures present exactly when the engine counted them.
func TestLoadFigures(t *testing.T) {
	heap := engine.LoadTable("t1", engine.Row{Col: engine.ColBigint}, false)
	clustered := engine.LoadTable("t2", engine.Row{Col: engine.ColBigint}, true)
	for _, tt := range []struct {
		name         string
		def          engine.TableDef
		counters     map[string]int64
		structures   []engine.Structure
		index, bytes int64
		fpi, ckpt    *int64
		wantCounters map[string]int64
	}{
		{"PostgreSQL: heap and primary key, full-page images and checkpoints", heap,
			map[string]int64{engine.CounterLogBytes: 900, engine.CounterFullPageImages: 3, engine.CounterCheckpoints: 0},
			[]engine.Structure{{Name: "t1", Role: "table", Bytes: 800}, {Name: "t1_pkey", Role: "primary key", Bytes: 400}},
			400, 800, engine.Ptr(int64(3)), engine.Ptr(int64(0)),
			map[string]int64{engine.CounterLogBytes: 900, engine.CounterFullPageImages: 3, engine.CounterCheckpoints: 0}},
		{"SQLite: heap and primary key, log bytes only", heap,
			map[string]int64{engine.CounterLogBytes: 700},
			[]engine.Structure{{Name: "t1", Role: "table", Bytes: 300}, {Name: "sqlite_autoindex_t1_1", Role: "primary key", Bytes: 200}},
			200, 300, nil, nil,
			map[string]int64{engine.CounterLogBytes: 700}},
		{"InnoDB: clustered index and a secondary index", clustered,
			map[string]int64{engine.CounterLogBytes: 500, engine.CounterPoolReads: 2, engine.CounterPageSplits: 9},
			[]engine.Structure{{Name: "t2.PRIMARY", Role: "clustered index (the table)", Bytes: 1600}, {Name: "t2.payload_idx", Role: "secondary index", Bytes: 450}},
			1600, 2050, nil, nil,
			map[string]int64{engine.CounterLogBytes: 500, engine.CounterPoolReads: 2, engine.CounterPageSplits: 9, engine.CounterSecondaryIndexBytes: 450}},
		{"InnoDB: clustered index alone", heap,
			map[string]int64{engine.CounterLogBytes: 500},
			[]engine.Structure{{Name: "t1.PRIMARY", Role: "clustered index (the table)", Bytes: 1600}},
			1600, 1600, nil, nil,
			map[string]int64{engine.CounterLogBytes: 500, engine.CounterSecondaryIndexBytes: 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics{Counters: maps.Clone(tt.counters), Structures: tt.structures}
			m.figures(tt.def)
			if m.IndexBytes != tt.index || m.TableBytes != tt.bytes || m.WALBytes != tt.counters[engine.CounterLogBytes] {
				t.Errorf("index %d, table %d, log %d bytes; want %d, %d, %d", m.IndexBytes, m.TableBytes, m.WALBytes, tt.index, tt.bytes, tt.counters[engine.CounterLogBytes])
			}
			if !samePtr(m.FPI, tt.fpi) || !samePtr(m.Checkpoints, tt.ckpt) {
				t.Errorf("full-page images %v, checkpoints %v; want %v, %v", m.FPI, m.Checkpoints, tt.fpi, tt.ckpt)
			}
			if !maps.Equal(m.Counters, tt.wantCounters) {
				t.Errorf("counters %v, want %v", m.Counters, tt.wantCounters)
			}
		})
	}
}

func samePtr(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// TestTableRole checks the roles of a table's structures: prefixed by the table's Who in the
// app workload, bare in the table workload, as the reports have always named them.
func TestTableRole(t *testing.T) {
	for _, tt := range []struct {
		who, what, want string
	}{
		{"", engine.RoleTable, "table"},
		{"", engine.RolePrimary, "primary key"},
		{"parent", engine.RoleTable, "parent table"},
		{"child", engine.RoleClustered, "child clustered index (the table)"},
	} {
		if got := (engine.TableDef{Who: tt.who}).Role(tt.what); got != tt.want {
			t.Errorf("Who %q, Role(%q) = %q, want %q", tt.who, tt.what, got, tt.want)
		}
	}
}
