// Package plan says, per task, what `teamrun run FILE --continue` would do
// now — restore, run or skip — and why, without writing anything.
package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/schedule"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Action is what a run would do with a task.
type Action string

const (
	Restore Action = "restore" // its checkpointed result is taken over
	Run     Action = "run"     // it runs (again)
	Skip    Action = "skip"    // it does not run: routed away, or no longer in the file
)

// Step is one task's line of the plan.
type Step struct {
	Task   string `json:"task"`
	Action Action `json:"action"`
	Reason string `json:"reason"`
	// LastStatus is the task's status in the session, "" when the session
	// does not know it.
	LastStatus checkpoint.Status `json:"last_status,omitempty"`
	Attempts   int               `json:"attempts,omitempty"`
	// Removed: in the checkpoint but no longer in the file.
	Removed bool `json:"removed,omitempty"`
}

// Plan is the whole answer.
type Plan struct {
	Spec               string   `json:"spec"`
	Session            string   `json:"session,omitempty"` // "" when a new session would start
	Fingerprint        string   `json:"fingerprint"`
	SessionFingerprint string   `json:"session_fingerprint,omitempty"`
	Restore            string   `json:"restore"` // none, full, partial or per-task
	Reuse              string   `json:"reuse"`
	Changes            []string `json:"changes,omitempty"` // how the task set differs from the checkpoint's
	Rerun              []string `json:"rerun,omitempty"`   // completed tasks run again on request
	Kept               []string `json:"kept,omitempty"`    // tasks --keep restores although they changed
	Steps              []Step   `json:"tasks"`
	Notes              []string `json:"notes,omitempty"`    // how the session was chosen
	Warnings           []string `json:"warnings,omitempty"` // also printed on stderr
}

// Count returns how many steps take action a.
func (p *Plan) Count(a Action) int {
	n := 0
	for _, s := range p.Steps {
		if s.Action == a {
			n++
		}
	}
	return n
}

