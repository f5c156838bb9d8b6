package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/idkit/idkit"
)

const inspectHelp = `Usage: idbench inspect [--scheme SPEC] [--json] [--stored] [ID... | -]
       idbench inspect [--scheme SPEC] [--json] [--from TIME] [--to TIME]
       idbench inspect [--scheme SPEC] [--json] --at TIME

Takes IDs of one scheme apart: the time they were made (UTC), the node (machine, shard,
worker) and its named sub-fields, the sequence number within the time tick, and the UUID
version. With no ID arguments, or with "-", IDs are read from standard input, separated by
blanks or newlines (with no arguments, a terminal on standard input is an error).

IDs are read in the scheme's public text, as "idbench gen" prints them. Where that differs
from the stored form (a scheme with prefix= or mask=, and typeid), the table shows both: ID
is the public text, STORED the ID the database holds, PREFIX a TypeID's prefix; the fields
are the stored ID's. A stored UUID or ULID, or stored text next to a prefix, cannot pass for
public text and is read as stored; a stored 64-bit ID or ULID of a masked scheme without a
prefix can (both forms are numbers, or both ULIDs), so pass --stored to read every ID as
stored. TypeID text with a prefix the spec does not set is read with that prefix (e.g.
--scheme typeid reads user_… and order_…).

An ID that cannot be read (bad text, or an ID of another scheme) is reported on stderr by
name; the others are still shown, and the exit status is 1 at the end.

With --from and --to (either may be left out, for a range open on that side) it prints the
smallest and the largest ID that any node of the scheme can issue with a decoded time in
[from, to), ready for "WHERE id >= lo AND id <= hi": the rows made between two times, found
through a time-ordered primary key without a created_at index. With --at it prints the lowest
ID with a decoded time at or after that time ("WHERE id >= lo": the rows since then). The IDs
are in the form the column stores, never the public text of prefix= or mask=: for 64-bit IDs the unsigned decimal a bigint (or, above
2^63-1, a numeric(20,0) or BIGINT UNSIGNED) column holds; for UUIDv7 the UUID text; for ULIDs
the ULID text, and the UUID text of the same 16 bytes for a uuid column. A range that overlaps
the life of the scheme's time field is clamped to it; one wholly outside it is an error. Only
time-ordered schemes have such bounds: every snowflake layout whose time field is its top
field (all presets), sonyflake, ulid and uuidv7; uuidv4, segment IDs and a snowflake layout
with reverse=true do not.

A sharded snowflake layout (shard_bits=S, or a hash field in fields=) has one range per shard,
2^S of them, each ordered by time: the table lists them by shard, and the WHERE clause ORs
them (with --at each shard's range runs to the end of the time field). Its --json answer adds
"shards", a list of {"shard", "lo", "hi"}; "lo" and "hi" are then the first shard's lowest ID
and the last shard's highest, and only "where" selects exactly the rows of the range.

An ID's decoded time is the start of its tick (1 ms for twitter, discord, instagram, mastodon,
ulid and uuidv7; 10 ms for sonyflake; 1 s for baidu; unit= for a custom layout), so the bounds
are exact on ticks: a --from or --to inside a tick moves to the start of the next tick. A
query by a wall-clock time that is not on a tick boundary can therefore differ from a query
on a created_at column by at most one tick at each edge.

Flags:
  --scheme SPEC   the scheme the IDs belong to (default "snowflake", the Twitter layout); the
                  layout settings matter (e.g. "snowflake:layout=discord"), node settings do not
  --json          one JSON object per line per ID instead of a table: "id" (the public
                  text), "stored" and "prefix" (where the public text differs: see above),
                  "time" (RFC 3339, UTC, with fractional seconds; null when the scheme has no
                  time), "node" and "seq" (null when the scheme has none), "version" (UUIDs
                  only), the layout's node sub-fields by name (e.g. "datacenter", "worker"),
                  and "fields": every field's raw value, the time field in ticks of the
                  layout's unit.
                  With --from, --to or --at: one object with "scheme", the times given
                  ("from", "to" or "at"), "lo" and "hi" (strings, in the stored form),
                  "lo_time" and "hi_time" (their decoded times), "lo_uuid" and "hi_uuid"
                  (ULIDs only) and "where"
  --stored        read every ID as the stored form (decimal, ULID or UUID text), as a
                  database row holds it, and show its public text beside it
  --from TIME     the start of the time range, included
  --to TIME       the end of the time range, excluded
  --at TIME       the lowest ID with a decoded time at or after TIME (not with --from or --to)
                  TIME is an RFC 3339 time (2026-01-01T09:30:00Z, fractions allowed), a date
                  (2026-01-01, midnight UTC) or Unix milliseconds (1767225600000)

Examples:
  idbench inspect 1541815603606036480
  idbench inspect --scheme "snowflake:layout=discord" --json 175928847299117063
  idbench inspect --scheme ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV
  idbench inspect --scheme uuidv7 017f22e2-79b0-7cc3-98c4-dc0c0c07398f
  idbench inspect --scheme typeid user_01h455vb4pex5vsknk084sn02q
  idbench inspect --scheme typeid:prefix=user 01890a5d-ac96-774b-bcce-b302099a8057
  idbench inspect --scheme "snowflake:mask=env:ID_KEY" --stored 1541815603606036480
  idbench gen --scheme sonyflake -n 3 | idbench inspect --scheme sonyflake
  idbench inspect --scheme snowflake --from 2026-01-01 --to 2026-01-02
  idbench inspect --scheme uuidv7 --json --at 2026-01-01T09:30:00Z
  idbench inspect --scheme "snowflake:shard_bits=4" --from 2026-01-01 --to 2026-01-02
`

