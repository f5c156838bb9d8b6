package sqlite

import (
	"context"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/internal/rowtest"
)

// TestRowWriter writes made-up tables through SQLite's row writers by every path, inside and
// outside a transaction, with keys made by the application and by the database (rowtest).
func TestRowWriter(t *testing.T) {
	e, err := openSQLite(context.Background(), engine.Options{Clients: 1, Nodes: 1, Mode: engine.ModeTx})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rowtest.Run(t, e, []engine.Row{{Label: "bigint", Col: engine.ColBigint}, {Label: "uuid", Col: engine.ColUUID},
		{Label: "text", Col: engine.ColText, TextLen: 26}})
}
