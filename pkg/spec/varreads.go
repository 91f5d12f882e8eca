package spec

import (
	"slices"
	"sync"
)

// VariableReads says which task's output_variable each task of a team
// reads: the one rule the schedule (what a held task's early cut-off
// compares, what a task's result is made of), its key (variables_from)
// and the restore's words about it share.
type VariableReads struct {
	team *Team
	// outputs are the tasks with an output_variable, in file order: few,
	// where the tasks can be 100,000.
	outputs []int
	// after and before are, in a workflow, for each of outputs (by its
	// place there), whether each task waits for it, through context or a
	// route, directly or through others (after), or it waits for that
	// task (before). nil in a sequential team, whose order is the file's.
	after, before []bits
	// routed says of each task whether a route may skip it (nil: none
	// can): a task that sets a variable and that no route skips
	// overwrites what the tasks it runs after set (overwrites).
	routed []bool
	// sure is, in a workflow, for each of outputs, which tasks always
	// start after it ends (Overwritten): made when first asked.
	sure func() []bits
}

// VariableReads is t's VariableReads: the one made with its tasks
// (keepReads), else one made now.
func (t *Team) VariableReads() *VariableReads {
	if v := t.reads; v != nil && v.team == t {
		return v
	}
	return t.variableReads()
}

// keepReads makes t's VariableReads once its tasks are final, for all
// that ask it, when a task sets a variable: a team without one keeps
// nothing, as it made nothing (what VariableReads makes of it is empty).
func (t *Team) keepReads() {
	t.reads = nil
	if slices.ContainsFunc(t.Tasks, func(tk *Task) bool { return tk.OutputVariable != "" }) {
		t.reads = t.variableReads()
	}
}

// variableReads makes t's VariableReads.
func (t *Team) variableReads() *VariableReads {
	v := &VariableReads{team: t}
	for i, tk := range t.Tasks {
		if tk.OutputVariable != "" {
			v.outputs = append(v.outputs, i)
		}
	}
	if len(v.outputs) == 0 {
		return v
	}
	v.routed = t.routeTargets()
	if t.Process != Workflow {
		return v
	}
	waits := make([][]int, len(t.Tasks)) // i waits for waits[i]
	waitedBy := make([][]int, len(t.Tasks))
	edge := func(i, j int) {
		if i != j {
			waits[i] = append(waits[i], j)
			waitedBy[j] = append(waitedBy[j], i)
		}
	}
	index := t.Finder()
	for i, tk := range t.Tasks {
		for _, name := range tk.Context {
			if j, ok := index.Find(name, i-1); ok {
				edge(i, j)
			}
		}
		for _, r := range tk.Condition() {
			for _, name := range r.Next {
				if j, ok := index.Find(name, i+1); ok {
					edge(j, i)
				}
			}
		}
	}
	reach := func(from int, next [][]int) bits {
		seen := newBits(len(t.Tasks))
		queue := []int{from}
		for len(queue) > 0 {
			k := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			for _, n := range next[k] {
				if !seen.has(n) {
					seen.set(n)
					queue = append(queue, n)
				}
			}
		}
		return seen
	}
	for _, j := range v.outputs {
		v.after = append(v.after, reach(j, waitedBy))
		v.before = append(v.before, reach(j, waits))
	}
	v.sure = sync.OnceValue(func() []bits { return v.surelyAfter(waitedBy, index) })
	return v
}

// surelyAfter is, for each of Outputs, which tasks always start after it
// ends: those that wait for it, or for a task that always runs and that
// surely starts after it ends. A skipped task counts as done at once, so
// waiting for one waits for nothing before it. Only outputs that always
// run (mustRun) have any.
func (v *VariableReads) surelyAfter(waitedBy [][]int, index TaskFinder) []bits {
	must := v.mustRun(index)
	out := make([]bits, len(v.outputs))
	for p, j := range v.outputs {
		if !must[j] {
			continue
		}
		seen := newBits(len(v.team.Tasks))
		queue := []int{j}
		for len(queue) > 0 {
			k := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			for _, n := range waitedBy[k] {
				if !seen.has(n) {
					seen.set(n)
					if must[n] {
						queue = append(queue, n)
					}
				}
			}
		}
		out[p] = seen
	}
	return out
}

// mustRun says of each task of a workflow whether it runs whenever the
// run gets to it: no route may skip it (Skippable), nor, as the schedule
// skips a task whose every context task was skipped, all of what it reads.
func (v *VariableReads) mustRun(index TaskFinder) []bool {
	t := v.team
	const (
		unknown = iota
		busy
		runs
		skips
	)
	state := make([]uint8, len(t.Tasks))
	var decide func(i int) bool
	decide = func(i int) bool {
		switch state[i] {
		case runs:
			return true
		case skips, busy: // busy: a cycle (an unvalidated team) may skip
			return false
		}
		state[i] = busy
		ok := !v.Skippable(i)
		if ctx := t.Tasks[i].Context; ok && len(ctx) > 0 {
			ok = false
			for _, name := range ctx {
				if j, found := index.Find(name, i-1); found && decide(j) {
					ok = true
					break
				}
			}
		}
		state[i] = skips
		if ok {
			state[i] = runs
		}
		return ok
	}
	out := make([]bool, len(t.Tasks))
	for i := range out {
		out[i] = decide(i)
	}
	return out
}

// Outputs are the tasks with an output_variable, in file order.
func (v *VariableReads) Outputs() []int { return v.outputs }

