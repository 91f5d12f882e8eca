//go:build !linux

package runner

import "os"

// shortStdin is POSIX's PIPE_BUF minimum: see sysfile_linux.go.
const shortStdin = 512

func createPlain(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
}

func writePlain(path, data string) error {
	f, err := createPlain(path)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func renameFile(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func spool(dir string) (*os.File, error) { return namedSpool(dir) }

func childPipe(childReads, poll bool) (child, ours *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if childReads {
		return r, w, nil
	}
	return w, r, nil
}

// singleLink is false where the link count is not known: no file is
// rewritten, each is created anew.
func singleLink(os.FileInfo) bool { return false }
