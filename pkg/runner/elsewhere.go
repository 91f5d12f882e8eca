package runner

import (
	"fmt"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
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
// requests, or counts one it may have had under way (checkpoint.Call.NoEnd):
// said, never silent. What was paid is in the session's totals
// already. A task whose tool loop resumes (by the run's rule,
// checkpoint.ToolLog.NextFor, on the loops next, the continued session,
// carries and the decisions it holds) replays its recorded turns, not
// paid again; any other runs again, and what it asks again is paid again,
// unless it is removed from the file.
func paidAgainNotes(old, next *checkpoint.Session, team *spec.Team) []string {
	var notes []string
	for _, t := range old.Team.Tasks {
		if t.Status != checkpoint.StatusRunning || t.Usage == nil {
			continue
		}
		var paid, unended *Usage
		for _, c := range t.Usage.Calls {
			switch {
			case c.Attempt != 0 && c.Attempt != t.Attempts:
			case c.NoEnd:
				unended = unended.Plus(c.Usage())
			default:
				paid = paid.Plus(c.Usage())
			}
		}
		var what []string
		if HasUsage(paid) {
			what = append(what, "after paying for "+UsageText(paid))
		}
		if HasUsage(unended) {
			what = append(what, "with a request that may have been under way, counted as "+UsageText(unended))
		}
		if len(what) == 0 {
			continue
		}
		again := "it runs again, and what it asks again is paid again"
		n, now := next.Task(t.Name)
		lg := next.ToolLogs[t.Name]
		switch {
		case !now:
			again = "it is removed from the file: it does not run"
		case !lg.Resumable():
		default:
			switch decision := next.Checkpoint.Decisions[t.Name]; lg.NextFor(team.Agent(n.Agent), decision) {
			case checkpoint.LoopResumes:
				again = fmt.Sprintf("its tool loop resumes after turn %d: the recorded turns are replayed, not paid again; what it asks after them is paid", len(lg.Turns))
			case checkpoint.LoopUnread:
				again = "it runs again without its tool loop (its agent runs no tools now), and what it asks again is paid again"
			case checkpoint.LoopAfresh:
				again = fmt.Sprintf("its tool loop starts afresh (decision %q recorded), and what it asks again is paid again", decision)
			}
		}
		notes = append(notes, fmt.Sprintf("task %s was cut off in attempt %d %s, which the session's totals count: %s",
			t.Name, t.Attempts, strings.Join(what, " and "), again))
	}
	return notes
}

// editKeptNotes name each task of next, the continuation of old, whose
// tool loop an edit of its definition kept for the calls of tools that
// were not idempotent that finished in it (checkpoint.EditKept): the loop
// goes on under the new definition, said, never silent; or, whatever kept
// the loop, that its agent runs no tools now, and the task runs without
// it (checkpoint.LoopUnread). So too each task removed from the file whose
// loop the session keeps (checkpoint.Session.RemovedLog), as plan says.
// decide is the `session decide ID TASK rerun` of a task, which starts it
// afresh.
func editKeptNotes(old, next *checkpoint.Session, team *spec.Team, decide func(task string) string) []string {
	var notes []string
	for _, t := range next.Team.Tasks {
		lg, oldKey := old.CarriedLog(t.Name, t.Key)
		if lg == nil {
			continue
		}
		switch lg.NextFor(team.Agent(t.Agent), next.Checkpoint.Decisions[t.Name]) {
		case checkpoint.LoopUnread:
			notes = append(notes, fmt.Sprintf("task %s: %s", t.Name, checkpoint.UnreadText(lg, t.Agent)))
		case checkpoint.LoopResumes:
			if checkpoint.EditKept(lg, oldKey, t.Key) {
				notes = append(notes, fmt.Sprintf("task %s: its tool loop resumes after turn %d; %s", t.Name, len(lg.Turns), checkpoint.EditKeptText(lg, decide(t.Name))))
			}
		}
	}
	for _, t := range old.Team.Tasks {
		if _, now := next.Task(t.Name); !now && next.ToolLogs[t.Name] != nil {
			notes = append(notes, fmt.Sprintf("task %s is removed from the file, but %s", t.Name, checkpoint.RemovedLogText(next.ToolLogs[t.Name])))
		}
	}
	return notes
}
