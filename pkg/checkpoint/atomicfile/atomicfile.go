// Package atomicfile replaces files so that a reader, or a crash at any
// instant, sees the old content or the new, never a mix: a temp file beside
// the target, fsync, rename over the target, fsync of the folder. Every
// file teamrun replaces (snapshots, state.json, output_file) goes through
// Write.
package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/regfile"
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
	return &Error{Op: op, Path: path, Err: fserr.Bare(err), Renamed: renamed}
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
	return WriteWith(path, copyFrom(r), perm)
}

// WriteWith is Write of what write writes (StageWith).
func WriteWith(path string, write func(io.Writer) error, perm fs.FileMode) error {
	st, err := StageWith(path, write, perm)
	if err != nil {
		return err
	}
	if err := st.Rename(); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fail("sync", filepath.Dir(path), err, true)
	}
	return nil
}

// Staged is the first half of Write: data durable in a temp file beside
// its target, not yet renamed over it. A writer that must replace two
// files in a given order, with one folder sync, stages both first.
type Staged struct {
	tmp, path string
}

// Stage writes data to a temp file beside path (O_EXCL, mode perm) and
// fsyncs it; path is untouched until Rename.
func Stage(path string, data []byte, perm fs.FileMode) (*Staged, error) {
	return StageFrom(path, bytes.NewReader(data), perm)
}

// StageFrom is Stage of what r yields, copied as it comes.
func StageFrom(path string, r io.Reader, perm fs.FileMode) (*Staged, error) {
	return StageWith(path, copyFrom(r), perm)
}

func copyFrom(r io.Reader) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	}
}

// StageWith is Stage of what write writes, through a buffer (an encoder
// that writes in small pieces streams to the file without holding it
// whole). An error of write is a failed write.
func StageWith(path string, write func(io.Writer) error, perm fs.FileMode) (*Staged, error) {
	// A device, a pipe or a folder there (-o /dev/null, a link to
	// /dev/stdout) is refused: the rename would replace it, a device node
	// itself when run as root.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fail("write", path, regfile.NotRegular(fi.Mode()), false)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, fail("create", path, err, false)
	}
	st := &Staged{tmp: tmp.Name(), path: path}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(st.tmp)
		}
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := write(bw); err != nil {
		return nil, fail("write", path, err, false)
	}
	if err := bw.Flush(); err != nil {
		return nil, fail("write", path, err, false)
	}
	if perm != 0o600 { // CreateTemp's own mode
		if err := tmp.Chmod(perm); err != nil {
			return nil, fail("write", path, err, false)
		}
	}
	if err := tmp.Sync(); err != nil {
		return nil, fail("sync", path, err, false)
	}
	if err := tmp.Close(); err != nil {
		return nil, fail("write", path, err, false)
	}
	ok = true
	return st, nil
}

// Temp is the staged file's name, for a writer that appends to it (and
// syncs) before the rename.
func (st *Staged) Temp() string { return st.tmp }

// Rename puts the staged file at its path; the folder is not synced (see
// SyncDir). On failure the temp file is removed.
func (st *Staged) Rename() error {
	if err := os.Rename(st.tmp, st.path); err != nil {
		os.Remove(st.tmp)
		return fail("rename", st.path, err, false)
	}
	return nil
}

// Remove abandons the staged file.
func (st *Staged) Remove() { os.Remove(st.tmp) }

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

// Sweep removes the temp files of path (Stage's, named .<name>.tmp-<digits>)
// last written before before: what a writer killed midway (kill -9, a
// power cut) left beside it, in part, never renamed. A writer that began
// at or after before is left alone. Best effort: what cannot be removed
// stays.
func Sweep(path string, before time.Time) {
	prefix := "." + filepath.Base(path) + ".tmp-"
	des, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return
	}
	for _, d := range des {
		rest, ok := strings.CutPrefix(d.Name(), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !d.Type().IsRegular() {
			continue
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().Before(before) {
			os.Remove(filepath.Join(filepath.Dir(path), d.Name()))
		}
	}
}
