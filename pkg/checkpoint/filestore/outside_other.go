//go:build !linux

package filestore

import "os"

// readOutsideHeap has no mapping of its own to read into here: the file is
// read into the heap (outside_linux.go).
func readOutsideHeap(*os.File, int64) (data []byte, release func(), ok bool) {
	return nil, nil, false
}

// dropRead has nothing to let go of here: no snapshot is read outside the
// heap.
func dropRead([]byte, int) {}
