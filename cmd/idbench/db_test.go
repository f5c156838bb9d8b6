package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDBHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"db", "--help"}, {"db", "-h"}, {"help", "db"}} {
		r := idbench(t, "", args...)
		if r.err != nil || r.code != 0 || r.stderr != "" {
			t.Fatalf("%v: err %v, code %d, stderr %q", args, r.err, r.code, r.stderr)
		}
		golden(t, "help_db.golden", r.stdout)
	}
}

func TestDBUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"db", "--mode", "bulk"}, `--mode "bulk"`},
		{[]string{"db", "--workload", "shop"}, `--workload "shop"`},
		{[]string{"db", "--workload", "app", "--mode", "batch"}, `--mode "batch": the app workload takes tx or copy`},
		{[]string{"db", "--workload", "app", "--created-at-index", "some"}, `--created-at-index "some"`},
		{[]string{"db", "--workload", "app", "--children", "-1"}, `--children -1`},
		{[]string{"db", "--workload", "app", "--children", "0"}, `--children 0: want 1 to 1000`},
		{[]string{"db", "--workload", "app", "--window", "0s"}, `--window 0s`},
		{[]string{"db", "--workload", "app", "--db", "all-local"}, `not on --db all-local`},
		{[]string{"db", "--keep"}, `--keep: for --workload app`},
		{[]string{"db", "--client-batch", "10"}, `--client-batch: for --workload app`},
		{[]string{"db", "--ids-per-client"}, `--ids-per-client: for --workload app`},
		{[]string{"db", "--workload", "app", "--client-batch", "1001"}, `client batch must be between 1 and 1000 operations, got 1001`},
		{[]string{"db", "--workload", "app", "--client-block", "-3"}, `client block must be between 1 and 100000 operations, got -3`},
		{[]string{"db", "--workload", "app", "--mode", "copy", "--client-block", "50"}, `client-block is for the app workload in mode tx`},
		{[]string{"db", "--workload", "app", "--ids-in-tx", "--client-batch", "5"}, `client-batch makes them for several operations, so they exclude each other`},
		{[]string{"db", "--workload", "app", "--client-block", "5", "--ids-per-client"}, `client-block and ids-per-client exclude each other`},
		{[]string{"db", "--mode", "tx"}, `--mode "tx"`},
		{[]string{"db", "--profile", "x"}, `--profile "x"`},
		{[]string{"db", "--rows", "0"}, "--rows 0"},
		{[]string{"db", "--repeat", "0"}, "--repeat 0"},
		{[]string{"db", "--clients", "0"}, `--clients "0"`},
		{[]string{"db", "--clients", "1,4,x"}, `"x" is not a whole number from 1 to 256`},
		{[]string{"db", "--clients", "1,4", "--db", "all-local"}, "a sweep runs on one engine at a time"},
		{[]string{"db", "--warmup", "-5"}, "--warmup -5"},
		{[]string{"db", "--pg-setting", "shared_buffers"}, "NAME=VALUE"},
		{[]string{"db", "--json", "--benchstat"}, "exclude each other"},
		{[]string{"db", "--render", "docs/report", "--rows", "5"}, "--render takes no other flag (got --rows)"},
		{[]string{"db", "extra"}, `unexpected argument "extra"`},
		{[]string{"db", "--nope"}, "nope"},
	}
	for _, tt := range tests {
		r := idbench(t, "", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: code %d, stderr %q; want code 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func TestDBErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"db", "--db", "postgres://a b:x/y"}, "bad PostgreSQL connection string"},
		{[]string{"db", "--db", "host=127.0.0.1 port=1 connect_timeout=5"}, "connect to PostgreSQL"},
		{[]string{"db", "--db", "sqlite", "--schemes", "nope"}, `scheme "nope"`},
		{[]string{"db", "--render", "no/such/dir"}, "no/such/dir/report.json: no such file"},
	}
	for _, tt := range tests {
		r := idbench(t, "", tt.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: code %d, stderr %q; want code 1 and %q", tt.args, r.code, r.stderr, tt.want)
		}
		// One line of error, no stack trace.
		if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); lines > 0 {
			t.Errorf("%v: %d lines on stderr: %q", tt.args, lines+1, r.stderr)
		}
	}
}

