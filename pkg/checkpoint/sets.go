package checkpoint

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/spec"
)

// Reset is how the result of a task the restore takes over sets the shared
// state today, where that is not what its record says the recorded run set
// (its output_variable was added, renamed or removed since: it is outside
// the task-set fingerprint, or its value is another by today's rule).
type Reset struct {
	Now string   // the variable it sets today, "" for none
	Was []string // those its record set, sorted
	// Dropped are those of Was removed from the shared state, nothing
	// else having set them; Kept those left, something else having set
	// them too.
	Dropped, Kept []string
	// Held: held for the early cut-off, it sets Now when it completes
	// (with its recorded result or a new one), not at the restore.
	Held bool
	// Untold: the result is the one kept from before a run that set the
	// task to run again and stopped (--keep, a hold), and the session
	// keeps no variable with it: Was is not known, so nothing changed to
	// be said (it was no "(none)").
	Untold bool
}

// Note says what the restore does about it, for run's warning and plan's
// line alike; "" when the variable is the same and only its value follows
// today's rule.
func (c Reset) Note() string {
	if c.Untold || c.Now == "" && len(c.Was) == 0 || len(c.Was) == 1 && c.Was[0] == c.Now {
		return "" // the zero Reset too
	}
	none := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	var parts []string
	switch {
	case c.Now == "":
	case c.Held:
		parts = append(parts, fmt.Sprintf("the result it completes with (its recorded one, if the early cut-off reuses it) sets %s", c.Now))
	default:
		parts = append(parts, fmt.Sprintf("its restored result sets %s, as a run of it would", c.Now))
	}
	if len(c.Dropped) > 0 {
		parts = append(parts, fmt.Sprintf("%s, set by nothing else, %s dropped from the shared state", strings.Join(c.Dropped, ", "), isAre(len(c.Dropped))))
	}
	if len(c.Kept) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s in the shared state: something else set %s too", strings.Join(c.Kept, ", "), staysStay(len(c.Kept)), itThem(len(c.Kept))))
	}
	return fmt.Sprintf("output_variable %s → %s since it ran: %s", none(strings.Join(c.Was, ", ")), none(c.Now), strings.Join(parts, "; "))
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func staysStay(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// setsAgain makes every result the restore takes over set in the shared
// state what today's task sets with it (ch.Sets), as a run of it would
// (DESIGN §4: a restored result is rebuilt as if just produced). Without
// it an output_variable added, renamed or removed since would leave later
// tasks reading the variable the recorded run set, or none. A variable a
// restored task sets today holds what the last of them in file order sets,
// whichever task set it last before.
//
// A variable a record set that today's task does not is dropped from the
// state only when the records show nothing else set it: no other record
// sets it, no restored task sets it today, and the state holds the value
// this record set (else a later writer, a loop's iteration or an earlier
// session's run, left another). Dropped, it is what a new session starts
// with: the spec's variable or --var of that name, or nothing. A held task
// sets today's variable when it completes; its old one goes now all the
// same. What a task that runs again set, unsetRunning takes back.
func (r *Restored) setsAgain(sess *Session, defs []spec.TaskDef, ch Choice) {
	if sess == nil || ch.Sets == nil || len(r.Reused)+len(r.Held) == 0 {
		return
	}
	type change struct {
		task string
		was  map[string]any
	}
	var changes []change
	setNow := map[string]bool{} // by a restored task, today
	last := map[string]any{}    // the value of each, from the last restored task in file order
	for i, d := range defs {
		var rec TaskRecord
		done := r.Done(d.Name)
		if h, held := r.Held[d.Name]; held {
			rec = h
		} else if p, ok := r.Task(d.Name); ok && done {
			rec = *p
		} else {
			continue
		}
		name, value := ch.Sets(i, rec)
		if done && name != "" {
			setNow[name], last[name] = true, value
		}
		if sameVariables(rec.Variables, name, value) {
			continue
		}
		// A record that did not complete lends the result kept from
		// before (keptResult, holdUndecided), without its variables.
		t := sess.record(d.Name)
		untold := len(rec.Variables) == 0 && t != nil && t.Status != StatusCompleted
		c := Reset{Now: name, Was: slices.Sorted(maps.Keys(rec.Variables)), Held: !done, Untold: untold}
		if r.Resets == nil {
			r.Resets = map[string]Reset{}
		}
		r.Resets[d.Name] = c
		changes = append(changes, change{d.Name, rec.Variables})
		if done {
			r.own()
			p, _ := r.Task(d.Name)
			p.Variables = nil
			if name != "" {
				p.Variables = map[string]any{name: value}
			}
		}
	}
	// What each old variable was set to, and by which of the changed tasks.
	setBy := map[string][]string{}
	values := map[string][]any{}
	for _, c := range changes {
		now := r.Resets[c.task].Now
		for _, k := range slices.Sorted(maps.Keys(c.was)) {
			if k != now {
				setBy[k] = append(setBy[k], c.task)
				values[k] = append(values[k], c.was[k])
			}
		}
	}
	// A variable a restored task sets today holds what the last of them
	// (in file order) sets, whichever task's record set it before.
	for _, c := range changes {
		if now := r.Resets[c.task].Now; now != "" && !r.Resets[c.task].Held {
			r.State[now] = last[now]
		}
	}
	for k := range setBy {
		if setNow[k] {
			r.State[k] = last[k]
		}
	}
	for _, k := range slices.Sorted(maps.Keys(setBy)) {
		drop := !setNow[k]
		for i := 0; drop && i < len(sess.Team.Tasks); i++ {
			t := &sess.Team.Tasks[i]
			if _, today := r.Task(t.Name); today && !r.Done(t.Name) {
				continue // it runs again: unsetRunning takes back what it set
			}
			if _, sets := t.Variables[k]; sets && !slices.Contains(setBy[k], t.Name) {
				drop = false // another task's record set it
			}
		}
		if cur, ok := r.State[k]; drop && ok {
			drop = slices.ContainsFunc(values[k], func(v any) bool { return sameValue(v, cur) })
		}
		if drop {
			delete(r.State, k)
		}
		for _, task := range setBy[k] {
			c := r.Resets[task]
			if drop {
				c.Dropped = append(c.Dropped, k)
			} else {
				c.Kept = append(c.Kept, k)
			}
			r.Resets[task] = c
		}
	}
	for _, c := range changes {
		if note := r.Resets[c.task].Note(); note != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("task %s: %s", c.task, note))
		}
	}
}

