package runner

import (
	"fmt"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// elsewhereNotes name each task that old, a session whose run ended (or,
// PostgreSQL, lost it when its lease expired) without stopping its tasks,
// has on record as running on another host than host:
// its processes may still run there, out of reach of the orphan sweep
// (which sees this host's processes only), and the task runs again here. A
// task started by an older teamrun (no host on record) gets no note.
func elsewhereNotes(old *checkpoint.Session, host string) []string {
	var notes []string
	for _, t := range old.Team.Tasks {
		if t.Status != checkpoint.StatusRunning || t.Host == "" || t.Host == host {
			continue
		}
		where := "host " + t.Host
		if t.PGID > 0 {
			where += fmt.Sprintf(" (pgid %d)", t.PGID)
		}
		notes = append(notes, fmt.Sprintf("task %s may still be running on %s; teamrun cannot stop it there; running it again", t.Name, where))
	}
	return notes
}

// paidAgainNotes name each task that old has on record as running (its run
// was killed in the middle of it) whose cut attempt had paid for LLM
// requests: the task runs again, and what it asks again is paid again —
// said, never silent. What was paid is in the session's totals already.
func paidAgainNotes(old *checkpoint.Session) []string {
	var notes []string
	for _, t := range old.Team.Tasks {
		if t.Status != checkpoint.StatusRunning || t.Usage == nil {
			continue
		}
		paid := attemptUsage(&Usage{Calls: t.Usage.Calls}, t.Attempts)
		if !HasUsage(paid) {
			continue
		}
		notes = append(notes, fmt.Sprintf("task %s was cut off in attempt %d after paying for %s, which the session's totals count: it runs again, and what it asks again is paid again",
			t.Name, t.Attempts, UsageText(paid)))
	}
	return notes
}
