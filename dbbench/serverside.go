package dbbench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	_ "github.com/idkit/idkit/schemes/segment/pgstore" // store=pg:// for the segment row
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
	colServerBigint column = 100 + iota // bigint made by a server-side function (PostgreSQL)
	colServerUUID                       // uuid made by a server-side function (PostgreSQL)
)

// DefaultInstagramShard is the shard of the instagram-plpgsql row when none is given: the
// seed's example uses 5.
const DefaultInstagramShard = 5

// errServerSideSQLite rejects the PostgreSQL-only rows on SQLite and MariaDB/MySQL.
func errServerSideSQLite(label string) error {
	return fmt.Errorf("dbbench: scheme %q needs PostgreSQL (a PL/pgSQL function, or a segment store in the benchmark database)", label)
}

// resolveServerRow resolves the rows of this file; ok is false for any other label.
func resolveServerRow(label string) (r row, ok bool, err error) {
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
			return row{}, true, err
		}
		r = row{label: label, col: colServerBigint, shard: int(shard),
			canon: "snowflake:layout=instagram,shard=" + strconv.FormatUint(shard, 10)}
	case RowUUIDv7PLpgSQL:
		r = row{label: label, col: colServerUUID, canon: "uuidv7"}
	case RowSegment:
		if !hasRest {
			// "segment" alone is this row; "segment:store=…" is an ordinary idkit spec.
			return row{label: label, col: colBigint, storeStep: 1000, canon: "segment:store=<benchmark database>,key=dbbench,step=1000"}, true, nil
		}
		if _, given := settings["store"]; given {
			return row{}, false, nil
		}
		step, err := num("step", 1, 1<<40, 1000)
		if err != nil {
			return row{}, true, err
		}
		r = row{label: label, col: colBigint, storeStep: step,
			canon: "segment:store=<benchmark database>,key=dbbench,step=" + strconv.FormatUint(step, 10)}
	default:
		return row{}, false, nil
	}
	for k := range settings {
		return row{}, true, fmt.Errorf("dbbench: scheme %q: unknown setting %q", label, k)
	}
	return r, true, nil
}

// serverMade reports whether the database fills the id column itself.
func (c column) serverMade() bool {
	return c == colIdentity || c == colServerBigint || c == colServerUUID
}

// prepareServerSide creates what row r needs in the benchmark schema before its loads: the
// id function of the server-side rows, and the segment spec whose store is this database.
// It returns r with spec filled in for the segment row.
func (e *pgEngine) prepareServerSide(ctx context.Context, r row) (row, error) {
	switch {
	case r.col == colServerBigint:
		seq := pgx.Identifier{e.schema, "instagram_seq_" + strconv.Itoa(r.shard)}.Sanitize()
		fn := pgx.Identifier{e.schema, "instagram_next_id_" + strconv.Itoa(r.shard)}.Sanitize()
		// The seed's function, with its shard as a constant.
		ddl := []string{
			`CREATE SEQUENCE IF NOT EXISTS ` + seq,
			`CREATE OR REPLACE FUNCTION ` + fn + `(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := ` + strconv.Itoa(r.shard) + `;
BEGIN
    SELECT nextval('` + seq + `') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL`,
		}
		for _, q := range ddl {
			if _, err := e.admin.Exec(ctx, q); err != nil {
				return r, fail(ctx, "create instagram next_id()", err)
			}
		}
		e.serverDefault = fn + "()"
	case r.col == colServerUUID:
		var num int
		if err := e.admin.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
			return r, fail(ctx, "read server version", err)
		}
		if num >= 180000 {
			e.serverDefault = "uuidv7()"
			r.canon = "uuidv7 (built-in uuidv7())"
			break
		}
		fn := pgx.Identifier{e.schema, "uuid_generate_v7"}.Sanitize()
		if _, err := e.admin.Exec(ctx, `CREATE OR REPLACE FUNCTION `+fn+`() RETURNS uuid AS $$
BEGIN
    -- a random v4 UUID has the variant bits already; write the Unix ms over its first 48
    -- bits and turn version 4 into 7
    RETURN encode(
        set_bit(
            set_bit(
                overlay(uuid_send(gen_random_uuid())
                        placing substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                        FROM 1 FOR 6),
                52, 1),
            53, 1),
        'hex')::uuid;
END
$$ LANGUAGE plpgsql VOLATILE`); err != nil {
			return r, fail(ctx, "create uuid_generate_v7()", err)
		}
		e.serverDefault = fn + "()"
		r.canon = "uuidv7 (PL/pgSQL uuid_generate_v7())"
	case r.storeStep > 0:
		u, err := storeURL(e.connCfg, e.schema)
		if err != nil {
			return r, err
		}
		r.spec = "segment:store=" + u + ",key=dbbench,step=" + strconv.FormatUint(r.storeStep, 10)
	}
	return r, nil
}

// SegmentStoreURL returns a pg:// URL for the segment scheme's store= from a pgx connection
// string (URL or key=value), with search_path set to schema when it is not empty, for a
// counter that is thrown away after the run (unsafe=true: see pgstore's durability rules).
func SegmentStoreURL(dsn, schema string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("dbbench: bad PostgreSQL connection string: %s", oneLine(err.Error()))
	}
	return storeURL(cfg, schema)
}

// storeURL returns a pg:// URL for the connection cfg describes, with search_path set to
// schema so that the segment table lives in the benchmark schema and is dropped with it.
func storeURL(cfg *pgx.ConnConfig, schema string) (string, error) {
	if strings.Contains(cfg.Password, ",") {
		return "", errors.New("dbbench: segment row: the password holds a comma, which a spec cannot carry")
	}
	// Not appName: the run counts sessions named so as other benchmark runs. unsafe=true: the
	// counter is thrown away with the benchmark schema, and benchmark servers often run with
	// fsync off, which the store refuses otherwise. Its commits still wait for the WAL flush.
	q := url.Values{"application_name": {appName + "-segment-store"}, "unsafe": {"true"}}
	if schema != "" {
		q.Set("search_path", schema)
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		q.Set("host", host)
		host = ""
	}
	q.Set("port", strconv.Itoa(int(cfg.Port)))
	if cfg.TLSConfig == nil {
		q.Set("sslmode", "disable")
	}
	u := url.URL{Scheme: "pg", Host: host, Path: "/" + cfg.Database, RawQuery: q.Encode()}
	if cfg.User != "" {
		u.User = url.User(cfg.User)
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		}
	}
	return u.String(), nil
}

// uniqueViolation reports whether err is a unique violation (SQLSTATE 23505) and, if so, a
// finding for the report that says what it means for row r.
func uniqueViolation(err error, r row) (string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return "", false
	}
	what := pe.Detail
	if what == "" {
		what = pe.Message
	}
	msg := fmt.Sprintf("%s: the load stopped on a duplicate key (%s).", r.label, what)
	if r.col == colServerBigint {
		msg += " Instagram's next_id() takes nextval() % 1024 as its sequence, so a shard that makes more than 1,024 IDs in one millisecond wraps the sequence inside that millisecond and repeats an ID, as a bulk load on a fast server or from several connections at once can. The function needs one sequence per shard and fewer than 1,024 rows per ms per shard, or more sequence bits."
	}
	return msg, true
}
