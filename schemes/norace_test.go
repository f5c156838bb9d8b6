//go:build !race

package schemes_test

const raceEnabled = false