// Make applies the restore rules (checkpoint.Restore, as run does) to sess
// and the spec's current tasks and explains the outcome per task. team's
// tasks must be the ones defs were built from, in the same order; sess may
// be nil (a new session).
//
// ch is what the user chose (--reuse, --rerun, --rerun-from, --keep), as
// run takes it: checkpoint.RestoreChoice decides for both. where is the
// --store the command line gave and the spec's folder: the commands the
// plan names carry them as run's do (cmdline.Decide).
func Make(team *spec.Team, defs []spec.TaskDef, fingerprint string, sess *checkpoint.Session, ch checkpoint.Choice, where cmdline.Where) *Plan {
	// A dry run of the engine's own schedule: restored results and
	// recorded decisions are known, everything that would run is not.
	graph, gerr := schedule.NewOf(team, defs)
	if gerr == nil {
		// What today's team refuses of the restored results, the restore
		// runs again, as run's does (blobs are read in line: ReadBlobs).
		inLine := func(_ int, t checkpoint.TaskRecord) string { return t.Result }
		ch.Refuse, ch.Sets = graph.Refuser(inLine), graph.Setter(inLine)
		ch.CutoffReads, ch.Reads, ch.Upstream, ch.Memory, ch.Human = graph.CutoffReads, graph.Reads, graph.Upstream, graph.Memory, graph.Human
		ch.After = graph.VariableReads().After
	}
	ch.DeferredJoin = team.DeferredJoin
	ch.VariableChanges = func() map[string]string { return checkpoint.VariableChanges(team, sess) }
	ch.SettingAdded = team.SettingAdded(defs)
	r := checkpoint.RestoreChoice(sess, defs, fingerprint, ch)
	p := &Plan{Fingerprint: fingerprint, Restore: r.Kind.String(), Reuse: ch.Reuse.String(), Rerun: r.Rerun, Kept: r.Kept, Warnings: slices.Concat(r.Unkept, r.Unrerun)}
	// A step a task, made at its size: grown by appending, a 200,000-task
	// plan copied its steps over and over (80 MB for 16 MB).
	p.Steps = make([]Step, 0, len(defs))
	old := map[string]*checkpoint.TaskRecord{}
	if sess != nil {
		p.Session = sess.ID
		p.SessionFingerprint = sess.Team.TasksFingerprint
		for i := range sess.Team.Tasks {
			old[sess.Team.Tasks[i].Name] = &sess.Team.Tasks[i]
		}
	}
	oldTools := map[string]map[string]string{}
	if sess != nil {
		for _, a := range sess.Team.Agents {
			oldTools[a.Name] = a.Tools
		}
	}
	diffs := map[string]checkpoint.TaskDiff{}
	for _, d := range r.Diffs {
		diffs[d.Task] = d
		p.Changes = append(p.Changes, d.String())
	}
	// Under --reuse strict, say which outputs --reuse unchanged would keep.
	var lenient *checkpoint.Restored
	if r.Kind == checkpoint.RestorePartial {
		lc := ch
		lc.Reuse = checkpoint.ReuseUnchanged
		lenient = checkpoint.RestoreChoice(sess, defs, fingerprint, lc)
	}

	byName := make(map[string]int, len(defs))
	for i, d := range defs {
		byName[d.Name] = i
	}
	if gerr != nil {
		// Only a team that does not match defs gets here.
		p.Warnings = append(p.Warnings, gerr.Error())
		return p
	}
	st := graph.NewState()
	// What the run's cut-off compares for task i, by name.
	cutoffReads := func(i int) []string {
		var names []string
		for _, c := range graph.CutoffReads(i) {
			names = append(names, defs[c].Name)
		}
		return names
	}
	decided := func(i int) (string, bool) {
		v, ok := r.Decisions[defs[i].Name]
		return v, ok
	}
	kept := func(i int) bool { return slices.Contains(r.Keep, defs[i].Name) }
	// Restored, but its result no longer fits the task, or it reads one
	// that runs again for that: why, as the restore decided it.
	redo := make([]checkpoint.Refusal, len(defs))
	for i, d := range defs {
		redo[i] = r.Refused[d.Name]
		if r.Done(d.Name) {
			rec, _ := r.Task(d.Name)
			st.Complete(i, rec.Result) // the restore took it over, as the run does
		}
	}
	skipped := st.DryRun(decided)
	// How a task a held task reads stands, by the run's rule
	// (checkpoint.Stands), as the dry run has it before anything runs:
	// skipped, restored (a run that held tasks may have been killed after
	// it ran again: then its result must be the one they were made from),
	// a human task the run completes with the decision recorded for it
	// (that decision is its result), or not ended yet.
	stands := func(name string) (checkpoint.Standing, bool) {
		v, ok := r.Recorded[name]
		var now checkpoint.Now
		switch i, in := byName[name]; {
		case in && skipped[i] != nil:
			now = checkpoint.Now{Ended: true, Outcome: checkpoint.Outcome{Skipped: true}}
		case r.Done(name):
			rec, _ := r.Task(name)
			now = checkpoint.Now{Ended: true, Outcome: rec.Outcome(), Restored: true}
		case in && graph.Human(i) && st.Status(i) == schedule.Completed:
			if d, ok := decided(i); ok && graph.ValidDecision(i, d) == nil {
				now = checkpoint.Now{Ended: true, Outcome: checkpoint.Outcome{Text: d}}
			}
		}
		return checkpoint.Stands(v, ok, now), now.Skipped
	}

	var waiting []string // human tasks the run halts at, undecided
	for i, d := range defs {
		if st.Status(i) == schedule.Waiting {
			waiting = append(waiting, d.Name)
		}
	}
	// failsFirst says, of task i, which human task the run fails before
	// it (its decision fits no option), and whether for sure: i waits
	// for it (in a sequential team everything after it does). Else a
	// workflow's failure starts no new task, so i may not start either.
	var failing []int
	for i, d := range defs {
		if v, ok := decided(i); ok && graph.Human(i) && !r.Done(d.Name) && graph.ValidDecision(i, v) != nil {
			failing = append(failing, i)
		}
	}
	behind, before := failureReach(graph, failing, len(defs))
	failsFirst := func(i int) (string, bool) {
		switch {
		case len(failing) == 0:
		case behind[i] >= 0 && behind[i] != i:
			return defs[behind[i]].Name, true
		case behind[i] < 0 && !before[i]:
			names := make([]string, len(failing))
			for k, f := range failing {
				names[k] = defs[f].Name
			}
			return strings.Join(names, " and "), false
		}
		return "", false
	}
	// onlyIf says which of the gates of task i the run decides before it
	// (a condition, a repeat's earlier iteration, not known now) must lead
	// to it, and returns the conditions among them.
	onlyIf := func(i int) (string, []string) {
		var only string
		var open, iterations []string // iterations: whose result is not known yet
		until := ""
		for _, g := range st.OpenGates(i) {
			if text, ends := graph.EndsRepeat(g); ends {
				iterations, until = append(iterations, defs[g].Name), text
			} else {
				open = append(open, defs[g].Name)
			}
		}
		if len(open) > 0 {
			only += fmt.Sprintf("; only if %s routes to it", strings.Join(open, " and "))
		}
		switch len(iterations) {
		case 0:
		case 1:
			only += fmt.Sprintf("; only if %s's result does not contain %q", iterations[0], until)
		default:
			only += fmt.Sprintf("; only if none of %s has %q in its result", strings.Join(iterations, ", "), until)
		}
		return only, open
	}
	cause := make([]string, len(defs)) // the changed task upstream of i, if any
	// The producer that runs again and whose list made task i, or what i
	// reads, from its recorded output: plan cannot know the new list.
	fromList := make([]string, len(defs))
	for i, d := range defs {
		step := Step{Task: d.Name}
		o := old[d.Name]
		if o != nil {
			step.LastStatus, step.Attempts = o.Status, o.Attempts
		}
		for _, c := range d.Context {
			ci, ok := byName[c]
			if !ok {
				continue
			}
			if diff, ok := diffs[c]; ok && ownChange(diff) {
				cause[i] = c
				break
			}
			if cause[ci] != "" {
				cause[i] = cause[ci]
				break
			}
		}
		why := skipped[i]
		behind := false // not reached this time: it waits behind a decision
		if why == nil && st.Status(i) == schedule.Pending {
			// Say what it will do once the decision is in, as far as that
			// is known now.
			why = st.SkipReason(i)
			behind = true
		}
		if redo[i].Why != "" && kept(i) {
			then := checkpoint.KeptRuns
			if skipped[i] != nil {
				then = checkpoint.KeptSkipped
			}
			p.Warnings = append(p.Warnings, checkpoint.NotKept(d.Name, redo[i].Why, then))
		}
		var open []string // gates whose route is not known yet
		switch {
		case redo[i].Why != "" && skipped[i] == nil:
			step.Action = Run
			step.Reason = redo[i].Why + ": it runs again"
			if redo[i].Held {
				// Only what it reads runs again: the run holds it.
				reads := func() []string { return slices.DeleteFunc(cutoffReads(i), r.Done) }
				if len(heldReads(reads(), stands)) == 0 {
					step.Reason = redo[i].Why + "; if it runs, its recorded result is reused (early cut-off)"
				} else {
					// As for any held task: a read skipped last time
					// decides by being skipped again or not.
					step.Reason = redo[i].Why + "; " + heldReason(d, reads, r, stands)
				}
			}
			// Refused, it runs again as any task does: if its gates,
			// not decided before the run, lead to it.
			var only string
			only, open = onlyIf(i)
			step.Reason += only
		case r.Done(d.Name):
			step.Action = Restore
			if r.Kind == checkpoint.RestoreFull {
				step.Reason = fmt.Sprintf("fingerprint %s matches; completed last time", fingerprint)
				// The fingerprint covers neither the context nor agent
				// definitions: say so when they changed, since the output
				// is reused anyway.
				if n := checkpoint.Uncovered(d, o); n != "" {
					step.Reason += fmt.Sprintf(" (%s changed since; the fingerprint does not cover it)", n)
				}
			} else {
				step.Reason = "unchanged (its definition, its agent's and its context tasks'); completed last time"
			}
			switch kept, previous := slices.Contains(r.Kept, d.Name), slices.Contains(r.KeptPrevious, d.Name); {
			case kept && previous:
				step.Reason = "kept (--keep) although it changed since the checkpoint: the result recorded before a run set it to run again and stopped"
			case kept:
				step.Reason = "kept (--keep) although it changed since the checkpoint; completed last time"
			case slices.Contains(r.KeptReadChanged, d.Name) && slices.Contains(r.KeptRead, d.Name):
				// Its own definition stands: what it reads changed and
				// runs again, which the KeptRead reason below says.
				step.Reason = "completed last time"
			case slices.Contains(r.KeptReadChanged, d.Name):
				step.Reason = "kept (--keep), though what it reads changed since the checkpoint"
				if reads := r.ReadsChanged(d.Name); len(reads) > 0 {
					step.Reason += " (" + strings.Join(reads, ", ") + ")"
				}
				step.Reason += "; completed last time"
			case previous:
				step.Reason = "kept (--keep): the result recorded before a run set it to run again and stopped"
			}
			if v, ok := r.KeptOverDecision[d.Name]; ok {
				step.Reason += fmt.Sprintf("; the decision %q recorded for it is dropped", v)
			}
			if slices.Contains(r.KeptDownstream, d.Name) {
				step.Reason += fmt.Sprintf("; kept (--keep), though downstream of --rerun-from %s", strings.Join(ch.RerunFrom, ", "))
			}
			if slices.Contains(r.KeptRead, d.Name) {
				step.Reason += "; kept (--keep), though what it reads runs again"
			}
		case why != nil:
			step.Action, step.Reason = Skip, skipText(defs, r, why)
		case isHeld(d, r) && len(heldReads(cutoffReads(i), stands)) == 0 && (graph == nil || !graph.Memory(i)):
			// Held, but nothing it reads runs again (what it reads is
			// kept by --keep, or skipped again as it was): the cut-off
			// reuses it for certain.
			step.Action = Restore
			// What the cut-off compares (an output_variable read
			// included), not its context, which may be empty.
			step.Reason = fmt.Sprintf("completed last time; what it reads (%s) stands as recorded, so the early cut-off reuses its result", strings.Join(cutoffReads(i), ", "))
		default:
			step.Action = Run
			_, changed := diffs[d.Name]
			held := heldReason(d, func() []string { return cutoffReads(i) }, r, stands)
			if held != "" && graph != nil && graph.Memory(i) {
				// The engine's rule (cutOff): an answer made of turns
				// that were not kept is never reused.
				held = "its agent has memory: true, whose answers the early cut-off never reuses: it runs again"
			}
			producer, waits := r.Waiting[d.Name]
			switch forced := forcedReason(d, ch, r); {
			case forced != "":
				step.Reason = forced
			case waits:
				// As the run warns: made anew when the producer finishes.
				step.Reason = fmt.Sprintf("waits for %s, which runs again", producer)
				if held != "" {
					// The run holds the join all the same: a producer a
					// route skips again leaves it to the early cut-off.
					step.Reason += "; " + held
				}
			case r.UnheldReason(d.Name) != "":
				step.Reason = "completed last time; " + r.UnheldReason(d.Name)
			case held != "" && !changed && cause[i] == "":
				step.Reason = "completed last time; " + held
			case held != "":
				step.Reason = runReason(d, o, diffs, cause[i], r, lenient) + "; " + held
			default:
				step.Reason = runReason(d, o, diffs, cause[i], r, lenient)
			}
			var only string
			only, open = onlyIf(i)
			step.Reason += only
			if graph.Human(i) {
				if v, ok := r.Decisions[d.Name]; ok {
					if err := graph.ValidDecision(i, v); err != nil {
						step.Reason += fmt.Sprintf("; the run fails it: %v", err)
					} else {
						step.Reason += fmt.Sprintf("; decision %q recorded: the task completes with it", v)
					}
				} else {
					id := p.Session
					if id == "" {
						id = "ID"
					}
					step.Reason += fmt.Sprintf("; no decision yet: the run halts here (exit 3) until `%s`", cmdline.Decide(where, id, d.Name, ""))
				}
			}
		}
		x := team.Tasks[i].Expanded()
		producer := -1 // the task whose output_variable its foreach is over
		if len(x.After) > 0 {
			if k, ok := byName[x.After[0]]; ok && k < i {
				producer = k
			}
		}
		isSkipped := func(k int) bool { return skipped[k] != nil }
		switch {
		case graph.NoInstance(i, isSkipped):
			// The run expands again once it skips the producer, as a new
			// run does: no list, so no instance.
			step.Action = Skip
			step.Reason = fmt.Sprintf("an instance of %s, made from %s's recorded output: %s is skipped, so the foreach has no list and the run makes no instance of it", x.ForeachOf, x.After[0], x.After[0])
		case producer >= 0 && isSkipped(producer) && step.Action == Run:
			step.Reason += fmt.Sprintf("; %s is skipped, so the foreach has no list: its result is []", x.After[0])
		case x.ExpandsWhen != "" && step.Action == Run:
			k := team.TaskIndex(x.ExpandsWhen)
			step.Reason += fmt.Sprintf("; expands when %s finishes (foreach over its output_variable %s): its instances are made then", x.ExpandsWhen, team.Tasks[k].OutputVariable)
			step.Reason += routeSkipsList(st, k, x.ExpandsWhen)
			if _, held := r.HeldLater[d.Name]; held {
				step.Reason += ", and it will run only if their output changes (else its recorded result is reused: early cut-off)"
			}
		case producer >= 0 && x.ExpandsWhen == "" && p.Steps[producer].Action == Run:
			// Made from the producer's recorded list: if it runs again,
			// its output decides the instances anew, and a route that
			// skips it leaves no list.
			step.Reason += fmt.Sprintf("; made from %s's recorded output, which it replaces: if the list changes, the run expands again", x.After[0])
			step.Reason += routeSkipsList(st, producer, x.After[0])
			fromList[i] = x.After[0]
		}
		if fromList[i] == "" {
			// What reads such an instance or join (or follows it as a
			// repeat's next iteration, or is routed by it) is decided
			// anew too when the list changes.
			reads := append(slices.Clone(graph.Context(i)), graph.Gates(i)...)
			if prev, _ := graph.Until(i); prev >= 0 {
				reads = append(reads, prev)
			}
			for _, c := range reads {
				if c < i && fromList[c] != "" {
					fromList[i] = fromList[c]
					if step.Action != Run {
						step.Reason += fmt.Sprintf("; reads what %s's recorded list made: if the list changes, the run decides it anew", fromList[i])
					}
					break
				}
			}
		}
		if behind {
			// The decisions it waits for, unless "only if" named them.
			var first []string
			for _, w := range waiting {
				if !slices.Contains(open, w) {
					first = append(first, w)
				}
			}
			if len(first) > 0 {
				step.Reason += fmt.Sprintf("; after the decision of %s, which the run halts for first", strings.Join(first, " and "))
			}
		}
		if step.Action == Run {
			switch f, sure := failsFirst(i); {
			case sure:
				step.Reason += fmt.Sprintf("; after %s, which the run fails first: it does not run this time", f)
			case f != "":
				step.Reason += fmt.Sprintf("; unless the run fails %s first (after a failure it starts no new task)", f)
			}
		}
		if step.Action == Run && sess != nil {
			if lg, oldKey := sess.CarriedLog(d.Name, d.Key); lg != nil {
				step.Reason += toolLoopNote(team, d, sess, lg, r.Decisions[d.Name], where, checkpoint.EditKept(lg, oldKey, d.Key))
			}
			// Edited since or not, such a loop starts afresh (toolLoopNote
			// has nothing to say of it).
			if a := team.Agent(d.Agent); a != nil && a.RunsToolLoop() {
				if note := checkpoint.FailedLoopText(sess.ToolLogs[d.Name], cmdline.ShowTask(where.Store, sess.ID, d.Name)); note != "" {
					step.Reason += "; " + note
				}
			}
		}
		if note := r.Resets[d.Name].Note(); note != "" {
			step.Reason += "; " + note // as run warns
		}
		if o != nil && o.AgentKey != "" && o.AgentKey != d.AgentKey {
			// The agent's key covers its tools: say which of them changed.
			if n := spec.ToolChanges(oldTools[d.Agent], team.ToolKeys(d.Agent)); n != "" {
				step.Reason += fmt.Sprintf(" (agent %s: %s)", d.Agent, n)
			}
		}
		p.Steps = append(p.Steps, step)
	}
	carried := map[string]checkpoint.Status{} // the records the restore keeps for a deferred foreach, by status
	for _, t := range r.Deferred {
		carried[t.Name] = t.Status
	}
	if sess != nil {
		for _, o := range sess.Team.Tasks {
			if _, ok := byName[o.Name]; ok {
				continue
			}
			if join := team.DeferredJoin(o.Name); join != nil {
				// Its foreach waits for its producer: the run makes its
				// instances anew (or not) from the producer's output,
				// and restores the kept record of one whose item is the
				// recorded one.
				when := fmt.Sprintf("an instance of %s, which expands when %s finishes", join.Name, join.Expanded().ExpandsWhen)
				step := Step{Task: o.Name, Action: Run, LastStatus: o.Status, Attempts: o.Attempts,
					Reason: when + ": its record is not restored, it runs then; if the list changes, the run makes the instances of the new one"}
				_, held := r.HeldLater[o.Name]
				k, in := byName[join.Expanded().ExpandsWhen]
				switch st, ok := carried[o.Name]; {
				case in && skipped[k] != nil:
					// No list: a new run makes no instance (joinResults).
					step.Action = Skip
					step.Reason = fmt.Sprintf("an instance of %s, whose list %s makes: %s is skipped, so the foreach has no list and the run makes no instance of it", join.Name, join.Expanded().ExpandsWhen, join.Expanded().ExpandsWhen)
				case held:
					// The stopped run held it: the early cut-off compares
					// what it reads then, as it would have.
					reads := []string{join.Expanded().ExpandsWhen}
					for _, c := range o.Context {
						if !slices.Contains(reads, c) {
							reads = append(reads, c)
						}
					}
					step.Reason = fmt.Sprintf("%s: it will run then only if %s's output changes (else its recorded result is reused: early cut-off); if the list changes, the run makes the instances of the new one",
						when, strings.Join(reads, " or "))
				case ok && st == checkpoint.StatusCompleted && slices.Contains(r.Keep, join.Name):
					step.Action = Restore
					step.Reason = when + ": kept (--keep " + join.Name + "), its recorded result is restored then; if the list has an item more, the --keep is not honoured and the instances run"
				case ok && st == checkpoint.StatusCompleted:
					step.Action = Restore
					step.Reason = when + ": its recorded result is restored then if its item is the recorded one; if the list changes, the run makes the instances of the new one, and runs those whose item changed"
				case ok:
					step.Reason = when + ": it runs then; if the list changes, the run makes the instances of the new one"
				}
				p.Steps = append(p.Steps, step)
				continue
			}
			why := "removed from the file: it is in the checkpoint only and is never run"
			if lg := sess.RemovedLog(o.Name); lg != nil {
				why += "; " + checkpoint.RemovedLogText(lg)
			}
			p.Steps = append(p.Steps, Step{Task: o.Name, Action: Skip, Removed: true, LastStatus: o.Status, Attempts: o.Attempts, Reason: why})
		}
	}
	return p
}

