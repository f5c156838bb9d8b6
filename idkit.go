// Package idkit generates, encodes and decodes unique IDs behind one small interface, so that an
// application can choose its ID scheme by configuration and change it without code changes.
//
//	s, err := idkit.New("snowflake:layout=discord,worker=3,process=1")
//	id, err := s.Next()    // idkit.ID
//	fmt.Println(id)        // canonical text
//	p, err := s.Decode(id) // time, node (and its sub-fields), sequence
//
// Schemes: the native Snowflake core with any bit layout of package layouts (presets twitter,
// discord, instagram, sonyflake, mastodon, baidu, or custom widths, unit and epoch), and
// adapters for ULID (github.com/oklog/ulid/v2), UUIDv7 and UUIDv4 (github.com/google/uuid) and
// Sonyflake (github.com/sony/sonyflake). See New for the spec syntax.
//
// Every Scheme is safe for concurrent use. The native Snowflake core never issues a duplicate:
// not under concurrency, not when the wall clock steps back (it reads the monotonic clock), not
// after a fast restart (it waits out the tick it started in, and with a mark store refuses to go
// below its persisted high-water mark). Losing IDs is allowed; repeating one is not.
package idkit

import (
	"context"
	"errors"
	"io"
	"time"
)

// Errors returned by this package, wrapped with context; match them with errors.Is. Errors of
// the underlying generators (schemes.ErrClockBackward, schemes.ErrTimeOverflow, …) pass
// through wrapped as well.
var (
	// ErrSpec reports a spec string New cannot use; the message names the offending part.
	ErrSpec = errors.New("idkit: bad spec")
	// ErrSyntax reports ID text, bytes or a database value that is not a valid ID.
	ErrSyntax = errors.New("idkit: invalid ID")
	// ErrTime reports text ParseTime cannot read as a time.
	ErrTime = errors.New("idkit: invalid time")
	// ErrScheme reports an ID that is valid but was not made by the scheme asked to handle it,
	// such as a UUIDv4 given to a uuidv7 scheme.
	ErrScheme = errors.New("idkit: ID of another scheme")
	// ErrUnordered reports a time range asked of a scheme whose IDs do not sort by time
	// (uuidv4, segment, a reversed snowflake layout, one with a node field above the time
	// field), or whose IDs of a time range are more than one run (Bounds of a sharded or
	// time-reversed layout, whose runs ShardBounds gives). See TimeRanger.
	ErrUnordered = errors.New("idkit: IDs not ordered by time")
)

// Scheme generates and understands one kind of ID. Implementations are safe for concurrent
// use.
//
// A Scheme may also implement these optional interfaces: Batcher (reserve many IDs at once),
// ContextScheme and ContextBatcher (waits that end with a context), Layouter (the 64-bit layout
// behind it), Noder (its node value), StatsReporter (counters for monitoring), Fenced (whether
// it may issue IDs right now), TimeRanger (the IDs of a time range, for time-ordered schemes),
// Durabler (the durability class of the stores it rests on; read it with DurabilityOf) and
// io.Closer (release what it holds, such as a node lease; call it when done). Find them with
// As (Bounds for TimeRanger, DurabilityOf for Durabler), which also looks inside wrappers that
// have an Unwrap method, such as the one New puts around a registered scheme with prefix= or
// mask=; a type assertion finds only Batcher, ContextScheme, ContextBatcher, io.Closer and
// Formatter on every Scheme New returns, and the others only on a scheme that is not wrapped.
type Scheme interface {
	// Name returns the canonical spec of the scheme, which New accepts, e.g.
	// "snowflake:layout=twitter,node=3". A node claimed from a lease shows as its number.
	Name() string
	// Next returns a new ID.
	Next() (ID, error)
	// Codec reads and takes apart the scheme's IDs.
	Codec
}

// Codec reads the canonical text of one scheme's IDs and takes them apart. Every Scheme is a
// Codec; NewCodec returns one without starting a generator, for tools that only decode. The
// codecs of time-ordered schemes also implement TimeRanger.
type Codec interface {
	// Parse reads an ID in the scheme's canonical text form; errors wrap ErrSyntax or
	// ErrScheme.
	Parse(text string) (ID, error)
	// Decode takes an ID of the scheme apart; errors wrap ErrScheme.
	Decode(id ID) (Parts, error)
}

// Batcher is implemented by schemes that can reserve many IDs in one step, for bulk inserts.
// NextBatch fills dst with new IDs in the order the scheme issues them, which is increasing
// for every scheme whose IDs increase: the snowflake layouts with the time field on top (all
// presets), segment, and the one-at-a-time schemes that increase (sonyflake, monotonic ulid,
// uuidv7). The layouts made to spread their IDs over a key space are the exception: with
// shard_bits, reverse=true or reverse=time (and segment with reverse=true) the batch is in
// issue order, whose layout values (Layout.Value; the sequence number for segment) increase
// while the stored IDs do not; a reverse=time or shard_by=tick batch increases within each
// tick. Such a batch is not sorted: an order would hold within one batch only, and these keys
// exist to be in no order. A caller that wants them sorted (say, for one multi-row INSERT)
// sorts them itself.
type Batcher interface {
	NextBatch(dst []ID) error
}

// Parts is an ID taken apart. Fields a scheme does not have are zero, with HasNode and HasSeq
// false.
type Parts struct {
	// Time is when the ID was made, in UTC, at the scheme's resolution; zero for UUIDv4.
	Time time.Time
	// Node is the node (or machine, shard, worker) value: all node fields concatenated.
	Node    uint64
	HasNode bool
	// Seq is the sequence number within the time tick.
	Seq    uint64
	HasSeq bool
	// Fields lists the layout's fields by name, most significant first (for Snowflake
	// layouts: time, then node sub-fields such as datacenter and worker, then seq). Time is
	// given in ticks of the layout's unit.
	Fields []Field
	// Version is the UUID version (4 or 7; for the typeid scheme, which reads any 128 bits,
	// whatever the version bits say); zero for other schemes.
	Version int
}

