//go:build unix

package checkpoint

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a live process on this host
// (EPERM: it exists, another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
