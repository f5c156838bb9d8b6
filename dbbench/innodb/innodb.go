package innodb

import (
	"context"
	"errors"
	"fmt"
	"github.com/idkit/idkit/dbbench/engine"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/idkit/idkit/dbbench/mariadblocal"
)

// Report is the report dialect of MariaDB/MySQL InnoDB (mariadb-local, a mysql:// URL).
func Report() engine.ReportText {
	return engine.ReportText{
		Title:       "MariaDB/MySQL InnoDB",
		Checkpoints: true,
		Clustered:   true,
		ServerSettings: func(row func(k string, v any), s engine.Settings) {
			row("innodb_buffer_pool_size", s.InnoDBBufferPoolSize)
			row("redo log size", s.InnoDBLogFileSize)
			row("innodb_flush_log_at_trx_commit", s.InnoDBFlushLogAtTrxCommit)
			row("innodb_doublewrite", s.InnoDBDoublewrite)
			row("innodb_page_size", s.InnoDBPageSize)
			row("default collation", s.Collation)
		},
		AppDriver:   "database/sql",
		AppBulkUnit: "LOAD DATA",
		AppBaseline: map[string]string{engine.ModeTx: "one transaction of 2 INSERTs per operation", engine.ModeCopy: "LOAD DATA LOCAL INFILE of parents, then of children"},
	}
}

// OpenLocal starts a private server with LocalSettings(cfg.Profile) and settings
// over them, and opens the engine on it.
func OpenLocal(ctx context.Context, cfg engine.Options, settings map[string]string) (engine.Engine, func() error, error) {
	all := LocalSettings(cfg.Profile)
	for k, v := range settings {
		all[k] = v
	}
	cfg.Logf("dbbench: starting a private MariaDB server")
	srv, err := mariadblocal.Start(ctx, mariadblocal.Options{Settings: all})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%w: %w", engine.ErrInterrupted, err)
		}
		return nil, nil, fmt.Errorf("dbbench: mariadb-local: %w", err)
	}
	c, err := mysql.ParseDSN(srv.DSN())
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("dbbench: mariadb-local: %w", err), srv.Close())
	}
	e, err := openMySQL(ctx, cfg, Local, c)
	if err != nil {
		return nil, nil, errors.Join(err, srv.Close())
	}
	return e, func() error {
		if !e.keep {
			return errors.Join(e.Close(), srv.Close())
		}
		err := e.Close()
		start, kerr := srv.Keep()
		if kerr != nil {
			return errors.Join(err, kerr, srv.Close())
		}
		e.reopen, e.keptDir = start+" && "+e.reopen, srv.Dir()
		return err
	}, nil
}

// usable drops the rows the server cannot store: the UUID-type rows on a
// server without that type, when they come from the default list. Asked for
// by name, they are an error.
func (e *mysqlEngine) TableRows(rows []engine.Row, asked []string) (keep []engine.Row, skipped []string) {
	byDefault := slices.Equal(asked, engine.InnoDBSchemes())
	for _, r := range rows {
		if r.Col == engine.ColUUIDNative && !e.uuidType {
			if !byDefault {
				return nil, []string{fmt.Sprintf("scheme %q needs MariaDB's UUID type (10.7+): %s", r.Label, e.uuidOrder)}
			}
			skipped = append(skipped, r.Label)
			continue
		}
		keep = append(keep, r)
	}
	return keep, skipped
}

