package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (and docs/layouts.md)")

// result is what one idbench invocation produced.
type result struct {
	stdout, stderr string
	err            error
	code           int // the exit status main would use
}

// idbench runs the command line args with stdin as standard input.
func idbench(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	return idbenchCtx(context.Background(), t, stdin, args...)
}

func idbenchCtx(ctx context.Context, t testing.TB, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runWithStdin(ctx, strings.NewReader(stdin), &out, &errOut, args)
	r := result{stdout: out.String(), stderr: errOut.String(), err: err}
	var rep bytes.Buffer
	r.code = report(&rep, err)
	if err != nil {
		r.stderr += rep.String()
	}
	return r
}

// golden compares got with testdata/name, or rewrites the file under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		golden string
	}{
		{[]string{"--help"}, "help.golden"},
		{[]string{"-h"}, "help.golden"},
		{[]string{"help"}, "help.golden"},
		{[]string{"help", "--help"}, "help_help.golden"},
		{[]string{"help", "help"}, "help_help.golden"},
		{[]string{"--out", "x", "--help"}, "help_all.golden"},
		{[]string{"gen", "--help"}, "help_gen.golden"},
		{[]string{"gen", "-h"}, "help_gen.golden"},
		{[]string{"help", "gen"}, "help_gen.golden"},
		{[]string{"inspect", "--help"}, "help_inspect.golden"},
		{[]string{"inspect", "123", "--help"}, "help_inspect.golden"},
		{[]string{"layouts", "--help"}, "help_layouts.golden"},
		{[]string{"speed", "--help"}, "help_speed.golden"},
		{[]string{"scale", "--help"}, "help_scale.golden"},
		{[]string{"help", "speed"}, "help_speed.golden"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", tt.args...)
			if r.err != nil || r.code != 0 {
				t.Fatalf("err = %v, code %d; want success", r.err, r.code)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			golden(t, tt.golden, r.stdout)
		})
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	r := idbench(t, "", "--help")
	for _, c := range commands() {
		if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
			t.Errorf("--help does not list %q", c.name)
		}
	}
}

