package innodb

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/internal/redact"
	"github.com/idkit/idkit/internal/urlquery"
)

// Target is an existing MariaDB/MySQL server idbench runs on, as ParseURL read its URL.
type Target struct{ Config *mysql.Config }

// IsURL reports whether s is a MariaDB/MySQL URL (mysql:// or mariadb://), which ParseURL
// reads.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "mysql://") || strings.HasPrefix(s, "mariadb://")
}

// ParseURL turns "mysql://user:password@host:port/db" (or mariadb://)
// into a go-sql-driver/mysql configuration. The port defaults to 3306 and
// the database may be empty. Query parameters: socket=PATH connects over a
// unix socket instead of TCP (the host is then ignored), tls=true|false|
// skip-verify|preferred as in the driver. The query is read strictly: a pair
// that does not parse (';', %zz), a key given twice or any other key is an
// error. Errors name the bad part and never contain the password.
func ParseURL(s string) (*mysql.Config, error) {
	if !IsURL(s) {
		return nil, fmt.Errorf("dbbench: MySQL URL %q: want mysql://user:password@host:port/db", engine.RedactURL(s))
	}
	red := redact.String(engine.RedactURL(s)) // also a ?password= in the query
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		msg := err.Error()
		if pw := engine.PasswordOf(s); pw != "" && strings.Contains(msg, pw) {
			msg = "cannot parse it"
		}
		return nil, fmt.Errorf("dbbench: bad MySQL URL %q: %s", red, msg)
	}
	c := mysql.NewConfig()
	if u.User != nil {
		c.User = u.User.Username()
		c.Passwd, _ = u.User.Password()
	}
	if c.User == "" {
		return nil, fmt.Errorf("dbbench: MySQL URL %q: no user name (mysql://user:password@host/db)", red)
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("dbbench: MySQL URL %q: want // after mysql:", red)
	}
	c.DBName = strings.TrimPrefix(u.Path, "/")
	if strings.Contains(c.DBName, "/") {
		return nil, fmt.Errorf("dbbench: MySQL URL %q: database name %q contains a slash", red, c.DBName)
	}
	q, err := urlquery.Parse(u.RawQuery, urlquery.Known("socket", "tls"), "known: socket, tls")
	if err != nil {
		return nil, fmt.Errorf("dbbench: MySQL URL %q: %w", red, err)
	}
	for k, v := range q {
		switch k {
		case "socket":
			if v == "" {
				return nil, fmt.Errorf("dbbench: MySQL URL %q: empty socket path", red)
			}
			c.Net, c.Addr = "unix", v
		case "tls":
			switch v {
			case "true", "false", "skip-verify", "preferred":
				c.TLSConfig = v
			default:
				return nil, fmt.Errorf("dbbench: MySQL URL %q: tls=%q: want true, false, skip-verify or preferred", red, v)
			}
		default:
			return nil, fmt.Errorf("dbbench: MySQL URL %q: unknown parameter %q (known: socket, tls)", red, k)
		}
	}
	if c.Net != "unix" {
		host, port := u.Hostname(), u.Port()
		if host == "" {
			return nil, fmt.Errorf("dbbench: MySQL URL %q: no host (or ?socket=PATH)", red)
		}
		if port == "" {
			port = "3306"
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("dbbench: MySQL URL %q: bad port %q", red, port)
		}
		c.Net, c.Addr = "tcp", net.JoinHostPort(host, port)
	}
	return c, nil
}
