//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A named pipe is refused at once, to read or to write, saying what it
// is; opened the usual way to write, it waited for a reader for ever. A
// regular file opens as usual, in blocking mode.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	file := filepath.Join(dir, "file")
	tests := []struct {
		name    string
		path    string
		flag    int
		refused string // "" when it opens
	}{
		{"pipe to read", pipe, os.O_RDONLY, "a named pipe, not a regular file"},
		{"pipe to write", pipe, os.O_WRONLY | os.O_APPEND, "a named pipe, not a regular file"},
		{"pipe to write, created", pipe, os.O_WRONLY | os.O_CREATE | os.O_TRUNC, "a named pipe, not a regular file"},
		{"pipe to read and write", pipe, os.O_RDWR, "a named pipe, not a regular file"},
		{"folder", dir, os.O_RDONLY, "a folder, not a regular file"},
		{"file to write", file, os.O_WRONLY | os.O_CREATE, ""},
		{"file to read", file, os.O_RDONLY, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, fi, err := OpenFile(tc.path, tc.flag, 0o600)
			if tc.refused != "" {
				if err == nil {
					f.Close()
				}
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err = %v, want %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if !fi.Mode().IsRegular() {
				t.Errorf("mode %v", fi.Mode())
			}
			// Not f.Fd(), which could make it blocking itself.
			rc, err := f.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var fl int
			if err := rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
				t.Fatal(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if fl&unix.O_NONBLOCK != 0 {
				t.Errorf("the file was left in non-blocking mode")
			}
		})
	}
}
