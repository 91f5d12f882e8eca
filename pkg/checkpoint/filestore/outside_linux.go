package filestore

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readOutsideHeap reads f, size bytes from where it is, into a private
// anonymous mapping of its own, outside Go's heap, and returns it with
// what unmaps it. ok is false when there is none to make, or the file is
// not size bytes long any more (it grew, or reading failed): then nothing
// is kept, and f is to be read again from the start the usual way.
//
// While a restore loads, nothing is collected (cmd/teamrun's loadingGC):
// a session file read into the heap stays in the process's peak RSS to the
// end, 5.6 MB of a 10,000-task one, long after it was decoded and compared.
// Unmapped, it leaves the RSS before the restore allocates the most. Huge
// pages are asked for, as for the loading's heap (a page fault per 4 KiB
// costs ~7 µs on some virtual machines).
func readOutsideHeap(f *os.File, size int64) (data []byte, release func(), ok bool) {
	const huge = 2 << 20
	if size <= 0 || size > 1<<40 {
		return nil, nil, false
	}
	// One byte more says whether the file grew; the length is a multiple
	// of a huge page, so that the kernel can back all of it with them.
	length := (int(size) + 1 + huge - 1) &^ (huge - 1)
	m, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, false
	}
	release = func() { _ = unix.Munmap(m) }
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	n, err := io.ReadFull(f, m[:size+1])
	if int64(n) != size || !errors.Is(err, io.ErrUnexpectedEOF) {
		release()
		return nil, nil, false
	}
	return m[:size:size], release, true
}

// dropRead lets go of the pages of data, a snapshot readOutsideHeap read,
// before upto (rounded down to a huge page): the decoder will not read
// them again (checkpoint.DecodeSessionDropping), and they would stay in
// the RSS until the whole snapshot is unmapped.
func dropRead(data []byte, upto int) {
	const huge = 2 << 20
	if n := upto &^ (huge - 1); n > 0 && n <= len(data) {
		_ = unix.Madvise(data[:n], unix.MADV_DONTNEED)
	}
}
