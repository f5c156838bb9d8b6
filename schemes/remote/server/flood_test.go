package server_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/h2raw"
	v1 "github.com/idkit/idkit/schemes/remote/idkitv1"
	"github.com/idkit/idkit/schemes/remote/idkitv1/idkitv1connect"
	"github.com/idkit/idkit/schemes/remote/server"
	"golang.org/x/net/http2"
)

// heapAfterGC is the live heap once the garbage is collected. The tests that measure it
// (TestFloodBounded, TestTotalBytesBounded) must not call t.Parallel: the heap is the whole
// process's, and the parallel tests of the package only start once every test that is not
// parallel has finished, so these run alone.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// flood opens one connection to addr and sends streams gRPC requests, each for count text
// UUIDv7, without ever reading an answer; it returns how much the live heap (the server's, in
// this process) grew once the server has done what it will with them.
func flood(t *testing.T, addr string, streams, count int) (grew int64) {
	t.Helper()
	before := heapAfterGC()
	c := h2raw.Dial(t, addr)
	body := h2raw.GRPCFrame(&v1.NextRequest{Generator: "keys", Count: uint32(count), Text: true})
	for range streams {
		c.Send("POST", idkitv1connect.IDServiceNextProcedure, body, h2raw.GRPC...)
	}
	// The server has made every answer it will make once the heap stops growing.
	grew = int64(settledHeap()) - int64(before)
	c.Close()
	settledHeap() // and the server has let go of them once it stops shrinking
	return grew
}

// settledHeap waits until the live heap stays within 256 KiB for three looks in a row (up to
// 20 s) and returns it.
func settledHeap() uint64 {
	last, still := heapAfterGC(), 0
	for deadline := time.Now().Add(20 * time.Second); still < 3 && time.Now().Before(deadline); {
		time.Sleep(150 * time.Millisecond)
		now := heapAfterGC()
		if d := int64(now) - int64(last); d < 256<<10 && d > -256<<10 {
			still++
		} else {
			still = 0
		}
		last = now
	}
	return last
}

// TestFloodBounded: one connection that asks for much and reads nothing makes the server hold
// no more than its budget (Config.MaxConnBytes) and a little per stream, on both stacks; the
// control, with the limits lifted, holds many times more. A scaled-down version of what took
// idkitd's grpc-go path to 2.2 GB (the full one runs in make fault).
func TestFloodBounded(t *testing.T) {
	const (
		streams = 75   // half of 150 with half the budget: the same ratios in half the time
		count   = 3000 // text UUIDv7: about 165 KB on the wire, 500 KB counted, per answer
		budget  = 512 << 10
	)
	gens := []server.Generator{{Name: "keys", Spec: "uuidv7"}}
	bounded := start(t, server.Config{Generators: gens, MaxConnBytes: budget})
	lifted := start(t, server.Config{Generators: gens, MaxConnBytes: 1 << 40, MaxStreams: 10_000})
	for i, st := range stacks(bounded) {
		t.Run(st.name, func(t *testing.T) {
			grew := flood(t, st.addr, streams, count)
			ctl := flood(t, stacks(lifted)[i].addr, streams, count)
			t.Logf("live heap grew %.1f MB with the limits, %.1f MB without", float64(grew)/1e6, float64(ctl)/1e6)
			if grew > 6*budget {
				t.Errorf("one unread connection made the server hold %.1f MB (budget %.1f MB)", float64(grew)/1e6, float64(budget)/1e6)
			}
			if ctl < 16*budget {
				t.Errorf("control: without the limits the flood grew the heap by only %.1f MB: the test cannot see what it looks for", float64(ctl)/1e6)
			}
		})
	}
}

// TestStreamLimit: both stacks tell clients how many requests a connection may have in flight
// (SETTINGS_MAX_CONCURRENT_STREAMS): Config.MaxStreams, default 100.
func TestStreamLimit(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 7} {
		cfg := twoGens()
		cfg.MaxStreams = limit
		r := start(t, cfg)
		want := uint32(limit)
		if limit == 0 {
			want = server.DefaultMaxStreams
		}
		for _, st := range stacks(r) {
			got, ok := h2raw.Dial(t, st.addr).Settings()[http2.SettingMaxConcurrentStreams]
			if !ok || got != want {
				t.Errorf("%s with MaxStreams %d: SETTINGS_MAX_CONCURRENT_STREAMS %d (sent: %v), want %d", st.name, limit, got, ok, want)
			}
		}
	}
}

// TestWriteStall: a client that grants itself all the flow-control window it likes and then
// reads nothing fills the socket; the server closes such a connection once its writes have
// made no progress for Config.WriteTimeout, which frees what it held. In the control, with a
// long timeout, the connection is still open twice as long after.
func TestWriteStall(t *testing.T) {
	t.Parallel()
	var slowest time.Duration
	for _, timeout := range []time.Duration{300 * time.Millisecond, time.Hour} {
		r := start(t, server.Config{Generators: []server.Generator{{Name: "keys", Spec: "uuidv7"}}, WriteTimeout: timeout})
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, st := range stacks(r) {
			c := h2raw.Dial(t, st.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
			c.WindowUpdate(0, 1<<31-1-65535)
			body := h2raw.GRPCFrame(&v1.NextRequest{Generator: "keys", Count: 5000, Text: true})
			for range 40 { // about 11 MB of answers, more than the sockets hold
				c.Send("POST", idkitv1connect.IDServiceNextProcedure, body, h2raw.GRPC...)
			}
			sent := time.Now()
			wg.Go(func() {
				if timeout < time.Minute {
					for c.Open() {
						if time.Since(sent) > 30*time.Second {
							t.Errorf("%s: still open 30s after the client stopped reading (write timeout %v)", st.name, timeout)
							return
						}
						time.Sleep(100 * time.Millisecond)
					}
					mu.Lock()
					slowest = max(slowest, time.Since(sent))
					mu.Unlock()
					return
				}
				time.Sleep(2*slowest + time.Second)
				if !c.Open() {
					t.Errorf("%s: control (write timeout %v): the connection was closed", st.name, timeout)
				}
			})
		}
		wg.Wait()
		if timeout < time.Minute {
			t.Logf("write timeout %v: both connections closed within %v of the last request", timeout, slowest)
		}
	}
}
