//go:build !linux

package main

// hugeLoadingHeap does nothing where there are no transparent huge pages
// to ask for (see hugepages_linux.go).
func hugeLoadingHeap(int) (done func()) { return func() {} }
