package dbbench

import (
	"testing"
)

func TestParsePGSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"128MB", 128 << 20, true}, {"16384kB", 16 << 20, true}, {"1GB", 1 << 30, true}, {"8kB", 8192, true},
		{"2TB", 2 << 40, true}, {" 64MB ", 64 << 20, true}, {"", 0, false}, {"MB", 0, false}, {"-1MB", 0, false},
		{"12", 0, false}, {"9999999999999TB", 0, false}, {"1.5GB", 0, false},
	}
	for _, tt := range tests {
		got, ok := parsePGSize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parsePGSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParsePGSize(f *testing.F) {
	for _, s := range []string{"128MB", "16384kB", "1GB", "", "kB", "-0B", "9223372036854775807B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parsePGSize(s)
		if ok && n < 0 {
			t.Fatalf("%q: %d bytes", s, n)
		}
	})
}

func TestCacheCrossing(t *testing.T) {
	t.Parallel()
	r := Result{Rows: 10_000_000, IndexBytesPerRow: 32}
	if at, in := cacheCrossing(r, 128<<20); at != 4194304 || !in {
		t.Errorf("32 B/row, 128MB: %d, %v; want 4194304, true", at, in)
	}
	r.Rows = 1_000_000
	if _, in := cacheCrossing(r, 128<<20); in {
		t.Error("1M rows of 32 B reach 128MB")
	}
	if _, in := cacheCrossing(Result{Rows: 10}, 1); in {
		t.Error("no bytes per row: crossing")
	}
}

// TestPageCache reads the page cache setting of each engine: the scale report marks where an
// index outgrows it, and InnoDB's is innodb_buffer_pool_size, not shared_buffers.
func TestPageCache(t *testing.T) {
	for _, c := range []struct {
		st          Settings
		name, value string
		bytes       int64
		log         string
	}{
		{Settings{SharedBuffers: "128MB"}, "shared_buffers", "128MB", 128 << 20, "WAL"},
		{Settings{InnoDBBufferPoolSize: "128M"}, "innodb_buffer_pool_size", "128M", 128 << 20, "redo"},
		{Settings{InnoDBBufferPoolSize: "2G"}, "innodb_buffer_pool_size", "2G", 2 << 30, "redo"},
		{Settings{InnoDBBufferPoolSize: "16777216"}, "innodb_buffer_pool_size", "16777216", 16 << 20, "redo"},
	} {
		name, value, bytes, ok := pageCache(c.st)
		if !ok || name != c.name || value != c.value || bytes != c.bytes || logName(c.st) != c.log {
			t.Errorf("pageCache(%+v) = %q %q %d %v, log %q", c.st, name, value, bytes, ok, logName(c.st))
		}
	}
	if _, _, _, ok := pageCache(Settings{InnoDBBufferPoolSize: "lots"}); ok {
		t.Error("pageCache read an unreadable size")
	}
}
