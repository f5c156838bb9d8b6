//go:build !linux

package main

import (
	"context"
	"time"
)

// newTicker returns a ticker whose ticks fall at now + k·period, k ≥ 1, ending with ctx. Off
// Linux it is a time.Timer, which the Go runtime may fire up to a millisecond late when it is
// otherwise idle: the send lag in the report shows how late.
func newTicker(ctx context.Context, period time.Duration) (ticker, error) {
	return newTimerTicker(ctx, period), nil
}

// monotonicName names the clock monotonicNS reads, for the --timeline header.
const monotonicName = "the run's own clock, from the first measurement"

// monotonicNS returns 0: off Linux a --timeline counts from the moment it was made.
func monotonicNS(time.Time) int64 { return 0 }
