package runner

import (
	"bytes"
	"io"
	"os"
)

// stdoutInMemory is how much of a command's stdout, copied as it comes, is
// held in memory before it goes to a spool file: a task with a short
// output creates no file. (On ext4 a new inode for every task, with the
// ones just deleted, cost more than everything else teamrun does for it.)
const stdoutInMemory = 64 << 10

// stdoutSpool holds what a command wrote to stdout: in memory up to
// stdoutInMemory bytes, then in a spool file in dir, the memory's part
// moved there. The command writes to the file itself when nothing copies
// its output as it comes (direct).
type stdoutSpool struct {
	dir string
	// limit, when above zero, is all that is kept, in memory: what comes
	// after it is drained and dropped, and no file is made (a tool's
	// output, which the model reads 32 KiB of, needs no disk, a full one
	// included).
	limit int
	mem   []byte
	f     *os.File
	err   error // the first write that failed; later ones are dropped
}

// direct gives the spool its file at once, for the command to write to.
func (s *stdoutSpool) direct() error {
	f, err := spool(s.dir)
	s.f = f
	return err
}

// Write never fails, so that the command's output is always drained (a
// copy that stopped would block the command on a full pipe); the first
// error is in s.err, and the task fails with it.
func (s *stdoutSpool) Write(p []byte) (int, error) {
	if s.err != nil {
		return len(p), nil
	}
	if s.limit > 0 {
		s.mem = append(s.mem, p[:min(len(p), max(s.limit-len(s.mem), 0))]...)
		return len(p), nil
	}
	if s.f == nil {
		if len(s.mem)+len(p) <= stdoutInMemory {
			s.mem = append(s.mem, p...)
			return len(p), nil
		}
		f, err := spool(s.dir)
		if err == nil {
			_, err = f.Write(s.mem)
		}
		if err != nil {
			if f != nil {
				f.Close()
			}
			s.err = err
			return len(p), nil
		}
		s.f, s.mem = f, nil
	}
	if _, err := s.f.Write(p); err != nil {
		s.err = err
	}
	return len(p), nil
}

func (s *stdoutSpool) size() (int64, error) {
	if s.f == nil {
		return int64(len(s.mem)), nil
	}
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (s *stdoutSpool) reader(n int64) io.Reader {
	if s.f == nil {
		return bytes.NewReader(s.mem[:n])
	}
	return io.NewSectionReader(s.f, 0, n)
}

// text is the output, at most limit bytes when limit > 0.
func (s *stdoutSpool) text(limit int) (string, error) {
	if s.f != nil {
		return readSpool(s.f, limit)
	}
	b := s.mem
	if limit > 0 && len(b) > limit {
		b = b[:limit]
	}
	return string(b), nil
}

func (s *stdoutSpool) close() {
	if s.f != nil {
		s.f.Close()
	}
}