// isTerminal reports whether r is an interactive terminal, where waiting for IDs on standard
// input would look like a hang.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// maxIDLine bounds one line of standard input.
const maxIDLine = 1 << 20

// runInspect is "idbench inspect".
func runInspect(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("inspect")
	spec := fs.String("scheme", "snowflake", "")
	asJSON := fs.Bool("json", false, "")
	stored := fs.Bool("stored", false, "")
	var fromText, toText, atText string
	fs.StringVar(&fromText, "from", "", "")
	fs.StringVar(&toText, "to", "", "")
	fs.StringVar(&atText, "at", "", "")
	pos, err := parseFlags(fs, "inspect", inspectHelp, stdout, args)
	if err != nil {
		return err
	}
	q := boundsQuery{spec: *spec}
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		switch f.Name {
		case "from":
			q.from, err = parseBoundsTime("from", fromText)
		case "to":
			q.to, err = parseBoundsTime("to", toText)
		case "at":
			q.from, err = parseBoundsTime("at", atText)
			q.at = true
		}
	})
	if err != nil {
		return err
	}
	ranged := q.from != nil || q.to != nil
	switch {
	case q.at && (fromText != "" || q.to != nil):
		return usagef("inspect", "inspect: give --at alone, or --from and --to")
	case ranged && len(pos) > 0:
		return usagef("inspect", "inspect: --from, --to and --at take no IDs (got %q)", pos[0])
	}
	// Decoding needs the layout, not a running generator: a Baidu layout that ran out of
	// time, a future epoch or a lease store out of reach must not stop it.
	r, err := newIDReader(*spec, *stored)
	if err != nil {
		return &usageError{cmd: "inspect", err: fmt.Errorf("inspect: --scheme: %w", err)}
	}
	if ranged {
		// Bounds are in the stored form, never prefixed or masked: they go to the database.
		c := r.public
		if r.stored != nil {
			c = r.stored
		}
		return runBounds(stdout, c, q, *asJSON)
	}
	in := &inspector{r: r, stderr: stderr}
	if *asJSON {
		in.out = &jsonParts{w: bufio.NewWriter(stdout)}
	} else {
		in.out = &tableParts{w: stdout}
	}
	if len(pos) == 0 {
		if isTerminal(stdin) {
			return usagef("inspect", "inspect: no IDs given: pass them as arguments or on standard input")
		}
		pos = []string{"-"}
	}
	readStdin := false
	for _, a := range pos {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		if a != "-" {
			if err := in.one(a); err != nil {
				return err
			}
			continue
		}
		if readStdin {
			continue // standard input is read once
		}
		readStdin = true
		if err := in.readAll(ctx, stdin); err != nil {
			return err
		}
	}
	if err := in.out.flush(); err != nil {
		return fmt.Errorf("inspect: writing: %w", err)
	}
	if in.bad > 0 {
		return fmt.Errorf("inspect: %d of %d IDs could not be read as %s", in.bad, in.seen, idkit.Redact(*spec))
	}
	return nil
}

