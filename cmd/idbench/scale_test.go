package main

import (
	"strings"
	"testing"
)

func TestScaleUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"scale", "--out", "x"}, "give --nodes, --sizes or both"},
		{[]string{"scale", "--nodes", "1,16"}, "--out DIR is required"},
		{[]string{"scale", "--nodes", "1,2048", "--out", "x"}, `--nodes: "2048": want whole numbers from 1 to 1024`},
		{[]string{"scale", "--nodes", "1,,2", "--out", "x"}, `--nodes: "": want whole numbers`},
		{[]string{"scale", "--sizes", "0", "--out", "x"}, `--sizes: "0"`},
		{[]string{"scale", "--nodes", "4", "--fleet-rate", "0", "--out", "x"}, "--fleet-rate 0"},
		{[]string{"scale", "--nodes", "4", "--fleet-rate", "NaN", "--out", "x"}, "--fleet-rate NaN"},
		{[]string{"scale", "--nodes", "4", "--clock-skew", "-1ms", "--out", "x"}, "--clock-skew -1ms"},
		{[]string{"scale", "--nodes", "4", "--out", "x", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		r := idbench(t, "", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func TestParseCounts(t *testing.T) {
	t.Parallel()
	got, err := parseCounts("--sizes", "1_000_000, 10000000,50_000_000", 1<<40)
	if err != nil || len(got) != 3 || got[0] != 1000000 || got[2] != 50000000 {
		t.Errorf("got %v, %v", got, err)
	}
	if got, err := parseCounts("--nodes", " ", 1024); got != nil || err != nil {
		t.Errorf("blank: %v, %v", got, err)
	}
}

// TestCommandLineRedacts keeps passwords in --db connection strings out of the command a
// report records (before the fix, report.md and report.json quoted them verbatim).
func TestCommandLineRedacts(t *testing.T) {
	t.Parallel()
	got := commandLine("idbench db", []string{"--db", "postgres://bench:s3cret@db.internal/bench", "--db=host=h password=hunter2 dbname=x"})
	for _, secret := range []string{"s3cret", "hunter2"} {
		if strings.Contains(got, secret) {
			t.Errorf("command line %q shows the password %q", got, secret)
		}
	}
	if !strings.Contains(got, "postgres://bench:xxxxx@db.internal/bench") {
		t.Errorf("command line %q lost the rest of the URL", got)
	}
}
