package pg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	_ "github.com/idkit/idkit/schemes/segment/pgstore" // store=pg:// for the segment row
)

// prepareServerSide creates what row r needs in the benchmark schema before its loads: the
// id function of the server-side rows, and the segment spec whose store is this database.
// It returns r with spec filled in for the segment row.
func (e *pgEngine) prepareServerSide(ctx context.Context, r engine.Row) (engine.Row, error) {
	switch {
	case r.Col == engine.ColServerBigint:
		seq := pgx.Identifier{e.schema, "instagram_seq_" + strconv.Itoa(r.Shard)}.Sanitize()
		fn := pgx.Identifier{e.schema, "instagram_next_id_" + strconv.Itoa(r.Shard)}.Sanitize()
		// The seed's function, with its shard as a constant.
		ddl := []string{
			`CREATE SEQUENCE IF NOT EXISTS ` + seq,
			`CREATE OR REPLACE FUNCTION ` + fn + `(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := ` + strconv.Itoa(r.Shard) + `;
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
	case r.Col == engine.ColServerUUID:
		var num int
		if err := e.admin.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
			return r, fail(ctx, "read server version", err)
		}
		if num >= 180000 {
			e.serverDefault = "uuidv7()"
			r.Canon = "uuidv7 (built-in uuidv7())"
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
		r.Canon = "uuidv7 (PL/pgSQL uuid_generate_v7())"
	case r.StoreStep > 0:
		return e.segmentRow(r)
	}
	return r, nil
}

// segmentRow returns segment row r with its spec's store in the benchmark schema.
func (e *pgEngine) segmentRow(r engine.Row) (engine.Row, error) {
	u, err := storeURL(e.connCfg, e.schema)
	if err != nil {
		return r, err
	}
	r.Spec = "segment:store=" + u + ",key=dbbench,step=" + strconv.FormatUint(r.StoreStep, 10)
	return r, nil
}

// SegmentStoreURL returns a pg:// URL for the segment scheme's store= from a pgx connection
// string (URL or key=value), with search_path set to schema when it is not empty, for a
// counter that is thrown away after the run (unsafe=true: see pgstore's durability rules).
func SegmentStoreURL(dsn, schema string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("dbbench: bad PostgreSQL connection string: %s", engine.OneLine(err.Error()))
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
func uniqueViolation(err error, r engine.Row) (string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return "", false
	}
	what := pe.Detail
	if what == "" {
		what = pe.Message
	}
	msg := fmt.Sprintf("%s: the load stopped on a duplicate key (%s).", r.Label, what)
	if r.Col == engine.ColServerBigint {
		msg += " Instagram's next_id() takes nextval() % 1024 as its sequence, so a shard that makes more than 1,024 IDs in one millisecond wraps the sequence inside that millisecond and repeats an ID, as a bulk load on a fast server or from several connections at once can. The function needs one sequence per shard and fewer than 1,024 rows per ms per shard, or more sequence bits."
	}
	return msg, true
}

// Finding is uniqueViolation: a duplicate key ends a row's loads as a finding of the report.
func (e *pgEngine) Finding(err error, r engine.Row) (string, bool) { return uniqueViolation(err, r) }
