//go:build race

package checkpoint

// The race detector allocates beside the code it watches: byte counts
// measured under it are not the code's.
const raceEnabled = true
