package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrConnLost is returned (wrapped) by Run when the connection to the
// database breaks during a run: the server shut down, an administrator
// terminated the session, or the network failed.
var ErrConnLost = errors.New("dbbench: lost connection to the database")

// ErrInterrupted is returned (wrapped) by Run when its context ends before
// the run is complete, for example on Ctrl-C. Run has then dropped what it
// created, as far as the database still allows.
var ErrInterrupted = errors.New("dbbench: interrupted")

// Engine is one database the benchmark loads: the one contract every engine (packages pg,
// innodb and sqlite) meets, for every workload. The table workload uses the methods of the
// embedded TableLoader, the app workload those of the embedded AppDialect, and both measure
// their loads with the embedded Measurer; the methods here serve all. Nothing asks an engine
// for its concrete type. An engine is used by one goroutine at a time, except for the row
// writers it hands out (RowWriters), one per client.
type Engine interface {
	TableLoader
	AppDialect
	Measurer
	// Settings fills the engine's part of the report's settings.
	Settings(s *Settings)
	// Kept marks the engine's schema, database or file to be left by Close (Config.Keep),
	// and returns what it is and the command that opens it again, without credentials.
	Kept() (what, reopen string)
	// Close drops everything the engine created and releases it. It runs
	// even when ctx has ended.
	Close() error
	// Finding reports whether err, which ended a load of row r, is a finding about the row
	// rather than a failure of the run (a duplicate key), and says what it means for the
	// report.
	Finding(err error, r Row) (string, bool)
	// ConnLost reports whether an error of the engine's driver means the connection is
	// gone (see FailLost).
	ConnLost(err error) bool
}

// TableLoader is what the table workload asks of an engine beyond its DDL and its
// measurements: which rows it runs, the notes and column types of its report, and the rows
// of a table (id PRIMARY KEY, payload: LoadTable) written by its own insert path. The load
// itself (create, mark, fill, measure, query, drop) is dbbench's description, the same on
// every engine.
type TableLoader interface {
	// TableRows returns the rows of the table workload this server can run, and for each
	// one it cannot, why (asked are the rows as the user spelled them).
	TableRows(rows []Row, asked []string) (keep []Row, skipped []string)
	// TableNotes explains the engine's own figures in a table-workload report.
	TableNotes(rep *Report, rows []Row, skipped []string) []string
	// ColumnTypeOf names the SQL type of a row's key column in the table workload.
	ColumnTypeOf(r Row) string
	// SourceRow returns r ready for NewSource on this engine: PostgreSQL puts the store of a
	// segment row (Row.StoreStep) in the benchmark schema; the others return r.
	SourceRow(r Row) (Row, error)
	// FillTable inserts n rows into table t of LoadTable's shape, which CreateTables made:
	// keys from src (none for a key the database makes) and payloads 1..n, by the
	// configured path (Options.Mode) over the engine's loading connections
	// (Options.Clients), counting them into rec as the server takes them. A nil src asks for
	// the bare baseline instead: ascending bigint keys straight through the driver, on one
	// connection (ErrNoBaseline on an engine without one, HasBaseline false). Its errors are
	// the driver's: the caller wraps them (FailLost) and asks Finding about them.
	FillTable(ctx context.Context, t TableDef, src *Source, n int, rec *Recorder) error
	HasBaseline() bool
	// BatchSize is the number of rows per COPY, INSERT or transaction.
	BatchSize() int
}

// ErrNoBaseline is returned by TableLoader.FillTable for the baseline on an engine without
// one.
var ErrNoBaseline = errors.New("dbbench: no baseline on this engine")

// Names of the counters an engine may report (Measurer.Marks) and the table workload derives
// from its structures and leaves.
const (
	CounterSecondaryIndexBytes = "secondary index bytes"
	CounterSecondaryLeafPages  = "secondary index leaf pages"
	CounterPageSplits          = "page splits"
	CounterPageMerges          = "page merges"
	CounterPoolReads           = "buffer pool reads"
)

// Fail turns a database error into the error Run returns: interrupted when
// ctx has ended, ErrConnLost when the connection broke (ConnLost), else the error
// with what was being done.
func Fail(ctx context.Context, what string, err error) error {
	return FailLost(ctx, what, err, nil)
}

// FailLost is fail for an engine whose driver has errors of its own that mean the connection
// is gone: lost reports them (it is the engine's ConnLost, and is given every error fail
// would look at); nil means the checks of ConnLost only.
func FailLost(ctx context.Context, what string, err error, lost func(error) bool) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrConnLost) || errors.Is(err, ErrInterrupted) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w while %s: %w", ErrInterrupted, what, context.Cause(ctx))
	}
	if lost == nil {
		lost = ConnLost
	}
	if lost(err) {
		return fmt.Errorf("%w while %s: %s", ErrConnLost, what, OneLine(err.Error()))
	}
	return fmt.Errorf("dbbench: %s: %w", what, err)
}

// ConnLost reports whether err means the connection is gone, as database/sql, the network
// and the operating system say it; an engine's own ConnLost adds its driver's errors.
func ConnLost(err error) bool {
	var netErr net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &netErr) ||
		strings.Contains(err.Error(), "conn closed") ||
		strings.Contains(err.Error(), "unexpected EOF")
}

// OneLine joins a multi-line error message (pgconn puts the cause of a
// failed connection on its own indented line) into one line.
func OneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSuffix(strings.TrimSpace(l), ":")
		if l != "" && !strings.Contains(strings.Join(parts, ": "), l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, ": ")
}

// Workers runs fn(i) for i in [0, n) concurrently and returns the first
// error; the others see their context cancelled.
func Workers(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, i); err != nil {
				once.Do(func() {
					first = err
					cancel()
				})
			}
		}()
	}
	wg.Wait()
	return first
}

// Claimer hands out consecutive row ranges of at most batch rows to
// concurrent workers.
type Claimer struct {
	Next  atomic.Int64
	Total int64
	Batch int64
}

// Claim returns the next range, or ok false when every row is claimed.
func (c *Claimer) Claim() (start, count int64, ok bool) {
	start = c.Next.Add(c.Batch) - c.Batch
	if start >= c.Total {
		return 0, 0, false
	}
	return start, min(c.Batch, c.Total-start), true
}

// TimeQueries times, for each key in turn, a point lookup and then a range scan starting at it,
// and returns their latencies. The functions return errors ready for Run (through fail).
func TimeQueries(keys []any, point, scan func(k any) error) (Latency, Latency, error) {
	pd := make([]time.Duration, 0, len(keys))
	rd := make([]time.Duration, 0, len(keys))
	for _, k := range keys {
		t0 := time.Now()
		if err := point(k); err != nil {
			return Latency{}, Latency{}, err
		}
		pd = append(pd, time.Since(t0))
		t0 = time.Now()
		if err := scan(k); err != nil {
			return Latency{}, Latency{}, err
		}
		rd = append(rd, time.Since(t0))
	}
	return Latencies(pd), Latencies(rd), nil
}

// Latencies returns the median and 99th percentile of ds in microseconds.
func Latencies(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(p float64) float64 {
		i := int(p * float64(len(ds)-1))
		return float64(ds[i]) / float64(time.Microsecond)
	}
	return Latency{Count: len(ds), P50Micros: q(0.50), P99Micros: q(0.99)}
}

// Ptr returns a pointer to a copy of v, for the report's optional figures.
func Ptr[T any](v T) *T { return &v }
