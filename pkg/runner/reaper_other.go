//go:build !linux

package runner

import "time"

// Only Linux has subreapers: elsewhere a task's process that left its
// group (setsid) is out of reach once its parent has ended.
func setSubreaper(on bool) error { return nil }

func sweepAdopted(owner []string, running map[int]bool, all bool) {}

const recordEvery = time.Second

func recordDescendants(rec *procsFile, seen map[int]uint64) error { return nil }

func processLine(pid int) []byte { return nil }

func killRecorded(path string, ancestors map[int]bool) []int { return nil }
