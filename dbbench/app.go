package dbbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/dbbench/engine"

	"github.com/idkit/idkit"
)

// ErrTimeMismatch is returned (wrapped) by Run under WorkloadApp when the two ways of
// answering a time query (the key bounds and the created_at column) disagree on a row that
// no window edge explains.
var ErrTimeMismatch = errors.New("dbbench: the key bounds and created_at answer a time window with different rows")

// appRun is what one load of the app workload measured.
type appRun struct {
	ops      int64
	seconds  float64
	wal      int64
	start    time.Time
	end      time.Time
	sample   []any         // parent keys spread over the load, as query arguments
	times    []time.Time   // the created_at of each sampled parent
	maxLag   time.Duration // largest created_at minus decoded ID time
	structs  []Structure
	bytesAll int64
	// contention is what the concurrent writers did (nil for the baseline's bare loads).
	contention *Contention
}

// appScheme is a row with what the workload needs to answer time queries through its key.
type appScheme struct {
	engine.AppSchema
	codec idkit.Codec // nil for rows without time order
	tick  time.Duration
	epoch time.Time
	// window is the time query's window for this scheme: Config.Window rounded up to a whole
	// number of ticks, since a window is aligned to ticks and a shorter one would be empty.
	window time.Duration
}

// tickWindow returns w rounded up to a whole number of ticks (at least one).
func tickWindow(w, tick time.Duration) time.Duration {
	if tick <= 0 {
		return w
	}
	return max((w+tick-1)/tick, 1) * tick
}

// runAppWorkload carries out the app workload on eng (runApp) and completes rep's settings.
// An error wrapping ErrTimeMismatch leaves rep finished.
func runAppWorkload(ctx context.Context, cfg Config, eng engine.Engine, rows []engine.Row, _ []string, rep *Report) error {
	rep.Workload = WorkloadApp
	rep.Settings.Children, rep.Settings.CreatedAtIndex, rep.Settings.Window = cfg.Children, cfg.CreatedAtIndex, Duration(cfg.Window)
	mismatch := runApp(ctx, cfg, eng, rows, rep)
	if mismatch != nil && !errors.Is(mismatch, ErrTimeMismatch) {
		return mismatch
	}
	eng.Settings(&rep.Settings)
	rep.Settings.Batch = 1
	if cfg.Mode == ModeCopy {
		rep.Settings.Batch = cfg.Batch
		if rep.Settings.Batch == 0 {
			rep.Settings.Batch = 1000
		}
	}
	if cfg.Keep {
		rep.Settings.Kept, rep.Settings.Reopen = eng.Kept()
	}
	appMaxRSS(rep)
	return mismatch
}