// forcedReason explains a completed task that runs again because of
// --rerun or --rerun-from; "" for any other task.
func forcedReason(d spec.TaskDef, ch checkpoint.Choice, r *checkpoint.Restored) string {
	if !slices.Contains(r.Rerun, d.Name) {
		return ""
	}
	// A foreach's instances and a repeat's iterations are asked for by
	// the declared task's name.
	asked := func(names []string) bool {
		return slices.Contains(names, d.Name) || (d.ExpandedFrom() != "" && slices.Contains(names, d.ExpandedFrom()))
	}
	switch {
	case asked(ch.Rerun):
		return "completed last time; run again on request (--rerun)"
	case asked(ch.RerunFrom):
		return "completed last time; run again on request (--rerun-from)"
	}
	return "completed last time; run again as downstream of --rerun-from " + strings.Join(ch.RerunFrom, ", ")
}

// heldReason says that the early cut-off may spare a held task, or that
// it runs though held, what it reads having changed already; "" for any
// other task. reads names what it reads: called for a held task only
// (a 200,000-instance plan named them all, for nothing).
func heldReason(d spec.TaskDef, reads func() []string, r *checkpoint.Restored, stands standing) string {
	if !isHeld(d, r) {
		return ""
	}
	var ifs, ran, skips, changed, redecided, unrecorded, newlySkipped []string
	for _, c := range heldReads(reads(), stands) {
		v, recorded := r.Recorded[c]
		how, skippedNow := stands(c)
		decision, decided := r.Decisions[c]
		switch {
		case !recorded:
			unrecorded = append(unrecorded, c)
		case how == checkpoint.Changed && skippedNow:
			newlySkipped = append(newlySkipped, c)
		case how == checkpoint.Changed && decided && !r.Done(c):
			// A human task the run completes with a decision recorded
			// since: stands says so only then.
			redecided = append(redecided, fmt.Sprintf("%s's decision %q", c, decision))
		case how == checkpoint.Changed:
			changed = append(changed, c)
		case v.Skipped:
			skips = append(skips, c)
		default:
			ran = append(ran, c)
		}
	}
	if len(unrecorded) > 0 {
		return fmt.Sprintf("%s has no recorded result to compare with: it runs", strings.Join(unrecorded, ", "))
	}
	if len(newlySkipped) > 0 {
		return fmt.Sprintf("%s is skipped this time, unlike when its recorded result was made: it runs again", strings.Join(newlySkipped, ", "))
	}
	if len(changed) > 0 {
		return fmt.Sprintf("%s came out changed since its recorded result was made: it runs again", strings.Join(changed, ", "))
	}
	if len(redecided) > 0 {
		return fmt.Sprintf("%s is not what its recorded result was made from: it runs again", strings.Join(redecided, ", "))
	}
	if len(ran) > 0 {
		ifs = append(ifs, strings.Join(ran, " or ")+"'s output changes")
	}
	if len(skips) > 0 {
		// Skipped last time; its route is decided again.
		ifs = append(ifs, strings.Join(skips, " or ")+" is not skipped again")
	}
	return fmt.Sprintf("will run only if %s (else its recorded result is reused: early cut-off)", strings.Join(ifs, " or "))
}

