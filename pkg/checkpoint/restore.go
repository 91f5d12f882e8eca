package checkpoint

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/spec"
)

// Reuse is the --reuse flag: what a mismatching task set may keep.
type Reuse int

const (
	// ReuseStrict restores task outputs only when the whole task set matches.
	ReuseStrict Reuse = iota
	// ReuseUnchanged reuses every task whose key and upstream are unchanged.
	ReuseUnchanged
)

// ParseReuse reads the --reuse flag's value.
func ParseReuse(s string) (Reuse, error) {
	switch s {
	case "strict": // "" too is a mistake: `--reuse="$MODE"`, MODE unset
		return ReuseStrict, nil
	case "unchanged":
		return ReuseUnchanged, nil
	}
	return 0, fmt.Errorf("--reuse %s: expected strict or unchanged", spec.ShownValue(s))
}

func (r Reuse) String() string {
	if r == ReuseUnchanged {
		return "unchanged"
	}
	return "strict"
}

// RestoreKind says which restore rule applied.
type RestoreKind int

const (
	RestoreNone    RestoreKind = iota // no session: nothing restored
	RestoreFull                       // fingerprints match: everything restored
	RestorePartial                    // mismatch: shared state only
	RestorePerTask                    // mismatch with --reuse unchanged: unchanged tasks reused
)

func (k RestoreKind) String() string {
	switch k {
	case RestoreNone:
		return "none"
	case RestoreFull:
		return "full"
	case RestorePartial:
		return "partial"
	case RestorePerTask:
		return "per-task"
	}
	return fmt.Sprintf("RestoreKind(%d)", int(k))
}

// TaskDiff is one way the spec's tasks differ from the checkpoint's.
type TaskDiff struct {
	Task string // the task's name
	How  string // "added", "removed" or "changed"
	// Fields, for "changed": which fields, e.g. description, agent,
	// context, "agent definition"; or, when none of those did and its
	// per-task key differs all the same, only one: "key" when a task it
	// reads changed (Reads), a setting of its own key (condition,
	// output_schema, …) that it did not have then, or "a setting" when
	// the session cannot tell which (it keeps their digest).
	Fields []string
	// Reads are, for a change of its key alone, the tasks it reads whose
	// key changed; none when the session cannot tell (an older one).
	Reads []string
	// Variables says how the variables it sets or reads changed
	// (VariableChanges), "" when they did not or no record tells; then
	// Fields holds "variables", not "key".
	Variables string
}

// String says how the task differs in user terms, e.g.
// `task "b": description changed`.
func (d TaskDiff) String() string {
	if d.How != "changed" {
		return fmt.Sprintf("task %q %s", d.Task, d.How)
	}
	var own []string
	for _, f := range d.Fields {
		switch f {
		case "key", "variables":
		case "agent definition":
			own = append(own, "its agent's definition")
		case "a setting":
			own = append(own, "a setting of its own (the session keeps their digest, not what they were: condition, options, output_schema, "+
				"output_variable, route_on, until or its foreach item; or, recorded by an older teamrun, max_retries or timeout)")
		default:
			own = append(own, strings.ReplaceAll(f, "_", " "))
		}
	}
	switch {
	case len(own) == 0 && d.Variables != "":
		return fmt.Sprintf("task %q: %s", d.Task, d.Variables)
	case len(own) == 0 && len(d.Reads) > 0:
		return fmt.Sprintf("task %q: %s, which it reads, changed", d.Task, andList(d.Reads))
	case len(own) == 0:
		return fmt.Sprintf("task %q: an upstream task or a setting changed", d.Task)
	}
	what := andList(own)
	if d.Variables != "" {
		return fmt.Sprintf("task %q: %s changed; %s", d.Task, what, d.Variables)
	}
	return fmt.Sprintf("task %q: %s changed", d.Task, what)
}

// andList is "a", "a and b", "a, b and c".
func andList(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
}

// Restored is what a run may take over from a session.
type Restored struct {
	Kind RestoreKind
	// records are the restored records (Task), in the order of the defs
	// the restore was given (Name "" where the session had none), which
	// Continue takes over as the new session's records (taken).
	records []TaskRecord
	// taken says Continue took records: another Continue copies them.
	taken bool
	// index finds a record by name when Task does not find it by its
	// position (cursor): made when first needed. A map of every task's
	// name was 0.42 MB of a 10,000-task restore, which collects nothing
	// while it loads.
	index  map[string]int
	cursor int
	// shared says records is the restored session's own list
	// (shareRecords).
	shared bool
	// changed are the instances and joins whose rendered definition
	// changed under a fingerprint match (changedInstances).
	changed []string
	// Reused lists the completed tasks taken over, in spec order.
	Reused    []string
	State     map[string]any
	Decisions map[string]string
	Memory    map[string][]Message
	Diffs     []TaskDiff
	Warnings  []string
	// Notes say what the restore does that is no problem (the tasks
	// --rerun runs again, those the early cut-off may spare): a run says
	// them as notes, which --quiet leaves out of cron's mail.
	Notes []string
	// Rerun lists, in spec order, the completed tasks that run again
	// because --rerun or --rerun-from asked for it.
	Rerun []string
	// Keep is the --keep list as applied (keepExpanded): with the
	// instances of a kept foreach or repeat, without a refused one.
	Keep []string
	// Kept lists the tasks --keep pinned although their definition changed;
	// KeptReadChanged those it pinned whose own definition stands while
	// what they read changed (keptChanged); KeptDownstream those it
	// pinned although --rerun-from reaches them, KeptRead those it pinned
	// although what they read runs again.
	Kept, KeptReadChanged, KeptDownstream, KeptRead []string
	// KeptPrevious lists the tasks --keep pinned to the result they had
	// before a run set them to run again and stopped (keptResult).
	KeptPrevious []string
	// KeptReads are, by task --keep pinned, the tasks it reads that this
	// run has not ended yet (they run again, are held, or their route is
	// decided again): the session keeps them (Hold.Kept), so that a run
	// stopped before they end leaves the kept task to the next --continue
	// as any reader, compared with the results it was made from.
	KeptReads map[string][]string
	// KeptOverDecision are, by task, the decisions recorded for a held
	// human task that --keep pinned to its earlier result: dropped, with
	// a warning (keepOverDecision).
	KeptOverDecision map[string]string
	// Unkept says, one warning each, the tasks --keep names that have no
	// recorded output to pin: they run, as without it.
	Unkept []string
	// Unrerun says, one warning each, the tasks --rerun names that were
	// skipped last time: their route, not the flag, decides whether they
	// run (--rerun is said, never silent, as --keep is).
	Unrerun []string
	// Held are completed tasks that would have been reused but read
	// (through context) a task that runs again (or that Choice.Refuse
	// refuses, Refusal.Held): each is reused after all, with its recorded
	// result, when what it reads comes out byte-identical to what was
	// recorded (early cut-off); else it runs.
	Held map[string]TaskRecord
	// Recorded holds the recorded result of every completed task that runs
	// again (Rerun and Held), and that the skipped tasks were skipped
	// (whatever the restore), for the early cut-off's comparison.
	Recorded map[string]Outcome
	// Unheld are, by task, the completed tasks the restore would have held
	// (Held) whose context or agent definition changed since their result
	// was made (Uncovered, whose words it holds): they run (UnheldReason).
	Unheld map[string]string
	// Refused are the completed tasks Choice.Refuse refused: each runs
	// again (or is held, or skipped this time), with why.
	Refused map[string]Refusal
	// Deferred are the session's records of the instances of a foreach
	// that waits for its producer (Choice.DeferredJoin), in session
	// order: not in defs, and not removed from the file. The session
	// keeps them, so that once the producer finishes and the instances
	// are made anew, the next pass's restore decides each by its own
	// rendered definition (an unchanged item's is restored, not paid
	// again). A completed one stays completed under a full restore when
	// nothing it reads runs this time but the producer; otherwise it runs
	// again, its attempts counted on, unless it is held (HeldLater).
	Deferred []TaskRecord
	// Waiting are, under a full restore, the joins of a foreach that waits
	// for its producer (Choice.DeferredJoin), by join, the producer: the
	// join is made anew with its instances when the producer, which runs
	// again, finishes. It is not one of Diffs: what differs from its
	// record is the placeholder that stands for its instances, which run
	// (warnChanged) and plan say as "waits for" instead.
	Waiting map[string]string
	// HeldLater are the held tasks (holdUndecided) of a foreach that waits
	// for its producer: its instances (carried, Deferred) and its join.
	// This pass cannot decide them, their definitions being made anew
	// when the producer finishes; the session keeps them held (Hold), and
	// the pass after the expansion holds each again (HoldAgain) whose
	// own definition is the held record's.
	HeldLater map[string]TaskRecord
	// Resets are, by task, the results taken over (restored or held) that
	// set another variable today than their records say, or another
	// value: the restore set today's (Choice.Sets, setsAgain).
	Resets map[string]Reset
}

