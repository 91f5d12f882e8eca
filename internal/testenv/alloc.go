package testenv

import "runtime"

// Allocated is the least the heap grew by in tries calls of f, in bytes.
// The heap's counters are the whole process's: a goroutine another test
// left running may allocate during a call, which only ever adds.
func Allocated(tries int, f func()) uint64 {
	least := ^uint64(0)
	for range tries {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
