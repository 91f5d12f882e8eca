package checkpoint

import (
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