// inspector decodes IDs one at a time and counts those it cannot read.
type inspector struct {
	r         *idReader
	out       partsWriter
	stderr    io.Writer
	seen, bad int
}

// one decodes text; a bad ID is reported on stderr and counted, and only a failure to write
// output stops the run.
func (in *inspector) one(text string) error {
	in.seen++
	got, err := in.r.read(text)
	var p idkit.Parts
	if err == nil {
		p, err = got.codec.Decode(got.id)
	}
	if err != nil {
		in.bad++
		fmt.Fprintf(in.stderr, "idbench: inspect: %s: %v\n", strconv.Quote(text), err)
		return nil
	}
	row := shownID{id: got.id, public: got.public}
	row.prefix, row.typeid = in.r.typeIDPrefix(got.public, got.id)
	if err := in.out.write(row, p); err != nil {
		return fmt.Errorf("inspect: writing: %w", err)
	}
	return nil
}

// readAll decodes every blank-separated ID of r.
func (in *inspector) readAll(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxIDLine)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		for _, f := range strings.Fields(sc.Text()) {
			if err := in.one(f); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("inspect: reading standard input: %w", err)
	}
	return nil
}

// partsWriter prints decoded IDs.
type partsWriter interface {
	write(id shownID, p idkit.Parts) error
	flush() error
}

// shownID is an ID as inspect shows it: the stored ID, its public text and, for a TypeID, its
// prefix.
type shownID struct {
	id     idkit.ID
	public string
	prefix string
	typeid bool
}

// differs reports whether the public text is not the stored one.
func (s shownID) differs() bool { return s.public != s.id.String() }

// subFields returns the fields shown by name besides time, node and seq: the node's named
// sub-fields (datacenter, worker, machine, …) and scheme-specific ones such as UUIDv7's rand_a.
// A single node field called "node" is the node itself and is left out.
func subFields(p idkit.Parts) []idkit.Field {
	var out []idkit.Field
	for _, f := range p.Fields {
		switch f.Name {
		case "time", "seq", "node":
			continue
		}
		out = append(out, f)
	}
	return out
}

// tableParts prints a table whose columns follow the first ID's parts; every ID of a scheme
// has the same ones.
type tableParts struct {
	w    io.Writer
	t    *table
	cols struct {
		prefix, stored           bool
		time, node, seq, version bool
		fields                   []string
	}
}

