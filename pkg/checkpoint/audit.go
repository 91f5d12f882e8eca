package checkpoint

import "time"

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
