//go:build unix

package regfile

import (
	"os"
	"syscall"
)

// nonBlock makes opening a named pipe return at once instead of waiting
// for its other end (OpenFile refuses it then); a regular file ignores it.
const nonBlock = syscall.O_NONBLOCK

// blocking clears nonBlock on f, a regular file, so that it is written
// and read as any file opened the usual way.
func blocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
