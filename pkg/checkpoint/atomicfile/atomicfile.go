// Package atomicfile replaces files so that a reader, or a crash at any
// instant, sees the old content or the new, never a mix: a temp file beside
// the target, fsync, rename over the target, fsync of the folder. Every
// file teamrun replaces (snapshots, state.json, output_file) goes through
// Write.
package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Error is a failed step of Write. Renamed says the new file had already
// replaced the old one (only the folder's fsync failed): readers see it,
// though a power cut may still undo it.
type Error struct {
	Op      string // create, write, sync, rename
	Path    string // the target
	Err     error  // the system's error, without the temp file's name
	Renamed bool
}

func (e *Error) Error() string { return "cannot " + e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func fail(op, path string, err error, renamed bool) *Error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &Error{Op: op, Path: path, Err: err, Renamed: renamed}
}

// Write replaces path with data, the file made with mode perm. The temp
// file is created with O_EXCL, so a link planted at its name is never
// followed; a link at path itself is replaced, never written through.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteFrom(path, bytes.NewReader(data), perm)
}

// WriteFrom is Write of what r yields, copied as it comes (a large result
// is never whole in memory). An error of r is a failed write.
func WriteFrom(path string, r io.Reader, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fail("create", path, err, false)
	}
	name := tmp.Name()
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return fail("write", path, err, false)
	}
	if perm != 0o600 { // CreateTemp's own mode
		if err := tmp.Chmod(perm); err != nil {
			return fail("write", path, err, false)
		}
	}
	if err := tmp.Sync(); err != nil {
		return fail("sync", path, err, false)
	}
	if err := tmp.Close(); err != nil {
		return fail("write", path, err, false)
	}
	if err := os.Rename(name, path); err != nil {
		return fail("rename", path, err, false)
	}
	renamed = true
	if err := SyncDir(dir); err != nil {
		return fail("sync", dir, err, true)
	}
	return nil
}

// SyncDir makes a folder's entries (a rename, a new or removed file)
// durable. File systems that cannot sync a folder (EINVAL) are left be.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
