//go:build race

package testenv

// Race is set when the race detector is on. It allocates beside the code
// it watches, so byte counts measured under it are not the code's: tests
// that bound allocations skip their bound then.
const Race = true
