package checkpoint

import (
	"context"
	"fmt"
)

// Missing is a session a store lacks, as the project's audit log knows it:
// the one rule run --continue (the id state.json or --session names), plan
// and session show apply to it (DESIGN §5).
type Missing struct {
	ID, Store string
	// Audited: the audit log records the session and no removal of it
	// (FindAbsent): it was made, here or in another store, and is lost to
	// this one. Else it was never made, or was removed on purpose.
	Audited bool
	Absent  Absent
	// Damage names the audit log's damaged lines, skipped (nil when
	// none): a warning, as the whole lines still count.
	Damage error
}

// FindMissing looks session id, which s lacks, up in p's audit log.
func FindMissing(ctx context.Context, s Backend, p ProjectState, id string) (Missing, error) {
	recs, damage := p.AuditRecords(ctx)
	a, ok, err := FindAbsent(ctx, s, recs, id)
	if err != nil {
		return Missing{}, err
	}
	return Missing{ID: id, Store: s.Location(), Audited: ok, Absent: a, Damage: damage}, nil
}

// Note says the session is missing; subject says who names it ("session
// s1 is", "…/state.json names the active session s1, which is"). It names
// the store it is missing from and, when the audit log knows, where the
// session was made: the store to point TEAMRUN_HOME or --store at.
func (m Missing) Note(subject string) string {
	msg := fmt.Sprintf("%s missing from %s", subject, m.Store)
	if m.Audited {
		msg += " (another TEAMRUN_HOME?); " + m.Absent.Describe()
	}
	return msg
}

// Audit records the fact in p's audit log; detail says who named the
// session and what was done instead.
func (m Missing) Audit(ctx context.Context, p ProjectState, detail string) error {
	return p.Audit(ctx, AuditRecord{Event: EventMissing, Session: m.ID, Store: m.Store, Detail: detail})
}
