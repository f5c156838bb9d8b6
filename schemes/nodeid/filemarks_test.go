package nodeid_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idkit/idkit/schemes/nodeid"
)

func TestFileMarks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := nodeid.NewFileMarks(filepath.Join(dir, "sub", "orders-{node}.mark"), 7)
	if want := filepath.Join(dir, "sub", "orders-7.mark"); m.Path() != want {
		t.Fatalf("Path = %s, want %s", m.Path(), want)
	}
	if got, err := m.LoadMark(ctx); err != nil || !got.IsZero() {
		t.Fatalf("no file: %v, %v; want zero, nil", got, err)
	}
	want := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	for _, mark := range []time.Time{want.Add(-time.Hour), want} {
		if err := m.SaveMark(ctx, mark); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := nodeid.NewFileMarks(m.Path(), 7).LoadMark(ctx); err != nil || !got.Equal(want) {
		t.Fatalf("LoadMark = %v, %v; want %v", got, err, want)
	}
	if _, err := nodeid.NewFileMarks(m.Path(), 8).LoadMark(ctx); !errors.Is(err, nodeid.ErrMarkFile) {
		t.Errorf("other node's file: %v, want ErrMarkFile", err)
	}
	if err := os.WriteFile(m.Path(), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.LoadMark(ctx); !errors.Is(err, nodeid.ErrMarkFile) {
		t.Errorf("damaged file: %v, want ErrMarkFile", err)
	}
	if err := m.SaveMark(ctx, time.Unix(0, 0)); err == nil {
		t.Error("SaveMark(1970) succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(m.Path()))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

var markLines = []string{
	"idkit-mark node=7 unix_nano=1767225600000000000 2026-01-01T00:00:00Z\n",
	"idkit-mark node=0 unix_nano=1",
	"idkit-mark node=7 unix_nano=0",
	"idkit-mark node=-1 unix_nano=5",
	"idkit-mark unix_nano=5 node=1",
	"idkit-mark",
	"",
}

func TestParseMark(t *testing.T) {
	node, mark, err := nodeid.ParseMark(markLines[0])
	if err != nil || node != 7 || !mark.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseMark = %d %v %v", node, mark, err)
	}
	for _, s := range markLines[2:] {
		if _, _, err := nodeid.ParseMark(s); !errors.Is(err, nodeid.ErrMarkFile) {
			t.Errorf("ParseMark(%q) = %v, want ErrMarkFile", s, err)
		}
	}
}

func FuzzParseMark(f *testing.F) {
	for _, s := range markLines {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		node, mark, err := nodeid.ParseMark(s)
		if err != nil {
			if !errors.Is(err, nodeid.ErrMarkFile) {
				t.Fatalf("ParseMark(%q): %v does not wrap ErrMarkFile", s, err)
			}
			return
		}
		n2, m2, err := nodeid.ParseMark(nodeid.FormatMark(node, mark))
		if err != nil || n2 != node || !m2.Equal(mark) {
			t.Fatalf("round trip of %q: %d %v %v", s, n2, m2, err)
		}
	})
}