// Refusal is why today's team does not take over a restored result (Why,
// "" when it does): it no longer fits the task's output_schema or
// condition, or it was made from one that is not taken over.
type Refusal struct {
	Why string
	// Held: only what it reads runs again, each from a recorded result
	// that may come out byte-identical: held for the early cut-off.
	Held bool
	// Skipped: a gate routes away from it now: it is skipped this time.
	Skipped bool
}

// warning says what becomes of task, whose restored result f refuses;
// kept: --keep names it, and is not honoured.
func (f Refusal) warning(task string, kept bool) string {
	next, then := "running it again", KeptRuns
	switch {
	case f.Skipped:
		next, then = "it is skipped this time", KeptSkipped
	case f.Held:
		next = "it runs again only if what it reads changes (early cut-off)"
	}
	if kept {
		// Its own result is refused (what a kept task reads does not
		// count): one line says --keep failed too.
		return NotKept(task, f.Why, then)
	}
	return fmt.Sprintf("task %q: %s; %s", task, f.Why, next)
}

// Choice is what the user asks of a restore beyond the DESIGN §4 rules:
// --reuse, --rerun, --rerun-from and --keep.
type Choice struct {
	Reuse     Reuse
	Rerun     []string // run again though done; what reads them may be cut off
	RerunFrom []string // run again with everything downstream, no cut-off
	Keep      []string // keep the recorded output though the definition changed
	// Refuse is today's check of the results the restore takes over, by
	// index in defs (schedule.Graph.Refuser: the engine's rule; nil:
	// none); a task past the end of its list is taken over. What it refuses runs again as the restore says it, so the
	// session a run writes says it before anything runs: a run killed
	// after a refused task ran again leaves what reads it to run.
	Refuse func(r *Restored) []Refusal
	// CutoffReads is what the early cut-off compares for the task at
	// index i in defs (schedule.Graph.CutoffReads, as indices in defs;
	// nil: unknown): a hold the last run left is taken over for each
	// task whose reads it recorded as this restore does (holdUndecided).
	CutoffReads func(i int) []int
	// Reads is what the result of the task at index i in defs is made of
	// (schedule.Graph.Reads; nil: its context): what reads a task --rerun
	// names is held.
	Reads func(i int) []int
	// Upstream is what the run of the task at index i in defs is made of
	// or decided by (schedule.Graph.Upstream; nil: its context and the
	// producer of its foreach): what --rerun-from follows.
	Upstream func(i int) []int
	// Memory says whether the agent of the task at index i in defs has
	// memory: true (schedule.Graph.Remembers; nil: none has): held, it
	// runs all the same, as the early cut-off never reuses it.
	Memory func(i int) bool
	// Human says whether the task at index i in defs is decided by a
	// person (schedule.Graph.Human; nil: none is): held with a decision
	// recorded since, it completes with that decision (decideHeld).
	Human func(i int) bool
	// Sets is what the result recorded in t, taken over for the task at
	// index i in defs, puts in the shared state today: spec.Task.Sets of
	// its text, by today's output_variable (nil: what its record set).
	// The restore sets it (setsAgain), for run and plan alike.
	Sets func(i int, t TaskRecord) (name string, value any)
	// SettingAdded names the setting of its own key (condition, options,
	// output_schema, …) that the task at index i in defs did not have
	// when the session recorded own as its own key (spec's
	// Team.SettingAdded; nil, or "": it cannot tell): asked only for a
	// task whose own key changed where no field a diff compares did.
	SettingAdded func(i int, own string) string
	// VariableChanges says, by task, how the variables it sets or reads
	// changed since the checkpoint (VariableChanges of today's team; nil:
	// unknown): asked only when the task set differs, its words are the
	// diff's (TaskDiff.Variables).
	VariableChanges func() map[string]string
	// After says whether the task at index k in defs, when it runs,
	// always ends after the one at j (spec.VariableReads.After; nil: file
	// order): of two that set one variable, the later's value stands.
	After func(j, k int) bool
	// DeferredJoin is, for the name of a task in the session but not in
	// defs, the join of the foreach it is an instance of when that
	// foreach waits for its producer (spec.Team.DeferredJoin; nil: none):
	// its record is carried (Restored.Deferred).
	DeferredJoin func(name string) *spec.Task
	// FingerprintBefore is the fingerprint a teamrun that rendered every
	// placeholder from the starting state gave today's tasks
	// (spec.Team.FingerprintBefore; "": the fingerprint): a session such
	// a teamrun recorded under it matches, as under the fingerprint.
	FingerprintBefore string
}

// Check refuses a choice that names a task the spec does not have (with a
// did-you-mean) or both keeps and re-runs a task. names lists the spec's
// task names, asked only when the choice names a task: a list of 10,000
// was 160 KB of a restore that collects nothing.
func (c Choice) Check(names func() []string) error {
	if len(c.Rerun)+len(c.RerunFrom)+len(c.Keep) == 0 {
		return nil // nothing to look up: no set of 10,000 names for it
	}
	tasks := names()
	known := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		known[t] = true
	}
	for _, f := range []struct {
		flag  string
		names []string
	}{{"--rerun", c.Rerun}, {"--rerun-from", c.RerunFrom}, {"--keep", c.Keep}} {
		for _, n := range f.names {
			if known[n] {
				continue
			}
			if i := strings.IndexAny(n, "[#"); i > 0 && known[n[:i]] {
				// An instance or an iteration goes with its declared task.
				return fmt.Errorf("%s: %s is one of task %s's instances or iterations, which are named together: %s %s", f.flag, n, n[:i], f.flag, n[:i])
			}
			return fmt.Errorf("%s: %s", f.flag, spec.UnknownTask(n, tasks))
		}
	}
	for _, k := range c.Keep {
		flag := "--rerun" // named as typed
		if !slices.Contains(c.Rerun, k) {
			if !slices.Contains(c.RerunFrom, k) {
				continue
			}
			flag = "--rerun-from"
		}
		return fmt.Errorf("--keep %s and %s %s contradict each other: keep its output or run it again, not both", k, flag, k)
	}
	return nil
}

// Downstream lists names and every task whose run is made of or decided
// by one of them, directly or through others (ch.Upstream), in defs order.
func (ch Choice) Downstream(defs []spec.TaskDef, names []string) []string {
	out, _ := ch.downstreamBut(defs, names, nil)
	return out
}

// rerunFrom is what --rerun-from runs again: its tasks and what is
// downstream of them, but a task --keep pins (kept: reached, and kept)
// and what it alone leads to, which is held like any reader of a kept
// task.
func (ch Choice) rerunFrom(defs []spec.TaskDef) (runs, kept []string) {
	stop := map[string]bool{}
	for _, k := range ch.Keep {
		if !slices.Contains(ch.RerunFrom, k) {
			stop[k] = true
		}
	}
	return ch.downstreamBut(defs, ch.RerunFrom, stop)
}

// downstreamBut is Downstream, which does not go on through the tasks of
// stop: those it reaches it lists apart.
func (ch Choice) downstreamBut(defs []spec.TaskDef, names []string, stop map[string]bool) (out, stopped []string) {
	if len(names) == 0 {
		return nil, nil
	}
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	reached := map[string]bool{}
	// defs are in file order and a task reads earlier ones in a valid spec;
	// a fixed point keeps any order right.
	for changed := true; changed; {
		changed = false
		for i, d := range defs {
			if in[d.Name] || reached[d.Name] || !slices.ContainsFunc(ch.upstream(defs, i), func(c string) bool { return in[c] }) {
				continue
			}
			if stop[d.Name] {
				reached[d.Name] = true
			} else {
				in[d.Name], changed = true, true
			}
		}
	}
	for _, d := range defs {
		switch {
		case in[d.Name]:
			out = append(out, d.Name)
		case reached[d.Name]:
			stopped = append(stopped, d.Name)
		}
	}
	return out, stopped
}

// upstream names ch.Upstream of the task at index i in defs.
func (ch Choice) upstream(defs []spec.TaskDef, i int) []string {
	if ch.Upstream == nil {
		return slices.Concat(defs[i].Context, defs[i].After())
	}
	return namesAt(defs, ch.Upstream(i))
}