// sameVariables says whether a record's variables are exactly {name:
// value} (none when name is "").
func sameVariables(vars map[string]any, name string, value any) bool {
	if name == "" {
		return len(vars) == 0
	}
	v, ok := vars[name]
	return ok && len(vars) == 1 && sameValue(v, value)
}

// sameValue compares two shared-state values as the session stores them:
// as JSON (a number read back from a session is a float64, one just
// parsed an int64).
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// lastSet is, for each of names (nil: every variable) that a task taken
// over sets, what the last of them to run (after says whether the task
// at index k in defs runs after the one at j; nil: file order) set: what
// a new run of those tasks leaves it at.
func (r *Restored) lastSet(defs []spec.TaskDef, after func(j, k int) bool, names map[string]bool) map[string]any {
	last := map[string]any{}
	by := map[string]int{} // which task set each of last
	for i, d := range defs {
		p, ok := r.Task(d.Name)
		if !ok || !r.Done(d.Name) {
			continue
		}
		for k, v := range p.Variables {
			if names != nil && !names[k] {
				continue
			}
			if j, seen := by[k]; seen && after != nil && after(i, j) {
				continue // j, earlier in the file, runs after i
			}
			last[k], by[k] = v, i
		}
	}
	return last
}

// SetOver is, for each variable of vars (a run's --var) that a task taken
// over sets, what the last of them to run set (lastSet; after as there):
// a --var is where a variable starts, and a task that sets it leaves its
// own value over it, as in a new run. The state a run starts from, and
// the session keeps, holds that (runner's startState), not the --var.
func (r *Restored) SetOver(defs []spec.TaskDef, after func(j, k int) bool, vars map[string]string) map[string]any {
	names := make(map[string]bool, len(vars))
	for k := range vars {
		names[k] = true
	}
	return r.lastSet(defs, after, names)
}

// unsetRunning makes the shared state a full or per-task restore hands
// the run the one the tasks it takes over leave, as a new run of them
// would: a variable the record of a task that runs again (or is held)
// set holds what the task taken over that sets it and runs last
// (ch.After, else file order) leaves, else the session's initial value,
// else nothing, until a task of this run sets it. Left as that record set it, a task run again read
// its own last output (--rerun refine with "Improve {notes}" improved
// its last result, not draft's notes) or a later task's, and its early
// cut-off could not take. A strict mismatch keeps the state as it came
// back (DESIGN §4).
func (r *Restored) unsetRunning(sess *Session, defs []spec.TaskDef, ch Choice) {
	if sess == nil || r.Kind != RestoreFull && r.Kind != RestorePerTask {
		return
	}
	var running map[string]bool
	for i := range sess.Team.Tasks {
		o := &sess.Team.Tasks[i]
		// Asked of every record in turn, Done finds each where the last
		// one was (Restored.Task), with no map of the names.
		if r.Done(o.Name) || len(o.Variables) == 0 {
			continue
		}
		if _, today := r.Task(o.Name); !today {
			continue // not in the file: the state keeps it, keyed by name
		}
		if running == nil {
			running = map[string]bool{}
		}
		for k := range o.Variables {
			running[k] = true
		}
	}
	if running == nil {
		return // most sessions: no task that runs again set a variable
	}
	last := r.lastSet(defs, ch.After, running)
	for k := range running {
		v, ok := last[k]
		if !ok {
			v, ok = sess.Team.InitialState[k]
		}
		if ok {
			r.State[k] = v
		} else {
			delete(r.State, k)
		}
	}
}
