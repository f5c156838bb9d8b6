//go:build race

package idkit_test

// raceEnabled: the race detector slows the single-goroutine million-ID loops tenfold and has
// nothing to find in them; `make test` runs those loops once more without it.
const raceEnabled = true