// runApp is Run for WorkloadApp, after the rows are resolved and the engine is open.
func runApp(ctx context.Context, cfg Config, eng engine.Engine, rows []engine.Row, rep *Report) error {
	d := eng
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Label
	}
	labels := tableLabels(names, "baseline")
	schemes := make([]appScheme, len(rows))
	for i, r := range rows {
		switch {
		case r.Col == engine.ColServerBigint || r.Col == engine.ColServerUUID || r.StoreStep > 0:
			return fmt.Errorf("dbbench: scheme %q: the app workload takes schemes whose keys the application or an identity column makes", r.Label)
		case r.Col == engine.ColUint64 || r.Col == engine.ColUUIDNative || r.Unsigned:
			return fmt.Errorf("dbbench: scheme %q: the app workload does not take this key column (%s) yet", r.Label, d.KeyType(r))
		case r.Col.ServerMade() && cfg.ClientBlock > 1:
			return fmt.Errorf("dbbench: scheme %q: the database makes its keys, so a client has no block of them to take (--client-block)", r.Label)
		case r.Col == engine.ColIdentity && cfg.Mode == ModeCopy && !d.ReservesKeys():
			return fmt.Errorf("dbbench: scheme %q: LOAD DATA cannot return the keys the database makes, which the children need; use --mode tx for it on MariaDB/MySQL", r.Label)
		}
		sc := appScheme{AppSchema: engine.AppSchema{Label: labels[i], Row: r, Children: cfg.Children}, tick: time.Millisecond, epoch: time.Unix(0, 0)}
		if r.Spec != "" {
			c, err := idkit.NewCodec(r.Spec)
			if err != nil {
				return fmt.Errorf("dbbench: scheme %q: %w", r.Label, err)
			}
			if _, ok := idkit.As[idkit.TimeRanger](c); ok && engine.KeysOrdered(r) {
				sc.codec = c
			}
			if l, ok := idkit.As[idkit.Layouter](c); ok {
				sc.tick, sc.epoch = l.Layout().Unit, l.Layout().Epoch
			}
		}
		sc.window = tickWindow(cfg.Window, sc.tick)
		if sc.codec != nil {
			// The bounds of a window are asked for only after the loads: ask once now, so
			// that a scheme that cannot answer one fails before anything is loaded.
			from := sc.align(time.Now())
			if _, _, err := idkit.Bounds(sc.codec, from, from.Add(sc.window)); errors.Is(err, idkit.ErrUnordered) {
				// A layout with a field above the time (a node on top): its keys of one time
				// range are spread over every value of that field, so the time query goes
				// through the created_at index, as for keys with no time order.
				sc.codec = nil
			} else if err != nil {
				return fmt.Errorf("dbbench: scheme %q: the time query's window of %s: %w", r.Label, sc.window, err)
			}
		}
		sc.CreatedAt = sc.codec == nil || cfg.CreatedAtIndex == CreatedAtAll
		schemes[i] = sc
	}
	bi := baselineRow(rows)
	base := engine.AppSchema{Label: "baseline", Row: engine.Row{Label: "baseline", Col: engine.ColBigint}, Children: cfg.Children}
	if bi >= 0 {
		base.CreatedAt = schemes[bi].CreatedAt
	}
	withBase := cfg.Baseline && bi >= 0

	results := make([]AppResult, len(schemes))
	jobs := loadPlan(len(schemes), cfg.Repeat, cfg.Rows, cfg.WarmupRows, withBase)
	runs, err := runLoads(ctx, cfg, d, rows, jobs, workload[appRun]{
		unit: "ops/s",
		rate: func(run appRun) float64 { return float64(run.ops) / run.seconds },
		load: func(ctx context.Context, j job, _ func(int64)) (appRun, error) {
			if j.ri < 0 {
				return appLoad(ctx, cfg, d, appScheme{AppSchema: base}, int64(j.n), true, j.measured, j.last && cfg.Keep)
			}
			sc := schemes[j.ri]
			run, err := appLoad(ctx, cfg, d, sc, int64(j.n), false, j.measured, j.last)
			if err != nil || !j.last {
				return run, err
			}
			// The last load stays for the scheme's queries and time check.
			if cfg.beforeQueries != nil {
				if err := cfg.beforeQueries(ctx, d, sc); err != nil {
					return run, err
				}
			}
			if results[j.ri], err = appQueries(ctx, cfg, d, sc, run); err != nil {
				return run, err
			}
			if !cfg.Keep {
				err = d.DropTables(ctx, sc.Tables())
			}
			return run, err
		},
	})
	if err != nil {
		return err
	}
	rep.App = results
	for i := range rep.App {
		summarizeApp(&rep.App[i], runs.rows[i])
	}
	baseRuns := runs.base
	if withBase {
		b := &AppBaseline{Label: base.Label}
		var rates, wal []float64
		for _, r := range baseRuns {
			rate := float64(r.ops) / r.seconds
			b.RunsOpsPerSec = append(b.RunsOpsPerSec, rate)
			rates = append(rates, rate)
			wal = append(wal, perRow(r.wal, r.ops))
		}
		b.OpsPerSec, b.WALBytesPerOp = median(rates), median(wal)
		b.Scheme = rows[bi].Label
		b.Ratio = ratio(rep.App[bi].OpsPerSec, b.OpsPerSec)
		rep.AppBaseline = b
	}
	rep.Notes = append(rep.Notes, appNotes(rep)...)
	rep.Notes = append(rep.Notes, appSchemeNotes(cfg, schemes)...)
	var bad []error
	for _, a := range rep.App {
		if a.Check != nil && a.Check.Mismatches > 0 {
			bad = append(bad, fmt.Errorf("%w: scheme %s, %d row(s) in %d windows", ErrTimeMismatch, a.Scheme, a.Check.Mismatches, a.Check.Windows))
		}
	}
	if len(bad) > 0 {
		// The loads are finished and measured: the report keeps them, its check cells say
		// MISMATCH, and the error says the run failed.
		rep.Notes = append(rep.Notes, "TIME CHECK FAILED: for the scheme(s) whose check says MISMATCH, the key bounds and created_at answered a time window with different rows beyond the tolerance; the run failed, and its figures are kept here to look into it.")
	}
	return errors.Join(bad...)
}

