package main

import (
	"time"

	"github.com/idkit/idkit/layouts"
)

// rangeExampleTime is the instant of the example IDs on docs/layouts.md.
var rangeExampleTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// writeRangeLayoutsMarkdown writes the section of docs/layouts.md on the settings for
// range-partitioned databases, with example IDs computed from the layouts.
func writeRangeLayoutsMarkdown(ew *errWriter) {
	ew.printf(`
## Keys for range-partitioned databases

CockroachDB, Spanner, TiDB and YugabyteDB split a table's key space into ranges, each written
through one node. A key that only grows, as every layout above does (its time is the top
field), sends every insert to the last range, and splitting that range cannot help. Three
settings of every snowflake layout, presets included, spread the inserts instead. All keep
the text forms, `+"`prefix=`"+` and `+"`mask=`"+` (a mask permutes the bits the stored IDs use: the
layout's width, or 63 for a reversed layout).

| Setting | Exact for | The same idea as |
|---|---|---|
| `+"`reverse=true`"+` | Spanner: `+"`BIT_REVERSE(x, true)`"+` of the layout's value, and a `+"`bit_reversed_positive`"+` sequence's values with `+"`segment:…,reverse=true`"+` (both checked on the Cloud Spanner emulator, `+"`TestSpannerEmulator`"+`) | CockroachDB's `+"`unordered_unique_rowid()`"+` and TiDB's bit-reversed IDs, which reverse other bits |
| `+"`reverse=time`"+` | CockroachDB: `+"`unordered_unique_rowid()`"+`'s map on a layout of 48 time bits above 15 low bits (cockroach's own test vectors, `+"`TestReverseTimeCockroachVectors`"+`) | — |
| `+"`shard_bits=S`"+` | TiDB's AUTO_RANDOM placement of the S shard bits (sign bit, shard, rest) | AUTO_RANDOM's shard value, which hashes the transaction's start timestamp; `+"`shard_by=tick`"+` shares it the same way, per tick |

### `+"`reverse=true`"+`: Spanner's bit_reversed_positive

The stored ID is the bit reversal of the layout's value over 63 bits: value bit i becomes
bit 62-i and bit 63 stays 0, which is what Spanner's `+"`bit_reversed_positive`"+` sequences (and
`+"`BIT_REVERSE(x, true)`"+`) do to a counter, exactly: `+"`TestSpannerEmulator`"+` (package
internal/spannertest) runs both on the Cloud Spanner emulator against idkit's IDs. It is not
CockroachDB's `+"`unordered_unique_rowid()`"+`, which reverses only the time bits (that is
`+"`reverse=time`"+`, below). Reversal is a bijection, so IDs stay unique; the value's fastest-changing
bits (the sequence) become the top bits, so consecutive IDs land far apart. Decode undoes it.
The IDs have no time order left: `+"`idkit.Bounds`"+`, `+"`idbench inspect --from`"+` and the service's
Bounds refuse them (index a created_at column instead).

`+"```"+`
value   (twitter):   0 | time (41)        | datacenter (5) | worker (5) | seq (12)
                    63  62            22   21          17   16      12   11     0
stored (reversed):   0 | seq, reversed (12) | worker (5) | datacenter (5) | time, reversed (41)
                    63  62               51   50      46   45          41   40                0
`+"```"+`

A layout of 64 bits (discord, instagram, mastodon) must keep its value below 2^63 to reverse
it: generating stops at its "Fits int64 until" date, which becomes its run-out date. A layout
narrower than 63 bits reverses into the top bits (its low stored bits are zero). The fields
below the sequence become the top stored bits: with sonyflake's machine ID there, one
machine's IDs share their top 16 bits and spread within that slice of the key space.

### `+"`reverse=time`"+`: CockroachDB's unordered_unique_rowid

The stored ID is the layout's value with its time field's bits reversed in place (tick bit i
becomes bit width-1-i of the field) and every other field where it was. CockroachDB's
`+"`unordered_unique_rowid()`"+` does exactly this to `+"`unique_rowid()`"+`: 48 bits of 10 µs ticks
since 2015-01-01, reversed above 15 node bits (`+"`mapToUnorderedUniqueInt`"+`, cockroach PR
#70338); idkit's tests hold `+"`reverse=time`"+` to CockroachDB's own test vectors. idkit needs a
sequence field, so CockroachDB's shape is
`+"`snowflake:fields=time:48/node:10/seq:5,unit=10us,epoch=2015-01-01,reverse=time`"+`: the 15 low
bits are node and sequence, and each stored ID is `+"`mapToUnorderedUniqueInt`"+` of its value.
The time field's fastest-changing bits become its top bits, so the IDs of consecutive ticks
land far apart, while the IDs of one tick stay one run of values (a batch within a tick is
increasing). A time range is one run per tick: `+"`idkit.ShardBounds`"+` returns them (runs that
touch merged), for ranges of up to %d ticks (`+"`layouts.MaxTickRuns`"+`); `+"`idkit.Bounds`"+`
refuses, saying so. A layout of 64 bits with time
on top (discord, instagram, mastodon) is refused: the tick's lowest bit would become the sign bit.

`+"```"+`
value    (twitter):   0 | time (41)           | datacenter (5) | worker (5) | seq (12)
stored (time-rev.):   0 | time, reversed (41) | datacenter (5) | worker (5) | seq (12)
                     63  62                22   21          17   16      12   11     0
`+"```"+`

### `+"`shard_bits=S`"+`: TiDB's AUTO_RANDOM shape

A hash field of S bits (1 to 15) sits on top, below the sign bit; the rest is the layout as
before, with S bits taken from the sequence (or from the field `+"`shard_from=NAME`"+` names, or
written into a custom layout as `+"`fields=hash:S/time:…`"+`). `+"`snowflake:node=3,shard_bits=4`"+`
on Twitter's layout leaves 8 sequence bits:

`+"```"+`
twitter, shard_bits=4:   0 | hash (4) | time (41) | datacenter (5) | worker (5) | seq (8)
                        63  62     59  58      18   17          13   12       8   7     0
discord, shard_bits=5:   hash (5) | time (42) | worker (5) | process (5) | seq (7)
                        63     59  58      17   16      12   11        7   6     0
`+"```"+`

This is AUTO_RANDOM's placement: a sign bit, then the S shard bits, then the rest (TiDB's
default S is 5, its range 1 to 15); on a layout of 64 bits the hash takes the top bit too, as
AUTO_RANDOM does on a BIGINT UNSIGNED column. The hash field holds the top S bits of
MurmurHash3's 64-bit finalizer (fmix64) of the other fields. That part differs from TiDB,
which hashes the transaction's start timestamp (all rows of a transaction share a shard, and
`+"`tidb_shard_allocate_step`"+` transactions in a row) and counts the remaining bits per table:
idkit hashes each ID's own fields, so each ID's shard can be recomputed from it (Parse and
Decode refuse an ID whose hash field does not match), and the IDs stay unique because the
hash is a function of bits that are unique already.

Which fields it hashes is `+"`shard_by`"+`'s choice. With `+"`shard_by=id`"+`, the default, every
field: one generator's consecutive IDs spread over every shard, so a multi-row INSERT of n IDs
writes up to min(n, 2^S) shards, each a region and a participant of TiDB's two-phase commit,
where AUTO_RANDOM's rows of that transaction write one. With `+"`shard_by=tick`"+`, the time
and node fields only: one node's IDs of one tick share a shard, as one transaction's rows do
in TiDB, and the shard changes from tick to tick, so the inserts still spread over time; a
batch reserved within one tick is one shard (and increasing), one that spans ticks a few.
Twitter's layout with `+"`shard_bits=5`"+`, node 3, %s: of 128 consecutive IDs of one tick
(its 7-bit sequence), `+"`shard_by=id`"+` changes shard %d times between neighbours and writes %d
shards, `+"`shard_by=tick`"+` %d and %d; 128 consecutive ticks' first IDs write %d shards with
`+"`shard_by=tick`"+`.

Within each of the 2^S shards the IDs sort by
time, so a time range is 2^S ranges of IDs: `+"`idkit.ShardBounds`"+` returns them, `+"`idkit.Where`"+`
ORs them into a WHERE clause, and `+"`idbench inspect --from --to`"+`, the service's Bounds and
`+"`GET /v1/bounds`"+` answer with both.

Twitter's layout at %s, datacenter 0, worker 3 (node 3), sequence 0 to 3:

| seq | `+"`snowflake`"+` | `+"`shard_bits=4`"+` (hash) | `+"`shard_bits=4,shard_by=tick`"+` (hash) | `+"`reverse=true`"+` | `+"`reverse=time`"+` |
|--:|--:|--:|--:|--:|--:|
`, append([]any{layouts.MaxTickRuns, formatTime(rangeExampleTime)}, append(shardChanges(), formatTime(rangeExampleTime))...)...)
	plain := layouts.Twitter
	sharded, _ := plain.Sharded(4, "") // valid: Twitter has 12 sequence bits
	byTick := sharded.Clone()
	byTick.ShardByTick = true
	reversed := plain.Clone()
	reversed.Reverse = true
	timeRev := plain.Clone()
	timeRev.ReverseTime = true
	for seq := range uint64(4) {
		p, _ := plain.Compose(plain.Tick(rangeExampleTime), 3, seq)
		s, _ := sharded.Compose(sharded.Tick(rangeExampleTime), 3, seq)
		bt, _ := byTick.Compose(byTick.Tick(rangeExampleTime), 3, seq)
		r, _ := reversed.Compose(reversed.Tick(rangeExampleTime), 3, seq)
		rt, _ := timeRev.Compose(timeRev.Tick(rangeExampleTime), 3, seq)
		ew.printf("| %d | %d | %d (%d) | %d (%d) | %d | %d |\n", seq, p, s, sharded.Decompose(s).Hash, bt, byTick.Decompose(bt).Hash, r, rt)
	}
	ew.printf(`
(Each example ID is computed by ` + "`idbench layouts --markdown`" + `, which writes this page;
` + "`idbench inspect --scheme snowflake:shard_bits=4 ID`" + ` takes one apart.)
`)
}

// shardChanges counts, on Twitter's layout with 5 shard bits at rangeExampleTime for node 3,
// how often 128 consecutive IDs of one tick change shard between neighbours and how many
// shards they write, with shard_by=id and with shard_by=tick, and how many shards the first
// IDs of 128 consecutive ticks write with shard_by=tick.
func shardChanges() []any {
	byID, _ := layouts.Twitter.Sharded(5, "") // valid: Twitter has 12 sequence bits
	byTick := byID.Clone()
	byTick.ShardByTick = true
	tick := byID.Tick(rangeExampleTime)
	var out []any
	for _, l := range []layouts.Layout{byID, byTick} {
		changes, seen := 0, map[uint64]bool{}
		var prev uint64
		for seq := range uint64(128) {
			id, _ := l.Compose(tick, 3, seq)
			h := l.Decompose(id).Hash
			if seq > 0 && h != prev {
				changes++
			}
			prev, seen[h] = h, true
		}
		out = append(out, changes, len(seen))
	}
	ticks := map[uint64]bool{}
	for k := range int64(128) {
		id, _ := byTick.Compose(tick+k, 3, 0)
		ticks[byTick.Decompose(id).Hash] = true
	}
	return append(out, len(ticks))
}
