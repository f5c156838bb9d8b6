package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/pglocal"
)

// Speed tests check structure only, never timing: measurements use a fixed small count of IDs
// (Nx) so they finish quickly under -race on a busy machine.

func TestSpeedJSONDefault(t *testing.T) {
	r := idbench(t, "", "speed", "--benchtime", "20x", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var rep speedReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var names []string
	for _, x := range rep.Results {
		names = append(names, x.Name)
	}
	want := []string{
		"snowflake", "snowflake:time_bits=41,node_bits=0,seq_bits=22",
		"sonyflake", libSonyflake, "ulid", libULID, "uuidv7", libUUIDv7, "uuidv4", libUUIDv4,
	}
	if !slices.Equal(names, want) {
		t.Fatalf("rows %q, want %q", names, want)
	}
	if rep.GOMAXPROCS < 1 || rep.Benchtime != "20x" || rep.Go == "" {
		t.Errorf("header %+v", rep)
	}
	for _, x := range rep.Results {
		for _, m := range []measurement{x.Serial, x.Parallel} {
			if m.N < 20 || m.NsPerID <= 0 || m.IDsPerSec <= 0 || m.AllocsPerID < 0 {
				t.Errorf("%s: measurement %+v", x.Name, m)
			}
		}
		isLib := strings.HasPrefix(x.Name, "lib:")
		if (x.Kind == "library") != isLib {
			t.Errorf("%s: kind %q", x.Name, x.Kind)
		}
		hasCap := strings.HasPrefix(x.Name, "snowflake") || strings.Contains(x.Name, "sonyflake")
		if (x.Cap != nil) != hasCap || (x.Serial.CapPercent != nil) != hasCap {
			t.Errorf("%s: cap %v, cap%% %v", x.Name, x.Cap, x.Serial.CapPercent)
		}
		hasBatch := strings.HasPrefix(x.Name, "snowflake")
		if (x.Batch != nil) != hasBatch {
			t.Errorf("%s: batch %v", x.Name, x.Batch)
		}
		isAdapter := !isLib && !hasBatch
		if (x.VsLibrarySerial != nil) != isAdapter || (x.VsLibraryParallel != nil) != isAdapter {
			t.Errorf("%s: vs library %v %v", x.Name, x.VsLibrarySerial, x.VsLibraryParallel)
		}
		if isAdapter && x.Library == "" || isLib && x.Library == "" {
			t.Errorf("%s: no pair", x.Name)
		}
	}
	if got := rep.Results[0].Cap; got == nil || *got != 4096000 {
		t.Errorf("twitter cap %v, want 4096000", got)
	}
	if !strings.Contains(r.stderr, "idbench speed: round 1/3, 1/10 snowflake") || !strings.Contains(r.stderr, "round 3/3, 10/10") {
		t.Errorf("no progress on stderr: %q", r.stderr)
	}
}

func TestSpeedTable(t *testing.T) {
	r := idbench(t, "", "speed", "--benchtime", "10x", "--schemes", "ulid;snowflake:layout=discord,worker=3")
	if r.err != nil {
		t.Fatal(r.err)
	}
	lines := strings.Split(r.stdout, "\n")
	header := strings.Fields(lines[0])
	for _, col := range []string{"SCHEME", "NS/ID", "IDS/S", "ALLOCS/ID", "CAP", "%CAP", "BATCH", "LIB"} {
		if !slices.Contains(header, col) {
			t.Errorf("header %q lacks %s", lines[0], col)
		}
	}
	rows := []string{"ulid", libULID, "snowflake:layout=discord,worker=3"}
	for i, name := range rows {
		f := strings.Fields(lines[1+i])
		if len(f) != 12 || f[0] != name {
			t.Errorf("row %d = %q, want 12 cells for %s", i+1, lines[1+i], name)
		}
	}
	if lines[len(rows)+1] != "" || !strings.Contains(r.stdout, "GOMAXPROCS=") {
		t.Errorf("no legend after the rows:\n%s", r.stdout)
	}
}

var benchLine = regexp.MustCompile(`^Benchmark(Next|NextParallel|NextBatch)/scheme=[^\s/]+(-\d+)?\t\d+\t\d+\.\d+ ns/op\t[\d.]+ B/op\t[\d.]+ allocs/op$`)

func TestSpeedBenchstat(t *testing.T) {
	r := idbench(t, "", "speed", "--benchtime", "10x", "--schemes", "uuidv4,snowflake", "--benchstat")
	if r.err != nil {
		t.Fatal(r.err)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "goos: ") || !strings.HasPrefix(lines[1], "goarch: ") || !strings.HasPrefix(lines[2], "pkg: ") {
		t.Errorf("no configuration lines: %q", lines[:3])
	}
	var n int
	for _, l := range lines[3:] {
		if !benchLine.MatchString(l) {
			t.Errorf("not a benchmark line: %q", l)
		}
		n++
	}
	// uuidv4 and lib:google/uuid-v4: 2 each; snowflake: 3 with the batch; one line per round
	// of the default 3.
	if n != 21 {
		t.Errorf("%d benchmark lines, want 21:\n%s", n, r.stdout)
	}
	if !strings.Contains(r.stdout, "scheme=lib:google.uuid-v4") {
		t.Errorf("library row not named with '.' for '/':\n%s", r.stdout)
	}
}

// TestSpeedCount: each figure is the median of --count rounds, and the rounds are kept.
func TestSpeedCount(t *testing.T) {
	r := idbench(t, "", "speed", "--benchtime", "10x", "--count", "4", "--schemes", "uuidv4", "--libs=false", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var rep speedReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Count != 4 || len(rep.Results) != 1 {
		t.Fatalf("count %d, %d results; want 4 and 1", rep.Count, len(rep.Results))
	}
	for _, m := range []measurement{rep.Results[0].Serial, rep.Results[0].Parallel} {
		if len(m.SamplesNs) != 4 {
			t.Fatalf("samples %v, want 4", m.SamplesNs)
		}
		s := slices.Clone(m.SamplesNs)
		slices.Sort(s)
		if want := (s[1] + s[2]) / 2; m.NsPerID != want {
			t.Errorf("ns/ID %v, want the median %v of %v", m.NsPerID, want, m.SamplesNs)
		}
	}
	for _, bad := range []string{"0", "-1", "x"} {
		if r := idbench(t, "", "speed", "--count", bad); r.code != 2 {
			t.Errorf("--count %s: exit %d, want 2", bad, r.code)
		}
	}
}

func TestSpeedNoLibs(t *testing.T) {
	r := idbench(t, "", "speed", "--benchtime", "5x", "--schemes", "ulid", "--libs=false", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var rep speedReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].VsLibrarySerial != nil {
		t.Errorf("results %+v, want ulid alone", rep.Results)
	}
}

func TestSpeedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := idbenchCtx(ctx, t, "", "speed", "--benchtime", "1000x", "--schemes", "snowflake")
	if !errors.Is(r.err, context.Canceled) || r.code != 1 {
		t.Fatalf("err = %v, code %d; want context.Canceled, 1", r.err, r.code)
	}
}

func TestSpeedGeneratorError(t *testing.T) {
	// Baidu's 28 bits of seconds ran out in 2024, so its generator fails to start; the error
	// names the scheme.
	r := idbench(t, "", "speed", "--benchtime", "5x", "--schemes", "snowflake:layout=baidu")
	if r.err == nil || r.code != 1 || !strings.Contains(r.err.Error(), "baidu") {
		t.Fatalf("err = %v, code %d; want a start error naming baidu", r.err, r.code)
	}
}

func TestSplitSchemes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"ulid", []string{"ulid"}},
		{"ulid,uuidv7", []string{"ulid", "uuidv7"}},
		{" ulid , uuidv7 ", []string{"ulid", "uuidv7"}},
		{"snowflake:time_bits=41,node_bits=0,seq_bits=22,ulid", []string{"snowflake:time_bits=41,node_bits=0,seq_bits=22", "ulid"}},
		{"snowflake:layout=discord,worker=3;snowflake:seq_bits=16", []string{"snowflake:layout=discord,worker=3", "snowflake:seq_bits=16"}},
		{"snowflake:epoch=2020-01-01T00:00:00Z,unit=10ms,sonyflake:machine=2", []string{"snowflake:epoch=2020-01-01T00:00:00Z,unit=10ms", "sonyflake:machine=2"}},
		{"lib:oklog/ulid,ulid", []string{"lib:oklog/ulid", "ulid"}},
		{"monotonic=false", []string{"monotonic=false"}},
	}
	for _, tt := range tests {
		got, err := splitSchemes(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitSchemes(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", ",", "ulid,", ";ulid", "ulid,,uuidv4"} {
		if got, err := splitSchemes(bad); err == nil {
			t.Errorf("splitSchemes(%q) = %q, want an error", bad, got)
		}
	}
}

// FuzzSplitSchemes checks that splitting never panics, never yields an empty row, and keeps
// every non-blank character.
func FuzzSplitSchemes(f *testing.F) {
	for _, s := range []string{"ulid", "snowflake:time_bits=41,node_bits=0,seq_bits=22,ulid", "a;b,c=d", "=,=", ":=,x", ",;,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := splitSchemes(in)
		if err != nil {
			return
		}
		keep := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r == ',' || r == ';' || strings.TrimSpace(string(r)) == "" {
					return -1
				}
				return r
			}, s)
		}
		for _, g := range got {
			if strings.TrimSpace(g) == "" {
				t.Fatalf("splitSchemes(%q) has an empty row: %q", in, got)
			}
		}
		if keep(strings.Join(got, ",")) != keep(in) {
			t.Fatalf("splitSchemes(%q) = %q loses characters", in, got)
		}
	})
}

