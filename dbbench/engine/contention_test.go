package engine_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"
)

// fakeRows serves rows of (event, count), then fails Scan at row scanErrAt (1-based; 0: never)
// or reports err from Err.
type fakeRows struct {
	rows      [][2]any
	i         int
	scanErrAt int
	err       error
}

func (f *fakeRows) Next() bool { f.i++; return f.i <= len(f.rows) }
func (f *fakeRows) Err() error { return f.err }
func (f *fakeRows) Scan(dest ...any) error {
	if f.i == f.scanErrAt {
		return errScan
	}
	*dest[0].(*string) = f.rows[f.i-1][0].(string)
	*dest[1].(*int) = f.rows[f.i-1][1].(int)
	return nil
}

var (
	errScan = errors.New("scan failed")
	errRows = errors.New("connection lost")
)

// TestScanCounts: the rows of a wait sampler's GROUP BY become a map; a failed Scan and an
// error after the rows are returned as they are, with no map.
func TestScanCounts(t *testing.T) {
	two := [][2]any{{"Lock:transactionid", 3}, {"CPU", 1}}
	for _, c := range []struct {
		name string
		rows *fakeRows
		want map[string]int
		err  error
	}{
		{"none", &fakeRows{}, map[string]int{}, nil},
		{"two", &fakeRows{rows: two}, map[string]int{"Lock:transactionid": 3, "CPU": 1}, nil},
		{"scan fails", &fakeRows{rows: two, scanErrAt: 2}, nil, errScan},
		{"rows fail", &fakeRows{rows: two, err: errRows}, nil, errRows},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := engine.ScanCounts(c.rows)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if !maps.Equal(got, c.want) || (c.want == nil) != (got == nil) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
