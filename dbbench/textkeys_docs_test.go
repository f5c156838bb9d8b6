package dbbench_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/dbbench"
)

// textKeyReports are the committed reports the guide's "What a text key costs" block quotes:
// each holds the rows typeid (the IDs in binary) and typeid-text (their public text as the key).
var textKeyReports = []string{"docs/report/report.json", "docs/report-innodb/report.json"}

func textKeysBegin() string {
	return "<!-- BEGIN idbench text keys: generated from " + strings.Join(textKeyReports, " and ") +
		" by `go test ./dbbench -run TestChoosingAnIDFigures -update`; do not edit -->\n"
}

// TestChoosingAnIDFiguresTextKeys checks the guide's paragraph on storing prefixed IDs against
// the committed reports, as TestChoosingAnIDFigures does for the figures blocks (whose -run
// pattern also runs this test, so one command regenerates both).
func TestChoosingAnIDFiguresTextKeys(t *testing.T) {
	doc, err := os.ReadFile(choosingDoc)
	if err != nil {
		t.Skipf("no guide yet: %v", err)
	}
	var reps []*dbbench.Report
	for _, name := range textKeyReports {
		js, err := os.ReadFile("../" + name)
		if err != nil {
			t.Fatalf("the guide quotes a report that is not committed: %v", err)
		}
		rep := new(dbbench.Report)
		if err := json.Unmarshal(js, rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reps = append(reps, rep)
	}
	var want strings.Builder
	if err := writeTextKeyCost(&want, reps); err != nil {
		t.Fatal(err)
	}
	holdBlock(t, choosingDoc, string(doc), textKeysBegin(), want.String(), "the text-key block", "go test ./dbbench -run TestChoosingAnIDFigures -update")
}

// textKeyRow is one engine's pair of rows: the IDs stored in binary and as their text.
type textKeyRow struct {
	rep       *dbbench.Report
	bin, text dbbench.Result
	innodb    bool
}

// bytesPerRow is what one row costs on disk: the heap and the primary-key index on
// PostgreSQL; on InnoDB the clustered index (which is the table) and the secondary index.
func (k textKeyRow) bytesPerRow(r dbbench.Result) float64 {
	if k.innodb {
		return float64(r.TableBytes) / float64(r.Rows)
	}
	return float64(r.TableBytes+r.IndexBytes) / float64(r.Rows)
}

// speed returns the text row's rows/s as a share of the binary row's: the median of the
// per-round ratios, and their least and greatest. Runs are in round order, one a round.
func (k textKeyRow) speed() (median, lo, hi float64) {
	var rs []float64
	for i := range min(len(k.text.Runs), len(k.bin.Runs)) {
		if b := k.bin.Runs[i].RowsPerSec; b > 0 {
			rs = append(rs, k.text.Runs[i].RowsPerSec/b)
		}
	}
	if len(rs) == 0 {
		return 0, 0, 0
	}
	slices.Sort(rs)
	median = rs[len(rs)/2]
	if len(rs)%2 == 0 {
		median = (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
	}
	return median, rs[0], rs[len(rs)-1]
}

func (k textKeyRow) engine() string {
	if k.innodb {
		return "InnoDB"
	}
	return "PostgreSQL"
}

// writeTextKeyCost writes the guide's block on storing prefixed IDs from reports that hold the
// rows typeid and typeid-text: every figure and every comparison word is computed here.
func writeTextKeyCost(w io.Writer, reps []*dbbench.Report) error {
	var ks []textKeyRow
	for _, rep := range reps {
		k := textKeyRow{rep: rep, innodb: rep.Settings.Engine == dbbench.EngineMariaDBLocal || rep.Settings.Engine == dbbench.EngineMySQL}
		var haveBin, haveText bool
		for _, r := range rep.Results {
			switch r.Scheme {
			case "typeid":
				k.bin, haveBin = r, true
			case dbbench.RowTypeIDText:
				k.text, haveText = r, true
			}
		}
		if !haveBin || !haveText || k.bin.Rows == 0 || k.text.Rows == 0 || k.bin.RowsPerSec == 0 {
			return fmt.Errorf("report of %q lacks the rows typeid and %s", rep.Settings.Command, dbbench.RowTypeIDText)
		}
		ks = append(ks, k)
	}
	// The key's length, from the scheme the report ran: its public text of the guide's example
	// UUIDv7 (any ID of the scheme has a text of the same width).
	spec := ks[0].text.Spec
	c, err := idkit.NewCodec(spec)
	if err != nil {
		return fmt.Errorf("scheme of %s: %w", dbbench.RowTypeIDText, err)
	}
	var example [16]byte
	if _, err := hex.Decode(example[:], []byte("01890a5dac96774bbcceb302099a8057")); err != nil {
		return err
	}
	id := idkit.FromUUID(example)
	sample, err := idkit.FormatID(c, id)
	if err != nil {
		return err
	}

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	for _, k := range ks {
		st := k.rep.Settings
		p("%s: `%s` (%s, %s rows, median of %d runs, %s).\n\n", k.engine(), st.Command, st.ServerVersion, dbbench.Thousands(int64(st.Rows)), st.Repeat, st.Started.Format("2006-01-02"))
	}
	p("| engine | row | column | key | table + indexes B/row | vs binary | rows/s | vs binary | lookup p50 µs | range scan p50 µs |\n")
	p("|---|---|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, k := range ks {
		speed, _, _ := k.speed()
		for _, r := range []dbbench.Result{k.bin, k.text} {
			key, vs := fmt.Sprintf("%d bytes", len(id.Bytes16())), 1.0
			if r.Scheme == dbbench.RowTypeIDText {
				key, vs = fmt.Sprintf("%d characters", len(sample)), speed
			}
			p("| %s | %s | %s | %s | %.1f | %.2f× | %s | %.2f× | %.0f | %.0f |\n", k.engine(), r.Scheme, strings.ReplaceAll(r.ColumnType, "|", `\|`), key,
				k.bytesPerRow(r), k.bytesPerRow(r)/k.bytesPerRow(k.bin), dbbench.Thousands(int64(r.RowsPerSec+0.5)), vs,
				r.PointLookup.P50Micros, r.RangeScan.P50Micros)
		}
	}
	p("\nTable + indexes: the heap and the primary-key index on PostgreSQL; on InnoDB the clustered index, which is the table, and a secondary index on the payload column, whose entries carry the primary key. Rows/s \"vs binary\" is the median of the rounds' ratios: each round of a run loads every row once, these two one after the other, so a ratio within a round is taken under the same load from other jobs, and it is not the ratio of the two medians in the rows/s column (")
	var medians []string
	for _, k := range ks {
		medians = append(medians, fmt.Sprintf("%s %.2f×", k.engine(), k.text.RowsPerSec/k.bin.RowsPerSec))
	}
	p("%s).\n\n", strings.Join(medians, ", "))

	p("Stored as its text (`%s`, %d characters), an ID of `%s` makes every row larger:", sample, len(sample), spec)
	costlier, slower := true, true
	var slowerOn, notSlowerOn []string
	for n, k := range ks {
		sep := ";"
		if n == len(ks)-1 {
			sep = "."
		}
		tb, bb := k.bytesPerRow(k.text), k.bytesPerRow(k.bin)
		costlier = costlier && tb > bb
		speed, lo, hi := k.speed()
		slower = slower && hi < 1
		if hi < 1 {
			slowerOn = append(slowerOn, k.engine())
		} else {
			notSlowerOn = append(notSlowerOn, k.engine())
		}
		p(" on %s %.1f bytes of table and indexes a row against %.1f for the same IDs as %s (%+.1f bytes, %.2f×)", k.engine(), tb, bb, k.bin.ColumnType, tb-bb, tb/bb)
		if k.innodb && k.bin.SecondaryIndexBytesPerRow > 0 {
			p(", of which the secondary index holds %.1f against %.1f", k.text.SecondaryIndexBytesPerRow, k.bin.SecondaryIndexBytesPerRow)
		}
		p(", and it loaded at %.2f× the binary key's rows/s (rounds from %.2f× to %.2f×)%s", speed, lo, hi, sep)
	}
	p("\n\n")
	switch {
	case costlier && slower:
		p("The text key costs more space and more time on both engines, in every round, and gives nothing back: the binary column holds the same IDs in the same order, and the text is one call away.")
	case costlier:
		p("The bytes are the lasting cost: ")
		if len(slowerOn) > 0 {
			p("the text key loaded slower in every round on %s, but not on %s (the ratios above), so its load speed is not a cost that holds everywhere,", strings.Join(slowerOn, " and "), strings.Join(notSlowerOn, " and "))
		} else {
			p("the text key did not load slower in every round on either engine (the ratios above), so on this shared machine its load speed was within the noise,")
		}
		p(" while every row, every index that holds the key (and every foreign key that points at it) pays the extra bytes for as long as the table lives.")
	default:
		p("In this run the text key did not take more space on every engine; re-run the commands above before drawing a conclusion.")
	}
	p(" So store the ID in binary (`uuid`, `BINARY(16)`) and format it at the edge: the API writes the public text with `idkit.FormatID` when it shows an ID and reads it back with the codec's `Parse`, and the database never sees the prefix ([from a row back to the public text](#ids-at-the-api-boundary-prefixes-and-masks); the [README](../README.md#the-library) shows the same with `idkit.Public`). A column of text keys is worth its bytes only where something other than your code reads the table and needs the prefixed form; then keep it byte-compared (`COLLATE \"C\"`, `VARBINARY`), as these rows are, so that its order stays the IDs' order.\n")
	_, err = io.WriteString(w, b.String())
	return err
}