// reads names ch.Reads of the task at index i in defs.
func (ch Choice) reads(defs []spec.TaskDef, i int) []string {
	if ch.Reads == nil {
		return defs[i].Context
	}
	return namesAt(defs, ch.Reads(i))
}

func namesAt(defs []spec.TaskDef, at []int) []string {
	out := make([]string, 0, len(at))
	for _, j := range at {
		if j >= 0 && j < len(defs) {
			out = append(out, defs[j].Name)
		}
	}
	return out
}

// Done reports whether the named task was restored as completed.
func (r *Restored) Done(task string) bool {
	if r == nil {
		return false
	}
	t, ok := r.Task(task)
	_, held := r.Held[task]
	return ok && t.Status == StatusCompleted && !held
}

// Restore applies DESIGN §4 to a loaded session and the spec's current
// task definitions. It does no I/O; sess may be nil (no session).
func Restore(sess *Session, defs []spec.TaskDef, fingerprint string, reuse Reuse) *Restored {
	return RestoreChoice(sess, defs, fingerprint, Choice{Reuse: reuse})
}

// RestoreChoice is Restore with what the user chose to run again or keep:
// the one place run and plan both take the per-task decision from.
func RestoreChoice(sess *Session, defs []spec.TaskDef, fingerprint string, ch Choice) *Restored {
	asked, askedRerun := ch.Keep, ch.Rerun
	keep, refused := keepExpanded(sess, defs, ch.Keep)
	ch.Keep = keep
	r := restoreRules(sess, defs, fingerprint, ch)
	if len(r.Kept) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("--keep: the recorded output of %s is kept although its definition changed", strings.Join(r.Kept, ", ")))
	}
	r.warnChanged(defs, ch)
	r.Keep = keep
	if sess != nil && (len(ch.Rerun) > 0 || len(ch.RerunFrom) > 0) {
		ch.Rerun, ch.RerunFrom = withExpansions(defs, ch.Rerun), withExpansions(defs, ch.RerunFrom)
		r.rerun(sess, defs, ch)
	}
	r.holdUndecided(sess, defs, ch)
	r.decideHeld(defs, ch)
	r.refuse(defs, ch)
	r.holdMade(defs, ch)
	r.unholdUncovered(sess, defs)
	r.carryDeferred(sess, ch)
	r.unsetRunning(sess, defs, ch) // first: setsAgain says what stays of the state it leaves
	r.setsAgain(sess, defs, ch)
	if r.Kind == RestoreFull {
		r.Warnings = append(r.Warnings, uncoveredWarnings(sess, defs, r)...)
	}
	r.Unkept = append(refused, unkept(sess, slices.DeleteFunc(slices.Clone(asked), func(k string) bool { return !slices.Contains(keep, k) }))...)
	r.Warnings = append(r.Warnings, r.Unkept...)
	if sess != nil {
		// The tasks the user named: a repeat's iterations that its until
		// skipped are not (withExpansions adds them).
		for _, n := range askedRerun {
			if t, ok := sess.Task(n); ok && t.Status == StatusSkipped {
				r.Unrerun = append(r.Unrerun, fmt.Sprintf("--rerun %s: it was skipped last time: its route decides again whether it runs", n))
			}
		}
		r.Warnings = append(r.Warnings, r.Unrerun...)
	}
	if len(r.KeptPrevious) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("--keep %s: kept the result recorded before a run set it to run again and stopped", strings.Join(r.KeptPrevious, ", ")))
		r.keepOverDecision(defs, ch)
	}
	r.keptReads(defs, ch)
	var held, remember []string
	for i, d := range defs {
		_, later := r.HeldLater[d.Name]
		if _, ok := r.Held[d.Name]; ok && r.Refused[d.Name].Why == "" || later { // a refused one has its own warning
			if ch.Memory != nil && ch.Memory(i) {
				remember = append(remember, d.Name)
			} else {
				held = append(held, d.Name)
			}
		}
	}
	if len(remember) > 0 {
		they, run, is := "they", "run", "are"
		if len(remember) == 1 {
			they, run, is = "it", "runs", "is"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s %s again: what %s %s made of runs again, and the early cut-off never reuses the answer of an agent with memory: true",
			strings.Join(remember, ", "), run, they, is))
	}
	for _, t := range r.Deferred {
		if _, ok := r.HeldLater[t.Name]; ok {
			held = append(held, t.Name)
		}
	}
	if len(held) > 0 {
		they, reads, its := "they", "read", "their recorded results are"
		if len(held) == 1 {
			they, reads, its = "it", "reads", "its recorded result is"
		}
		r.Notes = append(r.Notes, fmt.Sprintf("early cut-off: %s will run only if what %s %s changes; otherwise %s reused",
			strings.Join(held, ", "), they, reads, its))
	}
	return r
}

// decideHeld settles the held human tasks that have a decision: a
// decision recorded since the task completed (session decide on a task a
// stopped --rerun left held) is its result, so it is no longer held and
// the run completes it with that decision, as plan says, rather than the
// early cut-off reusing the old one and leaving the new one to judge a
// later, other input. A decision that is the recorded result was used on
// what it judged: it goes (as in rerun), and the task stays held, to be
// decided anew if what it reads changes. Run and plan both take the held
// tasks from here.
func (r *Restored) decideHeld(defs []spec.TaskDef, ch Choice) {
	if ch.Human == nil || len(r.Held) == 0 {
		return
	}
	for i, d := range defs {
		t, held := r.Held[d.Name]
		v, decided := r.Decisions[d.Name]
		if !held || !decided || !ch.Human(i) {
			continue
		}
		if decidedWith(t.Outcome(), v) {
			delete(r.Decisions, d.Name)
			continue
		}
		delete(r.Held, d.Name)
	}
}

// keptReads sets KeptReads: for each task --keep pins, what its early
// cut-off would compare (ch.CutoffReads; nil: what it reads and its
// foreach's producer) that this restore does not take over. It is the one
// rule for KeptRead and its warning too: a pinned task one of those runs
// for this time, whatever makes it run (--rerun, a failure or a kill last
// time, a change, a hold a stopped run left), as --keep is said, never
// silent (DESIGN §3). One skipped last time is not said to run: its route
// decides again, and skipped again it leaves what the pinned result was
// made from as it was. One downstream of --rerun-from has its own warning
// (KeptDownstream).
func (r *Restored) keptReads(defs []spec.TaskDef, ch Choice) {
	if len(r.Keep) == 0 {
		return
	}
	var again []string // what the pinned tasks read that runs, each once
	for i, d := range defs {
		if !slices.Contains(r.Keep, d.Name) || !r.Done(d.Name) {
			continue
		}
		var reads []string
		if ch.CutoffReads != nil {
			reads = namesAt(defs, ch.CutoffReads(i))
		} else {
			reads = slices.Concat(ch.reads(defs, i), d.After())
		}
		if reads = slices.DeleteFunc(slices.Clone(reads), r.Done); len(reads) == 0 {
			continue
		}
		if r.KeptReads == nil {
			r.KeptReads = map[string][]string{}
		}
		r.KeptReads[d.Name] = reads
		if slices.Contains(r.KeptDownstream, d.Name) {
			continue
		}
		runs := false
		for _, c := range reads {
			if t, ok := r.Task(c); ok && t.Status == StatusSkipped {
				continue
			}
			runs = true
			if !slices.Contains(again, c) {
				again = append(again, c)
			}
		}
		if runs {
			r.KeptRead = append(r.KeptRead, d.Name)
		}
	}
	if len(r.KeptRead) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("--keep %s: kept, though what it reads runs again (%s)", strings.Join(r.KeptRead, ", "), strings.Join(again, ", ")))
	}
}

// keepOverDecision drops the decision recorded for a held human task that
// --keep pins to the result it completed with: the user chose that result
// over the decision, which, left in the session, would judge a later,
// other input the next time the task runs. Said, never silent; one that
// is the kept result goes without a word (it was used).
func (r *Restored) keepOverDecision(defs []spec.TaskDef, ch Choice) {
	if ch.Human == nil {
		return
	}
	for i, d := range defs {
		v, ok := r.Decisions[d.Name]
		if !ok || !ch.Human(i) || !slices.Contains(r.KeptPrevious, d.Name) {
			continue
		}
		delete(r.Decisions, d.Name)
		if t, ok := r.Task(d.Name); ok && decidedWith(t.Outcome(), v) {
			continue
		}
		if r.KeptOverDecision == nil {
			r.KeptOverDecision = map[string]string{}
		}
		r.KeptOverDecision[d.Name] = v
		r.Warnings = append(r.Warnings, fmt.Sprintf("--keep %s: the decision %q recorded for it is dropped: the kept result stands (without --keep, the task completes with the decision)", d.Name, v))
	}
}

