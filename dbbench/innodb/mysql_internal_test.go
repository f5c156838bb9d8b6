package innodb

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/google/uuid"
)

// TestKeyText checks the text LOAD DATA reads for each column kind.
func TestKeyText(t *testing.T) {
	u := uuid.MustParse("0190a6c5-2f3b-7c1d-8e2f-0123456789ab")
	v := &engine.Value{I64: -5, U64: 1<<63 + 1, B16: u, Str: "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
	tests := []struct {
		col      engine.Column
		unsigned bool
		want     string
	}{
		{engine.ColBigint, false, "-5"},
		{engine.ColBigint, true, "9223372036854775809"},
		{engine.ColUUID, false, "0190a6c52f3b7c1d8e2f0123456789ab"},
		{engine.ColUUIDNative, false, u.String()},
		{engine.ColText, false, v.Str},
		{engine.ColTextDefault, false, v.Str},
	}
	for _, tt := range tests {
		if got := string(appendKeyText(nil, tt.col, tt.unsigned, v)); got != tt.want {
			t.Errorf("appendKeyText(%v, unsigned=%v) = %q, want %q", tt.col, tt.unsigned, got, tt.want)
		}
	}
	if got := mysqlKey(engine.ColBigint, true, v); got != uint64(1<<63+1) {
		t.Errorf("mysqlKey of an unsigned key = %#v, want the uint64", got)
	}
}

// TestLineReader reads lines made on demand through small and large
// buffers and gets every line once, in order.
func TestLineReader(t *testing.T) {
	for _, n := range []int{0, 1, 10, 20000} {
		for _, bufSize := range []int{1, 7, 1 << 20} {
			i := 0
			r := &lineReader{next: func(dst []byte) ([]byte, bool, error) {
				if i == n {
					return dst, false, nil
				}
				i++
				dst = strconv.AppendInt(dst, int64(i), 10)
				return append(dst, '\n'), true, nil
			}}
			var b strings.Builder
			if _, err := io.CopyBuffer(&b, struct{ io.Reader }{r}, make([]byte, bufSize)); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if n == 0 {
				if b.Len() != 0 {
					t.Errorf("n=0: read %q", b.String())
				}
				continue
			}
			if len(lines) != n || lines[0] != "1" || lines[n-1] != strconv.Itoa(n) {
				t.Errorf("n=%d buf=%d: %d lines, first %q, last %q", n, bufSize, len(lines), lines[0], lines[len(lines)-1])
			}
		}
	}
}

func TestMySQLInsertSQL(t *testing.T) {
	if got, want := mysqlInsertSQL("d.t", 2, 3), "INSERT INTO d.t (id, payload) VALUES (?,?),(?,?),(?,?)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := mysqlInsertSQL("d.t", 1, 2), "INSERT INTO d.t (payload) VALUES (?),(?)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
