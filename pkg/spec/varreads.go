package spec

import "slices"

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
	after, before [][]bool
	// routed says, in a sequential team, of each task whether a route
	// may skip it (nil: none can): the last task before a reader that
	// sets a variable and that no route skips set what it reads.
	routed []bool
}

// VariableReads makes t's VariableReads.
func (t *Team) VariableReads() *VariableReads {
	v := &VariableReads{team: t}
	for i, tk := range t.Tasks {
		if tk.OutputVariable != "" {
			v.outputs = append(v.outputs, i)
		}
	}
	if len(v.outputs) == 0 {
		return v
	}
	if t.Process != Workflow {
		v.routed = t.routeTargets()
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
	reach := func(from int, next [][]int) []bool {
		seen := make([]bool, len(t.Tasks))
		queue := []int{from}
		for len(queue) > 0 {
			k := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			for _, n := range next[k] {
				if !seen[n] {
					seen[n] = true
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
	return v
}

// Outputs are the tasks with an output_variable, in file order.
func (v *VariableReads) Outputs() []int { return v.outputs }

// Each calls read with each task, in file order, whose output_variable
// task i reads (Team.ReadsVariable; a foreach instance's item shadows a
// variable of its name) and that can have set it when i starts: in a
// sequential team one before it, back to the last one no route can skip
// (it overwrote those before it); in a workflow one it waits for, or one
// before it in the file that does not wait for it either (it may end
// first: Parse warns of that race). A task that sets the variable after
// i ran, itself included, never set what i read.
func (v *VariableReads) Each(i int, read func(j int)) {
	tk := v.team.Tasks[i]
	x := tk.Expanded()
	var set []int // from the last before i back
	var covered []string
	for p := len(v.outputs) - 1; p >= 0; p-- {
		j := v.outputs[p]
		name := v.team.Tasks[j].OutputVariable
		if j == i || !v.canSet(p, i) || x.Binds(name) || slices.Contains(covered, name) || !v.team.ReadsVariable(tk, name) {
			continue
		}
		set = append(set, j)
		if v.after == nil && (v.routed == nil || !v.routed[j]) {
			// In a sequential team it always runs before i: what any
			// task before it set of this variable, it overwrote.
			covered = append(covered, name)
		}
	}
	for k := len(set) - 1; k >= 0; k-- {
		read(set[k])
	}
}

// canSet says whether the p-th of Outputs can have set its variable when
// task i starts (Each).
func (v *VariableReads) canSet(p, i int) bool {
	j := v.outputs[p]
	if v.after == nil {
		return j < i
	}
	return v.after[p][i] || j < i && !v.before[p][i]
}

// races says whether task i, in a workflow, may start before or after
// the p-th of Outputs ends: it neither waits for that task nor is waited
// for by it.
func (v *VariableReads) races(p, i int) bool {
	return v.after != nil && !v.after[p][i] && !v.before[p][i] && v.outputs[p] != i
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