// notes explains the InnoDB figures a reader could misread.
func (e *mysqlEngine) TableNotes(rep *engine.Report, rows []engine.Row, skipped []string) []string {
	var out []string
	if len(skipped) > 0 {
		out = append(out, fmt.Sprintf("Left out: %s (this server has no UUID type: %s).", strings.Join(skipped, ", "), e.uuidOrder))
	}
	if e.uuidType {
		out = append(out, "MariaDB's UUID type on this server, probed with two UUIDs that sort one way by bytes and the other way from the last group: "+e.uuidOrder+".")
	}
	if e.kind == Server {
		out = append(out, "Redo bytes, buffer-pool reads and page splits are server-wide counters: other activity on the server during a load is counted too.")
	}
	if !e.monitors {
		out = append(out, "Page splits and merges are unavailable: "+strings.TrimPrefix(e.set.Statistics, "mysql.innodb_index_stats; ")+".")
	} else if len(e.enabled) > 0 {
		out = append(out, "The run enabled the INNODB_METRICS counters "+strings.Join(e.enabled, ", ")+" and disabled them again afterwards.")
	}
	if len(e.badLeafStats) > 0 {
		out = append(out, "mysql.innodb_index_stats reported fewer leaf pages than the rows need ("+strings.Join(e.badLeafStats, "; ")+
			"), as it does for indexes of a few pages; leaf pages and fill are left empty there rather than estimated.")
	}
	for _, r := range rows {
		if r.Col == engine.ColText || r.Col == engine.ColTextDefault {
			out = append(out, fmt.Sprintf("Text keys are CHAR columns in the database's character set (%s, up to %d bytes a character), which InnoDB stores with a length byte; the -text rows compare with %s_bin (bytes), the -text-default rows with the default collation %s, whose comparisons are case- and accent-insensitive and go through the collation's weight tables.",
				e.charset, e.mbMaxLen, e.charset, e.set.Collation))
			break
		}
	}
	return out
}

// OpenServer opens the engine on an existing server, c parsed from a mysql:// URL.
func OpenServer(ctx context.Context, o engine.Options, c *mysql.Config) (engine.Engine, func() error, error) {
	e, err := openMySQL(ctx, o, Server, c)
	if err != nil {
		return nil, nil, err
	}
	return e, e.Close, nil
}

// Columns is InnoDB's column rule: no PostgreSQL-only rows, and IDs that set bit 63 go
// in BIGINT UNSIGNED.
func Columns(r engine.Row) (engine.Row, error) {
	switch {
	case r.Col == engine.ColServerBigint || r.Col == engine.ColServerUUID || r.StoreStep > 0:
		return r, engine.ErrServerSide(r.Label)
	case r.Col == engine.ColTextICU:
		return r, fmt.Errorf("dbbench: scheme %q uses a PostgreSQL ICU collation; on MariaDB/MySQL use %q (the database's default collation)", r.Label, r.Spec+engine.SuffixTextDefault)
	case r.Col == engine.ColUint64:
		r.Col, r.Unsigned = engine.ColBigint, true
	}
	return r, nil
}

// LocalSettings returns the server options dbbench pins for a
// mariadb-local server under the given profile, before
// Config.MariaDBSettings is applied. They mirror PGLocalSettings: a 128 MiB
// buffer pool, redo written at every commit but flushed about once a second
// (as synchronous_commit=off), the doublewrite buffer on (as
// full_page_writes=on), a redo log large enough that no load waits for a
// checkpoint (64 MiB under the checkpoints profile), and Debian's
// utf8mb4/utf8mb4_general_ci defaults.
func LocalSettings(profile string) map[string]string {
	s := map[string]string{
		"innodb_buffer_pool_size":             "128M",
		"innodb_log_file_size":                "512M",
		"innodb_flush_log_at_trx_commit":      "2",
		"innodb_doublewrite":                  "1",
		"innodb_stats_persistent":             "1",
		"innodb_buffer_pool_load_at_startup":  "0",
		"innodb_buffer_pool_dump_at_shutdown": "0",
		"character_set_server":                "utf8mb4",
		"collation_server":                    "utf8mb4_general_ci",
		"max_connections":                     "300",
		"max_allowed_packet":                  "256M",
		"local_infile":                        "1",
	}
	if profile == engine.ProfileCheckpoints {
		s["innodb_log_file_size"] = "64M"
	}
	return s
}
