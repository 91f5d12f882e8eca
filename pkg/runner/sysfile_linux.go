package runner

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux os.OpenFile and os.Pipe try to register every file with the
// network poller, five fcntl/epoll_ctl calls each that a regular file or
// a child's end of a pipe only undoes (epoll refuses regular files; exec
// makes a child's ends blocking again). A task opens several of them; these
// open them plainly, outside the poller.

// shortStdin is what a new, empty pipe surely takes without blocking (a
// pipe is never smaller than a page): a description this short is written
// before the command starts, with no goroutine.
const shortStdin = 4096

// createPlain creates or truncates path for writing, outside the poller;
// a symbolic link in its place is refused.
func createPlain(path string) (*os.File, error) {
	fd, err := openPlain(path)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openPlain is createPlain's descriptor, without the *os.File.
func openPlain(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// writePlain writes data to path, opened as createPlain opens it, through the
// file descriptor alone: a context file is written once and closed, and an
// *os.File around it cost a fcntl and a finalizer per task.
func writePlain(path, data string) error {
	fd, err := openPlain(path)
	if err != nil {
		return err
	}
	// The string's own bytes, as os.File.WriteString passes them: a copy
	// of an output up to a mebibyte would be garbage.
	b := unsafe.Slice(unsafe.StringData(data), len(data))
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		b = b[n:]
	}
	if err := unix.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// renameFile renames a file of teamrun's own: os.Rename first looks
// whether newpath is a folder, a system call the kernel's own EISDIR saves.
func renameFile(oldpath, newpath string) error {
	if err := unix.Rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// spool is a file for a command's stdout that has no name at all
// (O_TMPFILE): nothing is left behind, even by a kill -9, and it costs one
// system call. File systems without O_TMPFILE get a named file, unlinked
// at once.
func spool(dir string) (*os.File, error) {
	dir = spoolDir(dir)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(stdout)")), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return namedSpool(dir)
}

// childPipe is a pipe between teamrun and a command: the command's end
// (its stdin's read end when childReads, else its stderr's or stdout's
// write end) is blocking and outside the poller, as exec would leave it;
// teamrun's end is in the poller when poll is set, so that closing it
// ends a copy blocked on it.
func childPipe(childReads, poll bool) (child, ours *os.File, err error) {
	c, o, err := rawPipe(childReads, poll)
	if err != nil {
		return nil, nil, err
	}
	// os.NewFile puts a non-blocking descriptor in the poller.
	return os.NewFile(uintptr(c), "|child"), os.NewFile(uintptr(o), "|teamrun"), nil
}

// rawPipe is pipe2's two descriptors, the command's end and teamrun's,
// teamrun's non-blocking when nonblock is set.
func rawPipe(childReads, nonblock bool) (child, ours int, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return -1, -1, os.NewSyscallError("pipe2", err)
	}
	child, ours = fds[1], fds[0]
	if childReads {
		child, ours = fds[0], fds[1]
	}
	if nonblock {
		if err := unix.SetNonblock(ours, true); err != nil {
			unix.Close(child)
			unix.Close(ours)
			return -1, -1, os.NewSyscallError("fcntl", err)
		}
	}
	return child, ours, nil
}

// singleLink tells a file no other name links to, which teamrun may
// rewrite without touching anybody else's.
func singleLink(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}
