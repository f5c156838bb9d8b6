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
field), sends every insert to the last range, and splitting that range cannot help. Two
settings of every snowflake layout, presets included, spread the inserts instead. Both keep
the text forms, `+"`prefix=`"+` and `+"`mask=`"+` (a mask permutes the bits the stored IDs use: the
layout's width, or 63 for a reversed layout).

### `+"`reverse=true`"+`: Spanner's bit_reversed_positive

The stored ID is the bit reversal of the layout's value over 63 bits: value bit i becomes
bit 62-i and bit 63 stays 0, which is what Spanner's `+"`bit_reversed_positive`"+` sequences (and
`+"`BIT_REVERSE(x, true)`"+`) do to a counter; CockroachDB's `+"`unordered_unique_rowid()`"+` is a
bit-reversed `+"`unique_rowid()`"+` in the same spirit (which of its bits it reverses is not
checked here). Reversal is a bijection, so IDs stay unique; the value's fastest-changing
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
which hashes the transaction's start timestamp (all rows of a transaction share a shard) and
counts the remaining bits per table: idkit hashes each ID's own fields, so each ID's shard can
be recomputed from it (Parse and Decode refuse an ID whose hash field does not match), one
generator's consecutive IDs spread over every shard, and the IDs stay unique because the hash
is a function of bits that are unique already. Within each of the 2^S shards the IDs sort by
time, so a time range is 2^S ranges of IDs: `+"`idkit.ShardBounds`"+` returns them, `+"`idkit.Where`"+`
ORs them into a WHERE clause, and `+"`idbench inspect --from --to`"+`, the service's Bounds and
`+"`GET /v1/bounds`"+` answer with both.

Twitter's layout at %s, datacenter 0, worker 3 (node 3), sequence 0 to 3:

| seq | `+"`snowflake`"+` | `+"`shard_bits=4`"+` (hash) | `+"`reverse=true`"+` |
|--:|--:|--:|--:|
`, formatTime(rangeExampleTime))
	plain := layouts.Twitter
	sharded, _ := plain.Sharded(4, "") // valid: Twitter has 12 sequence bits
	reversed := plain.Clone()
	reversed.Reverse = true
	for seq := range uint64(4) {
		p, _ := plain.Compose(plain.Tick(rangeExampleTime), 3, seq)
		s, _ := sharded.Compose(sharded.Tick(rangeExampleTime), 3, seq)
		r, _ := reversed.Compose(reversed.Tick(rangeExampleTime), 3, seq)
		ew.printf("| %d | %d | %d (%d) | %d |\n", seq, p, s, sharded.Decompose(s).Hash, r)
	}
	ew.printf(`
(Each example ID is computed by ` + "`idbench layouts --markdown`" + `, which writes this page;
` + "`idbench inspect --scheme snowflake:shard_bits=4 ID`" + ` takes one apart.)
`)
}
