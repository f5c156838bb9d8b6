package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// newTicker returns a ticker whose ticks fall at now + k·period, k ≥ 1, ending with ctx. On
// Linux it is a timerfd: the Go runtime, when idle, sleeps in epoll with millisecond
// granularity, so a time.Timer due in 100 µs fires about a millisecond late; a timerfd wakes
// epoll itself at the nanosecond it expires.
func newTicker(ctx context.Context, period time.Duration) (ticker, error) {
	return newTimerfdTicker(ctx, period)
}

// timerfdTicker is a periodic Linux timerfd on CLOCK_MONOTONIC, the clock under Go's
// monotonic time, read through the runtime's netpoller: each 8-byte read blocks the goroutine
// (not the thread) until the timer has expired and returns the number of expirations since
// the previous read.
type timerfdTicker struct {
	ctx   context.Context
	f     *os.File
	start time.Time   // tick k falls at start + k·period or a little later
	stop  func() bool // unregisters the context's wake-up
	buf   [8]byte
}

// newTimerfdTicker creates and arms the timerfd. Once ctx ends, a read returns the context's
// error at once: a read deadline in the past unblocks it.
func newTimerfdTicker(ctx context.Context, period time.Duration) (*timerfdTicker, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("load: timerfd_create: %w", err)
	}
	// A non-blocking descriptor makes os.NewFile register it with the netpoller.
	f := os.NewFile(uintptr(fd), "timerfd")
	// The ticks are armed on an absolute clock reading taken right after time.Now, so that
	// they fall at start + k·period give or take the nanoseconds between the two readings
	// (late, never early), whatever the time spent arming.
	start := time.Now()
	var mono unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		f.Close()
		return nil, fmt.Errorf("load: clock_gettime: %w", err)
	}
	spec := unix.ItimerSpec{Interval: unix.NsecToTimespec(int64(period)), Value: unix.NsecToTimespec(mono.Nano() + int64(period))}
	if err := unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		f.Close()
		return nil, fmt.Errorf("load: timerfd_settime %v: %w", period, err)
	}
	t := &timerfdTicker{ctx: ctx, f: f, start: start}
	t.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	return t, nil
}

func (t *timerfdTicker) started() time.Time { return t.start }

func (t *timerfdTicker) wait() (int64, error) {
	n, err := t.f.Read(t.buf[:])
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && t.ctx.Err() != nil:
		return 0, t.ctx.Err()
	case err != nil:
		return 0, fmt.Errorf("reading the timerfd: %w", err)
	case n != len(t.buf):
		return 0, fmt.Errorf("reading the timerfd: %d bytes, want %d", n, len(t.buf))
	}
	return int64(binary.NativeEndian.Uint64(t.buf[:])), nil
}

func (t *timerfdTicker) close() error {
	t.stop()
	if err := t.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("load: closing the timerfd: %w", err)
	}
	return nil
}

// monotonicName names the clock monotonicNS reads, for the --timeline header.
const monotonicName = "CLOCK_MONOTONIC"

// monotonicNS returns CLOCK_MONOTONIC in nanoseconds, read right after t was (t is a reading
// of time.Now taken just before): the clock perf record -k mono stamps its events with, so
// that a --timeline lines up with a perf trace of the same seconds. It returns 0 if the
// clock cannot be read.
func monotonicNS(time.Time) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
