package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/layouts"
)

// planTargets are the databases "idbench plan --target" advises for, in --help order.
var planTargets = []string{"postgres", "innodb", "cockroachdb", "spanner", "tidb", "yugabyte"}

// layoutSetting reports whether this build's Snowflake layouts take setting (reverse=true,
// shard_bits=S), so that plan never advises a spec idkit.New would refuse.
func layoutSetting(setting string) bool {
	s, err := idkit.New("snowflake:node=1," + setting)
	if err != nil {
		return false
	}
	if c, ok := s.(io.Closer); ok {
		_ = c.Close()
	}
	return true
}

// targetAdvice is what plan recommends for a target: the settings to append to a planned
// spec ("" for none), the fallback when the layout's sequence cannot spare shard bits, and the
// reasons and statements to print.
type targetAdvice struct {
	append   string
	fallback string
	lines    []string
}

// shardBitsAdvised is the shard field plan advises for TiDB: AUTO_RANDOM's default.
const shardBitsAdvised = 5

// adapt returns spec (of layout l) adapted to the target: with a.append when l still issues
// r's rate after giving up the shard bits its sequence lends (shard_bits takes them from the
// sequence), else with a.fallback, else spec unchanged.
func (a targetAdvice) adapt(spec string, l layouts.Layout, r layouts.Requirement) string {
	switch {
	case a.append == "" || l.ShardBits() > 0: // nothing to add, or planned with --hash-bits
		return spec
	case !strings.HasPrefix(a.append, "shard_bits="):
		return spec + "," + a.append
	case l.SeqBits() >= shardBitsAdvised && l.IDsPerSecond()/(1<<shardBitsAdvised) >= r.IDsPerSecond:
		return spec + "," + a.append
	case a.fallback != "":
		return spec + "," + a.fallback
	}
	return spec
}

// adviseTarget returns the advice for target. reverse and shard say whether the layout
// settings exist in this build.
func adviseTarget(target string, reverse, shard bool) targetAdvice {
	rev, sh := "reverse=true", "shard_bits=5"
	revNote, shNote := "", ""
	if !reverse {
		revNote = " (not in this build)"
	}
	if !shard {
		shNote = " (not in this build)"
	}
	switch target {
	case "postgres", "innodb":
		return targetAdvice{lines: []string{
			"One B-tree on one server: keep the time order. Every insert lands on the rightmost leaf,",
			"which stays in memory; random keys (uuidv4) cost more pages, WAL and cache (docs/choosing-an-id.md).",
			"That is measured for one writer: for a pool of N writing connections, pass --writers N.",
		}}
	case "cockroachdb":
		a := targetAdvice{lines: []string{
			"Ranges split by size and load, each written through one leaseholder: a time-ordered key sends",
			"every insert to the last range, and load-based splitting cannot divide it (CockroachDB docs,",
			"Hash-sharded Indexes). Spread the writes with one of:",
			"  - " + rev + revNote + ": all 63 bits reversed, the same idea as unordered_unique_rowid() but not its",
			"    values; reverse=time reverses the time field alone, in place: on",
			"    fields=time:48/node:10/seq:5,unit=10us,epoch=2015-01-01 it is unordered_unique_rowid()'s bit map",
			"  - uuidv4 in a UUID column (CockroachDB's own advice: gen_random_uuid())",
			"  - keep the order and index it PRIMARY KEY (id) USING HASH WITH (bucket_count = 16); a point",
			"    read by id alone then probes every bucket",
			"Pre-split a new table: ALTER TABLE t SPLIT AT SELECT (i << 59) FROM generate_series(1, 15) AS i;",
			"then ALTER TABLE t SCATTER;",
		}}
		if reverse {
			a.append = rev
		}
		return a
	case "spanner":
		a := targetAdvice{lines: []string{
			"Splits are key ranges served by one server each: a monotonically increasing key hot-spots the",
			"last split (Spanner docs, Schema design best practices). Spread the writes with one of:",
			"  - " + rev + revNote + ": the shape of a bit_reversed_positive sequence",
			"  - uuidv4 (Spanner's first recommendation), stored as STRING(36) or UUID",
			"Pre-split before a bulk load (about 10 split points per node): gcloud spanner databases splits add",
			"DB --instance=I --splits-file=F, F holding lines such as TABLE t ('4611686018427387904').",
		}}
		if reverse {
			a.append = rev
		}
		return a
	case "tidb":
		a := targetAdvice{lines: []string{
			"Regions split by size and load; consecutive keys write one Region on one TiKV. Spread the writes:",
			"  - " + sh + shNote + ": AUTO_RANDOM's shape (5 shard bits on top by default), time-ordered",
			"    within each of the 32 shards; the 5 bits come out of the sequence field, so plan with",
			"    --hash-bits 5 to keep the rate",
			"  - " + rev + revNote + ": a bit-reversed Snowflake ID, as TiDB's \"Unique Serial Number",
			"    Generation\" advises (docs.pingcap.com/tidb/stable/dev-guide-unique-serial-number-generation)",
			"  - uuidv4 in BINARY(16) under a clustered primary key",
			"Pre-split a new table: SPLIT TABLE t BETWEEN (0) AND (9223372036854775807) REGIONS 16;",
			"(for a non-clustered key: SHARD_ROW_ID_BITS = 4 PRE_SPLIT_REGIONS = 4 in CREATE TABLE).",
		}}
		if shard {
			a.append = sh
		}
		if reverse {
			a.fallback = rev
		}
		return a
	case "yugabyte":
		return targetAdvice{lines: []string{
			"YugabyteDB hashes the first primary-key column by default (PRIMARY KEY (id HASH)): any key,",
			"time-ordered ones included, spreads over the tablets; keep the layout as planned. A range",
			"query by id or time then reads every tablet. With PRIMARY KEY (id ASC) the table is",
			"range-sharded and a time-ordered key hot-spots the last tablet: use " + rev + revNote + " or uuidv4.",
			"Pre-split: CREATE TABLE t (...) SPLIT INTO 16 TABLETS; (hash), or SPLIT AT VALUES ((...), ...) (range).",
		}}
	}
	return targetAdvice{}
}

// writePlanTarget writes the advice for target after the plan, with a planned spec adapted
// to it: for shard bits, the first layout planned with that hash field (--hash-bits), whose
// sequence keeps the rate.
func writePlanTarget(w io.Writer, target string, r layouts.Requirement, fits []layouts.Fit, writers int) error {
	a := adviseTarget(target, layoutSetting("reverse=true"), layoutSetting("shard_bits=5"))
	if writers > 0 {
		a.lines = adviseWriters(target, writers)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nFor --target %s:\n\n", target)
	for _, l := range a.lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if a.append != "" {
		l := fits[0].Layout
		if strings.HasPrefix(a.append, "shard_bits=") && l.ShardBits() == 0 {
			wider := r
			wider.HashBits = shardBitsAdvised
			if more, err := layouts.Plan(wider); err == nil {
				l = more[0].Layout
			}
		}
		fmt.Fprintf(&b, "\n  A layout for %s: %s\n", target, a.adapt(planSpec(l), l, r))
	}
	b.WriteString("\n  What each key does on such a cluster, as a MODEL: idbench dist --target " + distTargetOf(target) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// distTargetOf names the idbench dist target for a plan target (a single-server target has
// none; the model then shows CockroachDB).
func distTargetOf(target string) string {
	switch target {
	case "spanner", "tidb", "yugabyte":
		return target
	}
	return "cockroachdb"
}