func TestRunAllWithoutDB(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	r := idbench(t, "", "--out", dir, "--benchtime", "5x", "--db", "none")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.HasPrefix(r.stdout, "SCHEME") {
		t.Errorf("stdout does not start with the speed table:\n%s", r.stdout)
	}
	for _, name := range []string{"README.md", "speed.txt", "speed.json", "speed.bench"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v, %d bytes", name, err, len(b))
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(b), "idbench --out") || !strings.Contains(string(b), "Not run (`--db none`)") {
		t.Errorf("README.md:\n%s", b)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "speed.json"))
	var rep speedReport
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != 10 {
		t.Errorf("speed.json: %v, %d rows", err, len(rep.Results))
	}
}

func TestRunAllSQLite(t *testing.T) {
	skipSQLiteUnderRace(t)
	if testing.Short() {
		t.Skip("loads a database")
	}
	dir := t.TempDir()
	r := idbench(t, "", "--out", dir, "--benchtime", "5x", "--db", "sqlite", "--rows", "1000")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	for _, name := range []string{"README.md", "speed.json", "report.md", "report.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(r.stdout, "ulid-text") {
		t.Errorf("stdout lacks the database table:\n%s", r.stdout)
	}
}

// TestSpeedSegmentLocalStore measures a segment spec without a store: idbench starts a private
// PostgreSQL for it and measures Next, NextParallel and the batch method.
func TestSpeedSegmentLocalStore(t *testing.T) {
	if _, err := pglocal.FindBinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("%v (apt-get install postgresql)", err)
	}
	r := idbench(t, "", "speed", "--schemes", "segment:step=500", "--benchtime", "2000x", "--count", "1", "--json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var rep speedReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("results %+v", rep.Results)
	}
	x := rep.Results[0]
	if x.Name != "segment:step=500" || !strings.HasPrefix(x.Scheme, "segment:store=pg://") || x.Batch == nil || x.Serial.NsPerID <= 0 {
		t.Errorf("row %+v", x)
	}
	// The private cluster has no standby: class single, with the server's epoch.
	if len(x.Durability) != 1 || x.Durability[0].Class != "single" || x.Durability[0].Epoch == "" ||
		!strings.HasPrefix(x.Durability[0].Store, "store 1 ") || x.Durability[0].Failovers != 0 {
		t.Errorf("durability %+v", x.Durability)
	}
}