// carryDeferred keeps the records of sess that are instances of a foreach
// waiting for its producer (r.Deferred). A partial or per-task restore
// compares no instance with its rendered definition (there is none yet):
// they are not taken over, except those of a join --keep pins (r.Keep),
// which pins its instances' recorded results too (keepExpanded, once they
// are made).
func (r *Restored) carryDeferred(sess *Session, ch Choice) {
	if sess == nil || ch.DeferredJoin == nil {
		return
	}
	seen := map[string]bool{} // a hand-edited file may repeat a name
	for _, t := range sess.Team.Tasks {
		if _, ok := r.Task(t.Name); ok || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		join := ch.DeferredJoin(t.Name)
		if join == nil {
			continue
		}
		if r.Kind != RestoreFull {
			if t.Status == StatusCompleted && r.Done(join.Name) && slices.Contains(r.Keep, join.Name) {
				r.Deferred = append(r.Deferred, carried(t, true))
			}
			continue
		}
		producer := join.Expanded().ExpandsWhen
		// Made from what runs this time (a context task not restored):
		// its result is not the one that task will make.
		stale := slices.ContainsFunc(t.Context, func(c string) bool { return c != producer && !r.Done(c) })
		_, held := r.HeldLater[t.Name]
		switch {
		case t.Status == StatusCompleted && !stale:
			r.Deferred = append(r.Deferred, carried(t, true))
		case held:
			// Pending with its definition and previous result, so that
			// a run stopped again leaves it held as it was.
			r.Deferred = append(r.Deferred, carried(t, false))
		default:
			r.Deferred = append(r.Deferred, runsAgain(t))
		}
	}
}

// holdMade holds what is made from the recorded output of a list
// producer that is not taken over this time (it runs again on request, is held, or a
// gate that runs again decides whether it runs at all): a foreach's
// instances and join, and what reads them. Their records stay as they
// are until the run decides: if that output comes out the same they are
// cut off; if the list changes the run expands again and the next pass
// restores or runs each by its own rendered definition (an unchanged
// instance is restored, not paid again); if a route skips the producer,
// the foreach has no list and none of them is restored. A task --keep
// pins is not held (keptReads says so).
func (r *Restored) holdMade(defs []spec.TaskDef, ch Choice) {
	if len(r.Recorded) == 0 {
		return // nothing runs again from a completed record
	}
	made := map[string]bool{}
	for i, d := range defs {
		if !r.Done(d.Name) || slices.Contains(r.Keep, d.Name) {
			continue
		}
		from := slices.ContainsFunc(d.After(), func(a string) bool { o, was := r.Recorded[a]; return was && !o.Skipped && !r.Done(a) }) ||
			slices.ContainsFunc(ch.reads(defs, i), func(c string) bool { return made[c] })
		if !from {
			continue
		}
		p, _ := r.Task(d.Name)
		made[d.Name] = true
		r.Held[d.Name] = *p
		r.Recorded[d.Name] = p.Outcome()
		r.Reused = slices.DeleteFunc(r.Reused, func(n string) bool { return n == d.Name })
	}
}

// refuse makes every completed task ch.Refuse refuses run again: its
// record pending, its recorded result to compare with, held when only
// what it reads runs again; and says so, one warning a task.
func (r *Restored) refuse(defs []spec.TaskDef, ch Choice) {
	if ch.Refuse == nil || len(r.Reused) == 0 {
		return
	}
	refusals := ch.Refuse(r)
	for i, d := range defs {
		if i >= len(refusals) || refusals[i].Why == "" || !r.Done(d.Name) {
			continue
		}
		r.own()
		p, _ := r.Task(d.Name)
		f, t := refusals[i], *p
		if r.Refused == nil {
			r.Refused = map[string]Refusal{}
		}
		r.Refused[d.Name] = f
		r.Recorded[d.Name] = t.Outcome()
		*p = runsAgain(t)
		r.Reused = slices.DeleteFunc(r.Reused, func(n string) bool { return n == d.Name })
		if f.Held && !f.Skipped {
			r.Held[d.Name] = t
		}
		msg := f.warning(d.Name, slices.Contains(r.Keep, d.Name))
		r.Warnings = append(r.Warnings, msg)
	}
}

// Uncovered names what changed in a task outside the fingerprint's fields
// (its context, its agent's definition), "" when nothing did; o is its
// record (nil: none). Under a matching fingerprint the task is restored all
// the same (DESIGN §4: a match is a full restore): plan notes it on the
// task's line, run warns of it (uncoveredWarnings).
func Uncovered(d spec.TaskDef, o *TaskRecord) string {
	if o == nil {
		return ""
	}
	var what []string
	if contextUncovered(d, o) {
		what = append(what, "its context")
	}
	if agentUncovered(d, o) {
		what = append(what, fmt.Sprintf("agent %s's definition", d.Agent))
	}
	return strings.Join(what, " and ")
}

// keepsKeys says whether t, the restored record of d, keeps the keys and
// context its result was made under rather than take today's (Continue):
// restored as it is although what the fingerprint does not cover changed
// (Uncovered). Adopted, the result the old agent or context made would
// pass for today's: the next plan would not note it, nor run warn of it,
// and --reuse unchanged would reuse it as unchanged. A task that runs
// this time (held too) takes today's keys, as does one --keep pins
// (kept is adopted).
func (r *Restored) keepsKeys(d spec.TaskDef, t *TaskRecord) bool {
	return t.Status == StatusCompleted && (agentUncovered(d, t) || contextUncovered(d, t)) &&
		r.Done(d.Name) && !slices.Contains(r.Keep, d.Name)
}

// contextUncovered: the context of d is not the one its record was made
// with. A join that waits for its producer has the instances' context
// only once they are made (spec.TaskDef.WaitsFor).
func contextUncovered(d spec.TaskDef, o *TaskRecord) bool {
	return o.Key != "" && d.WaitsFor() == "" && !slices.Equal(o.Context, d.Context)
}

func agentUncovered(d spec.TaskDef, o *TaskRecord) bool {
	return o.AgentKey != "" && d.AgentKey != "" && o.AgentKey != d.AgentKey
}

// unholdUncovered makes the held tasks whose context or agent definition
// changed since their recorded result was made (Uncovered) run: the early
// cut-off compares what that result was made from, which says nothing of
// a context task added since or of another agent. In doubt it runs, as a
// task with no recorded result to compare with does. A refused one is
// left as it is: the cut-off never reuses a result it refuses.
func (r *Restored) unholdUncovered(sess *Session, defs []spec.TaskDef) {
	if sess == nil || len(r.Held) == 0 {
		return
	}
	for _, d := range defs {
		if _, held := r.Held[d.Name]; !held || r.Refused[d.Name].Why != "" {
			continue
		}
		what := Uncovered(d, sess.record(d.Name))
		if what == "" {
			continue
		}
		delete(r.Held, d.Name)
		if r.Unheld == nil {
			r.Unheld = map[string]string{}
		}
		r.Unheld[d.Name] = what
		r.Warnings = append(r.Warnings, fmt.Sprintf("task %s: %s", d.Name, r.UnheldReason(d.Name)))
	}
}

// UnheldReason says why task, which reads a task that runs again, runs
// rather than wait for the early cut-off (Unheld); "" when it is not one.
// Run warns it and plan says it on the task's line.
func (r *Restored) UnheldReason(task string) string {
	what, ok := r.Unheld[task]
	if !ok {
		return ""
	}
	return what + " changed since its recorded result was made, which the fingerprint does not cover: the early cut-off does not reuse that result, it runs again"
}

