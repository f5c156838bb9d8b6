package idkit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// benchFigure says why a number in a section of the docs that quotes a docs/bench file is
// not simply one of that file's numbers: HeldBy names the test that computes it from the
// file and compares it with the doc (a median, a range, a difference), or Other says what
// else it is (a port, a setting, a size the section explains).
type benchFigure struct {
	HeldBy, Other string
	// Unheld says where a figure derived from the file comes from when no test reads it yet:
	// the list of them can only shrink, since a figure added to the docs is not in it.
	Unheld string
}

// benchFigures lists, per doc and number as the doc writes it, the numbers of sections that
// quote a docs/bench file which are not numbers of the files the section names. An entry no
// longer in its doc fails the test, so the list stays exact.
var benchFigures = map[string]map[string]benchFigure{
	"docs/segment.md": {
		"1,350":  {HeldBy: "TestFailoverLossMatchesRun"},
		"2,550":  {HeldBy: "TestFailoverLossMatchesRun"},
		"50,000": {Other: "the failover gap, a setting of the test"},
		"1,000":  {Other: "the gap in blocks, a setting of the test"},
		"300":    {Other: "rpl_semi_sync_master_timeout, a setting of the test"},
		"5,000":  {Other: "the failover gap of the Redis and the asynchronous PostgreSQL partition rows (100 blocks of 50), a setting of the tests"},
		// The partition tables' unavailability column, from the checker reports (.edn) beside
		// the runs.
		"10.1": {HeldBy: "TestPartitionTableMatchesRun"},
		"11.3": {HeldBy: "TestPartitionTableMatchesRun"},
		"5.0":  {HeldBy: "TestPartitionTableMatchesRun"},
		"1.0":  {HeldBy: "TestPartitionTableMatchesRun"},
		"4.8":  {HeldBy: "TestPartitionTableMatchesRun"},
		"3.2":  {HeldBy: "TestPartitionTableMatchesRun"},
		"8.0":  {HeldBy: "TestPartitionTableMatchesRun"},
		"1.1":  {HeldBy: "TestPartitionTableMatchesRun"},
		"2.1":  {HeldBy: "TestPartitionTableMatchesRun"},
		"4.7":  {HeldBy: "TestPartitionTableMatchesRun"},
		"28.3": {HeldBy: "TestPartitionTableMatchesRun"},
		"18.5": {HeldBy: "TestPartitionTableMatchesRun"},
		"8.7":  {HeldBy: "TestPartitionTableMatchesRun"},
		"4.1":  {HeldBy: "TestPartitionTableMatchesRun"},
		"12.1": {Other: "the version of MariaDB Galera Cluster Jepsen tested (12.1.2)"},
	},
	"docs/service.md": {
		"1.08": {HeldBy: "TestServiceDocPacedTail"},
		"3.3":  {HeldBy: "TestServiceDocPacedTail"},
		"86":   {HeldBy: "TestServiceDocPacedTail"},
		"126":  {HeldBy: "TestServiceDocPacedTail"},
		"4317": {Other: "a port"}, "4318": {Other: "a port"}, "8500": {Other: "a port"}, "8502": {Other: "a port"},
		"7070": {Other: "a port"}, "7071": {Other: "a port"},
		"401": {Other: "an HTTP status"}, "404": {Other: "an HTTP status"}, "413": {Other: "an HTTP status"},
		"429": {Other: "an HTTP status"}, "503": {Other: "an HTTP status"},
		"128":    {Other: "128-bit IDs, and a default of --max-open-watches"},
		"10,000": {Other: "IDs per request in the floods, a setting of the tests"},
		"1024":   {Other: "the --max-conns cap, a setting"},
		"16":     {Other: "MiB of --max-conn-bytes, a setting"},
		"2,000":  {Other: "streams of the one-connection flood, a setting of the test"},
		"20,000": {Other: "handlers of the open flood (200 × 100), its settings"},
		"4096":   {Other: "the --max-total-streams default"},
		"470":    {Other: "an estimate from the defaults and the handler size the sentence gives"},
		"500":    {Other: "streams of the one-connection control, a setting of the test"},
		"512":    {Other: "the --max-open-streams default"},
		"2.2":    {Unheld: "grpc-port.txt: the range of requests/s ratios in the port table"},
		"3.4":    {Unheld: "grpc-port.txt's header: the load average before (3.40)"},
		"2.0":    {Unheld: "grpc-port.txt: load average after, and the paced p99 median"},
		"2.18":   {HeldBy: "TestServiceDocGRPCPort"},
		"2.07":   {HeldBy: "TestServiceDocGRPCPort"},
		"2.39":   {HeldBy: "TestServiceDocGRPCPort"},
		"2.40":   {HeldBy: "TestServiceDocGRPCPort"},
		"3.00":   {HeldBy: "TestServiceDocGRPCPort"},
		"0.647":  {Unheld: "grpc-port.txt as committed in b9305b6"},
		"2.20":   {Unheld: "grpc-port.txt as committed in b9305b6"},
		"0.414":  {Unheld: "grpc-port.txt as committed in b9305b6"},
		"0.227":  {Unheld: "grpc-port.txt as committed in b9305b6"},
		"3.61":   {Unheld: "grpc-port.txt as committed in b9305b6"},
		"6.1":    {HeldBy: "TestServiceDocGRPCPort"},
		"2.3":    {HeldBy: "TestServiceDocGRPCPort"},
		"5.4":    {HeldBy: "TestServiceDocGRPCPort"},
		"0.4":    {Unheld: "grpc-port-paced.txt: the lowest load average of its rounds"},
		"1.3":    {Unheld: "grpc-port-paced.txt: the highest load average of its rounds"},
		"1.7":    {Unheld: "grpc-port-paced-nice.txt: the range of p99"},
		"3.7":    {Unheld: "grpc-port-paced-nice.txt: the range of p99"},
		"44":     {Unheld: "grpc-port-paced-nice.txt: the range of p50"},
		"140":    {Unheld: "grpc-port-paced-nice.txt: the range of p50"},
	},
	"docs/nodes.md": {
		"1.2":  {Other: "the partition test's short cuts (s), a setting of TestFaultPartition"},
		"0.5":  {Other: "the partition test's heal between cuts (s), a setting of TestFaultPartition"},
		"5":    {Other: "counts and times the test sets (5 s frozen, 5 failovers; the partition writers' 5 IDs/ms)"},
		"20":   {Other: "the writers' rate, a setting of the test"},
		"10":   {Other: "lease_ttl's default and -count 10"},
		"50":   {Other: "the marks' window, a setting"},
		"21":   {Other: "the layout's sequence bits"},
		"1.5":  {HeldBy: "TestClusterDocMatchesRun", Other: "also a setting (TTL + 1.5 s)"},
		"6.19": {HeldBy: "TestFailoverDocMatchesRun"},
		"6.54": {HeldBy: "TestFailoverDocMatchesRun"},
		"0.99": {HeldBy: "TestFailoverDocMatchesRun"},
		"1.10": {HeldBy: "TestFailoverDocMatchesRun"},
		"0.13": {HeldBy: "TestFailoverDocMatchesRun"},
		"0.43": {HeldBy: "TestFailoverDocMatchesRun"},
		"1.7":  {HeldBy: "TestClusterDocMatchesRun"},
		"3.7":  {HeldBy: "TestClusterDocMatchesRun"},
		"4.3":  {HeldBy: "TestClusterDocMatchesRun"},
		"3.0":  {HeldBy: "TestClusterDocMatchesRun"},
		"3.1":  {HeldBy: "TestClusterDocMatchesRun"},
		"5.8":  {HeldBy: "TestClusterDocMatchesRun"},
		"5.9":  {HeldBy: "TestClusterDocMatchesRun"},
		"2.7":  {HeldBy: "TestClusterDocMatchesRun"},
		"3.3":  {HeldBy: "TestClusterDocMatchesRun"},
		"4.1":  {HeldBy: "TestClusterDocMatchesRun"},
		"7.4":  {HeldBy: "TestClusterDocMatchesRun"},
	},
	"docs/choosing-an-id.md": {
		"8": {Other: "bits, bytes or characters of a format"}, "16": {Other: "bits, bytes or characters of a format"},
		"128": {Other: "bits of a format"}, "26": {Other: "characters of a format"}, "13": {Other: "bits of a layout"},
		"63": {Other: "bits of a layout"}, "48": {Other: "bits of a layout"}, "74": {Other: "bits of a format"},
		"62": {Other: "random bits of UUIDv7"}, "12": {Other: "bits of rand_a"}, "80": {Other: "bits of a format"},
		"20": {Other: "bits of a layout"}, "256": {Other: "ns, a timestamp resolution"}, "4,096": {Other: "IDs per millisecond of a 12-bit sequence"},
		"10": {Other: "Feistel rounds"}, "0.3": {Other: "TypeID's specification version"},
		"1.23":  {HeldBy: "TestMaskCostDocMatchesRun"},
		"1.36":  {HeldBy: "TestMaskCostDocMatchesRun"},
		"72.7":  {HeldBy: "TestMaskCostDocMatchesRun"},
		"3.17":  {HeldBy: "TestMaskCostDocMatchesRun"},
		"71.7":  {HeldBy: "TestMaskCostDocMatchesRun"},
		"3.25":  {HeldBy: "TestMaskCostDocMatchesRun"},
		"0.723": {HeldBy: "TestMaskCostDocMatchesRun"},
	},
}