// appLoad creates a row's tables, writes n operations and measures them. It drops the tables
// afterwards unless keep is set (the caller's queries read them), and on error. A warm-up
// (measure false) writes its operations as a measured load does, on the same tables, which it
// drops, and checks their count, but keeps no figures beyond its time: no arrival order, waits,
// samples, sizes or leaves.
func appLoad(ctx context.Context, cfg Config, d engine.Engine, sc appScheme, n int64, bare, measure, keep bool) (run appRun, err error) {
	if err := d.DropTables(ctx, sc.Tables()); err != nil {
		return run, err
	}
	if err := d.CreateTables(ctx, sc.Tables()); err != nil {
		return run, err
	}
	defer func() {
		if err != nil || !keep {
			if derr := d.DropTables(context.WithoutCancel(ctx), sc.Tables()); err == nil {
				err = derr
			}
		}
	}()
	writers, err := d.RowWriters(ctx)
	if err != nil {
		return run, err
	}
	if err := d.BeforeLoad(ctx); err != nil {
		return run, err
	}
	since, err := d.Marks(ctx)
	if err != nil {
		return run, err
	}
	batch := int64(1)
	switch {
	case cfg.Mode == ModeCopy:
		batch = int64(cfg.Batch)
		if batch == 0 {
			batch = 1000
		}
	case cfg.ClientBatch > 1 && !bare:
		batch = int64(cfg.ClientBatch)
	}
	cl := &engine.Claimer{Total: n, Batch: batch}
	want := max(cfg.Lookups, 1)
	step := max(n/int64(want), 1)
	var (
		mu     sync.Mutex
		sample []any
		times  []time.Time
		maxLag atomic.Int64
	)
	var (
		src      *engine.Source
		arr      *arrivals
		opTimes  = make([][]time.Duration, len(writers))
		endWaits func() ([]engine.WaitShare, int)
	)
	var (
		srcs    []*engine.Source
		blockMu sync.Mutex
	)
	if !bare {
		if measure {
			arr = newArrivals(behindWindow)
		}
		if src, err = engine.NewSource(sc.Row, 1); err != nil {
			return run, err
		}
		defer src.Close()
		var closeSrcs func()
		if srcs, closeSrcs, err = clientSources(cfg, sc.Row, src, len(writers)); err != nil {
			return run, err
		}
		defer closeSrcs()
	}
	if !bare && measure {
		endWaits = sampleWaits(ctx, d, waitInterval)
	}
	inTx := cfg.IDsInTx && cfg.Mode == ModeTx && !bare
	run.start = time.Now()
	err = engine.Workers(ctx, len(writers), func(ctx context.Context, w int) error {
		wr := newOpWriter(writers[w], sc.AppSchema)
		if arr != nil {
			wr.arrived = arr.add
		}
		ops := make([]appOp, batch)
		for i := range ops {
			ops[i].Children = make([]engine.Value, sc.Children)
		}
		// makeOp makes operation i's IDs and fields: before its transaction, or inside it
		// (Config.IDsInTx) through the writer's prepare.
		var keys *clientKeys
		if !bare {
			keys = newClientKeys(srcs[w], &blockMu, cfg.ClientBlock, sc.Children)
		}
		var first int64 // the number of the batch's first operation
		makeOp := func(ctx context.Context, i int) error {
			op := &ops[i]
			if err := keys.next(ctx, op); err != nil {
				return err
			}
			op.Created = time.Now()
			if sc.codec != nil {
				lag, err := sc.lag(op)
				if err != nil {
					return err
				}
				for {
					m := maxLag.Load()
					if int64(lag) <= m || maxLag.CompareAndSwap(m, int64(lag)) {
						break
					}
				}
			}
			op.Customer = rand.Int64N(10000)
			op.Payload = first + int64(i)
			op.ChildPayload = op.Payload * int64(sc.Children+1)
			return nil
		}
		if inTx {
			wr.prepare = func(ctx context.Context) error { return makeOp(ctx, 0) }
		}
		for {
			start, count, ok := cl.Claim()
			if !ok {
				return nil
			}
			if bare {
				if err := wr.bare(ctx, cfg.Mode, start, count, ops); err != nil {
					return err
				}
				continue
			}
			first = start
			if !inTx {
				for i := range ops[:count] {
					if err := makeOp(ctx, i); err != nil {
						return err
					}
				}
			}
			var err error
			t0 := time.Now()
			if cfg.Mode == ModeCopy {
				err = wr.bulk(ctx, ops[:count])
			} else {
				err = wr.tx(ctx, ops[:count])
			}
			if err != nil {
				return err
			}
			opTimes[w] = append(opTimes[w], time.Since(t0))
			if !measure {
				continue
			}
			if cfg.Mode == ModeCopy {
				for i := range ops[:count] {
					arr.add(ops[i].Parent)
				}
			}
			for i := range ops[:count] {
				if (start+int64(i))%step == 0 {
					mu.Lock()
					sample = append(sample, d.KeyArg(sc.Row, &ops[i].Parent))
					times = append(times, ops[i].Created)
					mu.Unlock()
				}
			}
		}
	})
	run.end = time.Now()
	var c *Contention
	if endWaits != nil {
		c = &Contention{WaitInterval: Duration(waitInterval)}
		c.Waits, c.WaitSamples = endWaits()
		arr.fill(c)
		var all []time.Duration
		for _, ts := range opTimes {
			all = append(all, ts...)
		}
		c.OpLatency = engine.PercentilesOf(all)
	}
	if err != nil {
		return run, engine.FailLost(ctx, "write operations", err, d.ConnLost)
	}
	run.seconds = run.end.Sub(run.start).Seconds()
	run.ops, run.sample, run.times, run.maxLag = n, sample, times, time.Duration(maxLag.Load())
	if !measure {
		return run, checkOps(ctx, d, sc, n)
	}
	counters, err := since(ctx)
	if err != nil {
		return run, err
	}
	run.wal = counters[engine.CounterLogBytes]
	if err := d.Settle(ctx, sc.Tables()); err != nil {
		return run, err
	}
	if run.structs, err = d.Structures(ctx, sc.Tables()); err != nil {
		return run, err
	}
	if c != nil {
		if v, ok := counters[engine.CounterPageSplits]; ok {
			c.PageSplitsPerOp = engine.Ptr(perRow(v, n))
		}
		if v, ok := counters[engine.CounterPageMerges]; ok {
			c.PageMergesPerOp = engine.Ptr(perRow(v, n))
		}
		ts := sc.Tables()
		pl, err := d.LeafStats(ctx, ts[0], "", n)
		if err != nil {
			return run, err
		}
		c.ParentLeafDensity, c.ParentLeafPages = pl.Density, pl.Pages
		cl, err := d.LeafStats(ctx, ts[1], "", n*int64(sc.Children))
		if err != nil {
			return run, err
		}
		c.ChildLeafDensity = cl.Density
		run.contention = c
	}
	if err := checkOps(ctx, d, sc, n); err != nil {
		return run, err
	}
	for i := range run.structs {
		run.structs[i].BytesPerOp = perRow(run.structs[i].Bytes, n)
		run.bytesAll += run.structs[i].Bytes
	}
	return run, nil
}

