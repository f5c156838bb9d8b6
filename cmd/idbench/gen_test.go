package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/idkit/idkit"
)

func TestGen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		spec    string // to parse the output with
		n       int
		format  idkit.Format
		ordered bool // strictly increasing in output order
	}{
		{"default", nil, "snowflake", 10, idkit.FormatDecimal, true},
		{"snowflake batches", []string{"-n", "10000"}, "snowflake", 10000, idkit.FormatDecimal, true},
		{"discord", []string{"--scheme", "snowflake:layout=discord,worker=3,process=1", "-n", "5"}, "snowflake:layout=discord", 5, idkit.FormatDecimal, true},
		{"wide sequence", []string{"--scheme=snowflake:time_bits=41,node_bits=0,seq_bits=22", "-n=5000"}, "snowflake:time_bits=41,node_bits=0,seq_bits=22", 5000, idkit.FormatDecimal, true},
		{"sonyflake", []string{"--scheme", "sonyflake:machine=7", "-n", "300"}, "sonyflake", 300, idkit.FormatDecimal, true},
		{"ulid", []string{"--scheme", "ulid", "-n", "1000"}, "ulid", 1000, idkit.FormatULID, true},
		{"uuidv7", []string{"-n", "1000", "--scheme", "uuidv7"}, "uuidv7", 1000, idkit.FormatUUID, true},
		{"uuidv4", []string{"--scheme", "uuidv4", "-n", "1000"}, "uuidv4", 1000, idkit.FormatUUID, false},
		{"zero", []string{"-n", "0"}, "snowflake", 0, idkit.FormatDecimal, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := idbench(t, "", append([]string{"gen"}, tt.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q", r.stderr)
			}
			s, err := idkit.New(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(r.stdout, "\n")
			if last := lines[len(lines)-1]; last != "" {
				t.Fatalf("output does not end in a newline: %q", last)
			}
			lines = lines[:len(lines)-1]
			if len(lines) != tt.n {
				t.Fatalf("%d lines, want %d", len(lines), tt.n)
			}
			seen := make(map[idkit.ID]bool, tt.n)
			var prev idkit.ID
			for i, l := range lines {
				text := strings.TrimSuffix(l, "\n")
				id, err := s.Parse(text)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if id.Format() != tt.format || id.String() != text {
					t.Fatalf("line %d: %q is not canonical %v text", i+1, text, tt.format)
				}
				if seen[id] {
					t.Fatalf("line %d: %s repeats", i+1, text)
				}
				seen[id] = true
				if tt.ordered && i > 0 && idkit.Compare(prev, id) >= 0 {
					t.Fatalf("line %d: %s does not follow %s", i+1, id, prev)
				}
				prev = id
			}
		})
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestGenWriteError(t *testing.T) {
	t.Parallel()
	err := runWithStdin(context.Background(), nil, &failWriter{n: 100}, io.Discard, []string{"gen", "-n", "100000"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the write error", err)
	}
}

func TestGenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := idbenchCtx(ctx, t, "", "gen", "-n", "5")
	if !errors.Is(r.err, context.Canceled) || r.code != 1 {
		t.Fatalf("err = %v, code %d; want context.Canceled, 1", r.err, r.code)
	}
}

// TestGenStreams checks that gen writes while it generates rather than at the end.
func TestGenStreams(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runWithStdin(context.Background(), nil, pw, io.Discard, []string{"gen", "--scheme", "snowflake:time_bits=41,node_bits=0,seq_bits=22", "-n", "1000000000"})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for i := 0; i < 3; i++ {
		if !sc.Scan() {
			t.Fatalf("no line %d: %v", i+1, sc.Err())
		}
		if _, err := strconv.ParseUint(sc.Text(), 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	pr.CloseWithError(errors.New("reader gone"))
	if err := <-done; err == nil || !strings.Contains(err.Error(), "reader gone") {
		t.Fatalf("err = %v, want the pipe's error", err)
	}
}
