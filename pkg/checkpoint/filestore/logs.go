package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// LogsDir is the folder beside a session's file holding its attempts'
// output: <store>/<id>.logs/<task>/<attempt>.stdout and .stderr. List skips
// folders; Delete removes it with the session.
func (s *Store) LogsDir(id string) string { return filepath.Join(s.dir, id+".logs") }

func (s *Store) logPath(id, task string, attempt int, stream string) string {
	return filepath.Join(s.LogsDir(id), checkpoint.TaskFileName(task), strconv.Itoa(attempt)+"."+stream)
}

// AttemptLog is the file of one stream ("stdout" or "stderr") of an
// attempt of the session l holds, written as the output comes (what a
// killed run's attempt wrote is kept): made (0600, never through a
// symbolic link, be it the file, <id>.logs or the task's folder) at the
// first byte, so a silent stream costs no file. What cannot be kept (a
// link, a named pipe, a full disk) is an error of its writes, which the
// run tells as a warning and goes on; what was written of it is removed.
func (s *Store) AttemptLog(_ context.Context, l checkpoint.Lock, task string, attempt int, stream string) io.WriteCloser {
	return &logFile{logs: s.LogsDir(l.ID()), path: s.logPath(l.ID(), task, attempt, stream)}
}

// ReadLog is what was kept of one stream of an attempt; an error wrapping
// fs.ErrNotExist when nothing was. Never through a symbolic link, be it
// the file, <id>.logs or the task's folder (O_NOFOLLOW guards only the
// file's own name).
func (s *Store) ReadLog(_ context.Context, id, task string, attempt int, stream string) ([]byte, error) {
	p := s.logPath(id, task, attempt, stream)
	for _, dir := range []string{s.LogsDir(id), filepath.Dir(p)} {
		if err := folderAt(dir); err != nil {
			return nil, err
		}
	}
	f, _, err := openRead(p, noFollow)
	if err != nil {
		return nil, storeErr("read", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, storeErr("read", p, err)
	}
	return data, nil
}

// removeLogs removes a session's kept output (RemoveAll removes a
// symlink in the folder's place, not its target).
func (s *Store) removeLogs(id string) error {
	if err := os.RemoveAll(s.LogsDir(id)); err != nil {
		return storeErr("remove", s.LogsDir(id), err)
	}
	return nil
}

type logFile struct {
	logs string // the session's LogsDir
	path string
	f    *os.File
	err  error // why the log is not kept: nothing more is written
}

func (l *logFile) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if l.f == nil {
		// <id>.logs and its task's folder: O_NOFOLLOW guards only the
		// file's own name.
		for _, dir := range []string{l.logs, filepath.Dir(l.path)} {
			if err := ownDir(dir); err != nil {
				l.err = err
				return 0, err
			}
		}
		// Attempt numbers never recur (a crashed attempt's successor has
		// the next one), so a file of the same name is a leftover.
		f, _, err := regfile.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o600)
		if err != nil {
			l.err = storeErr("write", l.path, err)
			return 0, l.err
		}
		l.f = f
	}
	n, err := l.f.Write(p)
	if err != nil {
		return n, l.discard(err)
	}
	return n, nil
}

// Close ends the log; nil when it is kept whole. After a failed Write it
// returns nil: that Write told why, and there is nothing left to close.
func (l *logFile) Close() error {
	if l.f == nil {
		return nil
	}
	if err := l.f.Close(); err != nil {
		l.f = nil
		return l.discard(err)
	}
	l.f = nil
	return nil
}

// discard removes a log that could not be written whole (a full disk): a
// part of it, read back by `session logs`, would pass for all the attempt
// wrote, so none is kept, as the other stores keep none (their logs are
// written whole at Close). err is why.
func (l *logFile) discard(err error) error {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.err = storeErr("write", l.path, err)
	if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		l.err = fmt.Errorf("%w (the part written is still there, and is not all the attempt wrote: %v; remove it)", l.err, fserr.Bare(rerr))
	}
	return l.err
}
