package checkpoint

import (
	"os"
	"os/user"
	"strconv"
	"time"
)

// Audit events.
const (
	EventCreated   = "created"
	EventResumed   = "resumed"
	EventCompleted = "completed"
	EventFailed    = "failed"
	EventHalted    = "halted"
	EventDeleted   = "deleted"
	EventPruned    = "pruned"
	// EventMissing: state.json named a session absent from the store.
	EventMissing = "missing"
)

// AuditRecord is one line of .teamrun/audit.log.
type AuditRecord struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"`
	Session string    `json:"session"`
	Store   string    `json:"store"`
	PID     int       `json:"pid"`
	User    string    `json:"user"`
	Detail  string    `json:"detail,omitempty"`
}

// Fill sets the time, pid and user of a record that has none.
func (r *AuditRecord) Fill() {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	if r.PID == 0 {
		r.PID = os.Getpid()
	}
	if r.User == "" {
		r.User = currentUser()
	}
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Getuid())
}