// uncoveredWarnings says, once per agent whose definition changed (and
// once for the tasks whose context did), which restored tasks a full
// restore takes over although that changed, and how to run them again.
func uncoveredWarnings(sess *Session, defs []spec.TaskDef, r *Restored) []string {
	var agents []string // in the order of their first task
	byAgent := map[string][]string{}
	var contexts []string
	var reused map[string]bool // made when first asked: O(tasks), once
	for _, d := range defs {
		o, ok := sess.Task(d.Name)
		if !ok || !agentUncovered(d, o) && !contextUncovered(d, o) {
			continue
		}
		if reused == nil {
			reused = make(map[string]bool, len(r.Reused))
			for _, n := range r.Reused {
				reused[n] = true
			}
		}
		if !reused[d.Name] {
			continue
		}
		if agentUncovered(d, o) {
			if _, seen := byAgent[d.Agent]; !seen {
				agents = append(agents, d.Agent)
			}
			byAgent[d.Agent] = append(byAgent[d.Agent], d.Name)
		}
		if contextUncovered(d, o) {
			contexts = append(contexts, d.Name)
		}
	}
	var declared map[string]string // an instance's or iteration's declared task, which --rerun names
	restoredText := func(tasks []string) string {
		if declared == nil { // only when there is something to say: O(tasks), once
			declared = map[string]string{}
			for _, d := range defs {
				if from := d.ExpandedFrom(); from != "" {
					declared[d.Name] = from
				}
			}
		}
		var named []string
		for _, n := range tasks {
			if from, ok := declared[n]; ok {
				n = from
			}
			if !slices.Contains(named, n) {
				named = append(named, n)
			}
		}
		if len(tasks) == 1 {
			return fmt.Sprintf("task %s is restored with its recorded result (--rerun %s runs it again)", tasks[0], named[0])
		}
		return fmt.Sprintf("tasks %s are restored with their recorded results (--rerun %s runs them again)", strings.Join(tasks, ", "), strings.Join(named, ","))
	}
	var out []string
	for _, a := range agents {
		out = append(out, fmt.Sprintf("agent %s's definition changed since the checkpoint, which the task-set fingerprint does not cover: its %s",
			a, restoredText(byAgent[a])))
	}
	if len(contexts) > 0 {
		out = append(out, fmt.Sprintf("the context of %s changed since the checkpoint, which the task-set fingerprint does not cover: %s",
			strings.Join(contexts, ", "), restoredText(contexts)))
	}
	return out
}

// keepExpanded is the --keep list as the restore applies it: a kept
// foreach or repeat task keeps its join and the recorded results of all
// its instances (or iterations), so none of them runs and the pinned join
// stays the array (or last result) of theirs. When the instances are not
// all recorded ones (the list grew, an instance failed), keeping the join
// would pin an output its instances no longer make: that --keep is not
// honoured, and said (refused), and the task runs as without it.
func keepExpanded(sess *Session, defs []spec.TaskDef, keep []string) (out, refused []string) {
	if sess == nil || len(keep) == 0 {
		return keep, nil
	}
	for _, k := range keep {
		var instances []string
		missing := ""
		for _, d := range defs {
			if d.ExpandedFrom() != k || d.Name == k {
				continue
			}
			instances = append(instances, d.Name)
			if t, ok := sess.Task(d.Name); missing == "" && (!ok || (t.Status != StatusCompleted && t.Status != StatusSkipped)) {
				missing = d.Name
			}
		}
		if t, ok := sess.Task(k); len(instances) > 0 && missing != "" && ok && t.Status == StatusCompleted {
			refused = append(refused, NotKept(k, fmt.Sprintf("its instances are not all recorded ones (%s has no recorded result), so its recorded output is not theirs", missing), KeptRuns))
			continue
		}
		out = append(out, instances...)
		out = append(out, k)
	}
	return out, refused
}

// withExpansions is names with, before each foreach or repeat task, the
// instances or iterations made of it: to run such a task again is to run
// them again, not only the join that collects their recorded results.
func withExpansions(defs []spec.TaskDef, names []string) []string {
	var out []string
	for _, n := range names {
		for _, d := range defs {
			if d.ExpandedFrom() == n && d.Name != n {
				out = append(out, d.Name)
			}
		}
		out = append(out, n)
	}
	return out
}

// unkept are the warnings for the tasks of keep that have no completed
// record in sess: --keep is said, never silent (DESIGN §3).
func unkept(sess *Session, keep []string) []string {
	var out []string
	for _, k := range keep {
		why, then := "there is no session yet", KeptRuns
		if sess != nil {
			why = "the session has not run it"
			if t, ok := sess.Task(k); ok {
				if _, ok := keptResult(t); ok {
					continue
				}
				switch t.Status {
				case StatusFailed:
					why = "it failed last time"
				case StatusSkipped:
					// Its gate may route away from it again.
					why, then = "it was skipped last time", "whether it runs is decided again by the route"
				default:
					why = "it did not complete last time"
				}
			}
		}
		out = append(out, keepRefused(k, "it has no recorded output to keep ("+why+")", then))
	}
	return out
}

// What becomes of a task whose --keep pins nothing, for NotKept.
const (
	KeptRuns    = "it runs"
	KeptSkipped = "it is skipped this time"
)

// NotKept is the warning for a task --keep names whose recorded output
// today's task refuses all the same (why: it no longer fits the task's
// output_schema, or no route of its condition takes it), so it runs, or
// is skipped when a gate now routes away from it (then): a --keep that
// is not honoured is said, never silent (DESIGN §3). The schedule decides
// it (RestoreProblems); run and plan both word it here.
func NotKept(task, why, then string) string {
	return keepRefused(task, "not honoured, "+why, then)
}

// keepRefused words every --keep that pins nothing.
func keepRefused(task, why, then string) string {
	return fmt.Sprintf("--keep %s: %s: %s", task, why, then)
}

// rerun turns the restored tasks that --rerun and --rerun-from name back
// into pending ones, and holds what reads them for the early cut-off.
func (r *Restored) rerun(sess *Session, defs []spec.TaskDef, ch Choice) {
	r.own()
	kept := map[string]bool{}
	for _, k := range ch.Keep {
		kept[k] = true
	}
	forced := map[string]bool{}
	for _, n := range ch.Rerun {
		forced[n] = true
	}
	// Check refuses --keep of a task --rerun-from names; one downstream
	// of it is kept, and that is said.
	down, keptDown := ch.rerunFrom(defs)
	for _, n := range down {
		forced[n] = true
	}
	if r.KeptDownstream = keptDown; len(keptDown) > 0 {
		// Said of the task as declared, as the user named it: a
		// foreach's or repeat's join with its instances.
		var named []string
		for _, n := range keptDown {
			if i := slices.IndexFunc(defs, func(d spec.TaskDef) bool { return d.Name == n }); i >= 0 && defs[i].ExpandedFrom() != "" {
				n = defs[i].ExpandedFrom()
			}
			if !slices.Contains(named, n) {
				named = append(named, n)
			}
		}
		for _, n := range named {
			if !slices.Contains(r.KeptDownstream, n) {
				r.KeptDownstream = append(r.KeptDownstream, n)
			}
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("--keep %s: kept, though downstream of --rerun-from %s", strings.Join(named, ", "), strings.Join(ch.RerunFrom, ", ")))
	}
	again := map[string]bool{} // not reused any more: forced or held
	for i, d := range defs {
		if _, held := r.Held[d.Name]; held && forced[d.Name] {
			// Held by the restore (what it reads changed), but asked
			// for: it runs, never cut off. Its record is pending and
			// its recorded result kept to compare with already.
			delete(r.Held, d.Name)
			r.Rerun = append(r.Rerun, d.Name)
			again[d.Name] = true
			continue
		}
		p, ok := r.Task(d.Name)
		if !ok || !r.Done(d.Name) {
			continue
		}
		t := *p // held as it was: p turns pending below
		reads := false
		for _, c := range ch.reads(defs, i) {
			// A foreach is made from its producer's output: made
			// again, not read, unless a context reads it too
			// (holdMade holds what is made so).
			producer := slices.Contains(d.After(), c) && !slices.Contains(d.Context, c)
			reads = reads || again[c] && !producer
		}
		switch {
		case forced[d.Name]:
			r.Rerun = append(r.Rerun, d.Name)
		case reads && !kept[d.Name]:
			r.Held[d.Name] = t
		default:
			continue // reused, made (holdMade), or pinned (keptReads says so)
		}
		again[d.Name] = true
		r.Recorded[d.Name] = t.Outcome()
		*p = runsAgain(t)
		r.Reused = slices.DeleteFunc(r.Reused, func(n string) bool { return n == d.Name })
	}
	// As do the decisions they completed with: each was used once, on
	// what it judged.
	for n := range again {
		if v, ok := r.Decisions[n]; ok && decidedWith(r.Recorded[n], v) {
			delete(r.Decisions, n)
		}
	}
	// The turns of tasks that run again go, as for a changed task.
	for a, msgs := range r.Memory {
		kept := slices.DeleteFunc(slices.Clone(msgs), func(m Message) bool { return again[m.Task] })
		if len(kept) == 0 {
			delete(r.Memory, a)
		} else {
			r.Memory[a] = kept
		}
	}
	if len(r.Rerun) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("re-running %s on request", strings.Join(r.Rerun, ", ")))
	}
}

