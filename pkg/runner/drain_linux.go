package runner

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// drainPipe is a pipe for a command's stdout or stderr whose teamrun end
// is a bare non-blocking descriptor, read by drain, outside Go's poller.
func drainPipe() (child *os.File, ours int, err error) {
	c, o, err := rawPipe(false, true)
	if err != nil {
		return nil, -1, err
	}
	return os.NewFile(uintptr(c), "|child"), o, nil
}

func closeFd(fd int) { unix.Close(fd) }

// openPidfd is a descriptor of the started process pid that poll(2) sees
// readable once it has ended.
func openPidfd(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

// drain waits for the command and copies its stdout and stderr (teamrun's
// ends of their pipes, -1 when absent) to outW and errW, all on the
// calling goroutine: one poll(2) over the pipes and a pidfd of the leader
// replaces a goroutine per stream and their hand-offs. Once the leader has
// ended, ended runs (it kills what is left of the group) and the pipes
// are read to their end, at most grace longer: only a process that left
// the group can hold them open that long, and its output is not the
// task's. drain closes pidfd (openPidfd's).
func drain(pidfd int, cmd *process, out, errp int, outW, errW io.Writer, grace time.Duration, ended func(error) error) (err error) {
	defer unix.Close(pidfd)
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	writers := []io.Writer{nil}
	for _, s := range []struct {
		fd int
		w  io.Writer
	}{{out, outW}, {errp, errW}} {
		if s.fd >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(s.fd), Events: unix.POLLIN})
			writers = append(writers, s.w)
		}
	}
	var buf []byte // only once there is output: most commands print little or nothing
	open := len(fds) - 1
	exited := false
	var deadline time.Time
	for open > 0 || !exited {
		timeout := -1
		if exited {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			timeout = int(left/time.Millisecond) + 1
		}
		if _, perr := unix.Poll(fds, timeout); perr != nil && !errors.Is(perr, unix.EINTR) {
			// Cannot wait this way any longer: what is left of the
			// command ends as if its grace had run out; one still
			// running is killed first, as its output is no longer read
			// (it could block on a full pipe and Wait never return).
			if !exited {
				_ = killGroup(cmd.proc.Pid)
				err = ended(cmd.wait())
			}
			return err
		}
		if !exited && fds[0].Revents != 0 {
			exited = true
			fds[0].Fd = -1 // poll ignores it from now on
			err = ended(cmd.wait())
			deadline = time.Now().Add(grace)
		}
		for i := 1; i < len(fds); i++ {
			if fds[i].Fd < 0 || fds[i].Revents == 0 {
				continue
			}
			// A pipe whose writers are gone with nothing left in it polls
			// POLLHUP without POLLIN: its end, no read needed.
			if fds[i].Revents&unix.POLLIN == 0 {
				fds[i].Fd = -1
				open--
				continue
			}
			if buf == nil {
				buf = make([]byte, copyBuf)
			}
			if !readAvailable(int(fds[i].Fd), buf, writers[i]) {
				fds[i].Fd = -1
				open--
			}
		}
	}
	return err
}

// readAvailable copies what fd has now to w; false at its end (or an
// error: the stream is over for teamrun either way).
func readAvailable(fd int, buf []byte, w io.Writer) bool {
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 && w != nil {
			_, _ = w.Write(buf[:n])
		}
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return true
		case err != nil || n == 0:
			return false
		case n < len(buf):
			return true // the rest, if any, on the next poll
		}
	}
}
