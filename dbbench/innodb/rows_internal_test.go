package innodb

import (
	"context"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/internal/rowtest"
	"github.com/idkit/idkit/dbbench/mysqltest"

	"github.com/go-sql-driver/mysql"
)

// TestMain shares one private server among the package's tests (mysqltest.Main).
func TestMain(m *testing.M) { mysqltest.Main(m) }

// TestRowWriter writes made-up tables through MariaDB's row writers by every path (LOAD DATA
// LOCAL INFILE the bulk one), inside and outside a transaction, with keys made by the
// application and by AUTO_INCREMENT (rowtest).
func TestRowWriter(t *testing.T) {
	c, err := mysql.ParseDSN(mysqltest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	e, err := openMySQL(context.Background(), engine.Options{Clients: 1, Nodes: 1, Mode: engine.ModeTx}, Server, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rowtest.Run(t, e, []engine.Row{{Label: "bigint", Col: engine.ColBigint}, {Label: "uuid", Col: engine.ColUUID},
		{Label: "text", Col: engine.ColText, TextLen: 26}})
}
