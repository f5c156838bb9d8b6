//go:build race

package schemes_test

// raceEnabled scales the big concurrency tests down: the race detector makes every atomic
// operation an order of magnitude slower.
const raceEnabled = true
