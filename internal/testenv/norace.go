//go:build !race

package testenv

// Race is set when the race detector is on (see race.go).
const Race = false