// checkOps checks that sc's parent table holds the n operations a load wrote.
func checkOps(ctx context.Context, d engine.Engine, sc appScheme, n int64) error {
	got, err := d.Count(ctx, "SELECT 1 FROM "+d.Qualify(sc.Parent()))
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("dbbench: wrote %d operations, %s holds %d rows", n, sc.Parent(), got)
	}
	return nil
}

// lag is how far op's created_at lies after the decoded time of its parent's ID.
func (sc appScheme) lag(op *appOp) (time.Duration, error) {
	id, err := sc.idOf(op.Parent)
	if err != nil {
		return 0, err
	}
	p, err := sc.codec.Decode(id)
	if err != nil {
		return 0, fmt.Errorf("dbbench: decode %s: %w", sc.Row.Label, err)
	}
	return max(op.Created.Sub(p.Time), 0), nil
}

// idOf turns a key back into an idkit.ID of the row's scheme, reading it in the form the
// source wrote it: the stored ID's canonical text in a text column (idkit.ID.String, which a
// masked scheme's Parse would read as masked text), the public text in a public-text column.
func (sc appScheme) idOf(v engine.Value) (idkit.ID, error) {
	switch sc.Row.Col {
	case engine.ColBigint:
		return idkit.FromUint64(uint64(v.I64)), nil
	case engine.ColUUID:
		if strings.HasPrefix(sc.Row.Canon, "ulid") {
			return idkit.FromULID(v.B16), nil
		}
		return idkit.FromUUID(v.B16), nil
	case engine.ColText, engine.ColTextICU, engine.ColTextDefault:
		id, err := idkit.Parse(v.Str)
		if err != nil {
			return idkit.ID{}, fmt.Errorf("dbbench: key of %s read back: %w", sc.Row.Label, err)
		}
		return id, nil
	}
	return sc.codec.Parse(v.Str)
}