// benchRef is a docs/bench file named in the docs, as a link or a path.
var benchRef = regexp.MustCompile(`(?:docs/)?bench/[\w./-]+\.(?:txt|jsonl)`)

// docNumber is a number in prose: digits with thousands commas and a decimal part, not part
// of a word, a version, a path or an anchor.
var docNumber = regexp.MustCompile(`(?:^|[^\w.#/-])(\d[\d,]*(?:\.\d+)?)`)

// fileNumber is a number anywhere in a bench file.
var fileNumber = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// TestBenchFiguresHeld: every number in a section of README.md or docs/ that names a
// docs/bench file is a number of one of the files the section names, or is listed in
// benchFigures with the test that reads it from the file (TestFailoverLossMatchesRun,
// TestServiceDocPacedTail, …) or with what else it is. Generated blocks, code spans and
// code blocks, links, paths and commit names are left out: the tests of their generators
// hold the first, and the rest are not figures.
func TestBenchFiguresHeld(t *testing.T) {
	docs := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := testSources(t)
	used := map[string]map[string]bool{}
	sections := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		used[doc] = map[string]bool{}
		for _, sec := range heading.Split(string(b), -1) {
			refs := benchRef.FindAllString(sec, -1)
			if len(refs) == 0 {
				continue
			}
			sections++
			have := map[string]bool{}
			for _, ref := range refs {
				path := ref
				if !strings.HasPrefix(path, "docs/") {
					path = filepath.Join(filepath.Dir(doc), ref)
				}
				run, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s names %s, which cannot be read: %v", doc, ref, err)
					continue
				}
				for _, n := range fileNumber.FindAllString(string(run), -1) {
					have[strings.ReplaceAll(n, ",", "")] = true
				}
			}
			for _, n := range proseNumbers(sec) {
				f, ok := benchFigures[doc][n]
				if ok {
					// Still in its doc: a listed figure stays listed when a file the section
					// names happens to hold the same number (segment-pg.txt's max_id 2550 and
					// the failover loss of 2,550).
					used[doc][n] = true
				}
				switch {
				case ok && f.HeldBy != "" && !tests[f.HeldBy]:
					t.Errorf("%s: %s is listed as held by %s, which is not a test that reads a docs/bench file", doc, n, f.HeldBy)
				case !ok && !have[strings.ReplaceAll(n, ",", "")]:
					t.Errorf("%s: %s is in a section that quotes %s but in none of those files; compute it from the file in a test and list it in benchFigures with that test, or list what else it is", doc, n, strings.Join(slices.Compact(slices.Sorted(slices.Values(refs))), ", "))
				}
			}
		}
	}
	if sections == 0 {
		t.Fatal("no section of the docs names a docs/bench file")
	}
	for doc, figs := range benchFigures {
		for n := range figs {
			if !used[doc][n] {
				t.Errorf("benchFigures lists %s in %s, which no section quoting a docs/bench file has any more", n, doc)
			}
		}
	}
}

