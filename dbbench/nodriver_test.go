package dbbench_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoDriverImport holds package dbbench to importing no database driver or storage engine
// itself: connection strings are parsed by the engine packages (dbbench/pg, dbbench/innodb,
// ...), which are the only places a driver is named.
func TestNoDriverImport(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	drivers := []string{"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "modernc.org/sqlite", "github.com/cockroachdb/pebble", "database/sql/driver"}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, d := range drivers {
				if strings.HasPrefix(path, d) {
					t.Errorf("%s imports %s: parse and open through the engine package instead", f, path)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files of package dbbench", checked)
	}
}
