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

// Turn is how one turn of a Lock that found its session held waits.
type Turn struct {
	Wait  time.Duration   // how long Lock was to wait in all (0: not at all), for HeldError.Waited
	Left  time.Duration   // what is left of it (or of a grace the store gives): once used up, the session is held
	Pause time.Duration   // how long this turn waits, at most Left
	Wake  <-chan struct{} // ends the pause early: a store that knows of a release; nil for none
}

// WaitTurn is one turn of a Lock that found the session held (by held),
// for every store: once t.Left is used up it is held, Waited set when
// Lock was to wait at all; else it waits t.Pause (at most t.Left), until
// t.Wake or until ctx is done, which is an error that wraps ctx's. nil:
// try the lock again.
func WaitTurn(ctx context.Context, held *HeldError, t Turn) error {
	if t.Left <= 0 {
		if t.Wait > 0 {
			held.Waited = t.Wait
		}
		return held
	}
	timer := time.NewTimer(min(t.Pause, t.Left))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting for session %s: %w (%v)", held.ID, ctx.Err(), held)
	case <-t.Wake:
	case <-timer.C:
	}
	return nil
}
