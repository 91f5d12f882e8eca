package checkpoint

import (
	"context"
	"fmt"
	"time"
)

// HeldError says who holds a session. It wraps ErrLocked.
type HeldError struct {
	ID      string
	PID     int
	Host    string
	Started time.Time
	Waited  time.Duration // how long Lock waited before giving up; 0: it did not wait
}

func (e *HeldError) Error() string {
	who := "another run"
	if e.PID > 0 {
		who = fmt.Sprintf("another run (pid %d on %s, started %s)", e.PID, e.Host, e.Started.Local().Format(time.RFC3339))
	}
	msg := fmt.Sprintf("session %s is held by %s", e.ID, who)
	if e.Waited > 0 {
		msg += fmt.Sprintf("; still held after waiting %s", e.Waited)
	} else {
		msg += "; wait for it to finish, or rerun with --wait"
	}
	return msg
}

func (e *HeldError) Unwrap() error { return ErrLocked }

// Holder is what a lock file says about the run holding it.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// WaitTurn is one turn of a Lock that found the session held (by held),
// for every store: once left, the time Lock may still wait, is used up, it
// is held, Waited set when Lock was to wait at all; else it waits pause
// (at most left), until wake (a store that knows of a release; nil for
// none) or until ctx is done, which is an error that wraps ctx's. nil:
// try the lock again.
func WaitTurn(ctx context.Context, held *HeldError, wait, left, pause time.Duration, wake <-chan struct{}) error {
	if left <= 0 {
		if wait > 0 {
			held.Waited = wait
		}
		return held
	}
	t := time.NewTimer(min(pause, left))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting for session %s: %w (%v)", held.ID, ctx.Err(), held)
	case <-wake:
	case <-t.C:
	}
	return nil
}