// Sources calls set, in file order, with each task whose
// output_variable's value task i may find when it starts: one that can
// have set it by then (in a sequential team one before it; in a workflow
// one it waits for, or one before it in the file that does not wait for
// it either, which may end first: Parse warns of that race), unless
// another such task of the same variable always ends after it and before
// i starts, overwriting it. A task that sets the variable after i ran,
// itself included, never set what i read.
func (v *VariableReads) Sources(i int, set func(j int)) {
	var at [8]int // most tasks read from a few
	cands := at[:0]
	for p, j := range v.outputs {
		if j != i && v.canSet(p, i) {
			cands = append(cands, p)
		}
	}
	for _, p := range cands {
		if !v.overwritten(cands, p, i) {
			set(v.outputs[p])
		}
	}
}

// overwritten says whether one of cands (Outputs' places, in file order)
// overwrites, for task i, what output p sets. It looks from the last: one
// that runs later is the likely one, so that a chain of n tasks that set
// one variable costs n², not n³ (8,000 tasks took minutes).
func (v *VariableReads) overwritten(cands []int, p, i int) bool {
	name := v.team.Tasks[v.outputs[p]].OutputVariable
	for c := len(cands) - 1; c >= 0; c-- {
		if q := cands[c]; q != p && v.team.Tasks[v.outputs[q]].OutputVariable == name && v.overwrites(q, p, i) {
			return true
		}
	}
	return false
}

// Each calls read, in file order, with each of Sources(i) whose
// output_variable task i reads (Team.ReadsVariable; a foreach instance's
// item shadows a variable of its name).
func (v *VariableReads) Each(i int, read func(j int)) {
	tk := v.team.Tasks[i]
	x := tk.Expanded()
	v.Sources(i, func(j int) {
		if name := v.team.Tasks[j].OutputVariable; !x.Binds(name) && v.team.ReadsVariable(tk, name) {
			read(j)
		}
	})
}

// From is, by variable, the tasks whose output_variable task i reads
// (Each), in file order; nil when it reads none. A task's key
// (variables_from) and the restore's words about what moved both name
// them so.
func (v *VariableReads) From(i int) map[string][]string {
	var from map[string][]string
	v.Each(i, func(j int) {
		if from == nil {
			from = map[string][]string{}
		}
		name := v.team.Tasks[j].OutputVariable
		from[name] = append(from[name], v.team.Tasks[j].Name)
	})
	return from
}

// Overwritten says whether variable name is always set by a task of the
// team by the time task i starts: a task that always runs sets it (no
// route may skip it, nor in a workflow the skip of all it reads) and always
// ends before i starts (in a sequential team it comes before i; in a
// workflow i waits for it, through tasks that always run). What the run
// starts with (variables:, --var) is then never what i reads of name.
func (v *VariableReads) Overwritten(name string, i int) bool {
	for p, k := range v.outputs {
		if k == i || v.team.Tasks[k].OutputVariable != name {
			continue
		}
		if v.after == nil {
			if k < i && !v.Skippable(k) {
				return true
			}
			continue
		}
		if s := v.sure()[p]; s != nil && s.has(i) {
			return true
		}
	}
	return false
}

// After says whether task k, when it runs, always ends after task j
// does (both of Outputs): in a sequential team it comes after it; in a
// workflow it waits for it, through context or a route. Of two tasks
// that set one variable, what the later leaves stands.
func (v *VariableReads) After(j, k int) bool {
	if v.after == nil {
		return k > j
	}
	q := slices.Index(v.outputs, k)
	return q >= 0 && v.before[q].has(j)
}

// Skippable says whether a route may skip task j.
func (v *VariableReads) Skippable(j int) bool { return v.routed != nil && v.routed[j] }

// overwrites says whether the q-th of Outputs always ends after the p-th
// and before task i starts (both can set their variable by then): no
// route can skip it, and it comes after the p-th (in a sequential team)
// or waits for it while i waits for it (in a workflow).
func (v *VariableReads) overwrites(q, p, i int) bool {
	k, j := v.outputs[q], v.outputs[p]
	if v.routed != nil && v.routed[k] {
		return false
	}
	if v.after == nil {
		return k > j
	}
	return v.after[q].has(i) && v.before[q].has(j)
}

// canSet says whether the p-th of Outputs can have set its variable when
// task i starts (Each).
func (v *VariableReads) canSet(p, i int) bool {
	j := v.outputs[p]
	if v.after == nil {
		return j < i
	}
	return v.after[p].has(i) || j < i && !v.before[p].has(i)
}

// races says whether task i, in a workflow, may start before or after
// the p-th of Outputs ends: it neither waits for that task nor is waited
// for by it.
func (v *VariableReads) races(p, i int) bool {
	return v.after != nil && !v.after[p].has(i) && !v.before[p].has(i) && v.outputs[p] != i
}

// routeTargets says of each task whether a condition's route may skip
// it: one a route names, or an instance or iteration of one (nil when no
// task routes).
func (t *Team) routeTargets() []bool {
	var named map[string]bool
	for _, tk := range t.Tasks {
		for _, r := range tk.Condition() {
			for _, name := range r.Next {
				if named == nil {
					named = map[string]bool{}
				}
				named[name] = true
			}
		}
	}
	if named == nil {
		return nil
	}
	out := make([]bool, len(t.Tasks))
	for i, tk := range t.Tasks {
		x := tk.Expanded()
		out[i] = named[tk.Name] || x.ForeachOf+x.RepeatOf != "" && named[x.ForeachOf+x.RepeatOf]
	}
	return out
}

// bits is a set of task indexes: a workflow of n tasks that all set a
// variable keeps two of n bits for each, where bools took 8 times that
// (128 MB at 8,000 tasks).
type bits []uint64

func newBits(n int) bits { return make(bits, (n+63)/64) }

func (b bits) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bits) set(i int) { b[i/64] |= 1 << (i % 64) }