func restoreRules(sess *Session, defs []spec.TaskDef, fingerprint string, ch Choice) *Restored {
	reuse, keep := ch.Reuse, ch.Keep
	r := &Restored{Kind: RestoreNone, State: map[string]any{},
		Decisions: map[string]string{}, Memory: map[string][]Message{}, Held: map[string]TaskRecord{}, Recorded: map[string]Outcome{}}
	if sess == nil {
		return r
	}
	lookUpByName(sess, defs)
	for k, v := range sess.Team.State {
		r.State[k] = v
	}
	r.recordSkipped(sess, defs)

	if fp := sess.Team.TasksFingerprint; fingerprint != "" && (fingerprint == fp || ch.FingerprintBefore != "" && ch.FingerprintBefore == fp) {
		r.Kind = RestoreFull
		again := r.changedInstances(sess, defs, keep)
		// Most of a full restore's tasks are reused: room for them all at
		// once (grown a name at a time, 10,000 names allocated 0.65 MB).
		r.Reused = make([]string, 0, len(defs))
		if r.shareRecords(sess, defs, again) {
			for i := range r.records {
				r.Reused = append(r.Reused, defs[i].Name)
			}
		} else {
			for i, d := range defs {
				t := sess.record(d.Name)
				if t == nil {
					continue
				}
				if again[d.Name] {
					r.take(i, runsAgain(*t))
					continue
				}
				if k, ok := keptResult(t); ok && t.Status != StatusCompleted && slices.Contains(keep, d.Name) {
					// Pinned: the result it had before a run set it to
					// run again and stopped.
					r.take(i, carried(k, true))
					r.Reused = append(r.Reused, d.Name)
					r.KeptPrevious = append(r.KeptPrevious, d.Name)
					r.keptChanged(d, t, &k)
					continue
				}
				r.take(i, carried(*t, t.Status == StatusCompleted))
				if t.Status == StatusCompleted {
					r.Reused = append(r.Reused, d.Name)
				}
			}
		}
		// A decision stays with its task when the task is carried over.
		for k, v := range sess.Checkpoint.Decisions {
			if _, ok := r.Task(k); ok && !again[k] {
				r.Decisions[k] = v
			}
		}
		for a, msgs := range sess.Memory {
			if kept := slices.DeleteFunc(slices.Clone(msgs), func(m Message) bool { return again[m.Task] }); len(kept) > 0 {
				r.Memory[a] = kept
			}
		}
		return r
	}

	r.records = make([]TaskRecord, len(defs))
	r.Diffs = diffTasks(sess, defs, ch)
	reused := map[string]bool{}
	// --keep pins a completed task's output whatever changed in it; what
	// reads it is decided by the usual rules.
	for _, d := range defs {
		if t, ok := keptResult(sess.record(d.Name)); ok && slices.Contains(keep, d.Name) {
			reused[d.Name] = true
			if sess.record(d.Name).Status != StatusCompleted {
				r.KeptPrevious = append(r.KeptPrevious, d.Name)
			}
			r.keptChanged(d, sess.record(d.Name), &t)
		}
	}
	if reuse == ReuseUnchanged {
		r.Kind = RestorePerTask
		// defs are in file order and context tasks come earlier in a valid
		// spec; still, iterate to a fixed point so the order cannot matter.
		for changed := true; changed; {
			changed = false
			for i, d := range defs {
				if reused[d.Name] || !unchanged(d, sess.record(d.Name)) {
					continue
				}
				ok := true
				for _, c := range ch.reads(defs, i) {
					if !reused[c] {
						ok = false
						break
					}
				}
				if ok {
					reused[d.Name] = true
					changed = true
				}
			}
		}
		r.holdDownstream(sess, defs, reused, ch)
	} else {
		r.Kind = RestorePartial
	}
	unchangedDef := map[string]bool{}
	for i, d := range defs {
		t := sess.record(d.Name)
		if t == nil {
			continue
		}
		if reused[d.Name] {
			k, _ := keptResult(t) // reused: completed, or kept
			r.take(i, carried(k, true))
			r.Reused = append(r.Reused, d.Name)
		} else if t.Status == StatusSkipped {
			// Skipped until the run decides its route again, as after a
			// match (carried): a run that stops first leaves it so.
			r.take(i, carried(*t, false))
		} else {
			// Keep the attempt count (TEAMRUN_ATTEMPT counts across runs),
			// never the output.
			r.take(i, runsAgain(*t))
		}
		// A decision on a tool call or loop is about the recorded loop,
		// which an edit may keep (ToolLogCarries): it goes on with it.
		if t.Key != "" && (t.Key == d.Key || ToolLogCarries(sess.ToolLogs[d.Name], t.Key, d.Key)) {
			unchangedDef[d.Name] = true
		}
	}
	// A decision is an input, not an output: it survives when its task's
	// definition is unchanged, and is used once: a task that completed
	// with it keeps it only when its result is reused (one that runs
	// again, or is held, judges another input and asks anew).
	for k, v := range sess.Checkpoint.Decisions {
		if t := sess.record(k); unchangedDef[k] && (reused[k] || !UsedDecision(t, v)) {
			r.Decisions[k] = v
		}
	}
	// Only the turns produced for reused tasks are kept.
	for a, msgs := range sess.Memory {
		var kept []Message
		for _, m := range msgs {
			if m.Task != "" && reused[m.Task] {
				kept = append(kept, m)
			}
		}
		if len(kept) > 0 {
			r.Memory[a] = kept
		}
	}
	r.Warnings = append(r.Warnings, mismatchWarning(sess, fingerprint, r))
	return r
}

// shareRecords makes sess's own list of records the restore's when the
// restore would take every one of them over as it is: a full restore of a
// session that holds exactly defs' tasks in their order, all completed,
// none run again (again), and no tool log (carryToolLogs compares the
// recorded keys with those Continue writes). Then no copy of the list is
// made (3.1 MB at 10,000 tasks, where a fully restored rerun collects
// nothing); what writes to a restored record (rerun, refuse) first makes
// the restore's own copy (own), and Continue takes the list from sess.
// Otherwise it makes the restore's list, empty, and reports false.
func (r *Restored) shareRecords(sess *Session, defs []spec.TaskDef, again map[string]bool) bool {
	ok := sess.distinct && len(again) == 0 && len(sess.ToolLogs) == 0 && len(sess.Team.Tasks) == len(defs)
	for i := 0; ok && i < len(defs); i++ {
		t := &sess.Team.Tasks[i]
		ok = t.Name == defs[i].Name && t.Status == StatusCompleted
	}
	if !ok {
		r.records = make([]TaskRecord, len(defs))
		return false
	}
	r.records, r.shared = sess.Team.Tasks, true
	return true
}

// own gives the restore its own copy of the records it shares with the
// session it restores (shareRecords), before it changes one: the session
// is read as it was recorded until Continue.
func (r *Restored) own() {
	if !r.shared {
		return
	}
	shared := r.records
	r.records, r.shared = make([]TaskRecord, len(shared)), false
	for i := range shared {
		r.take(i, carried(shared[i], true))
	}
}

// lookUpByName readies sess for a restore for defs to find its records by
// name, as every reader does (Session.Task: the first record of a name a
// hand-edited file repeats). When the session holds defs' tasks in their
// order (a run of the same spec), its names differ as defs' do, and
// Session.Task finds each by position with no index of them (0.43 MB at
// 10,000 tasks, where a fully restored rerun collects nothing);
// uncoveredWarnings, asking for every task in the defs' order, builds none
// either.
func lookUpByName(sess *Session, defs []spec.TaskDef) {
	aligned := len(sess.Team.Tasks) == len(defs)
	for i := 0; aligned && i < len(defs); i++ {
		aligned = sess.Team.Tasks[i].Name == defs[i].Name
	}
	if aligned {
		sess.distinct = true
	}
}

// record is the record of the task named name, nil for none (Task).
func (s *Session) record(name string) *TaskRecord {
	t, _ := s.Task(name)
	return t
}

// take makes t the restored record of the i-th task of the defs the
// restore was given.
func (r *Restored) take(i int, t TaskRecord) {
	r.records[i] = t
	if r.index != nil {
		r.index[t.Name] = i
	}
}

