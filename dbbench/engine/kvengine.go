package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Helpers of the key-value engines (pebble, rocksdb), which store a table as keys of their
// own and answer the table workload's few statements themselves.

// KVColumns is the column rule of a key-value engine named name: keys of idkit's generators
// and the engine's own sequence; no collations, server-side generators or MariaDB/MySQL
// types. Keys are compared as bytes, so Unsigned is cleared.
func KVColumns(name string, r Row) (Row, error) {
	switch {
	case r.Col == ColTextICU:
		return r, fmt.Errorf("dbbench: scheme %q needs PostgreSQL (ICU collations); the %s engine compares keys as bytes", r.Label, name)
	case r.Col == ColServerBigint || r.Col == ColServerUUID || r.StoreStep > 0:
		return r, ErrServerSide(r.Label)
	case r.Col == ColTextDefault || r.Col == ColUUIDNative:
		return r, ErrForInnoDB(r.Label)
	}
	r.Unsigned = false
	return r, nil
}

// StatementKind is which of the table workload's statements a TableStatement is.
type StatementKind int

// The table workload's statements a key-value engine answers.
const (
	StmtLookup StatementKind = iota // SELECT payload FROM t WHERE id = $1
	StmtNext                        // SELECT id, payload FROM t WHERE id > $1 ORDER BY id LIMIT n
	StmtCount                       // SELECT count(*) FROM t
)

// TableStatement is a parsed statement of the table workload: its kind, its table, and for
// StmtNext the rows it reads.
type TableStatement struct {
	Kind  StatementKind
	Table string
	Next  int
}

// ErrTableStatement is returned (wrapped, with the statement) by ParseTableStatement for SQL
// that is not one of the table workload's statements.
var ErrTableStatement = errors.New("dbbench: not a statement of the table workload")

var (
	reLookup = regexp.MustCompile(`^SELECT payload FROM (\w+) WHERE id = \$1$`)
	reNext   = regexp.MustCompile(`^SELECT id, payload FROM (\w+) WHERE id > \$1 ORDER BY id LIMIT (\d+)$`)
	reCount  = regexp.MustCompile(`^SELECT count\(\*\) FROM (\w+)$`)
)

// ParseTableStatement recognizes the table workload's point lookup, range scan and row count
// as written by the workload; anything else is ErrTableStatement.
func ParseTableStatement(q string) (TableStatement, error) {
	if m := reLookup.FindStringSubmatch(q); m != nil {
		return TableStatement{Kind: StmtLookup, Table: m[1]}, nil
	}
	if m := reNext.FindStringSubmatch(q); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return TableStatement{}, fmt.Errorf("%w: %s (LIMIT %s)", ErrTableStatement, q, m[2])
		}
		return TableStatement{Kind: StmtNext, Table: m[1], Next: n}, nil
	}
	if m := reCount.FindStringSubmatch(q); m != nil {
		return TableStatement{Kind: StmtCount, Table: m[1]}, nil
	}
	return TableStatement{}, fmt.Errorf("%w: %s", ErrTableStatement, q)
}

// LoadAverage1 is the 1-minute load average of /proc/loadavg, or "unknown".
func LoadAverage1() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}

// Share is part/whole, or 0 for an empty whole.
func Share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// NoApp is the app workload's dialect of an engine that loads the table workload only: its
// writers and queries return Err. An engine embeds it for the calls it does not answer; the
// DDL, settling and sizing calls are the table workload's.
type NoApp struct {
	// Err is returned by every call that would run the app workload.
	Err error
}

// ReservesKeys: no writer reserves keys.
func (NoApp) ReservesKeys() bool { return false }

// RowWriters returns Err.
func (n NoApp) RowWriters(context.Context) ([]RowWriter, error) { return nil, n.Err }

// TimeArg is t in Unix microseconds.
func (NoApp) TimeArg(t time.Time) any { return t.UnixMicro() }

// SQL returns q unchanged: the table workload's statements are recognized as written.
func (NoApp) SQL(q string) string { return q }

// Count returns Err.
func (n NoApp) Count(context.Context, string, ...any) (int64, error) { return 0, n.Err }

// KeyRows returns Err.
func (n NoApp) KeyRows(context.Context, Row, string, ...any) ([]KeyRow, error) { return nil, n.Err }

// EpochMicros returns col unchanged.
func (NoApp) EpochMicros(col string) string { return col }

// Plan returns Err.
func (n NoApp) Plan(context.Context, string, ...any) (string, error) { return "", n.Err }

// Qualify returns the table's name: each load's database holds its tables alone.
func (NoApp) Qualify(name string) string { return name }

// SampleMax calls sample every 100 ms and keeps the largest value it returned in *max, until
// the returned stop is called (stop waits for the sampler to end).
func SampleMax(max *atomic.Int64, sample func() int64) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if n := sample(); n > max.Load() {
					max.Store(n)
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// WaitQuiet polls busy every 100 ms until it reports false twice in a row or timeout has
// passed (the engine's figures are then read as they are); it returns ctx's error if ctx
// ends first.
func WaitQuiet(ctx context.Context, timeout time.Duration, busy func() bool) error {
	deadline := time.Now().Add(timeout)
	quiet := 0
	for quiet < 2 && time.Now().Before(deadline) {
		if busy() {
			quiet = 0
		} else {
			quiet++
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
