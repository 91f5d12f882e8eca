package checkpoint

import (
	"maps"
	"slices"

	"github.com/teamrun/teamrun/pkg/spec"
)

// Hold is, in a session, the early cut-off of the run that wrote it: the
// tasks it held and has not decided yet, and the recorded results to
// compare with. A run killed (kill -9, a crash) while tasks are held so
// leaves them to the next one, which still reuses each whose inputs come
// out byte-identical to what its recorded result was made from, and runs
// it only if they changed (Restored.holdUndecided). Results are kept as
// digests: the held task's own result is its record's previous result.
type Hold struct {
	// Tasks are the held tasks not decided yet, each with the digest of
	// the recorded result it takes over: a task leaves it when it starts,
	// completes (cut off), fails, is skipped or halts (a human task that
	// asks for a new decision).
	Tasks map[string]Digested `json:"tasks"`
	// Inputs are the results the held tasks were made from: the recorded
	// result of every task that runs again (or is held), and that the
	// tasks skipped last time were skipped.
	Inputs map[string]Digested `json:"inputs"`
	// Kept are the tasks --keep pinned although tasks they read run
	// again, each with those of them not decided yet: a task leaves the
	// lists when it completes or is skipped, and a kept task leaves when
	// its list is empty (its result is adopted). A run stopped before
	// then leaves the kept task made from Inputs that its next
	// --continue, not pinning it, compares as for any reader
	// (Restored.holdUndecided), rather than run it again for sure or
	// restore it whatever they give now.
	Kept map[string][]string `json:"kept,omitempty"`
}

