package dbbench

// A workload describes its tables as data (tableDef); each engine turns a description into
// its DDL (createTables), drops it (dropTables), analyzes it (settle) and names and sizes the
// structures it built (structures). A new table shape touches no engine.

// colKind is the kind of a workload table's column.
type colKind int

const (
	kindKey  colKind = iota // the scheme's key type: id, and a column that references one
	kindTime                // a point in time (created_at)
	kindInt                 // a 64-bit integer
)

// columnDef is one column of a workload table besides its id.
type columnDef struct {
	name string
	kind colKind
	// references names the table whose id this kindKey column refers to (a foreign key
	// called fk), or "".
	references, fk string
}

// indexDef is a secondary index of a workload table on one column.
type indexDef struct {
	name, column string
	role         string // what the report calls it: "child foreign-key index", …
}

// tableDef is one table of a workload: id PRIMARY KEY of the row's key type, then columns,
// then secondary indexes. Tables are created in order and dropped in reverse order.
type tableDef struct {
	name string
	// who prefixes the roles of its table and primary key ("parent" → "parent table",
	// "parent primary key").
	who     string
	key     row
	columns []columnDef
	indexes []indexDef
}

// tables is the app workload's schema as data: a parent (id, created_at, customer, payload)
// with an index on created_at when s.createdAt, and a child (id, parent_id REFERENCES
// parent(id), payload) with an index on parent_id.
func (s appSchema) tables() []tableDef {
	parent := tableDef{name: s.parent(), who: "parent", key: s.r, columns: []columnDef{
		{name: "created_at", kind: kindTime}, {name: "customer", kind: kindInt}, {name: "payload", kind: kindInt}}}
	if s.createdAt {
		parent.indexes = []indexDef{{name: s.createdIndex(), column: "created_at", role: "parent created_at index"}}
	}
	child := tableDef{name: s.child(), who: "child", key: s.r, columns: []columnDef{
		{name: "parent_id", kind: kindKey, references: s.parent(), fk: s.fk()}, {name: "payload", kind: kindInt}},
		indexes: []indexDef{{name: s.fkIndex(), column: "parent_id", role: "child foreign-key index"}}}
	return []tableDef{parent, child}
}

// reversed returns ts in reverse order, the order to drop them in.
func reversed(ts []tableDef) []tableDef {
	out := make([]tableDef, len(ts))
	for i, t := range ts {
		out[len(ts)-1-i] = t
	}
	return out
}
