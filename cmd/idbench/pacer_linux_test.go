package main

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestTimerfdTicker checks the timerfd ticker's tick counts against the clock, its prompt
// end with its context, and that it closes its descriptor.
func TestTimerfdTicker(t *testing.T) {
	const period = 200 * time.Microsecond
	tk, err := newTimerfdTicker(context.Background(), period)
	if err != nil {
		t.Fatal(err)
	}
	fd := tk.f.Fd()
	checkTicker(t, tk, period)
	if err := tk.close(); err != nil {
		t.Fatal(err)
	}
	// The descriptor number may be reused at once by another test's file, so only check
	// that it no longer names a timerfd.
	if target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd))); err == nil && target == "anon_inode:[timerfd]" {
		t.Errorf("fd %d is still a timerfd after close", fd)
	}
	checkTickerCancel(t, func(ctx context.Context) (ticker, error) { return newTimerfdTicker(ctx, time.Hour) })
}