// valueOf is the key value of an ID in the row's column form, as the source writes it: text
// columns hold the stored ID's canonical text (idkit.ID.String), public-text columns the
// scheme's public text (idkit.FormatID).
func (sc appScheme) valueOf(id idkit.ID) (engine.Value, error) {
	switch sc.Row.Col {
	case engine.ColBigint:
		return engine.Value{I64: int64(id.Uint64()), U64: id.Uint64()}, nil
	case engine.ColUUID:
		return engine.Value{B16: id.Bytes16()}, nil
	case engine.ColText, engine.ColTextICU, engine.ColTextDefault:
		return engine.Value{Str: id.String()}, nil
	}
	text, err := idkit.FormatID(sc.codec, id)
	if err != nil {
		return engine.Value{}, fmt.Errorf("dbbench: text of the bounds of %s: %w", sc.Row.Label, err)
	}
	return engine.Value{Str: text}, nil
}

// boundArgs returns the key bounds of the window w as query arguments.
func (sc appScheme) boundArgs(d engine.Engine, w [2]time.Time) ([]any, error) {
	lo, hi, err := idkit.Bounds(sc.codec, w[0], w[1])
	if err != nil {
		return nil, fmt.Errorf("dbbench: bounds of %s: %w", sc.Row.Label, err)
	}
	l, err := sc.valueOf(lo)
	if err != nil {
		return nil, err
	}
	h, err := sc.valueOf(hi)
	if err != nil {
		return nil, err
	}
	return []any{d.KeyArg(sc.Row, &l), d.KeyArg(sc.Row, &h)}, nil
}

