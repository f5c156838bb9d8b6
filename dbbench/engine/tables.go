package engine

// A workload describes its tables as data (TableDef); each engine turns a description into
// its DDL (createTables), drops it (dropTables), analyzes it (settle) and names and sizes the
// structures it built (structures). A new table shape touches no engine.

// ColKind is the kind of a workload table's column.
type ColKind int

const (
	KindKey  ColKind = iota // the scheme's key type: id, and a column that references one
	KindTime                // a point in time (created_at)
	KindInt                 // a 64-bit integer
)

// columnDef is one column of a workload table besides its id.
type columnDef struct {
	Name string
	Kind ColKind
	// References names the table whose id this KindKey column refers to (a foreign key
	// called fk), or "".
	References, FK string
}

// indexDef is a secondary index of a workload table on one column.
type indexDef struct {
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
	Columns []columnDef
	Indexes []indexDef
}

// Tables is the app workload's schema as data: a parent (id, created_at, customer, payload)
// with an index on created_at when s.createdAt, and a child (id, parent_id REFERENCES
// parent(id), payload) with an index on parent_id.
func (s AppSchema) Tables() []TableDef {
	parent := TableDef{Name: s.Parent(), Who: "parent", Key: s.Row, Columns: []columnDef{
		{Name: "created_at", Kind: KindTime}, {Name: "customer", Kind: KindInt}, {Name: "payload", Kind: KindInt}}}
	if s.CreatedAt {
		parent.Indexes = []indexDef{{Name: s.createdIndex(), Column: "created_at", Role: "parent created_at index"}}
	}
	child := TableDef{Name: s.Child(), Who: "child", Key: s.Row, Columns: []columnDef{
		{Name: "parent_id", Kind: KindKey, References: s.Parent(), FK: s.FK()}, {Name: "payload", Kind: KindInt}},
		Indexes: []indexDef{{Name: s.fkIndex(), Column: "parent_id", Role: "child foreign-key index"}}}
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
