//go:build !race

package dbbench_test

const raceEnabled = false