func isHeld(d spec.TaskDef, r *checkpoint.Restored) bool {
	_, ok := r.Held[d.Name]
	return ok
}

// standing says how a task a held task reads stands (checkpoint.Stands),
// and whether the dry run skips it.
type standing func(name string) (how checkpoint.Standing, skipped bool)

// heldReads are the tasks of reads (what the run's cut-off compares for
// a held task) that do not stand as recorded: those whose output decides
// whether it runs, or that make it run.
func heldReads(reads []string, stands standing) []string {
	var out []string
	for _, c := range reads {
		if how, _ := stands(c); how != checkpoint.AsRecorded {
			out = append(out, c)
		}
	}
	return out
}

// ownChange: the task's own definition (or its agent's) changed, or it is
// new; a change of its key alone comes from upstream.
func ownChange(d checkpoint.TaskDiff) bool {
	if d.How == "added" {
		return true
	}
	for _, f := range d.Fields {
		if !strings.HasPrefix(f, "key") {
			return true
		}
	}
	return false
}

// runReason says why task d runs.
func runReason(d spec.TaskDef, o *checkpoint.TaskRecord, diffs map[string]checkpoint.TaskDiff, cause string, r, lenient *checkpoint.Restored) string {
	diff, changed := diffs[d.Name]
	switch {
	case o != nil && o.Status == checkpoint.StatusPending && o.Attempts == 0 && o.Previous == nil:
		// Never started: how its definition differs from the one
		// recorded changes nothing (a repeat's join after max_iterations
		// was lowered).
		return "not run yet"
	case changed && diff.How == "added":
		return "added to the file since the checkpoint"
	case changed && ownChange(diff):
		var own []string
		for _, f := range diff.Fields {
			switch {
			case f == "variables":
				own = append(own, diff.Variables+" (part of its key: its result is not reused, even when what it sends is the same)")
			case !strings.HasPrefix(f, "key"):
				own = append(own, strings.ReplaceAll(f, "_", " "))
			}
		}
		return "changed since the checkpoint: " + strings.Join(own, ", ")
	case cause != "" && o != nil && o.Status == checkpoint.StatusCompleted:
		return fmt.Sprintf("downstream of changed task %s", cause)
	case r.Kind == checkpoint.RestorePartial && o != nil && o.Status == checkpoint.StatusCompleted:
		why := "completed last time, but the task set changed: --reuse strict restores no output"
		if lenient != nil && lenient.Done(d.Name) {
			return why + "; --reuse unchanged would restore this one"
		}
		return why
	}
	if o == nil {
		if r.Kind == checkpoint.RestoreNone {
			return "no checkpoint: new session"
		}
		return "not in the checkpoint"
	}
	switch o.Status {
	case checkpoint.StatusFailed:
		attempt := checkpoint.AttemptNote(o.Attempts) // none for a human task
		if o.Error == checkpoint.InterruptedError {
			// Stopped by a signal, as session list says: no failure.
			return "interrupted last time" + attempt
		}
		msg := "failed last time" + attempt
		switch {
		case strings.HasPrefix(o.Error, checkpoint.BudgetHaltPrefix):
			// What the budget does now, NoteBudget says in full; the
			// reason recorded then, cut to a line, would stop at its point.
			return "halted last time" + attempt + " for the budget"
		case checkpoint.HaltedError(o.Error):
			msg = "halted last time" + attempt // a wait, recorded as a failure
		}
		if e := strings.TrimPrefix(firstLine(o.Error), checkpoint.HaltedErrorPrefix); e != "" {
			msg += ": " + e
		}
		return msg
	case checkpoint.StatusRunning:
		// plan takes no lock, not even to probe, so it cannot tell a dead
		// run from a live one.
		return fmt.Sprintf("interrupted last time (attempt %d was running), unless a run still holds the session", o.Attempts)
	case checkpoint.StatusSkipped:
		return "skipped last time: routing is decided again"
	case checkpoint.StatusCompleted:
		// Completed but not restored: only an upstream change explains it.
		if cause != "" {
			return fmt.Sprintf("downstream of changed task %s", cause)
		}
		return "its output was not restored"
	}
	if o.Attempts > 0 {
		if h := o.History; len(h) > 0 && h[len(h)-1].Outcome == checkpoint.StatusCompleted {
			// Pending since a run set it to run again (--rerun, a change
			// upstream) and stopped before it started it.
			return fmt.Sprintf("set to run again by a run that stopped before it ran (attempt %d had completed)", o.Attempts)
		}
		return fmt.Sprintf("interrupted last time (after attempt %d)", o.Attempts)
	}
	if o.Previous != nil {
		// A human task counts no attempts: its previous result says it
		// completed before a run set it to run again.
		return "completed last time; set to run again by a run that stopped before it ran"
	}
	return "not run yet"
}

