//go:build !linux

package runner

// Only Linux has subreapers: elsewhere a task's process that left its
// group (setsid) is out of reach once its parent has ended.
func setSubreaper(on bool) error { return nil }

func sweepAdopted(owner []string, running map[int]bool, all bool) {}
