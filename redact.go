package idkit

import "github.com/idkit/idkit/internal/redact"

// Redact returns s with every credential it holds replaced by "xxxxx", so that a connection
// string, a spec or a message quoting one can be printed, logged or written to a report:
//
//   - the password of any URL, scheme://user:password@host… (postgres://, postgresql://, pg://,
//     mysql://, etcd://, …), also inside a longer text such as the spec
//     "snowflake:node=pg://u:pw@h/db?namespace=x" or an error message;
//   - the password of a go-sql-driver/mysql DSN, user:password@tcp(host:3306)/db;
//   - the value of every key=value pair whose key is pass, pwd, or ends in password or passwd,
//     in any case: libpq's password= and sslpassword= (quoted values too), a URL query's
//     ?password=, ODBC's Pwd=.
//
// It hides too much rather than too little: where a password's end is unclear it hides up to
// the next blank. A password containing blanks is found whole only inside a quoted key=value
// value or a URL (which percent-encodes blanks), so redact each command-line argument on its
// own rather than a joined command line. Redact never fails and never panics.
func Redact(s string) string { return redact.String(s) }