// Digested is a result as a hold keeps it: its sha256 and size, or that
// the task was skipped.
type Digested struct {
	Digest  string `json:"digest,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Skipped bool   `json:"skipped,omitempty"`
}

// digested is o as a hold keeps it.
func digested(o Outcome) Digested {
	switch {
	case o.Skipped:
		return Digested{Skipped: true}
	case o.Blob != nil:
		return Digested{Digest: o.Blob.Digest, Size: o.Blob.Size}
	}
	return Digested{Digest: Digest(o.Text), Size: int64(len(o.Text))}
}

// outcome is d as compared: a result known by its digest compares with a
// text or a blob as a blob reference does (Outcome.Same); nothing reads it.
func (d Digested) outcome() Outcome {
	if d.Skipped {
		return Outcome{Skipped: true}
	}
	return Outcome{Blob: &Blob{Digest: d.Digest, Size: d.Size}}
}

// hold is what a session of the run r restores keeps of its early cut-off:
// nil when it holds nothing.
func (r *Restored) hold() *Hold {
	if r == nil || len(r.Held)+len(r.HeldLater)+len(r.KeptReads) == 0 {
		return nil
	}
	h := &Hold{Tasks: make(map[string]Digested, len(r.Held)+len(r.HeldLater)), Inputs: make(map[string]Digested, len(r.Recorded))}
	for n, reads := range r.KeptReads {
		if h.Kept == nil {
			h.Kept = make(map[string][]string, len(r.KeptReads))
		}
		h.Kept[n] = slices.Clone(reads)
	}
	for n, t := range r.Held {
		h.Tasks[n] = digested(t.Outcome())
	}
	for n, t := range r.HeldLater {
		h.Tasks[n] = digested(t.Outcome())
	}
	for n, o := range r.Recorded {
		h.Inputs[n] = digested(o)
	}
	return h
}

// decided drops task from the held tasks: it started, was cut off,
// failed, was skipped or halted. ended: it completed or was skipped, so it
// leaves the kept tasks' lists too. A hold with no task left, held or
// kept, is dropped whole.
func (s *Session) decided(task string, ended bool) {
	if s.Hold == nil {
		return
	}
	delete(s.Hold.Tasks, task)
	if ended {
		for k, reads := range s.Hold.Kept {
			if reads = slices.DeleteFunc(reads, func(n string) bool { return n == task }); len(reads) == 0 {
				delete(s.Hold.Kept, k)
			} else {
				s.Hold.Kept[k] = reads
			}
		}
	}
	if len(s.Hold.Tasks)+len(s.Hold.Kept) == 0 {
		s.Hold = nil
	}
}

func (h *Hold) clone() *Hold {
	if h == nil {
		return nil
	}
	c := &Hold{Tasks: maps.Clone(h.Tasks), Inputs: maps.Clone(h.Inputs)}
	for k, reads := range h.Kept {
		if c.Kept == nil {
			c.Kept = make(map[string][]string, len(h.Kept))
		}
		c.Kept[k] = slices.Clone(reads)
	}
	return c
}

// holdUndecided takes over the early cut-off that sess's last run left
// undecided (sess.Hold): it was killed while tasks were held. Each such
// task that is still pending, whose record still has the held result as
// its previous one, and that the user did not name (--rerun, --rerun-from
// and what follows it, --keep) is held again, as HoldAgain holds it, with
// the results it was made from to compare with. Safety first: where this
// restore compares a task with another recorded result than the one the
// hold was made from (the task ran since and runs again now), the held
// tasks whose cut-off compares that task (ch.CutoffReads; all of them
// when it is unknown) are not taken over and run; the others, made from
// results this restore does not compare otherwise, are still held. A
// partial restore reuses nothing, so holds nothing either.
//
// A task the last run's --keep pinned while tasks it reads had not run
// again, and that it stopped before they did (Hold.Kept), is held too
// when this restore does not pin it: its result was made from the hold's
// inputs, which a new decision or a new output may not give again.
func (r *Restored) holdUndecided(sess *Session, defs []spec.TaskDef, ch Choice) {
	if sess == nil || sess.Hold == nil || (r.Kind != RestoreFull && r.Kind != RestorePerTask) {
		return
	}
	recorded := make(map[string]Outcome, len(sess.Hold.Inputs))
	differs := map[string]bool{} // recorded otherwise by this restore: its own result stays
	for n, d := range sess.Hold.Inputs {
		o := d.outcome()
		if v, ok := r.Recorded[n]; ok && !v.Same(o) {
			differs[n] = true
			continue
		}
		recorded[n] = o
	}
	if len(differs) > 0 && ch.CutoffReads == nil {
		return
	}
	// readsDiffering: the cut-off of the task at index i compares a task
	// recorded otherwise.
	var index map[string]int
	readsDiffering := func(n string) bool {
		if len(differs) == 0 {
			return false
		}
		if index == nil {
			index = make(map[string]int, len(defs))
			for i, d := range defs {
				index[d.Name] = i
			}
		}
		i, ok := index[n]
		return !ok || slices.ContainsFunc(ch.CutoffReads(i), func(j int) bool { return differs[defs[j].Name] })
	}
	down, _ := ch.rerunFrom(defs)
	named := slices.Concat(ch.Rerun, ch.Keep, down)
	held := map[string]TaskRecord{}
	for n, reads := range sess.Hold.Kept {
		if t, ok := sess.Task(n); ok && len(reads) > 0 && t.Status == StatusCompleted && !slices.Contains(named, n) && !readsDiffering(n) {
			r.unpin(defs, ch, *t, held)
		}
	}
	for n, d := range sess.Hold.Tasks {
		t, ok := sess.Task(n)
		if !ok || t.Status != StatusPending || slices.Contains(named, n) ||
			!t.PreviousOutcome().Same(d.outcome()) || readsDiffering(n) {
			continue
		}
		h := *t
		prev := t.PreviousOutcome()
		h.Status, h.Result, h.Blob = StatusCompleted, prev.Text, prev.Blob
		if r.Kind == RestoreFull && ch.deferred(n) {
			// Its foreach waits for its producer: held past the
			// expansion, where its definition is made anew.
			if r.HeldLater == nil {
				r.HeldLater = map[string]TaskRecord{}
			}
			r.HeldLater[n] = h
			continue
		}
		held[n] = h
	}
	if len(held) > 0 || len(r.HeldLater) > 0 {
		r.HoldAgain(sess, defs, held, recorded)
	}
}

// unpin makes t, the record of a task a stopped run's --keep pinned,
// one held as HoldAgain holds it: restored, it runs again unless the
// early cut-off reuses it, its result to compare with for what reads it.
// One whose own definition changed since, or whose agent has memory
// (never cut off), is left to the rules any restored result follows.
func (r *Restored) unpin(defs []spec.TaskDef, ch Choice, t TaskRecord, held map[string]TaskRecord) {
	i := slices.IndexFunc(defs, func(d spec.TaskDef) bool { return d.Name == t.Name })
	if i < 0 || !ownStands(defs[i], &t) || ch.Memory != nil && ch.Memory(i) {
		return
	}
	if r.Done(t.Name) {
		r.own()
		p, _ := r.Task(t.Name)
		r.Recorded[t.Name] = p.Outcome()
		*p = runsAgain(*p)
		r.Reused = slices.DeleteFunc(r.Reused, func(n string) bool { return n == t.Name })
	}
	held[t.Name] = t
}

// deferred says whether name is an instance or the join of a foreach that
// waits for its producer (DeferredJoin).
func (ch Choice) deferred(name string) bool {
	if ch.DeferredJoin == nil {
		return false
	}
	if ch.DeferredJoin(name) != nil {
		return true
	}
	join := ch.DeferredJoin(spec.InstanceName(name, 0))
	return join != nil && join.Name == name
}
