package engine

// Insert modes accepted in Config.Mode.
const (
	// ModeCopy streams rows with COPY … FROM STDIN in binary format, one COPY
	// per batch (SQLite: one prepared INSERT per row inside a transaction per
	// batch).
	ModeCopy = "copy"
	// ModeBatch sends one multi-row INSERT per batch.
	ModeBatch = "batch"
	// ModeSingle sends one single-row INSERT per row, autocommitted, from
	// Config.Clients concurrent connections.
	ModeSingle = "single"
)

// Profiles accepted in Config.Profile.
const (
	// ProfileSteady checkpoints before each measured load and, on pg-local,
	// sets max_wal_size and checkpoint_timeout high enough that no checkpoint
	// falls inside it: the figures are the B-tree's own cost.
	ProfileSteady = "steady"
	// ProfileCheckpoints runs pg-local with a small max_wal_size and a short
	// checkpoint_timeout, as busy production servers run, so pages touched
	// after each checkpoint pay a full-page image in the WAL.
	ProfileCheckpoints = "checkpoints"
)

// Row names that are not idkit specs.
const (
	// RowBigserial is a bigint identity column filled by the database's own
	// sequence: the ideal ordered key.
	RowBigserial = "bigserial"
	// RowULIDText is a monotonic ULID stored in its canonical 26-character
	// text form in a text COLLATE "C" column.
	RowULIDText = "ulid-text"
	// RowULIDTextICU is the same text in a column with ICU's root collation
	// (COLLATE "und-x-icu"), PostgreSQL only. ULID text is upper-case Crockford
	// base32, which the root collation orders as "C" does, so this row isolates
	// what a linguistic collation costs each comparison in the B-tree.
	RowULIDTextICU = "ulid-text-icu"
	// RowTypeIDText is the typeid scheme with the prefix "user"
	// ("typeid:prefix=user") stored as its public text, "user_" and 26
	// characters, in a column compared as bytes: text COLLATE "C" on
	// PostgreSQL, VARBINARY on MariaDB/MySQL, TEXT on SQLite. The row
	// "typeid" stores the same UUIDv7s as 16 bytes.
	RowTypeIDText = "typeid-text"
	// RowAutoIncrement is RowBigserial under its InnoDB name: a BIGINT
	// AUTO_INCREMENT column filled by the server (an identity column on
	// PostgreSQL).
	RowAutoIncrement = "auto-increment"
)

// DefaultSchemes returns the rows compared by default: bigserial, snowflake
// (Twitter layout), sonyflake, ulid and uuidv7 and uuidv4 as uuid,
// ulid-text, and typeid as uuid beside the same IDs stored as their
// prefixed text (RowTypeIDText).
func DefaultSchemes() []string {
	return []string{RowBigserial, "snowflake", "sonyflake", "ulid", "uuidv7", "uuidv4", RowULIDText, "typeid", RowTypeIDText}
}

// InnoDBSchemes returns the rows compared by default on MariaDB/MySQL:
// auto-increment, snowflake, sonyflake, ulid, uuidv7 and uuidv4 as
// BINARY(16), uuidv7 and uuidv4 in MariaDB's UUID type (left out on servers
// without it), ULID and UUIDv7 text as CHAR(26)/CHAR(36) under a binary
// collation and under the database's default collation, and typeid as
// BINARY(16) beside the same IDs stored as their prefixed text in a
// VARBINARY column (RowTypeIDText).
func InnoDBSchemes() []string {
	return []string{RowAutoIncrement, "snowflake", "sonyflake", "ulid", "uuidv7", "uuidv4",
		"uuidv7" + suffixNative, "uuidv4" + suffixNative,
		RowULIDText, "ulid" + SuffixTextDefault, "uuidv7" + suffixText, "uuidv7" + SuffixTextDefault,
		"typeid", RowTypeIDText}
}

// AppSchemes returns the rows WorkloadApp compares by default: the database's own sequence
// (bigserial, or auto-increment on MariaDB/MySQL), snowflake, ulid and uuidv7 as 16 bytes,
// and uuidv4.
func AppSchemes(innodb bool) []string {
	first := RowBigserial
	if innodb {
		first = RowAutoIncrement
	}
	return []string{first, "snowflake", "ulid", "uuidv7", "uuidv4"}
}

// Workloads accepted in Config.Workload.
const (
	// WorkloadTable loads one table (id PRIMARY KEY, payload) per scheme: the default.
	WorkloadTable = "table"
	// WorkloadApp loads, per scheme, a parent table (id, created_at, customer, payload) and a
	// child table (id, parent_id REFERENCES parent(id), payload) with an index on
	// child(parent_id), one business operation (1 parent and Config.Children children) per
	// transaction, or in bulk with ModeCopy; then it times "the rows of a time window" and "a
	// parent with its children". See RunApp's fields in AppResult.
	WorkloadApp = "app"
)

// Created-at index policies accepted in Config.CreatedAtIndex.
const (
	// CreatedAtNeeded puts an index on parent(created_at) only for schemes whose key cannot
	// answer time ranges (uuidv4, bigserial/auto-increment): the default.
	CreatedAtNeeded = "needed"
	// CreatedAtAll puts it on every scheme's parent table, to show what it costs a
	// time-ordered scheme and to time the time query both ways.
	CreatedAtAll = "all"
)

// ModeTx is the app workload's default insert mode: each business operation is one
// transaction of one parent INSERT and one multi-row child INSERT, from Config.Clients
// connections.
const ModeTx = "tx"