// TestSpeedDurabilityTable: the table names each store's durability class below the legend,
// for rows that rest on a store, and says nothing of it for the others.
func TestSpeedDurabilityTable(t *testing.T) {
	rep := &speedReport{Go: "go1", GOOS: "linux", GOARCH: "amd64", GOMAXPROCS: 2, Benchtime: "1x", Count: 1, Results: []speedResult{
		{Name: "ulid", Kind: "scheme"},
		{Name: "segment:step=500", Kind: "scheme", Durability: []durabilityResult{{Store: "store 1 pg://h/db", Class: "sync",
			Text: "store 1 pg://h/db: sync: synchronous_standby_names = 's1'; epoch 7/2"}}},
	}}
	var b strings.Builder
	if err := rep.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	want := "DURABILITY: each store's class, decided on connect and read again with its last take:\n" +
		"  segment:step=500: store 1 pg://h/db: sync: synchronous_standby_names = 's1'; epoch 7/2\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("table:\n%s\nwant it to end with\n%s", b.String(), want)
	}
	rep.Results = rep.Results[:1]
	b.Reset()
	if err := rep.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "DURABILITY") {
		t.Errorf("a table without stores mentions durability:\n%s", b.String())
	}
}

// skipSQLiteUnderRace skips a test that loads SQLite when the race detector is on (see
// raceEnabled); `make test` runs it again without the detector.
func skipSQLiteUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("loads SQLite, which the race detector slows tenfold: make test runs it without -race (go test -run SQLite ./cmd/idbench/)")
	}
}
