// Command idwriter is the worker of the multi-process fault tests: it takes a node number
// (from a lease store, or fixed), generates Snowflake IDs at a steady rate and appends them
// to a file as 8-byte little-endian words until its time is up or it is killed.
//
// On stdout it prints "node N" once it holds its node (with -store, "held N since UNIXNANO"
// too), then "done issued=N errors=N" when it ends normally. With -timed each ID is followed
// by the times its Next call started and returned (24-byte records, see proctest.ReadTimed),
// for the partition tests' history checker. Its clock can be offset (-offset -2s) to play a wall clock stepped back
// while the process was down.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/idkit/idkit/layouts"
	"github.com/idkit/idkit/schemes"
	"github.com/idkit/idkit/schemes/nodeid"
	_ "github.com/idkit/idkit/schemes/nodeid/etcdlease" // etcd:// stores
	_ "github.com/idkit/idkit/schemes/nodeid/pglease"   // postgres:// stores
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "idwriter:", err)
		os.Exit(1)
	}
}

// offsetClock is the system clock shifted by a fixed offset.
type offsetClock struct{ off time.Duration }

func (c offsetClock) Now() time.Time        { return time.Now().Add(c.off) }
func (c offsetClock) Sleep(d time.Duration) { time.Sleep(d) }

func run(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("idwriter", flag.ContinueOnError)
	store := fs.String("store", "", "lease store URL; empty for a fixed node")
	node := fs.Uint64("node", 0, "fixed node number when -store is empty")
	nodeBits := fs.Uint("node-bits", 3, "node bits of the layout (time 41 ms, seq 12)")
	ttl := fs.Duration("ttl", 2*time.Second, "lease TTL")
	wait := fs.Duration("wait", 0, "keep trying to claim a slot this long while none is free")
	marks := fs.String("marks", "", "mark file for a fixed node; empty: none")
	leaseMarks := fs.Bool("lease-marks", true, "with -store: keep the high-water mark in the lease store (false: the lease alone protects)")
	out := fs.String("out", "", "file the IDs are appended to")
	dur := fs.Duration("for", 5*time.Second, "how long to generate")
	perMs := fs.Int("rate", 20, "IDs per millisecond")
	offset := fs.Duration("offset", 0, "clock offset")
	driftWait := fs.Duration("drift-wait", 0, "drift policy MaxWait (0: default)")
	fence := fs.Bool("fence", true, "with -store: stop issuing when the lease cannot be renewed in time (false: a fault test's control only)")
	timed := fs.Bool("timed", false, "write each ID with the start and end of its Next call (unix ns)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l := layouts.Layout{
		Name:   "proc",
		Fields: []layouts.Field{layouts.Time(41), layouts.Node("node", *nodeBits), layouts.Seq(12)},
		Unit:   time.Millisecond,
		Epoch:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	set := schemes.SnowflakeSettings{Layout: l, Node: *node, Drift: schemes.DriftPolicy{MaxWait: *driftWait}}
	if *offset != 0 {
		set.Clock = offsetClock{*offset}
	}
	var lease *nodeid.Lease
	if *store != "" {
		deadline := time.Now().Add(*wait)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s, err := nodeid.OpenStore(ctx, *store)
			if err == nil {
				lease, err = nodeid.Hold(ctx, s, nodeid.LeaseSettings{Nodes: l.Nodes(), TTL: *ttl})
			}
			cancel()
			if err == nil {
				break
			}
			if !errors.Is(err, nodeid.ErrNoFreeSlot) || time.Now().After(deadline) {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
		defer lease.Close()
		fmt.Fprintf(stdout, "held %d since %d\n", lease.Node(), time.Now().UnixNano())
		set.Node = lease.Node()
		if *fence {
			set.Fence = lease
		}
		if *leaseMarks {
			set.Marks = lease.Marks()
		}
	} else if *marks != "" {
		set.Marks = nodeid.NewFileMarks(*marks, *node)
	}
	start := time.Now()
	g, err := schemes.NewSnowflake(set)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(stdout, "node %d\n", set.Node)
	w := bufio.NewWriterSize(f, 8*1024)
	var buf [24]byte
	rec := buf[:8]
	if *timed {
		rec = buf[:]
	}
	var issued, errs int
	var firstErr error
	var firstID time.Duration = -1
	end := time.Now().Add(*dur)
	// SIGTERM ends the run early, as its time running out would (the "done" line included).
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, os.Interrupt)
	for tick := time.NewTicker(time.Millisecond); time.Now().Before(end) && len(term) == 0; <-tick.C {
		for range *perMs {
			sent := time.Now().UnixNano()
			id, err := g.Next()
			if err != nil {
				errs++
				if firstErr == nil {
					firstErr = err
				}
				break
			}
			if firstID < 0 {
				firstID = time.Since(start)
			}
			issued++
			binary.LittleEndian.PutUint64(buf[:], id)
			if *timed {
				binary.LittleEndian.PutUint64(buf[8:], uint64(sent))
				binary.LittleEndian.PutUint64(buf[16:], uint64(time.Now().UnixNano()))
			}
			w.Write(rec)
		}
		// Flush every millisecond: a SIGKILL loses at most the IDs of the current one.
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "done issued=%d errors=%d first_id_after=%v first_error=%v\n", issued, errs, firstID, firstErr)
	return nil
}
