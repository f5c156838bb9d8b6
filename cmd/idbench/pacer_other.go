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