func (tp *tableParts) write(id shownID, p idkit.Parts) error {
	if tp.t == nil {
		header := []string{"ID"}
		c := &tp.cols
		c.prefix, c.stored = id.typeid, id.differs()
		if c.prefix {
			header = append(header, "PREFIX")
		}
		if c.stored {
			header = append(header, "STORED")
		}
		c.time = !p.Time.IsZero()
		c.node, c.seq, c.version = p.HasNode, p.HasSeq, p.Version != 0
		if c.time {
			header = append(header, "TIME")
		}
		if c.node {
			header = append(header, ">NODE")
		}
		if c.seq {
			header = append(header, ">SEQ")
		}
		if c.version {
			header = append(header, ">VERSION")
		}
		for _, f := range subFields(p) {
			c.fields = append(c.fields, f.Name)
			header = append(header, ">"+strings.ToUpper(f.Name))
		}
		tp.t = newTable(tp.w, header...)
	}
	row := []string{id.public}
	c := tp.cols
	if c.prefix {
		row = append(row, orDash(id.prefix))
	}
	if c.stored {
		row = append(row, id.id.String())
	}
	if c.time {
		t := "-" // an ID without a time, in a column the first ID had (typeid reads any UUID)
		if !p.Time.IsZero() {
			t = formatTime(p.Time)
		}
		row = append(row, t)
	}
	if c.node {
		row = append(row, strconv.FormatUint(p.Node, 10))
	}
	if c.seq {
		row = append(row, strconv.FormatUint(p.Seq, 10))
	}
	if c.version {
		row = append(row, strconv.Itoa(p.Version))
	}
	for _, name := range c.fields {
		v := "-"
		for _, f := range p.Fields {
			if f.Name == name {
				v = strconv.FormatUint(f.Value, 10)
			}
		}
		row = append(row, v)
	}
	return tp.t.row(row...)
}

func (tp *tableParts) flush() error {
	if tp.t == nil {
		return nil
	}
	return tp.t.flush()
}

// jsonReserved are the keys of an inspect JSON object that a layout field of the same name
// cannot take over; such a field still appears under "fields".
var jsonReserved = map[string]bool{"id": true, "stored": true, "prefix": true, "time": true, "node": true, "seq": true, "version": true, "fields": true}

// jsonParts prints one JSON object per line, keys in a fixed order.
type jsonParts struct {
	w   *bufio.Writer
	buf []byte
}

func (jp *jsonParts) write(id shownID, p idkit.Parts) error {
	b := append(jp.buf[:0], `{"id":`...)
	b = strconv.AppendQuote(b, id.public)
	if id.differs() {
		b = append(b, `,"stored":`...)
		b = strconv.AppendQuote(b, id.id.String())
	}
	if id.typeid {
		b = append(b, `,"prefix":`...)
		b = strconv.AppendQuote(b, id.prefix)
	}
	b = append(b, `,"time":`...)
	if p.Time.IsZero() {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, formatTime(p.Time))
	}
	b = append(b, `,"node":`...)
	b = appendOptional(b, p.Node, p.HasNode)
	b = append(b, `,"seq":`...)
	b = appendOptional(b, p.Seq, p.HasSeq)
	if p.Version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(p.Version), 10)
	}
	for _, f := range subFields(p) {
		if jsonReserved[f.Name] {
			continue
		}
		b = appendKey(b, f.Name)
		b = strconv.AppendUint(b, f.Value, 10)
	}
	b = append(b, `,"fields":{`...)
	for i, f := range p.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendName(b, f.Name)
		b = strconv.AppendUint(b, f.Value, 10)
	}
	b = append(b, "}}\n"...)
	jp.buf = b
	_, err := jp.w.Write(b)
	return err
}

func (jp *jsonParts) flush() error { return jp.w.Flush() }

// appendKey appends `,"name":` with name escaped as JSON.
func appendKey(b []byte, name string) []byte {
	return appendName(append(b, ','), name)
}

// appendName appends `"name":` with name escaped as JSON.
func appendName(b []byte, name string) []byte {
	k, _ := json.Marshal(name) // a string always marshals
	b = append(b, k...)
	return append(b, ':')
}

// appendOptional appends v, or null when the scheme has no such field.
func appendOptional(b []byte, v uint64, ok bool) []byte {
	if !ok {
		return append(b, "null"...)
	}
	return strconv.AppendUint(b, v, 10)
}

// orDash returns s, or "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
