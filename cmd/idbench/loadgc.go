package main

import (
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// loadGCLimit is the soft memory limit under which idbench load runs its garbage collector
// when it loads an idkitd in another process: the collector is otherwise off, so it runs
// about once per this many bytes allocated instead of every few megabytes. At 10,000 paced
// gRPC requests/s the load generator allocates some 60 MB/s around 22 MB of latency
// histograms; with Go's default (GOGC=100) it collected every ~0.4 s, each cycle taking
// 2–5 ms of wall time on its one CPU, and the requests in flight then were the slowest of the
// run (docs/bench/paced-tail.txt).
const loadGCLimit = 1 << 30

// quietGC turns the load generator's garbage collector off under the soft memory limit
// loadGCLimit for a run against an idkitd in another process, and returns what restores the
// settings before it and a note for the report. It leaves the collector alone, returning a
// no-op and "", with --spawn (the process's collector is idkitd's too, whose cost belongs in
// the measurement) or when GOGC or GOMEMLIMIT is set in the environment (getenv), which then
// rules.
func quietGC(c loadConfig, getenv func(string) string) (restore func(), note string) {
	if c.spawn || getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}, ""
	}
	limit := debug.SetMemoryLimit(loadGCLimit)
	percent := debug.SetGCPercent(-1)
	return func() {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
		}, fmt.Sprintf("the load generator ran with its garbage collector off under a %d MiB soft memory limit (GOGC or GOMEMLIMIT in its environment would rule instead), so that its own collections stay out of the latency",
			loadGCLimit>>20)
}

// gcCycles returns how many garbage collections the process has completed so far.
func gcCycles() int64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), math.MaxInt64))
}