// keyOf turns a key read back by the dialect into a value.
func keyOf(k any) engine.Value {
	switch k := k.(type) {
	case int64:
		return engine.Value{I64: k, U64: uint64(k)}
	case [16]byte:
		return engine.Value{B16: k}
	case string:
		return engine.Value{Str: k}
	}
	return engine.Value{}
}

// align returns the start of the tick of sc that holds t.
func (sc appScheme) align(t time.Time) time.Time {
	return sc.epoch.Add(t.Sub(sc.epoch) / sc.tick * sc.tick)
}

// windows returns n tick-aligned windows of length w spread at random over the load: each
// holds the created_at of a parent sampled at random, so that every window holds rows even
// when the bulk path made the rows of a batch within a few ticks.
func (sc appScheme) windows(run appRun, w time.Duration, n int) [][2]time.Time {
	out := make([][2]time.Time, 0, n)
	ticks := max(int64(w/sc.tick), 1)
	for range n {
		t := run.start
		if len(run.times) > 0 {
			t = run.times[rand.IntN(len(run.times))]
		}
		// One of the tick-aligned windows that hold t, at random: t's tick is the k-th of it.
		from := sc.align(t).Add(-time.Duration(rand.Int64N(ticks)) * sc.tick)
		out = append(out, [2]time.Time{from, sc.align(from.Add(w))})
	}
	return out
}

// appQueries times the queries after the last load and checks both ways of answering the
// time query.
func appQueries(ctx context.Context, cfg Config, d engine.Engine, sc appScheme, run appRun) (AppResult, error) {
	res := AppResult{Scheme: sc.Row.Label, Label: sc.Label, Spec: sc.Row.Canon, KeyType: d.KeyType(sc.Row),
		TimeOrdered: sc.codec != nil, CreatedAtIndex: sc.CreatedAt, Structures: run.structs, Window: Duration(sc.window)}
	if cfg.Lookups == 0 {
		return res, nil
	}
	cols := "id, created_at, customer, payload"
	byKey := d.SQL("SELECT " + cols + " FROM " + d.Qualify(sc.Parent()) + " WHERE id >= $1 AND id <= $2")
	byTime := d.SQL("SELECT " + cols + " FROM " + d.Qualify(sc.Parent()) + " WHERE created_at >= $1 AND created_at < $2")
	wins := sc.windows(run, sc.window, cfg.Lookups)
	timeArgs := func(w [2]time.Time) []any { return []any{d.TimeArg(w[0]), d.TimeArg(w[1])} }
	keyArgs := func(w [2]time.Time) ([]any, error) { return sc.boundArgs(d, w) }
	timed := func(via, q string, args func([2]time.Time) ([]any, error)) (*TimeQuery, error) {
		tq := &TimeQuery{Via: via, SQL: q}
		a, err := args(wins[0])
		if err != nil {
			return nil, err
		}
		if tq.Plan, err = d.Plan(ctx, q, a...); err != nil {
			return nil, err
		}
		var ds []time.Duration
		var counts []float64
		for _, w := range wins {
			a, err := args(w)
			if err != nil {
				return nil, err
			}
			t0 := time.Now()
			n, err := d.Count(ctx, q, a...)
			if err != nil {
				return nil, err
			}
			ds = append(ds, time.Since(t0))
			counts = append(counts, float64(n))
		}
		tq.Latency, tq.RowsP50 = engine.Latencies(ds), median(counts)
		return tq, nil
	}
	byTimeArgs := func(w [2]time.Time) ([]any, error) { return timeArgs(w), nil }
	var err error
	if sc.codec != nil {
		if res.TimeQuery, err = timed("key bounds", byKey, keyArgs); err != nil {
			return res, err
		}
		if sc.CreatedAt {
			if res.TimeQueryCreatedAt, err = timed("created_at index", byTime, byTimeArgs); err != nil {
				return res, err
			}
		}
		if res.Check, err = checkTime(ctx, d, sc, wins[:min(len(wins), 20)], run.maxLag); err != nil {
			return res, err
		}
	} else if res.TimeQuery, err = timed("created_at index", byTime, byTimeArgs); err != nil {
		return res, err
	}

	join := d.SQL("SELECT p.payload, c.id, c.payload FROM " + d.Qualify(sc.Parent()) + " p JOIN " + d.Qualify(sc.Child()) +
		" c ON c.parent_id = p.id WHERE p.id = $1")
	var ds []time.Duration
	for _, k := range run.sample {
		t0 := time.Now()
		n, err := d.Count(ctx, join, k)
		if err != nil {
			return res, err
		}
		ds = append(ds, time.Since(t0))
		if n != int64(sc.Children) {
			return res, fmt.Errorf("dbbench: %s: a parent has %d children, want %d", sc.Row.Label, n, sc.Children)
		}
	}
	res.ParentWithChildren = engine.Latencies(ds)
	return res, nil
}

