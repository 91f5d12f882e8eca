package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// FileLock is a held session lock: an flock on <id>.lock, so the kernel drops
// it when its holder dies and nothing stale is left behind.
//
// The flock guards the file, not its name: once <id>.lock is removed by
// hand (a reflex after an exit 4), the next run makes a new file there and
// locks that. The holder then has lost the session, and learns it by
// comparing the file it holds with the one at the path (check): before
// every snapshot (a compaction, the run's end) and, once the run watches
// it (Lost), on a slow timer; never per record.
type FileLock struct {
	store  *Store
	id     string
	mu     sync.Mutex // Release may race with a signal handler's Release
	f      *os.File
	holder checkpoint.Holder
	// dropping: the holder removes its own lock file (Discard), which is
	// no loss.
	dropping bool
	lost     error         // set once: the file at the path is not f
	gone     chan struct{} // closed when lost is set
	stop     chan struct{} // closed by Release: ends the watch
	watch    sync.Once
}

// lockCheckEvery is how often a watched lock (Lost) compares its file with
// the one at its path: one stat, far off the per-record path, and soon
// enough that a run that lost its session stops within seconds.
const lockCheckEvery = 2 * time.Second

// Holder is who holds the lock: this process.
func (l *FileLock) Holder() checkpoint.Holder { return l.holder }

// Path is the lock file's path.
func (l *FileLock) Path() string { return l.store.lockPath(l.id) }

// JournalPath is the path of the journal of the session l locks, which
// its run keeps open from Begin to its end: the run is found by that file
// should its lock file be removed or moved.
func (l *FileLock) JournalPath() string { return l.store.journalPath(l.id) }

func (l *FileLock) held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f != nil
}

// ours is nil while the lock is held and not lost (what check last found):
// a journal writes nothing otherwise, for another run may have begun the
// session anew, and its journal may be this very file. No system call.
func (l *FileLock) ours() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if l.f == nil {
		return fmt.Errorf("%w: session %s: its lock was released", checkpoint.ErrStore, l.id)
	}
	return nil
}

// check compares the file the lock holds with the one at its path, and
// loses the lock (ErrLost) when the path has none or another. A stat that
// fails otherwise proves nothing: the next check looks again.
func (l *FileLock) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil || l.f == nil || l.dropping {
		return l.lost
	}
	fi, err := l.f.Stat()
	if err != nil {
		return nil
	}
	pi, err := os.Lstat(l.Path())
	if err == nil && os.SameFile(fi, pi) || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l.lost = &LostError{ID: l.id, Path: l.Path(), Removed: err != nil}
	close(l.gone)
	return l.lost
}

// Lost is closed once the lock is lost (check): its lock file was removed
// or replaced. The first call starts the check on a timer, until Release.
func (l *FileLock) Lost() <-chan struct{} {
	l.watch.Do(func() { go l.watchFile() })
	return l.gone
}

// LostErr is why the lock was lost (a *LostError, which wraps
// checkpoint.ErrLost), nil while it holds.
func (l *FileLock) LostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *FileLock) watchFile() {
	t := time.NewTicker(lockCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.gone:
			return
		case <-t.C:
			_ = l.check()
		}
	}
}

// LostError: a run's lock file was removed or replaced at its path while
// the run held it. Another run may have made a new one there and hold the
// session: this run stops writing.
type LostError struct {
	ID, Path string
	Removed  bool // no file at the path (else another file)
	paste    []string
}

func (e *LostError) Error() string {
	what := "was replaced by another file"
	if e.Removed {
		what = "was removed"
	}
	return fmt.Sprintf("session %s: its lock file %s %s while this run held it: another run may hold the session now; this run stops writing; see `%s`",
		e.ID, e.Path, what, shellcmd.Command("session show", nil, []string{e.ID}, e.paste))
}

// NameStore is checkpoint.StoreNamer's.
func (e *LostError) NameStore(words []string) { e.paste = words }

func (e *LostError) Unwrap() error { return checkpoint.ErrLost }

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
		l := &FileLock{store: s, id: id, f: f, holder: checkpoint.Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)},
			gone: make(chan struct{}), stop: make(chan struct{})}
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
	close(l.stop)
	_ = f.Truncate(0) // the note would name a run that is gone
	// Closing the last descriptor drops the flock.
	if err := f.Close(); err != nil {
		return storeErr("unlock", l.store.lockPath(l.id), err)
	}
	return nil
}
