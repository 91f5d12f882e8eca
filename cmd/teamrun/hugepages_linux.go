package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeLoadingHeap backs the next n bytes of heap with transparent huge
// pages where the kernel gives them only on request (its THP mode is
// "madvise", the default of most distributions), and returns what stops
// asking once loading is done.
//
// Loading a spec and a session allocates heap that is touched for the
// first time, a page fault per 4 KiB: a restored 10,000-task rerun took
// 12,900 of them, more system CPU than all its user CPU on a virtual
// machine (~7 µs each). With 2 MiB pages it takes ~1,700.
//
// Go's runtime never asks for huge pages for its heap, and a request only
// holds for memory already mapped: so the heap is grown by one allocation
// of n bytes, never touched, the request is made for it, and a collection
// frees it at once. The page allocator hands out the lowest free addresses
// first, so what loading allocates next lands there. GODEBUG=disablethp=1,
// Go's own switch for huge pages in its heap, turns this off too.
func hugeLoadingHeap(n int) (done func()) {
	size := hugePageSize()
	if size == 0 || n < 2*size || strings.Contains(","+os.Getenv("GODEBUG")+",", ",disablethp=1,") {
		return func() {}
	}
	// The allocation must not start a collection of its own: the one
	// that frees it is enough.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	b := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + uintptr(size) - 1) &^ uintptr(size-1)
	hi := (start + uintptr(n)) &^ uintptr(size-1)
	err := unix.Madvise(b[lo-start:hi-start], unix.MADV_HUGEPAGE)
	b = nil
	runtime.GC()
	if err != nil {
		return func() {}
	}
	// Once the tasks run, the heap is collected around what is live and
	// its free pages go back to the kernel; khugepaged would make huge
	// pages of them again, and the RSS would creep up (why Go's runtime
	// stopped asking for them).
	return func() { _, _, _ = unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_NOHUGEPAGE) }
}

// hugePageSize is the size of a transparent huge page when the kernel
// gives them on request only, else 0 (none at all, or already
// everywhere).
func hugePageSize() int {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0
	}
	text, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	size, err := strconv.Atoi(string(bytes.TrimSpace(text)))
	if err != nil || size <= 0 || size&(size-1) != 0 {
		return 0
	}
	return size
}