func TestDBSQLite(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r := idbench(t, "", "db", "--db", "sqlite", "--rows", "2000", "--repeat", "1", "--warmup", "-1", "--lookups", "10",
		"--schemes", "snowflake:layout=discord,node=3;uuidv4,ulid-text", "--json", "--out", out)
	if r.err != nil {
		t.Fatalf("err %v, stderr %q", r.err, r.stderr)
	}
	var doc struct {
		Settings struct {
			Engine  string `json:"engine"`
			Command string `json:"command"`
			Rows    int    `json:"rows"`
		} `json:"settings"`
		Results []struct {
			Scheme string `json:"scheme"`
			Rows   int64  `json:"rows"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if doc.Settings.Engine != "sqlite" || doc.Settings.Rows != 2000 || len(doc.Results) != 3 {
		t.Fatalf("unexpected report: %+v", doc)
	}
	if doc.Results[0].Scheme != "snowflake:layout=discord,node=3" || doc.Results[0].Rows != 2000 {
		t.Errorf("first row %+v", doc.Results[0])
	}
	if !strings.HasPrefix(doc.Settings.Command, "idbench db --db sqlite --rows 2000") ||
		!strings.Contains(doc.Settings.Command, "'snowflake:layout=discord,node=3;uuidv4,ulid-text'") {
		t.Errorf("command recorded as %q", doc.Settings.Command)
	}
	if !strings.Contains(r.stderr, "engine sqlite") {
		t.Errorf("stderr does not say which engine runs: %q", r.stderr)
	}
	for _, f := range []string{"report.md", "report.json", "benchstat.txt", "throughput.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestDBCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := idbenchCtx(ctx, t, "", "db", "--db", "sqlite", "--rows", "1000")
	if r.code != 1 {
		t.Errorf("cancelled db: code %d, stderr %q; want 1", r.code, r.stderr)
	}
}

// TestDBRender: idbench db --render DIR writes a committed report's report.md, benchstat.txt
// and charts again from its report.json, byte for byte, and leaves report.json as it was.
func TestDBRender(t *testing.T) {
	t.Parallel()
	src := "../../docs/report"
	dir := t.TempDir()
	js, err := os.ReadFile(filepath.Join(src, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	r := idbench(t, "", "db", "--render", dir)
	if r.code != 0 || !strings.Contains(r.stderr, "rendered again in "+dir) {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
	for _, f := range []string{"report.md", "benchstat.txt", "throughput.svg", "report.json"} {
		want, _ := os.ReadFile(filepath.Join(src, f))
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: rendered file differs from the committed one (err %v)", f, err)
		}
	}
}

func TestParseClients(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"1", []int{1}, ""},
		{"1,4,16,64", []int{1, 4, 16, 64}, ""},
		{" 16 , 4", []int{16, 4}, ""},
		{"", nil, "empty item"},
		{"1,,4", nil, "empty item"},
		{"1,x", nil, `"x" is not a whole number from 1 to 256`},
		{"0", nil, `"0" is not a whole number`},
		{"257", nil, `"257" is not a whole number`},
		{"-4", nil, `"-4"`},
		{"4,4", nil, "4 given twice"},
	} {
		got, err := parseClients(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--clients") {
				t.Errorf("parseClients(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseClients(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseClients: parseClients never panics; what it accepts is a list of distinct counts
// from 1 to 256, and an error names --clients.
func FuzzParseClients(f *testing.F) {
	for _, s := range []string{"1", "1,4,16,64", "", "1,,4", "4,4", "0", "257", " 8 ", "1,x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseClients(s)
		if err != nil {
			if !strings.Contains(err.Error(), "--clients") {
				t.Fatalf("error %q does not name --clients", err)
			}
			return
		}
		if len(got) == 0 {
			t.Fatal("accepted an empty list")
		}
		seen := map[int]bool{}
		for _, n := range got {
			if n < 1 || n > maxClients || seen[n] {
				t.Fatalf("parseClients(%q) = %v", s, got)
			}
			seen[n] = true
		}
	})
}

// TestDBSweep: --clients with a list runs once per count into one sweep (SQLite, a few
// hundred operations), prints every run's table, and --render writes the same sweep.md again
// from sweep.json.
func TestDBSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := idbench(t, "", "db", "--db", "sqlite", "--workload", "app", "--rows", "100", "--repeat", "1", "--warmup", "-1", "--baseline=false",
		"--lookups", "5", "--clients", "1,2", "--schemes", "snowflake", "--out", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "1 client(s):") || !strings.Contains(r.stdout, "2 client(s):") {
		t.Errorf("stdout lacks a run:\n%s", r.stdout)
	}
	md, err := os.ReadFile(filepath.Join(dir, "sweep.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| scheme | 1 | 2 |", "late %", "clients-bytes.svg", "machine load"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("sweep.md lacks %q", want)
		}
	}
	if err := os.Remove(filepath.Join(dir, "sweep.md")); err != nil {
		t.Fatal(err)
	}
	if r := idbench(t, "", "db", "--render", dir); r.code != 0 {
		t.Fatalf("--render: exit %d: %s", r.code, r.stderr)
	}
	again, err := os.ReadFile(filepath.Join(dir, "sweep.md"))
	if err != nil || string(again) != string(md) {
		t.Errorf("--render wrote a different sweep.md (%v)", err)
	}
}
