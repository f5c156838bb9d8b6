package pg

import (
	"context"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/internal/rowtest"
	"github.com/idkit/idkit/dbbench/pgtest"
)

// TestMain shares one private cluster among the package's tests (pgtest.Main).
func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRowWriter writes made-up tables through PostgreSQL's row writers by every path, inside
// and outside a transaction, with keys made by the application and by the database (rowtest),
// the latter reserved from the identity's sequence for the bulk and batch paths.
func TestRowWriter(t *testing.T) {
	e, err := openPG(context.Background(), engine.Options{Clients: 1, Nodes: 1, Mode: engine.ModeTx, Fillfactor: 90}, Server, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rowtest.Run(t, e, []engine.Row{{Label: "bigint", Col: engine.ColBigint}, {Label: "uuid", Col: engine.ColUUID},
		{Label: "text", Col: engine.ColText, TextLen: 26}})
}
