package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit"
)

// tableBuffer is how many rows a table holds back to size its columns before it starts
// writing; later rows reuse those widths (a longer cell pushes its row's later cells right).
const tableBuffer = 1000

// table writes aligned text columns separated by two spaces, streaming once tableBuffer rows
// have been seen so that a long input does not have to fit in memory.
type table struct {
	w       io.Writer
	header  []string
	right   []bool // right-align the column (numbers)
	widths  []int
	pending [][]string
	started bool
}

// newTable returns a table writing to w. A header cell starting with '>' is right-aligned
// (the '>' is dropped).
func newTable(w io.Writer, header ...string) *table {
	t := &table{w: w}
	for _, h := range header {
		r := strings.HasPrefix(h, ">")
		t.header = append(t.header, strings.TrimPrefix(h, ">"))
		t.right = append(t.right, r)
	}
	return t
}

// row adds a row; cells beyond the header are dropped, missing ones are blank.
func (t *table) row(cells ...string) error {
	t.pending = append(t.pending, cells)
	if len(t.pending) >= tableBuffer {
		return t.flush()
	}
	return nil
}

// flush writes the rows held back (and the header, the first time).
func (t *table) flush() error {
	var b strings.Builder
	if !t.started {
		t.widths = make([]int, len(t.header))
		for _, r := range append([][]string{t.header}, t.pending...) {
			for i := range t.widths {
				if i < len(r) {
					t.widths[i] = max(t.widths[i], len(r[i]))
				}
			}
		}
		t.line(&b, t.header)
		t.started = true
	}
	for _, r := range t.pending {
		t.line(&b, r)
	}
	t.pending = t.pending[:0]
	_, err := io.WriteString(t.w, b.String())
	return err
}

func (t *table) line(b *strings.Builder, r []string) {
	var l strings.Builder
	for i, w := range t.widths {
		cell := ""
		if i < len(r) {
			cell = r[i]
		}
		if i > 0 {
			l.WriteString("  ")
		}
		pad := strings.Repeat(" ", max(0, w-len(cell)))
		if t.right[i] {
			l.WriteString(pad + cell)
		} else {
			l.WriteString(cell + pad)
		}
	}
	b.WriteString(strings.TrimRight(l.String(), " "))
	b.WriteByte('\n')
}

// thousands formats v with commas between groups of three digits: 4096000 → "4,096,000".
func thousands(v uint64) string {
	s := strconv.FormatUint(v, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatTime writes t as idkit.FormatTime does, as idkitd prints times too: RFC 3339 in UTC
// with at least millisecond fractions ("2022-02-22T19:22:22.000Z"), finer units keeping their
// digits.
func formatTime(t time.Time) string { return idkit.FormatTime(t) }

// formatFloat prints v with the given number of decimals, without trailing zeros: 1.50 → "1.5",
// 2.00 → "2".
func formatFloat(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// errWriter writes to w and keeps the first failure, for code that writes many pieces.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
