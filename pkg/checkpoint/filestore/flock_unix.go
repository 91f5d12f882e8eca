//go:build unix

package filestore

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive, non-blocking flock on f: ok is false when
// someone else holds it.
func flock(f *os.File) (ok bool, err error) { return tryFlock(f, syscall.LOCK_EX) }

// probe tells whether f's flock is free, taking a shared one and keeping
// it until f is closed: a shared flock needs only a read-only descriptor
// (also where flock is emulated with fcntl locks, as on NFS), and two
// probes never see each other as holders. ok is false while a run holds it.
func probe(f *os.File) (ok bool, err error) { return tryFlock(f, syscall.LOCK_SH) }

func tryFlock(f *os.File, how int) (ok bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
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

// flockWait takes an exclusive flock on f, waiting for whoever holds it
// (for the moments a project's state.json is read and replaced).
func flockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// alive reports whether a process of this host exists (EPERM: it exists,
// another user's): a lock note naming a dead process is stale (its holder
// was killed) and is not reported, nor probed by Held.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// noFollow makes an open fail (ELOOP) on a symbolic link: teamrun never
// writes through one (a cloned repository can ship .teamrun/audit.log as a
// link to any file of the user's).
const noFollow = syscall.O_NOFOLLOW