// Task is the restored record of the named task: every completed task
// that is reused (status completed, result, retry count, variables), and
// for the other tasks of the spec that the session knew, their attempt
// history with status pending or failed and no result. A task that was
// running comes back pending with its Attempts, so the next attempt
// number continues. Asked for in the defs' order, as every reader does,
// each is found at its position without an index.
func (r *Restored) Task(name string) (*TaskRecord, bool) {
	if r == nil || name == "" {
		return nil, false
	}
	// Where the last one was, the next, and the first: a pass over
	// the tasks starts again from there.
	for _, i := range [...]int{r.cursor, r.cursor + 1, 0} {
		if i < len(r.records) && r.records[i].Name == name {
			r.cursor = i
			return &r.records[i], true
		}
	}
	if r.index == nil {
		r.index = make(map[string]int, len(r.records))
		for i := range r.records {
			if n := r.records[i].Name; n != "" {
				r.index[n] = i
			}
		}
	}
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	r.cursor = i
	return &r.records[i], true
}

// changedInstances is, under a fingerprint match, what runs again because
// the fingerprint cannot see it: a foreach instance, a repeat iteration or
// their join whose rendered definition (its item, what it joins) differs
// from the recorded one, and what is downstream of one. Each such instance
// or join is one of r.Diffs, so that plan and the warning say why. The
// completed tasks downstream are held for the early cut-off, as under
// --reuse unchanged (holdDownstream): a join whose instances all come out
// byte-identical is reused, and so is what reads only results that come
// out the same; one that reads a task with no recorded result to compare
// with runs. again holds every completed task that is not restored.
//
// A task kept (--keep) stays restored, and what reads only it is not run
// again for it.
func (r *Restored) changedInstances(sess *Session, defs []spec.TaskDef, keep []string) (again map[string]bool) {
	var changed []string
	for _, d := range defs {
		t := sess.record(d.Name)
		if d.ExpandedFrom() == "" || t == nil {
			continue
		}
		f := definitionChanges(nil, t, d)
		if len(f) == 0 && d.ItemInKey() && t.AgentKey == d.AgentKey && t.OwnKey != "" && t.OwnKey != d.OwnKey {
			// Texts that do not name the item cannot show that it
			// changed: the own key, which holds it, does.
			f = append(f, "item")
		}
		if len(f) > 0 {
			r.Diffs = append(r.Diffs, TaskDiff{Task: d.Name, How: "changed", Fields: f})
			if t.Status == StatusPending && t.Attempts == 0 {
				continue // never started: it runs as it would have, not "again"
			}
			changed = append(changed, d.Name)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	r.changed = changed       // worded by warnChanged, which knows what waits
	runs := map[string]bool{} // not restored: changed, or downstream of a change
	for _, n := range changed {
		runs[n] = !slices.Contains(keep, n)
	}
	// A workflow's context may name a later task: to a fixed point.
	for grew := true; grew; {
		grew = false
		for _, d := range defs {
			if runs[d.Name] || slices.Contains(keep, d.Name) {
				continue
			}
			if slices.ContainsFunc(d.Context, func(c string) bool { return runs[c] }) {
				runs[d.Name], grew = true, true
			}
		}
	}
	again = map[string]bool{}
	for _, d := range defs {
		if t := sess.record(d.Name); runs[d.Name] && t != nil && t.Status == StatusCompleted {
			again[d.Name] = true
			r.Recorded[d.Name] = t.Outcome()
		}
	}
	for _, d := range defs {
		if !again[d.Name] || slices.Contains(changed, d.Name) {
			continue
		}
		if !slices.ContainsFunc(d.Context, func(c string) bool { _, was := r.Recorded[c]; return runs[c] && !was }) {
			r.Held[d.Name] = carried(*sess.record(d.Name), true)
		}
	}
	return again
}

// warnChanged says which tasks changedInstances found changed run again.
// The join of a foreach that waits for its producer is not one (Waiting):
// it is made anew, with its instances, when the producer finishes, and
// they are decided then (an instance whose item is the recorded one is
// restored).
func (r *Restored) warnChanged(defs []spec.TaskDef, ch Choice) {
	if r.Kind == RestoreFull && ch.DeferredJoin != nil {
		for _, d := range defs {
			// Only a foreach's join can wait: its agent names it.
			if d.ExpandedFrom() != d.Name || d.Agent != "foreach:"+d.Name {
				continue
			}
			if join := ch.DeferredJoin(spec.InstanceName(d.Name, 0)); join != nil && join.Name == d.Name {
				if r.Waiting == nil {
					r.Waiting = map[string]string{}
				}
				r.Waiting[d.Name] = join.Expanded().ExpandsWhen
			}
		}
		r.Diffs = slices.DeleteFunc(r.Diffs, func(d TaskDiff) bool { _, w := r.Waiting[d.Task]; return w })
	}
	var changed, waiting []string
	producers := map[string]bool{}
	for _, n := range r.changed {
		if p, ok := r.Waiting[n]; ok {
			waiting = append(waiting, n)
			producers[p] = true
			continue
		}
		changed = append(changed, n)
	}
	if len(changed) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s changed since the checkpoint (a foreach item, or what a join reads): it runs again", strings.Join(changed, ", ")))
	}
	if len(waiting) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s waits for %s, which runs again: its instances are made when that finishes, and an instance whose item is the recorded one is restored",
			strings.Join(waiting, ", "), strings.Join(slices.Sorted(maps.Keys(producers)), ", ")))
	}
}

// recordSkipped records, for every restore path, that the tasks skipped
// last time were skipped: a held task after a route reads its branches not
// taken, and they, skipped again, leave what it reads as it was (the
// rule run and plan share, Stands). A skipped task itself is
// never restored: routing is decided again.
func (r *Restored) recordSkipped(sess *Session, defs []spec.TaskDef) {
	for _, d := range defs {
		if t := sess.record(d.Name); t != nil && t.Status == StatusSkipped {
			r.Recorded[d.Name] = t.Outcome()
		}
	}
}

// holdDownstream, under --reuse unchanged, holds the completed tasks whose
// own definition is unchanged but which are not reused because a task they
// read changed: each may be cut off once what it reads has run again. It
// records the result of every completed task that runs again, to compare
// (that the skipped ones were skipped, recordSkipped has recorded).
func (r *Restored) holdDownstream(sess *Session, defs []spec.TaskDef, reused map[string]bool, ch Choice) {
	for _, d := range defs {
		if t := sess.record(d.Name); t != nil && t.Status == StatusCompleted && !reused[d.Name] {
			r.Recorded[d.Name] = t.Outcome()
		}
	}
	for changed := true; changed; {
		changed = false
		for i, d := range defs {
			t := sess.record(d.Name)
			if _, ok := r.Held[d.Name]; ok || reused[d.Name] || t == nil || t.Status != StatusCompleted ||
				!ownStands(d, t) {
				continue
			}
			reads := ch.reads(defs, i)
			ok := len(reads) > 0
			for _, c := range reads {
				if _, was := r.Recorded[c]; !reused[c] && !was {
					ok = false // it reads a task with no recorded result to compare with
					break
				}
			}
			if ok {
				r.Held[d.Name] = carried(*t, true)
				changed = true
			}
		}
	}
}

// keptResult is t as --keep pins it: completed, or, when a run set it to
// run again and stopped before it completed (a --rerun that failed or was
// killed, a task that run held), completed with the result it had before,
// which session show lists as kept; false when it has no result to pin.
func keptResult(t *TaskRecord) (TaskRecord, bool) {
	switch {
	case t == nil || t.Status == StatusSkipped:
		return TaskRecord{}, false
	case t.Status == StatusCompleted:
		return *t, true
	case t.Previous == nil || t.Previous.Skipped:
		return TaskRecord{}, false
	}
	k := *t
	k.Status, k.Result, k.Blob, k.Error, k.Previous = StatusCompleted, t.Previous.Text, t.Previous.Blob, "", nil
	if t.Previous.Key != "" {
		// Made under this key: a definition edited since is seen
		// (unchanged), as for a completed task's result.
		k.Key = t.Previous.Key
	}
	return k, true
}

// UsedDecision says whether t completed with decision v: one recorded
// since (session decide on a completed task) is for its next run.
func UsedDecision(t *TaskRecord, v string) bool {
	return t != nil && t.Status == StatusCompleted && decidedWith(t.Outcome(), v)
}

// decidedWith says whether a human task's recorded result o is decision v.
func decidedWith(o Outcome, v string) bool {
	return o.Blob == nil && !o.Skipped && o.Text == v
}

