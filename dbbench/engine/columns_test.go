package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
	"github.com/idkit/idkit/dbbench/innodb"
	"github.com/idkit/idkit/dbbench/pg"
	"github.com/idkit/idkit/dbbench/sqlite"
)

// TestColumnRules runs every engine's column rules (Columns, asked before the engine opens)
// over the rows whose columns only some engines have: each row is kept, adapted or rejected
// with an error that names it, as the engine's types allow.
func TestColumnRules(t *testing.T) {
	rules := []struct {
		engine  string
		columns func(engine.Row) (engine.Row, error)
	}{{"pg", pg.Columns}, {"innodb", innodb.Columns}, {"sqlite", sqlite.Columns}}
	for _, tt := range []struct {
		label string
		// want per engine: "" kept, "unsigned" kept as BIGINT UNSIGNED, else an error part.
		want map[string]string
	}{
		{"snowflake", map[string]string{}},
		{engine.RowULIDTextICU, map[string]string{"innodb": "ICU collation", "sqlite": "ICU collations"}},
		{"uuidv7-native", map[string]string{"pg": "is for MariaDB/MySQL", "sqlite": "is for MariaDB/MySQL"}},
		{"ulid-text-default", map[string]string{"pg": "is for MariaDB/MySQL", "sqlite": "is for MariaDB/MySQL"}},
		{engine.RowInstagramPLpgSQL, map[string]string{"innodb": "needs PostgreSQL", "sqlite": "needs PostgreSQL"}},
		{engine.RowSegment, map[string]string{"innodb": "needs PostgreSQL", "sqlite": "needs PostgreSQL"}},
		{"snowflake:layout=discord", map[string]string{"innodb": "unsigned"}},
	} {
		r, err := engine.ResolveRow(context.Background(), tt.label)
		if err != nil {
			t.Fatalf("%s: %v", tt.label, err)
		}
		for _, e := range rules {
			got, err := e.columns(r)
			want := tt.want[e.engine]
			switch {
			case want == "" || want == "unsigned":
				if err != nil {
					t.Errorf("%s on %s: %v, want it kept", tt.label, e.engine, err)
				} else if got.Unsigned != (want == "unsigned") {
					t.Errorf("%s on %s: unsigned %v, want %v", tt.label, e.engine, got.Unsigned, want == "unsigned")
				}
			case err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.label):
				t.Errorf("%s on %s: err %v, want one naming the scheme and %q", tt.label, e.engine, err, want)
			}
		}
	}
}
