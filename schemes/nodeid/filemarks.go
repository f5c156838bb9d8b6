package nodeid

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit/schemes"
)

// ErrMarkFile reports a mark file that cannot be read back: damaged, or written for another
// node.
var ErrMarkFile = errors.New("nodeid: bad mark file")

// FileMarks is a schemes.MarkStore kept in one local file, for a node number that does not
// come from a lease (a lease keeps its marks in its own store). The file holds one line,
//
//	idkit-mark node=7 unix_nano=1767225600000000000 2026-01-01T00:00:00Z
//
// and is replaced atomically (write to a temporary file, fsync, rename, fsync the directory),
// so a crash leaves either the old mark or the new one. The node number is recorded so that a
// file moved to another node, or shared by two, is refused instead of trusted.
//
// One file serves one node; give each generator its own. A FileMarks is safe for concurrent
// use within one process; two processes must not share a file.
type FileMarks struct {
	path string
	node uint64
	mu   sync.Mutex
}

var _ schemes.MarkStore = (*FileMarks)(nil)

// NewFileMarks returns the mark store for node kept at path. Every "{node}" in path is replaced
// by the node number, so one pattern serves several generators. The file and its directory are
// created on the first SaveMark.
func NewFileMarks(path string, node uint64) *FileMarks {
	return &FileMarks{path: strings.ReplaceAll(path, "{node}", strconv.FormatUint(node, 10)), node: node}
}

// Path returns the file the marks are kept in.
func (f *FileMarks) Path() string { return f.path }

// LoadMark returns the saved mark, or the zero time when the file does not exist. Errors wrap
// ErrMarkFile when the file is damaged or belongs to another node.
func (f *FileMarks) LoadMark(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("nodeid: loading mark: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("nodeid: loading mark: %w", err)
	}
	node, mark, err := ParseMark(string(b))
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", f.path, err)
	}
	if node != f.node {
		return time.Time{}, fmt.Errorf("%w: %s holds the mark of node %d, not node %d", ErrMarkFile, f.path, node, f.node)
	}
	return mark, nil
}

// SaveMark replaces the file with mark and returns once it is durable.
func (f *FileMarks) SaveMark(ctx context.Context, mark time.Time) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	if mark.UnixNano() <= 0 {
		return fmt.Errorf("nodeid: saving mark: %v is not after 1970", mark)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".*")
	if err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.WriteString(FormatMark(f.node, mark)); err != nil {
		tmp.Close()
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("nodeid: saving mark: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("nodeid: saving mark: syncing %s: %w", dir, err)
	}
	return nil
}

// FormatMark renders the one-line mark file for node and mark.
func FormatMark(node uint64, mark time.Time) string {
	return fmt.Sprintf("idkit-mark node=%d unix_nano=%d %s\n", node, mark.UnixNano(), mark.UTC().Format(time.RFC3339Nano))
}

// ParseMark reads a line written by FormatMark. Only the node and unix_nano fields count; the
// trailing date is for people. Errors wrap ErrMarkFile.
func ParseMark(s string) (node uint64, mark time.Time, err error) {
	f := strings.Fields(s)
	if len(f) < 3 || f[0] != "idkit-mark" {
		return 0, time.Time{}, fmt.Errorf("%w: want %q, got %.40q", ErrMarkFile, "idkit-mark node=N unix_nano=T", s)
	}
	nv, ok := strings.CutPrefix(f[1], "node=")
	if !ok {
		return 0, time.Time{}, fmt.Errorf("%w: second field %.40q is not node=N", ErrMarkFile, f[1])
	}
	node, err = strconv.ParseUint(nv, 10, 64)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%w: node: %w", ErrMarkFile, err)
	}
	tv, ok := strings.CutPrefix(f[2], "unix_nano=")
	if !ok {
		return 0, time.Time{}, fmt.Errorf("%w: third field %.40q is not unix_nano=T", ErrMarkFile, f[2])
	}
	ns, err := strconv.ParseInt(tv, 10, 64)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%w: unix_nano: %w", ErrMarkFile, err)
	}
	if ns <= 0 {
		return 0, time.Time{}, fmt.Errorf("%w: unix_nano %d is not after 1970", ErrMarkFile, ns)
	}
	return node, time.Unix(0, ns).UTC(), nil
}