// runsAgain is the pending record of a task that runs again: its attempt
// count, history and usage go on, and its last result becomes the
// previous one.
func runsAgain(t TaskRecord) TaskRecord {
	prev := t.Previous
	if t.Status == StatusCompleted {
		prev = previous(t.Result, t.Blob, t.Key)
	}
	// What it cost stays the session's whatever runs it again (a changed
	// definition, --rerun, a held cut-off): it was paid.
	return TaskRecord{Name: t.Name, Status: StatusPending, Attempts: t.Attempts, History: slices.Clone(t.History), Previous: prev,
		Usage: t.Usage}
}

// carried is a checkpoint record as a new run takes it over.
func carried(t TaskRecord, completed bool) TaskRecord {
	if len(t.Variables) > 0 { // an empty one is shared: nothing writes to a record's
		t.Variables = copyMap(t.Variables)
	}
	if completed {
		return t
	}
	// running (the process died) runs again; failed keeps its error. A
	// skipped task stays skipped until the run decides its route again
	// (from the restored results): a run that stops first (a failure, a
	// halt, a kill) leaves it as it was decided last, so that what was
	// made while it was skipped (a repeat's join) is still known to be.
	if t.Status != StatusFailed && t.Status != StatusSkipped {
		t.Status = StatusPending
	}
	t.Result, t.Blob = "", nil
	t.Variables = nil
	return t
}

// unchanged: completed in the checkpoint with the same per-task key, which
// covers its own fields, its agent's definition and its context's keys.
func unchanged(d spec.TaskDef, t *TaskRecord) bool {
	return t != nil && t.Status == StatusCompleted && d.Key != "" && t.Key == d.Key
}

// ownStands says whether d's own definition (its own key: its texts,
// agent, context names and settings, not what it reads) is the one the
// session recorded t under, whatever changed in what it reads. An older
// session, which kept no own key, cannot tell: no.
func ownStands(d spec.TaskDef, t *TaskRecord) bool {
	return t.OwnKey != "" && t.OwnKey == d.OwnKey
}

// keptChanged notes how the result --keep pins for d, kept (keptResult
// of the session's record t), was made under another d: Kept, warned,
// when d's own definition changed; KeptReadChanged when only what it
// reads did, which is no news of d's: what it reads runs again
// (KeptRead says so) or is kept too (Kept says that). A result from
// before a run set d to run again (t.Previous) kept no own key of its
// own: a key that differs counts as its own change.
func (r *Restored) keptChanged(d spec.TaskDef, t, kept *TaskRecord) {
	switch {
	case unchanged(d, kept), r.Kind == RestoreFull && d.WaitsFor() != "":
		// Under a matching fingerprint the foreach is as declared
		// then, and a join that waits for its producer stands for its
		// instances to come: compared once they are made.
	case t.Status == StatusCompleted && ownStands(d, t):
		r.KeptReadChanged = append(r.KeptReadChanged, d.Name)
	default:
		r.Kept = append(r.Kept, d.Name)
	}
}

// ReadsChanged are the tasks that task reads whose key changed since the
// checkpoint, when only that changed of it (TaskDiff.Reads); nil when
// unknown.
func (r *Restored) ReadsChanged(task string) []string {
	for _, d := range r.Diffs {
		if d.Task == task {
			return d.Reads
		}
	}
	return nil
}

// definitionChanges appends to f the fields of d's definition that differ
// from the recorded t's: its agent, rendered description and expected
// output, and context. The own key is over the texts as rendered, and the
// session stores them with keys redacted (Session.Redact): texts that
// differ under the same own key differ only there.
func definitionChanges(f []string, t *TaskRecord, d spec.TaskDef) []string {
	if t.Agent != d.Agent {
		f = append(f, "agent")
	}
	sameTexts := ownStands(d, t)
	if t.Description != d.Description && !sameTexts {
		f = append(f, "description")
	}
	if t.ExpectedOutput != d.ExpectedOutput && !sameTexts {
		f = append(f, "expected_output")
	}
	if !slices.Equal(t.Context, d.Context) {
		f = append(f, "context")
	}
	return f
}

// diffTasks says how defs differ from sess's tasks: added, removed, or
// changed and in what (TaskDiff), ch's VariableChanges and SettingAdded
// naming what the fields it compares do not show.
func diffTasks(sess *Session, defs []spec.TaskDef, ch Choice) []TaskDiff {
	var diffs []TaskDiff
	var said map[string]string // asked once, when a task's key differs
	asked := false
	inSpec := make(map[string]bool, len(defs))
	var at map[string]int // defs by name, made when first needed
	for i, d := range defs {
		inSpec[d.Name] = true
		t := sess.record(d.Name)
		if t == nil {
			diffs = append(diffs, TaskDiff{Task: d.Name, How: "added"})
			continue
		}
		var f []string
		if t.ID != d.ID {
			f = append(f, "position")
		}
		f = definitionChanges(f, t, d)
		if t.Agent == d.Agent && t.AgentKey != d.AgentKey {
			f = append(f, "agent definition")
		}
		var vars string
		if t.OwnKey != d.OwnKey && ch.VariableChanges != nil { // variables_from is the task's own
			if !asked {
				said, asked = ch.VariableChanges(), true
			}
			if vars = said[d.Name]; vars != "" {
				f = append(f, "variables")
			}
		}
		var reads []string
		if len(f) == 0 && t.Key != d.Key {
			switch {
			case ownStands(d, t):
				// Its own definition stands: a task it reads changed.
				if at == nil {
					at = make(map[string]int, len(defs))
					for j, e := range defs {
						at[e.Name] = j
					}
				}
				for _, c := range d.Context {
					j, ok := at[c]
					if r := sess.record(c); ok && (r == nil || r.Key != defs[j].Key) {
						reads = append(reads, c)
					}
				}
				f = append(f, "key")
			case t.OwnKey == "" && len(d.Context) > 0:
				f = append(f, "key") // an older session: no own key tells which
			default:
				setting := ""
				if ch.SettingAdded != nil {
					setting = ch.SettingAdded(i, t.OwnKey)
				}
				f = append(f, cmp.Or(setting, "a setting"))
			}
		}
		if len(f) > 0 {
			diffs = append(diffs, TaskDiff{Task: d.Name, How: "changed", Fields: f, Variables: vars, Reads: reads})
		}
	}
	for _, t := range sess.Team.Tasks {
		if !inSpec[t.Name] {
			diffs = append(diffs, TaskDiff{Task: t.Name, How: "removed"})
		}
	}
	return diffs
}

func mismatchWarning(sess *Session, fingerprint string, r *Restored) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s was saved for a different task set (fingerprint %s, the spec's is %s)",
		sess.ID, orNone(sess.Team.TasksFingerprint), orNone(fingerprint))
	if len(r.Diffs) > 0 {
		b.WriteString(": ")
		for i, d := range r.Diffs {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(d.String())
		}
	}
	if r.Kind == RestorePerTask {
		fmt.Fprintf(&b, "; reused %d unchanged task(s), the rest and everything downstream of a change run again", len(r.Reused))
	} else {
		b.WriteString("; task outputs were not restored (the shared state was): the run starts from the first task; --reuse unchanged keeps the unchanged tasks")
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// HoldAgain keeps, in a later pass of one run, the early cut-off the
// first pass's restore decided: a foreach over a producer's list that ran
// again and changed expands again, and the next pass loads the session the
// first one wrote, where what it held is pending. Each task held then
// (held, its records as that restore had them) that this restore neither
// restores nor holds, that is still pending (neither run nor cut off) or
// completed as held, and whose own definition is the held record's is
// held again; the results recorded to compare with (recorded) stay, for
// the tasks that ran since or run now. Where this restore records another
// result for a task (the first pass ran it: skipped it, or made a new
// result, now in the session), the first pass's stays: the tasks held
// again were made from it, and are compared with it.
func (r *Restored) HoldAgain(sess *Session, defs []spec.TaskDef, held map[string]TaskRecord, recorded map[string]Outcome) {
	if r == nil || sess == nil {
		return
	}
	for n, o := range recorded {
		r.Recorded[n] = o
	}
	for _, d := range defs {
		h, ok := held[d.Name]
		if _, already := r.Held[d.Name]; !ok || already || r.Done(d.Name) || !ownStands(d, &h) {
			continue
		}
		// Pending, or completed as held (this restore found that what it
		// reads had no result to compare with: the first pass's has one).
		if t, found := sess.Task(d.Name); found && (t.Status == StatusPending || t.Status == StatusCompleted && t.Outcome().Same(h.Outcome())) {
			r.Held[d.Name] = h
		}
	}
}
