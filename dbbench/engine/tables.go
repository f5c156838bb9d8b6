package engine

// A workload describes its tables as data (TableDef); each engine turns a description into
// its DDL (CreateTables), drops it (DropTables), analyzes it (Settle) and names and sizes the
// structures it built (Structures). A new table shape touches no engine: what a workload
// needs of a table's storage beyond its columns and indexes is a flag of TableDef that every
// engine's DDL honours or, where it has no such choice, ignores.

// ColKind is the kind of a workload table's column.
type ColKind int

const (
	KindKey  ColKind = iota // the scheme's key type: id, and a column that references one
	KindTime                // a point in time (created_at)
	KindInt                 // a 64-bit integer
)

// ColumnDef is one column of a workload table besides its id.
type ColumnDef struct {
	Name string
	Kind ColKind
	// References names the table whose id this KindKey column refers to (a foreign key
	// called fk), or "".
	References, FK string
}

// IndexDef is a secondary index of a workload table on one column.
type IndexDef struct {
	Name, Column string
	Role         string // what the report calls it: "child foreign-key index", …
}

// TableDef is one table of a workload: id PRIMARY KEY of the row's key type, then columns,
// then secondary indexes. Tables are created in order and dropped in reverse order.
type TableDef struct {
	Name string
	// Who prefixes the roles of its table and primary key ("parent" → "parent table",
	// "parent primary key").
	Who     string
	Key     Row
	Columns []ColumnDef
	Indexes []IndexDef
	// KeyBy is who makes the keys of the rows a RowWriter writes (KeysByDatabase): the zero
	// value leaves it to the key's column. The DDL does not read it.
	KeyBy KeyMaker

	// IdentityAlways: a key the database makes (ColIdentity) is never given by a writer
	// (PostgreSQL's GENERATED ALWAYS AS IDENTITY, not BY DEFAULT); engines without the
	// distinction ignore it.
	IdentityAlways bool
	// SeparateKey: the primary key is a B-tree of its own even for a key the database makes,
	// so that it can be measured (SQLite: a BIGINT key beside the rowid, whose values the
	// writer gives, not INTEGER PRIMARY KEY, which is the rowid). Engines whose primary key
	// is always a structure of its own ignore it.
	SeparateKey bool
	// NoToastVacuum: autovacuum is off for the table's TOAST table too, not only for the
	// table (PostgreSQL); engines without one ignore it.
	NoToastVacuum bool
}

// LoadTable is the table workload's table as data: name (id PRIMARY KEY of r's key type,
// payload bigint), measured as written (the identity generated always, the key a B-tree of
// its own, no autovacuum of its TOAST table), with a secondary index payload_idx on payload
// when secondary.
func LoadTable(name string, r Row, secondary bool) TableDef {
	t := TableDef{Name: name, Key: r, Columns: []ColumnDef{{Name: "payload", Kind: KindInt}},
		IdentityAlways: true, SeparateKey: true, NoToastVacuum: true}
	if secondary {
		t.Indexes = []IndexDef{{Name: "payload_idx", Column: "payload", Role: "secondary index"}}
	}
	return t
}

// Tables is the app workload's schema as data: a parent (id, created_at, customer, payload)
// with an index on created_at when s.createdAt, and a child (id, parent_id REFERENCES
// parent(id), payload) with an index on parent_id.
func (s AppSchema) Tables() []TableDef {
	parent := TableDef{Name: s.Parent(), Who: "parent", Key: s.Row, Columns: []ColumnDef{
		{Name: "created_at", Kind: KindTime}, {Name: "customer", Kind: KindInt}, {Name: "payload", Kind: KindInt}}}
	if s.CreatedAt {
		parent.Indexes = []IndexDef{{Name: s.createdIndex(), Column: "created_at", Role: "parent created_at index"}}
	}
	child := TableDef{Name: s.Child(), Who: "child", Key: s.Row, Columns: []ColumnDef{
		{Name: "parent_id", Kind: KindKey, References: s.Parent(), FK: s.FK()}, {Name: "payload", Kind: KindInt}},
		Indexes: []IndexDef{{Name: s.fkIndex(), Column: "parent_id", Role: "child foreign-key index"}}}
	return []TableDef{parent, child}
}

// Reversed returns ts in reverse order, the order to drop them in.
func Reversed(ts []TableDef) []TableDef {
	out := make([]TableDef, len(ts))
	for i, t := range ts {
		out[len(ts)-1-i] = t
	}
	return out
}