// skipText words a skip reason of the dry run.
func skipText(defs []spec.TaskDef, r *checkpoint.Restored, why *schedule.Reason) string {
	switch why.Cause {
	case schedule.GateSkipped:
		return fmt.Sprintf("%s would be skipped", defs[why.Gate].Name)
	case schedule.RoutedElsewhere:
		gate := defs[why.Gate].Name
		what := "restored result"
		if !r.Done(gate) {
			what = "recorded decision"
		}
		return fmt.Sprintf("%s's %s %q routes elsewhere", gate, what, why.Value)
	case schedule.RepeatDone:
		gate := defs[why.Gate].Name
		return fmt.Sprintf("%s's restored result contains %q: the repeat is done", gate, why.Value)
	default:
		return "every task it reads would be skipped"
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// toolLoopNote says what the run does with a task's tool loop lg, by the
// run's rule (checkpoint.ToolLog.NextFor): an unfinished one resumes, its
// recorded turns replayed, and a call that a crash left without its
// result halts the run unless its tool was idempotent or a decision is
// recorded; one a limit ended goes on once that limit is raised, and
// otherwise halts if tools that were not idempotent ran in it; an agent
// that runs no tools now does not read it. edited: an edit kept the loop
// for such calls (checkpoint.EditKept).
func toolLoopNote(team *spec.Team, d spec.TaskDef, sess *checkpoint.Session, lg *checkpoint.ToolLog, decision string, where cmdline.Where, edited bool) string {
	a := team.Agent(d.Agent)
	if a == nil || lg == nil {
		return ""
	}
	switch lg.NextFor(a, decision) {
	case checkpoint.LoopUnread:
		return "; " + checkpoint.UnreadText(lg, a.Name)
	case checkpoint.LoopHalts:
		return fmt.Sprintf("; its tool loop ended on agents.%s.%s (%d) after calls of tools that were not idempotent (%s): the run halts here (exit 3) until agents.%s.%s is raised above %d (the loop then goes on after turn %d) or `%s` (it starts afresh, and the model may make those calls again)",
			a.Name, lg.Limit, lg.Max, checkpoint.ToolNames(lg.Unrepeatable()), a.Name, lg.Limit, lg.Max, len(lg.Turns), cmdline.Decide(where, sess.ID, d.Name, checkpoint.DecideRerun))
	case checkpoint.LoopAfresh:
		if lg.Limit != "" && decision == checkpoint.DecideRerun {
			return fmt.Sprintf("; its tool loop, which agents.%s.%s (%d) ended, starts afresh: decision %q recorded", a.Name, lg.Limit, lg.Max, decision)
		}
		if lg.Limit != "" {
			return fmt.Sprintf("; its tool loop, which agents.%s.%s (%d) ended, starts afresh: the tools that ran in it were idempotent", a.Name, lg.Limit, lg.Max)
		}
		if lg.Resumable() && decision == checkpoint.DecideRerun {
			return fmt.Sprintf("; its tool loop starts afresh: decision %q recorded (the model may call %s again)", decision, checkpoint.ToolNames(lg.Unrepeatable()))
		}
		return ""
	}
	note := fmt.Sprintf("; its tool loop resumes after turn %d (recorded results are replayed, not run again)", len(lg.Turns))
	if edited {
		note += "; " + checkpoint.EditKeptText(lg, cmdline.Decide(where, sess.ID, d.Name, checkpoint.DecideRerun))
	}
	if lg.Limit != "" {
		note += fmt.Sprintf(", agents.%s.%s being raised above the %d that ended it", a.Name, lg.Limit, lg.Max)
	}
	c := lg.PendingCall()
	if c == nil {
		return note
	}
	// As the run settles it (runner's settle): a recorded decision first,
	// then the tool's idempotency when the call started, never today's.
	switch {
	case slices.Contains(checkpoint.ToolDecisions(), decision):
		return note + fmt.Sprintf("; tool %s was started without a recorded result: decision %q recorded", c.Tool, decision)
	case c.RunsAgain():
		return note + fmt.Sprintf("; tool %s was started without a recorded result and was idempotent then: it runs again", c.Tool)
	}
	return note + fmt.Sprintf("; tool %s was started with %s without a recorded result: the run halts here (exit 3) until `%s`",
		c.Tool, checkpoint.ShortArguments(c.Arguments), cmdline.OneOf(cmdline.Decide(where, sess.ID, d.Name, ""), checkpoint.ToolDecisions()))
}

// routeSkipsList is what a foreach's step says of its producer (task
// k, named name) when a route not decided yet may skip it: then the
// foreach has no list (the run notes so, as it makes no instance); ""
// when none may.
func routeSkipsList(st *schedule.State, k int, name string) string {
	if k < 0 || len(st.OpenGates(k)) == 0 {
		return ""
	}
	return fmt.Sprintf(" (if a route skips %s, the foreach has no list)", name)
}

// NoteBudget adds to each LLM task that the run would start that it halts
// there instead, as halts says why (the run's rule,
// runner.BudgetHaltsBefore; "" when it does not): the session has spent
// its budget, or what is left cannot take the task's next request, until
// decide (`teamrun session decide ID budget raise=N`; "" for a new
// session) raises it. Command tasks still run.
func (p *Plan) NoteBudget(team *spec.Team, halts func(task string) string, decide string) {
	for i := range p.Steps {
		s := &p.Steps[i]
		ti := team.TaskIndex(s.Task)
		if s.Action != Run || ti < 0 {
			continue
		}
		if a := team.Agent(team.Tasks[ti].Agent); a == nil || a.Kind != spec.LLMAgent {
			continue
		}
		switch why := halts(s.Task); {
		case why == "":
		case decide == "": // a new session: nothing to decide on yet
			s.Reason += fmt.Sprintf("; the session's budget is reached (%s): the run halts before it (exit 3) until the spec's budget is larger", why)
		default:
			s.Reason += fmt.Sprintf("; the session's budget is reached (%s): the run halts before it (exit 3) until `%s` (or a larger budget in the spec)", why, decide)
		}
	}
}

// failureReach is, for the tasks failing (none: nil, nil), which of them
// each of n tasks waits for, directly or not (-1: none; a failing task
// itself), and whether it is one that a failing task waits for: it runs
// before that task fails, for sure.
func failureReach(g *schedule.Graph, failing []int, n int) (behind []int, before []bool) {
	if len(failing) == 0 {
		return nil, nil
	}
	behind = make([]int, n)
	for i := range behind {
		behind[i] = -1
	}
	for _, f := range failing {
		behind[f] = f
	}
	for changed := true; changed; {
		changed = false
		for i := range behind {
			if behind[i] >= 0 {
				continue
			}
			for _, dep := range g.Deps(i) {
				if behind[dep] >= 0 {
					behind[i], changed = behind[dep], true
					break
				}
			}
		}
	}
	before = make([]bool, n)
	stack := slices.Clone(failing)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, dep := range g.Deps(i) {
			if !before[dep] {
				before[dep] = true
				stack = append(stack, dep)
			}
		}
	}
	return behind, before
}
