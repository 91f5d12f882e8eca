//go:build unix

package filestore

import "syscall"

// canCreateIn tells whether files can be made in dir: access(2), one call.
// (A probe file cost a new inode and its removal, each run.) It answers
// for permissions and a read-only file system, as `test -w` does.
func canCreateIn(dir string) error {
	return syscall.Access(dir, 0x2|0x1) // W_OK|X_OK
}