// TestUsageErrors checks that a bad command line fails with status 2, says what is wrong on
// stderr and points at --help, and writes nothing to stdout.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // in the error
		hint string // in the --help hint
	}{
		{[]string{"bogus"}, `unknown subcommand "bogus"`, "idbench --help"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus", "idbench --help"},
		{[]string{"--rows", "-3"}, "--rows -3", "idbench --help"},
		{[]string{"--out", "x", "extra"}, `unexpected argument "extra"`, "idbench --help"},
		{[]string{"help", "a", "b"}, "at most one command", "idbench help --help"},
		{[]string{"help", "bogus"}, `unknown command "bogus"`, "idbench help --help"},
		{[]string{"gen", "--nope"}, "gen: flag provided but not defined: -nope", "idbench gen --help"},
		{[]string{"gen", "-n", "-1"}, "-n -1", "idbench gen --help"},
		{[]string{"gen", "-n", "ten"}, `invalid value "ten" for flag -n`, "idbench gen --help"},
		{[]string{"gen", "-n"}, "flag needs an argument: -n", "idbench gen --help"},
		{[]string{"gen", "extra"}, `unexpected argument "extra"`, "idbench gen --help"},
		{[]string{"gen", "--scheme", "nope"}, `unknown scheme "nope"`, "idbench gen --help"},
		{[]string{"gen", "--scheme", "snowflake:layout=nope"}, "layout=nope", "idbench gen --help"},
		{[]string{"gen", "--scheme", "snowflake:worker=99"}, "worker", "idbench gen --help"},
		{[]string{"gen", "--scheme", "snowflake:time_bits=50"}, "idkit: bad spec", "idbench gen --help"},
		{[]string{"inspect", "--scheme", "ulid:monotonic=maybe"}, "monotonic", "idbench inspect --help"},
		{[]string{"inspect", "--json=maybe"}, "invalid boolean value", "idbench inspect --help"},
		{[]string{"layouts", "--json", "--markdown"}, "pick one", "idbench layouts --help"},
		{[]string{"layouts", "x"}, `unexpected argument "x"`, "idbench layouts --help"},
		{[]string{"speed", "--benchtime", "0s"}, "--benchtime", "idbench speed --help"},
		{[]string{"speed", "--benchtime", "abc"}, "--benchtime", "idbench speed --help"},
		{[]string{"speed", "--benchtime", "0x"}, "--benchtime", "idbench speed --help"},
		{[]string{"speed", "--json", "--benchstat"}, "pick one", "idbench speed --help"},
		{[]string{"speed", "--schemes", "lib:nope"}, `unknown library row "lib:nope"`, "idbench speed --help"},
		{[]string{"speed", "--schemes", "ulid,,uuidv4"}, "empty item", "idbench speed --help"},
		{[]string{"speed", "--schemes", "uuidv9"}, `unknown scheme "uuidv9"`, "idbench speed --help"},
		{[]string{"speed", "ulid"}, `unexpected argument "ulid"`, "idbench speed --help"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", tt.args...)
			if r.code != 2 {
				t.Fatalf("exit status %d (err %v), want 2", r.code, r.err)
			}
			if !strings.Contains(r.err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", r.err, tt.want)
			}
			if !strings.Contains(r.stderr, "idbench: ") || !strings.Contains(r.stderr, "Run '"+tt.hint) {
				t.Errorf("stderr %q lacks the error or the hint %q", r.stderr, tt.hint)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"nil", nil, 0, ""},
		{"failure", errors.New("gen: boom"), 1, "idbench: gen: boom\n"},
		{"usage", usagef("gen", "gen: bad"), 2, "idbench: gen: bad\nRun 'idbench gen --help' for usage.\n"},
		{"wrapped usage", errors.Join(usagef("", "bad")), 2, "idbench: bad\nRun 'idbench --help' for usage.\n"},
		{"interrupted", context.Canceled, 1, "idbench: interrupted\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if got := report(&b, tt.err); got != tt.code {
				t.Errorf("report(%v) = %d, want %d", tt.err, got, tt.code)
			}
			if b.String() != tt.stderr {
				t.Errorf("stderr = %q, want %q", b.String(), tt.stderr)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		pos  []string
		json bool
	}{
		{nil, nil, false},
		{[]string{"a", "b"}, []string{"a", "b"}, false},
		{[]string{"--json", "a"}, []string{"a"}, true},
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "-", "--json"}, []string{"a", "-"}, true},
		{[]string{"a", "--", "--json"}, []string{"a", "--json"}, false},
		{[]string{"--", "-5"}, []string{"-5"}, false},
	}
	for _, tt := range tests {
		fs := newFlagSet("t")
		j := fs.Bool("json", false, "")
		pos, err := parseFlags(fs, "t", "help", &bytes.Buffer{}, tt.args)
		if err != nil {
			t.Errorf("parseFlags(%q): %v", tt.args, err)
			continue
		}
		if strings.Join(pos, "|") != strings.Join(tt.pos, "|") || *j != tt.json {
			t.Errorf("parseFlags(%q) = %q, json %v; want %q, json %v", tt.args, pos, *j, tt.pos, tt.json)
		}
	}
}

// FuzzParseFlags feeds arbitrary command lines to every subcommand's flag parsing path that
// does not start long work: nothing may panic, and a failure is an error.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"--json\x00123", "-n\x00-1", "--scheme\x00ulid\x00--\x00-", "-h", "--=x", "---x", "-json=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		fs := newFlagSet("fuzz")
		fs.Bool("json", false, "")
		fs.String("scheme", "snowflake", "")
		fs.Int64("n", 10, "")
		_, _ = parseFlags(fs, "fuzz", "help", &bytes.Buffer{}, args)
		_ = idbench(t, "", append([]string{"layouts"}, args...)...)
	})
}

// TestEveryCommandHelp checks that each subcommand, whoever wrote it, answers --help on stdout
// with success.
func TestEveryCommandHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		r := idbench(t, "", c.name, "--help")
		if r.err != nil && strings.Contains(r.err.Error(), "not available yet") {
			continue // a stub in pending.go
		}
		if r.err != nil || r.code != 0 || !strings.Contains(r.stdout, "Usage: idbench "+c.name) {
			t.Errorf("%s --help: err %v, code %d, stdout %q", c.name, r.err, r.code, r.stdout)
		}
	}
}