// The parts of a Markdown section proseNumbers leaves out, and the headings that end one.
var (
	generatedBlock = regexp.MustCompile(`(?s)<!-- BEGIN .*?<!-- END[^>]*-->`)
	fencedCode     = regexp.MustCompile("(?s)```.*?```")
	codeSpan       = regexp.MustCompile("`[^`]*`")
	linkTarget     = regexp.MustCompile(`\]\([^)]*\)`)
	heading        = regexp.MustCompile(`(?m)^#{1,6} `)
	// hexWord is a word of hex digits with a letter and a digit: a commit name when 7 or longer.
	hexWord = regexp.MustCompile(`\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b|\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b`)
	// testFunc is the start of a test function, after "func ".
	testFunc = regexp.MustCompile(`^(Test\w+)\(t \*testing\.T\) \{`)
)

// proseNumbers returns the numbers of a Markdown section's prose, as written, leaving out
// generated blocks, code blocks, code spans, link targets, paths and commit names.
func proseNumbers(sec string) []string {
	sec = generatedBlock.ReplaceAllString(sec, "")
	sec = fencedCode.ReplaceAllString(sec, "")
	var lines []string
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "    ") { // an indented code block: a file's lines quoted whole
			lines = append(lines, line)
		}
	}
	sec = strings.Join(lines, "\n")
	sec = codeSpan.ReplaceAllString(sec, "")
	sec = linkTarget.ReplaceAllString(sec, "]")
	sec = benchRef.ReplaceAllString(sec, "")
	sec = hexWord.ReplaceAllStringFunc(sec, func(w string) string {
		if len(w) >= 7 {
			return "" // a commit
		}
		return w
	})
	var out []string
	for _, m := range docNumber.FindAllStringSubmatch(sec, -1) {
		out = append(out, strings.TrimRight(m[1], ","))
	}
	return out
}

// testSources returns the names of the tests in the repository's _test.go files that read a
// docs/bench file.
func testSources(t *testing.T) map[string]bool {
	names := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		for _, fn := range strings.Split(src, "\nfunc ")[1:] { // each top-level function to the next
			if m := testFunc.FindStringSubmatch(fn); m != nil && strings.Contains(fn, "docs/bench/") {
				names[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
