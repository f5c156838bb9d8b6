// Package mysqlstore keeps segment counters in a MariaDB or MySQL (InnoDB) table, for the
// segment scheme of idkit (store=mysql://…, store=mariadb://…). It uses
// github.com/go-sql-driver/mysql. Importing it registers both URL schemes with
// segment.RegisterStore.
//
// The table (idkit_segments unless ?table= says otherwise, created on first use) has the
// columns of pgstore's: biz_tag, max_id, step, store_index, store_count, updated_at. A block
// is taken in one transaction on one connection, as Meituan Leaf does: the row is created if
// missing (INSERT … ON DUPLICATE KEY UPDATE that changes nothing), then UPDATE … SET max_id =
// max_id + step locks it until COMMIT, and SELECT max_id in the same transaction reads the
// value this transaction wrote.
package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/schemes/segment"
)

// DefaultTable is the counter table's name when the URL gives none.
const DefaultTable = "idkit_segments"

func init() {
	for _, s := range []string{"mysql", "mariadb"} {
		segment.RegisterStore(s, driver{})
	}
}

type driver struct{}

func (driver) OpenStore(ctx context.Context, url string) (segment.Store, error) {
	dsn, table, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return Open(ctx, dsn, table)
}

func (driver) DescribeStore(url string) string {
	_, table, err := ParseURL(url)
	if err != nil {
		return "MariaDB/MySQL store (unreadable URL)"
	}
	return "MariaDB/MySQL table " + table
}

// ParseURL reads mysql://user:password@host:port/database?table=T&socket=/path/mysqld.sock
// (also mariadb://) into a go-sql-driver/mysql DSN and a table name. socket= connects over a
// unix socket instead of TCP; every other query parameter is passed to the driver as a DSN
// parameter.
func ParseURL(raw string) (dsn, table string, err error) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		raw = strings.ToLower(scheme) + "://" + rest
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("mysqlstore: store URL: %w", err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" || u.Opaque != "" {
		return "", "", fmt.Errorf("mysqlstore: store URL: want mysql://user:password@host:port/database")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", "", fmt.Errorf("mysqlstore: store URL query: %w", err)
	}
	table = DefaultTable
	if q.Has("table") {
		table = q.Get("table")
		if !validTable(table) {
			return "", "", fmt.Errorf("mysqlstore: table %q: want letters, digits and '_', optionally db.table", table)
		}
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	switch sock := q.Get("socket"); {
	case sock != "":
		cfg.Net, cfg.Addr = "unix", sock
	case u.Host != "":
		cfg.Net, cfg.Addr = "tcp", u.Host
		if u.Port() == "" {
			cfg.Addr += ":3306"
		}
	default:
		return "", "", errors.New("mysqlstore: store URL: no host and no socket=")
	}
	q.Del("table")
	q.Del("socket")
	dsn = cfg.FormatDSN()
	if len(q) > 0 {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + q.Encode()
	}
	if _, err := mysql.ParseDSN(dsn); err != nil {
		return "", "", fmt.Errorf("mysqlstore: store URL parameters: %w", err)
	}
	return dsn, table, nil
}

func validTable(t string) bool {
	parts := strings.Split(t, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 64 {
			return false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
				return false
			}
		}
	}
	return true
}

// Store is a segment.Store in a MariaDB/MySQL table. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	table string
}

var _ segment.Store = (*Store)(nil)

// Open connects with dsn (a go-sql-driver/mysql DSN) and creates table if it does not exist.
func Open(ctx context.Context, dsn, table string) (*Store, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, fmt.Errorf("mysqlstore: %w", err)
	}
	db.SetMaxOpenConns(2)
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
		biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
		max_id      BIGINT       NOT NULL,
		step        BIGINT       NOT NULL,
		store_index INT          NOT NULL,
		store_count INT          NOT NULL,
		updated_at  DATETIME(6)  NOT NULL
	) ENGINE=InnoDB`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mysqlstore: creating table %s: %w", table, err)
	}
	return &Store{db: db, table: table}, nil
}

// Table returns the counter table's name.
func (s *Store) Table() string { return s.table }

// Take adds req.Step to the key's max_id and returns the numbers in between. Errors wrap
// segment.ErrClass when the key's row belongs to another store position, and
// segment.ErrExhausted when max_id would leave the BIGINT range.
func (s *Store) Take(ctx context.Context, req segment.Request) (b segment.Block, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return b, fmt.Errorf("mysqlstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if _, err = tx.ExecContext(ctx, `INSERT INTO `+s.table+` (biz_tag, max_id, step, store_index, store_count, updated_at)
		VALUES (?, 0, ?, ?, ?, NOW(6)) ON DUPLICATE KEY UPDATE biz_tag = biz_tag`, req.Key, req.Step, req.Index, req.Count); err != nil {
		return b, s.fail(req, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE `+s.table+` SET max_id = max_id + ?, step = ?, updated_at = NOW(6)
		WHERE biz_tag = ? AND store_index = ? AND store_count = ?`, req.Step, req.Step, req.Key, req.Index, req.Count)
	if err != nil {
		return b, s.fail(req, err)
	}
	if n, rerr := res.RowsAffected(); rerr == nil && n == 0 {
		var idx, cnt int
		if err = tx.QueryRowContext(ctx, `SELECT store_index, store_count FROM `+s.table+` WHERE biz_tag = ?`, req.Key).Scan(&idx, &cnt); err != nil {
			return b, s.fail(req, err)
		}
		err = fmt.Errorf("mysqlstore: key %q in %s belongs to store %d of %d, asked as store %d of %d: %w",
			req.Key, s.table, idx+1, cnt, req.Index+1, req.Count, segment.ErrClass)
		return b, err
	}
	var maxID int64
	if err = tx.QueryRowContext(ctx, `SELECT max_id FROM `+s.table+` WHERE biz_tag = ?`, req.Key).Scan(&maxID); err != nil {
		return b, s.fail(req, err)
	}
	if err = tx.Commit(); err != nil {
		return b, s.fail(req, err)
	}
	if maxID < int64(req.Step) {
		return b, fmt.Errorf("mysqlstore: key %q in %s: max_id %d after adding %d: %w", req.Key, s.table, maxID, req.Step, segment.ErrBackwards)
	}
	return segment.Block{First: uint64(maxID) - req.Step + 1, Last: uint64(maxID)}, nil
}

// fail wraps a database error of Take, turning BIGINT overflow into segment.ErrExhausted.
func (s *Store) fail(req segment.Request, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1264 || me.Number == 1690) { // ER_WARN_DATA_OUT_OF_RANGE (strict mode), ER_DATA_OUT_OF_RANGE
		return fmt.Errorf("mysqlstore: key %q in %s: max_id + %d leaves BIGINT: %w: %w", req.Key, s.table, req.Step, segment.ErrExhausted, err)
	}
	return fmt.Errorf("mysqlstore: taking %d of key %q in %s: %w", req.Step, req.Key, s.table, err)
}

// Close closes the store's connections.
func (s *Store) Close() error { return s.db.Close() }
