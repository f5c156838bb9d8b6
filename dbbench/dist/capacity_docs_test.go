package dist_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCapacityClaimsMatchReport holds what docs/choosing-an-id.md says of the capacity run
// (docs/report-dist-capacity/report.json) to its repetitions: the rates of each time-ordered
// key overlap every other time-ordered key's, and each key that scatters has more index bytes
// per row than every time-ordered key of its column type in every repetition, and a median
// rate below every time-ordered key's. It checks nothing once the guide no longer says so.
func TestCapacityClaimsMatchReport(t *testing.T) {
	doc, err := os.ReadFile(choosingDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), "the three rates of each time-ordered key overlap every other one's") {
		t.Skip("docs/choosing-an-id.md no longer describes the capacity run's repetitions")
	}
	b, err := os.ReadFile("../../docs/report-dist-capacity/report.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Scheme     string  `json:"scheme"`
			ColumnType string  `json:"column_type"`
			RowsPerSec float64 `json:"rows_per_sec"`
			Runs       []struct {
				RowsPerSec       float64 `json:"rows_per_sec"`
				IndexBytesPerRow float64 `json:"index_bytes_per_row"`
			} `json:"runs"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	scatter := map[string]bool{"uuidv4": true, "snowflake:reverse=true": true, "snowflake:shard_bits=5": true}
	type span struct{ lo, hi, idxLo, idxHi, median float64 }
	spans := map[string]span{}
	column := map[string]string{}
	for _, r := range rep.Results {
		var rates, idx []float64
		for _, run := range r.Runs {
			rates = append(rates, run.RowsPerSec)
			idx = append(idx, run.IndexBytesPerRow)
		}
		if len(rates) < 2 {
			t.Fatalf("%s: %d repetitions", r.Scheme, len(rates))
		}
		spans[r.Scheme] = span{slices.Min(rates), slices.Max(rates), slices.Min(idx), slices.Max(idx), r.RowsPerSec}
		column[r.Scheme] = strings.Fields(r.ColumnType)[0] // "bigint identity" is a bigint
	}
	for a, sa := range spans {
		for b, sb := range spans {
			switch {
			case !scatter[a] && !scatter[b] && a < b:
				if sa.hi < sb.lo || sb.hi < sa.lo {
					t.Errorf("the rates of %s (%.0f–%.0f) and %s (%.0f–%.0f) do not overlap", a, sa.lo, sa.hi, b, sb.lo, sb.hi)
				}
			case scatter[a] && !scatter[b]:
				if sa.median >= sb.median {
					t.Errorf("%s's median %.0f rows/s is not below %s's %.0f", a, sa.median, b, sb.median)
				}
				if column[a] == column[b] && sa.idxLo <= sb.idxHi {
					t.Errorf("%s's index B/row (%.1f–%.1f) is not above %s's (%.1f–%.1f) in every repetition", a, sa.idxLo, sa.idxHi, b, sb.idxLo, sb.idxHi)
				}
			}
		}
	}
}
