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
// requests: said, never silent. What was paid is in the session's totals
// already. A task whose tool loop resumes (logs, the loops the continued
// session carries, as the run will read them) replays its recorded turns,
// not paid again; any other runs again, and what it asks again is paid
// again.
func paidAgainNotes(old *checkpoint.Session, logs map[string]*checkpoint.ToolLog) []string {
	var notes []string
	for _, t := range old.Team.Tasks {
		if t.Status != checkpoint.StatusRunning || t.Usage == nil {
			continue
		}
		paid := attemptUsage(&Usage{Calls: t.Usage.Calls}, t.Attempts)
		if !HasUsage(paid) {
			continue
		}
		again := "it runs again, and what it asks again is paid again"
		if lg := logs[t.Name]; lg.Resumable() {
			again = fmt.Sprintf("its tool loop resumes after turn %d: the recorded turns are replayed, not paid again; what it asks after them is paid", len(lg.Turns))
		}
		notes = append(notes, fmt.Sprintf("task %s was cut off in attempt %d after paying for %s, which the session's totals count: %s",
			t.Name, t.Attempts, UsageText(paid), again))
	}
	return notes
}

// editKeptNotes name each task of next, the continuation of old, whose
// tool loop an edit of its definition kept for the calls of tools that
// were not idempotent that finished in it (checkpoint.EditKept): the loop
// goes on under the new definition, said, never silent. decide is the
// `session decide ID TASK rerun` of a task, which starts it afresh.
func editKeptNotes(old, next *checkpoint.Session, decide func(task string) string) []string {
	var notes []string
	for _, t := range next.Team.Tasks {
		o, ok := old.Task(t.Name)
		lg := next.ToolLogs[t.Name]
		if !ok || next.Checkpoint.Decisions[t.Name] == checkpoint.DecideRerun || !checkpoint.EditKept(lg, o.Key, t.Key) {
			continue
		}
		notes = append(notes, fmt.Sprintf("task %s: its tool loop resumes after turn %d; %s", t.Name, len(lg.Turns), checkpoint.EditKeptText(lg, decide(t.Name))))
	}
	return notes
}
