package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// FileLock is a held session lock: an flock on <id>.lock, so the kernel drops
// it when its holder dies and nothing stale is left behind.
type FileLock struct {
	store  *Store
	id     string
	mu     sync.Mutex // Release may race with a signal handler's Release
	f      *os.File
	holder checkpoint.Holder
}

// Holder is who holds the lock: this process.
func (l *FileLock) Holder() checkpoint.Holder { return l.holder }

func (l *FileLock) held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f != nil
}

// ID is the locked session's id.
func (l *FileLock) ID() string { return l.id }

// Lock takes the session's exclusive lock. With wait 0 it fails at once
// with a *HeldError naming the holder; otherwise it retries until wait has
// passed or ctx is done.
func (s *Store) Lock(ctx context.Context, id string, wait time.Duration) (checkpoint.Lock, error) {
	l, err := s.lock(ctx, id, wait)
	if err != nil {
		return nil, err // not a typed nil
	}
	return l, nil
}

func (s *Store) lock(ctx context.Context, id string, wait time.Duration) (*FileLock, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	start := time.Now()
	delay := 5 * time.Millisecond
	for {
		l, held, err := s.tryLock(id)
		if err != nil || l != nil {
			return l, err
		}
		if err := checkpoint.WaitTurn(ctx, held, checkpoint.Turn{Wait: wait, Left: wait - time.Since(start), Pause: delay}); err != nil {
			return nil, err
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

func (s *Store) tryLock(id string) (*FileLock, *checkpoint.HeldError, error) {
	path := s.lockPath(id)
	if err := s.makeDir(); err != nil {
		return nil, nil, err
	}
	for {
		// A named pipe or a device put there is no lock file.
		f, _, err := regfile.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
		if err != nil {
			return nil, nil, storeErr("create", path, err)
		}
		ok, err := flock(f)
		if err != nil {
			f.Close()
			return nil, nil, storeErr("lock", path, err)
		}
		if !ok {
			h := readHolder(f)
			// No live holder named after readHolder's wait: one killed
			// (kill -9) whose lock the kernel drops as it finishes
			// exiting, or a task's process it forked and that had not
			// exec'd yet (it holds a copy of the descriptor until then),
			// which a --continue run at once can meet. Try again, for
			// up to about 2 s, rather than say "held" by nobody.
			for tries := 0; h.PID == 0 && tries < 8; tries++ {
				if ok, err = flock(f); err != nil || ok {
					break
				}
				h = readHolder(f)
			}
			if err != nil || !ok {
				f.Close()
				if err != nil {
					return nil, nil, storeErr("lock", path, err)
				}
				return nil, &checkpoint.HeldError{ID: id, PID: h.PID, Host: h.Host, Started: h.Started}, nil
			}
		}
		// Delete removes lock files while holding them: make sure the file
		// locked is still the one at the path, else try again.
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(fi, pi) {
			f.Close()
			if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
				return nil, nil, storeErr("lock", path, err2)
			}
			continue
		}
		host, _ := os.Hostname()
		l := &FileLock{store: s, id: id, f: f, holder: checkpoint.Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)}}
		b, _ := json.Marshal(l.holder)
		// Who holds it is advice for others; the flock is the lock.
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt(append(b, '\n'), 0)
		}
		return l, nil, nil
	}
}

// readHolder reads the holder's note. A holder that has just taken the lock
// may not have written it yet, and a note of a killed process is stale, so
// look again briefly.
func readHolder(f *os.File) checkpoint.Holder {
	host, _ := os.Hostname()
	for i := 0; i < 50; i++ {
		var h checkpoint.Holder
		buf := make([]byte, 512)
		n, _ := f.ReadAt(buf, 0)
		if n > 0 && json.Unmarshal(buf[:n], &h) == nil && h.PID > 0 && (h.Host != host || alive(h.PID)) {
			return h
		}
		time.Sleep(5 * time.Millisecond)
	}
	return checkpoint.Holder{}
}

// Release drops the lock. Releasing twice, or from two goroutines, is
// harmless.
func (l *FileLock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	f := l.f
	l.f = nil
	l.mu.Unlock()
	if f == nil {
		return nil
	}
	_ = f.Truncate(0) // the note would name a run that is gone
	// Closing the last descriptor drops the flock.
	if err := f.Close(); err != nil {
		return storeErr("unlock", l.store.lockPath(l.id), err)
	}
	return nil
}