// checkTime answers each window both ways, through the key bounds and through created_at,
// and compares the rows: a row only one way returns must have its created_at and its ID's
// decoded time on either side of an edge, at most one tick plus maxLag apart.
func checkTime(ctx context.Context, d engine.Engine, sc appScheme, wins [][2]time.Time, maxLag time.Duration) (*TimeCheck, error) {
	tol := sc.tick + maxLag
	c := &TimeCheck{Windows: len(wins), Tolerance: Duration(tol), Tick: Duration(sc.tick)}
	micros := d.EpochMicros("created_at")
	byKey := d.SQL("SELECT id, " + micros + " FROM " + d.Qualify(sc.Parent()) + " WHERE id >= $1 AND id <= $2")
	byTime := d.SQL("SELECT id, " + micros + " FROM " + d.Qualify(sc.Parent()) + " WHERE created_at >= $1 AND created_at < $2")
	for _, w := range wins {
		a, err := sc.boundArgs(d, w)
		if err != nil {
			return nil, err
		}
		k, err := d.KeyRows(ctx, sc.Row, byKey, a...)
		if err != nil {
			return nil, err
		}
		t, err := d.KeyRows(ctx, sc.Row, byTime, d.TimeArg(w[0]), d.TimeArg(w[1]))
		if err != nil {
			return nil, err
		}
		n, edge, bad, err := compareWindow(sc, w, k, t, tol)
		if err != nil {
			return nil, err
		}
		c.Rows += n
		c.EdgeRows += edge
		c.Mismatches += bad
	}
	return c, nil
}

// compareWindow compares the rows of one window by key (byKey) and by created_at (byTime):
// rows is the number of distinct rows, edge those one way alone returned within tol of an
// edge, bad the others, and the rows byKey returned whose decoded time is outside the window.
func compareWindow(sc appScheme, w [2]time.Time, byKey, byTime []engine.KeyRow, tol time.Duration) (rows, edge, bad int64, err error) {
	type seen struct {
		row      engine.KeyRow
		key, tim bool
	}
	m := map[any]*seen{}
	for _, r := range byKey {
		m[r.Key] = &seen{row: r, key: true}
	}
	for _, r := range byTime {
		if s, ok := m[r.Key]; ok {
			s.tim = true
		} else {
			m[r.Key] = &seen{row: r, tim: true}
		}
	}
	for _, s := range m {
		rows++
		id, err := sc.idOf(keyOf(s.row.Key))
		if err != nil {
			return 0, 0, 0, err
		}
		p, err := sc.codec.Decode(id)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("dbbench: decode %s: %w", sc.Row.Label, err)
		}
		inWindow := !p.Time.Before(w[0]) && p.Time.Before(w[1])
		if s.key && !inWindow {
			bad++ // the bounds let in an ID from outside the window
			continue
		}
		if s.key && s.tim {
			continue
		}
		gap := time.UnixMicro(s.row.Created).Sub(p.Time)
		if gap < 0 {
			gap = -gap
		}
		if gap <= tol {
			edge++
		} else {
			bad++
		}
	}
	return rows, edge, bad, nil
}

