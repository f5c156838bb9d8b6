package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Rows whose keys the database makes, or that need a store in it (PostgreSQL only).
const (
	// RowInstagramPLpgSQL is Instagram's next_id() PL/pgSQL function as the column default:
	// 41 bits of ms since 1314220021721, 13 bits of shard, 10 bits of nextval() % 1024, made
	// by the server during COPY. "instagram-plpgsql:shard=N" picks the shard (default 5, the
	// seed's). More than 1,024 rows of one shard in one millisecond wrap the sequence and
	// repeat an ID; the load then ends in a unique violation, reported as a finding.
	RowInstagramPLpgSQL = "instagram-plpgsql"
	// RowUUIDv7PLpgSQL is a UUIDv7 made by the server: on PostgreSQL 18 and later the
	// built-in uuidv7(), before it the PL/pgSQL function PostgreSQL 15–17 users write (a
	// gen_random_uuid() with the Unix ms written over its first 48 bits and the version
	// bits set, as in the widely copied gist kjmph/5bd772b2c2df145aa645b837da7eca74). Not
	// monotonic within a millisecond.
	RowUUIDv7PLpgSQL = "uuidv7-plpgsql"
	// RowSegment is idkit's segment scheme with its counter in the benchmark's own database
	// (table idkit_segments in the benchmark schema), step 1000 unless
	// "segment:step=N"; with --nodes K, K generators each count through their own block, so
	// the table receives K interleaved ascending runs.
	RowSegment = "segment"
)

// Columns of the server-made rows. Their values sit apart from source.go's list so that
// kinds added there cannot collide with them.
const (
	ColServerBigint Column = 100 + iota // bigint made by a server-side function (PostgreSQL)
	ColServerUUID                       // uuid made by a server-side function (PostgreSQL)
)

// DefaultInstagramShard is the shard of the instagram-plpgsql row when none is given: the
// seed's example uses 5.
const DefaultInstagramShard = 5

// ErrServerSide rejects the PostgreSQL-only rows on SQLite and MariaDB/MySQL.
func ErrServerSide(label string) error {
	return fmt.Errorf("dbbench: scheme %q needs PostgreSQL (a PL/pgSQL function, or a segment store in the benchmark database)", label)
}

// resolveServerRow resolves the rows of this file; ok is false for any other label.
func resolveServerRow(label string) (r Row, ok bool, err error) {
	name, rest, hasRest := strings.Cut(strings.TrimSpace(label), ":")
	name = strings.ToLower(name)
	settings := map[string]string{}
	if hasRest {
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			settings[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	num := func(key string, lo, hi, def uint64) (uint64, error) {
		v, given := settings[key]
		delete(settings, key)
		if !given {
			return def, nil
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("dbbench: scheme %q: %s=%s: want a whole number from %d to %d", label, key, v, lo, hi)
		}
		return n, nil
	}
	switch name {
	case RowInstagramPLpgSQL:
		shard, err := num("shard", 0, 1<<13-1, DefaultInstagramShard)
		if err != nil {
			return Row{}, true, err
		}
		r = Row{Label: label, Col: ColServerBigint, Shard: int(shard),
			Canon: "snowflake:layout=instagram,shard=" + strconv.FormatUint(shard, 10)}
	case RowUUIDv7PLpgSQL:
		r = Row{Label: label, Col: ColServerUUID, Canon: "uuidv7"}
	case RowSegment:
		if !hasRest {
			// "segment" alone is this row; "segment:store=…" is an ordinary idkit spec.
			return Row{Label: label, Col: ColBigint, StoreStep: 1000, Canon: "segment:store=<benchmark database>,key=dbbench,step=1000"}, true, nil
		}
		if _, given := settings["store"]; given {
			return Row{}, false, nil
		}
		step, err := num("step", 1, 1<<40, 1000)
		if err != nil {
			return Row{}, true, err
		}
		r = Row{Label: label, Col: ColBigint, StoreStep: step,
			Canon: "segment:store=<benchmark database>,key=dbbench,step=" + strconv.FormatUint(step, 10)}
	default:
		return Row{}, false, nil
	}
	for k := range settings {
		return Row{}, true, fmt.Errorf("dbbench: scheme %q: unknown setting %q", label, k)
	}
	return r, true, nil
}

// ServerMade reports whether the database fills the id column itself.
func (c Column) ServerMade() bool {
	return c == ColIdentity || c == ColServerBigint || c == ColServerUUID
}
