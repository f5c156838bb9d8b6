//go:build !race

package idkit_test

const raceEnabled = false