// summarizeApp fills a result's throughput, sizes and WAL from its runs: medians of ops/s and
// WAL; the sizes of the last run, whose tables the queries read.
func summarizeApp(res *AppResult, runs []appRun) {
	var rates, wal []float64
	for _, r := range runs {
		rate := float64(r.ops) / r.seconds
		res.RunsOpsPerSec = append(res.RunsOpsPerSec, rate)
		rates = append(rates, rate)
		wal = append(wal, perRow(r.wal, r.ops))
	}
	last := runs[len(runs)-1]
	res.Operations = last.ops
	res.OpsPerSec, res.WALBytesPerOp = median(rates), median(wal)
	res.Structures = last.structs
	res.BytesPerOp = perRow(last.bytesAll, last.ops)
	res.Contention = last.contention
}

// appNotes explains the app workload's figures.
func appNotes(rep *Report) []string {
	var out []string
	s := rep.Settings
	out = append(out, fmt.Sprintf("Each operation is one parent row and %s (%s mode, %d client(s)). created_at is the time the application read right after making the parent's ID.", childRows(s.Children), s.Mode, s.Clients))
	out = append(out, fmt.Sprintf("The time query asks for the parent rows of a %s window, at %d windows spread over the load (each holds the created_at of a parent sampled at random) and aligned to each scheme's tick; the check answers up to 20 of them both ways (key bounds and created_at) and compares the rows: a row only one way returns must lie within one tick plus the largest created_at-to-ID gap of the load from a window edge, as idkit.Bounds documents for ranges on ticks.", s.Window, s.Lookups))
	if dialectOf(s.Engine).SharedServer {
		out = append(out, "WAL/redo bytes are server-wide counters: other activity on the server during a load is counted too.")
	}
	return out
}

// appSchemeNotes explains what a scheme's keys or ticks change in its figures: a window
// rounded up to the scheme's tick, and masked keys.
func appSchemeNotes(cfg Config, schemes []appScheme) []string {
	var out []string
	for _, sc := range schemes {
		if sc.window != cfg.Window {
			out = append(out, fmt.Sprintf("%s: the time window is %s, not %s: a window is aligned to the scheme's tick of %s, so it is rounded up to a whole number of ticks.",
				sc.Row.Label, sc.window, cfg.Window, sc.tick))
		}
		masked := false
		if sp, err := idkit.ParseSpec(sc.Row.Spec); err == nil && sc.Row.Spec != "" {
			masked = sp.Has("mask")
		}
		switch {
		case masked && !engine.KeysOrdered(sc.Row):
			out = append(out, fmt.Sprintf("%s stores its masked public text as the key (idkit.FormatID): a keyed permutation of the ID with no time order, so its time query goes through the created_at index.", sc.Row.Label))
		case masked && sc.Row.Col != engine.ColPublicText:
			what := "the stored IDs"
			if sc.Row.Col == engine.ColText || sc.Row.Col == engine.ColTextICU || sc.Row.Col == engine.ColTextDefault {
				what = "the stored IDs' canonical text (idkit.ID.String)"
			}
			out = append(out, fmt.Sprintf("%s stores %s as its keys, not the masked text: the mask changes only the text an API shows, so the keys keep their time order.", sc.Row.Label, what))
		}
	}
	return out
}

// appMaxRSS records the process's largest resident set in the report.
func appMaxRSS(rep *Report) {
	runtime.GC()
	rep.Settings.MaxRSSBytes = maxRSS()
}
