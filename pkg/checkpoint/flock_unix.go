//go:build unix

package checkpoint

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive, non-blocking flock on f: ok is false when
// someone else holds it.
func flock(f *os.File) (ok bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}
