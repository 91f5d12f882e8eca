// Package fserr sorts what a file system call failed with into what the
// user has to deal with before it can succeed: a full disk, a read-only
// mount, permissions, a missing folder… What to do about each is its
// caller's to say: a store points the store elsewhere, a command that
// writes a file the user named (export's -o, init's FILE) names another.
package fserr

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/teamrun/teamrun/internal/regfile"
)

// Kind is what stands in the way of a file operation.
type Kind int

const (
	Other       Kind = iota // none of these: an I/O error, a fault of the disk
	Full                    // no space left, or the quota is used up (ENOSPC, EDQUOT)
	ReadOnly                // the file system is mounted read-only (EROFS)
	Permission              // owner or mode refuse it (EACCES, EPERM)
	NotExist                // a folder on the path does not exist (ENOENT)
	NotDir                  // a part of the path is a file, not a folder (ENOTDIR)
	NameTooLong             // a name on the path is too long (ENAMETOOLONG)
	Link                    // a symbolic link where O_NOFOLLOW refuses one (ELOOP)
	IsDir                   // a folder where a file goes (EISDIR)
	NotRegular              // a special file where a file goes (regfile.ErrNotRegular)
)

// Of is the Kind of err, looked for along its chain (errors.Is). Each
// errno is of one Kind only, so the order of the checks decides nothing.
func Of(err error) Kind {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return Full
	case errors.Is(err, syscall.EROFS):
		return ReadOnly
	case errors.Is(err, fs.ErrPermission):
		return Permission
	case errors.Is(err, fs.ErrNotExist):
		return NotExist
	case errors.Is(err, syscall.ENOTDIR):
		return NotDir
	case errors.Is(err, syscall.ENAMETOOLONG):
		return NameTooLong
	case errors.Is(err, syscall.ELOOP):
		return Link
	case errors.Is(err, syscall.EISDIR):
		return IsDir
	case errors.Is(err, regfile.ErrNotRegular):
		return NotRegular
	}
	return Other
}

// Bare is the system's error inside err without the operation and path(s)
// the os package wrapped it in (fs.PathError, os.LinkError), for a
// message that names the path itself, once: "cannot write f: no space
// left on device", not "… write f: no space left on device". An err
// with neither is returned as it is.
func Bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return err
}