// Field is one named field of an ID.
type Field struct {
	Name  string
	Value uint64
}

// New returns the scheme a spec string describes: a name, optionally followed by a colon and
// comma-separated key=value settings. Names and keys are matched without regard to case.
//
//	snowflake   layout=twitter|discord|instagram|sonyflake|mastodon|baidu (default twitter)
//	            node=N | node=env:VAR | node=ip (low bits of the private IPv4 address)
//	            | node=etcd://host:port/prefix | node=pg://…?namespace=NS (claim a free
//	            slot under a lease), or the layout's node fields by name (twitter:
//	            datacenter, worker; discord: worker, process; instagram: shard;
//	            sonyflake: machine; baidu: worker)
//	            lease=URL (hold a fixed node's slot in a lease store), lease_ttl=10s,
//	            marks=lease|file:PATH|off, mark_window=50ms (persisted high-water mark)
//	            custom bits: time_bits, node_bits, seq_bits, or fields=time:41/dc:5/w:5/seq:12
//	            (kinds by name: "time" and "seq", every other name is a node field);
//	            unit=1ms|10ms|1s…; epoch=RFC 3339 time, YYYY-MM-DD or Unix milliseconds
//	            lookahead=N ticks; drift_wait=5ms; drift_continue=100ms (0 or "off" disables)
//	ulid        monotonic=true|false (default true)
//	uuidv7, uuidv4
//	sonyflake   machine=N (0..65535, also node=N); start=RFC 3339 time or YYYY-MM-DD
//	typeid      UUIDv7s shown as TypeIDs (specification 0.3.0): "typeid:prefix=user" makes
//	            user_01h455vb4pex5vsknk084sn02q; without a prefix, the bare 26 characters
//
// Every scheme also takes two settings for its public text, the text an API shows (see
// Formatter, FormatID and Public); the stored form (ID.String, binary, SQL) does not change:
//
//	prefix=NAME   TypeID text: NAME_ and the ID in the TypeID alphabet, 26 characters for
//	              128-bit IDs and 13 for 64-bit ones, fixed width so that text order is ID
//	              order. NAME: 1 to 63 characters of a-z and '_', starting and ending with a
//	              letter. Parse then reads only text with this prefix.
//	mask=KEYREF   hide the time, node and counts in the public text under a 128-bit key:
//	              env:NAME or file:PATH holding "k0:k1" (two groups of 16 hex digits, as the
//	              uuidv47 PostgreSQL extension takes it); never the key itself, which is
//	              refused unshown, inline or after env: or file: (see mask.IsRef). uuidv7 and
//	              typeid show the UUIDv47 facade, ulid its time masked the same way, 64-bit
//	              layouts a keyed permutation of the layout's width (package mask). uuidv4
//	              refuses it: it has nothing to hide.
//
// plus every name a package added with Register: segment (range allocation, package
// schemes/segment, registered by importing one of its stores) and remote (the idkitd client,
// package schemes/remote) among them. A spec naming one of those without its import fails with
// a message that names the import. New gives a registered scheme the prefix and mask settings
// itself, unless the scheme takes them (Settings.TakeText, as remote does): its Parse and
// AppendID read and write the public text, and a mask permutes 64-bit IDs over their width (the
// layout's for a Layouter, IDWidth for a Widther such as segment's 63 bits, else 64). The
// scheme it returns is a Batcher, ContextScheme, ContextBatcher, io.Closer and Formatter; its
// Unwrap method returns the registered scheme, where As (and Bounds) find each of Layouter,
// Noder, StatsReporter, Fenced, TimeRanger or any other interface the registered scheme has.
//
// Lease stores are registered by import, so that a program that does not use them does not
// link their clients. A spec with node=URL or lease=URL needs, in the program:
//
//	import _ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // etcd://host:port/prefix
//	import _ "github.com/idkit/idkit/schemes/nodeid/pglease"   // postgres://, postgresql://, pg://
//
// Without it New fails with an error wrapping ErrSpec and nodeid.ErrNoStoreDriver that names the
// import to add. Every other setting needs nothing beyond this package.
//
// Errors wrap ErrSpec and name the bad part: unknown name, unknown or repeated key, bad value,
// node out of range, a layout whose bits do not fit in 64, or a mask key that is missing or
// malformed (the message never shows a key). Credentials in the spec are
// redacted in every message. Starting the generator can also fail (a layout that ran out of
// time, such as baidu's); those errors wrap the generator's. New never panics.
func New(spec string) (Scheme, error) {
	return NewContext(context.Background(), spec)
}

// NewContext is New with a context that bounds any network work a spec asks for, such as
// claiming a node ID from a lease store.
func NewContext(ctx context.Context, spec string) (Scheme, error) {
	sp, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	e, err := sp.entry()
	if err != nil {
		return nil, err
	}
	if err := sp.readText(); err != nil {
		return nil, err
	}
	s, err := e.build(ctx, sp)
	if err != nil {
		return nil, err
	}
	if e.text == nil {
		return s, nil
	}
	ws, err := e.text.scheme(sp, s)
	if err != nil {
		closeQuietly(s)
		return nil, err
	}
	return ws, nil
}

// closeQuietly releases what a scheme that will not be returned holds.
func closeQuietly(s Scheme) {
	if c, ok := s.(io.Closer); ok {
		_ = c.Close()
	}
}
