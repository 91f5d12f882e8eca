// Package regfile opens the files teamrun keeps (session files, journals,
// logs, audit.log, config.yml): they are regular files, and anything else
// put in their place is refused at once. A named pipe opened the usual
// way waits for a writer (or, to write it, a reader) for ever, and the
// command with it, deaf to SIGTERM.
package regfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular: where teamrun keeps a file there is something else (a
// named pipe, a device, a folder), which teamrun never puts there.
var ErrNotRegular = errors.New("not a regular file")

// NotRegular is ErrNotRegular for a file of mode m, naming what it is:
// "a named pipe, not a regular file".
func NotRegular(m fs.FileMode) error {
	kind := "a special file"
	switch {
	case m.IsDir():
		kind = "a folder"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s, %w", kind, ErrNotRegular)
}

// Open opens path to read it, refusing (ErrNotRegular) what is no regular
// file; the FileInfo is the descriptor's, of the very file opened. flags
// adds to O_RDONLY (O_NOFOLLOW).
func Open(path string, flags int) (*os.File, fs.FileInfo, error) {
	return OpenFile(path, os.O_RDONLY|flags, 0)
}

// OpenFile is os.OpenFile refusing (ErrNotRegular) what is no regular
// file, for reading or writing, without waiting for a pipe's other end.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flag|nonBlock, perm)
	if errors.Is(err, syscall.ENXIO) {
		// Opened to write without waiting, a named pipe with no reader
		// (or a socket) fails "no such device or address": say what it is.
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			err = &fs.PathError{Op: "open", Path: path, Err: NotRegular(fi.Mode())}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := Regular(f)
	if err == nil {
		err = blocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Regular is f's FileInfo, or ErrNotRegular when f is no regular file.
func Regular(f *os.File) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = NotRegular(fi.Mode())
	}
	return fi, err
}
