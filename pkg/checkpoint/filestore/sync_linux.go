package filestore

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the metadata needed to read it back, such
// as its size) without the timestamps fsync would also write.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
