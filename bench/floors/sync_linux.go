package floors

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync is what teamrun's file store pays per sync on Linux.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
