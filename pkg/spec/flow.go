package spec

import (
	"fmt"
	"slices"
	"strings"
)

// PraisonAI's workflow process moves from task to task by next_tasks and
// decides with task_type: decision beside a condition mapping. teamrun
// runs a DAG in file order, routing forward by condition: the rules below
// are the same for a steps: file's steps and a roles: or tasks: file's
// tasks.

// flowOrder is the place of each step or task name in the file.
type flowOrder struct {
	place map[string]int // from 1; -1 for a name given twice
	n     int
}

// add gives name the next place and returns it.
func (o *flowOrder) add(name string) int {
	if o.place == nil {
		o.place = map[string]int{}
	}
	o.n++
	if _, dup := o.place[name]; dup {
		// Refused as a duplicate name where the task is built: which of
		// the two a next_tasks means is not for this rule to guess.
		o.place[name] = -1
	} else if name != "" {
		o.place[name] = o.n
	}
	return o.n
}

// loopsBack is the refusal of next_tasks nt, of the step or task at place
// at, when it names one at or before it (noun: "step" or "task"); "" when
// it does not.
func (o *flowOrder) loopsBack(nt *tree, at int, noun string) string {
	for _, it := range nextTaskNames(nt) {
		if s, _ := it.str(); o.place[s] > 0 && o.place[s] <= at {
			where := "back to an earlier " + noun
			if o.place[s] == at {
				where = "back to its own " + noun
			}
			return fmt.Sprintf("%q loops %s: teamrun runs a DAG of tasks, so route forward with condition: instead", s, where)
		}
	}
	return ""
}

// nextTaskNames are the names a next_tasks value gives: a list of them,
// or one written alone (next_tasks: review), which PraisonAI would read
// letter by letter.
func nextTaskNames(nt *tree) []*tree {
	if s, ok := nt.str(); ok && s != "" {
		return []*tree{nt}
	}
	return nt.itemsOrNil()
}

// praisonFlowKey reads key k of a step or task (src) that is about
// PraisonAI's flow from one task to the next, and reports whether it was
// one; noun is "steps" or "tasks". A next_tasks loop back is refused
// before (loopsBack).
func (b *builder) praisonFlowKey(k string, f, src *tree, noun string) bool {
	switch k {
	case "task_type":
		// decision is what a condition mapping beside it makes the task.
		if s, _ := f.str(); s != "decision" || src.get("condition") == nil {
			b.praisonIgnored(f)
		}
	case "is_start":
		// the first one starts anyway
	case "next_tasks":
		if len(nextTaskNames(f)) > 0 {
			b.warnf(f, f.kpos(), "ignored: %s run in file order, each after the ones it reads (context:)", noun)
		}
	default:
		return false
	}
	return true
}

// warnSkippedReads warns, in a sequential team, of each task that an
// answer of a condition leaves with nothing to read: every task it reads
// (the task before it, unless it has context:) is a route of that
// condition that the answer does not take, while the task itself still
// runs. A sequential team skips only a condition's routes, so such a task
// runs, sent no previous output, where a PraisonAI decision flow passes
// on the branch that ran; the line says which context: reads that.
func (b *builder) warnSkippedReads() {
	t := b.team
	if t.Process == Workflow {
		return // a task all of whose reads are skipped is skipped there
	}
	for i, tk := range t.Tasks {
		ctx := t.contextAs(i, nil)
		if len(ctx) == 0 {
			continue
		}
		for d := range i {
			routes := t.Tasks[d].Condition()
			if len(routes) == 0 {
				continue
			}
			label, ok := skippingLabel(routes, ctx, tk.Name)
			if !ok {
				continue
			}
			src := &tree{at: placeOf(tk.Pos), path: tk.KeyPath()}
			if i < len(b.tasks) && b.tasks[i] != nil {
				src = b.tasks[i]
			}
			reads := "the task before it, " + ctx[0]
			if tk.HasContext && src.get("context") != nil {
				reads = strings.Join(ctx, ", ")
			}
			b.warnf(src, src.kpos(), "it reads %s, which %s's condition skips when the answer is %q: then %s still runs, with no previous output; write context: [%s] to read %s",
				reads, t.Tasks[d].Name, label, tk.Name, strings.Join(branchReads(t, d, i, routes), ", "), readsWhat(routes, tk.Name))
			break
		}
	}
}

// skippingLabel is the first answer of routes that runs the task named
// name (when it is a route) but none of the tasks ctx: each of them a
// route the answer does not take.
func skippingLabel(routes []Route, ctx []string, name string) (string, bool) {
	target := func(n string) bool { _, ok := routeOf(routes, n); return ok }
	if !slices.ContainsFunc(ctx, func(c string) bool { return !target(c) }) {
		for _, r := range routes {
			if target(name) && !slices.Contains(r.Next, name) {
				continue // the task is skipped then too
			}
			if !slices.ContainsFunc(ctx, func(c string) bool { return slices.Contains(r.Next, c) }) {
				return r.Value, true
			}
		}
	}
	return "", false
}

// branchReads is what the task at i reads to get what ran of the
// condition of the task at d: the decision itself when the task is one of
// its routes, else its routes between the two, with the decision first
// when an answer takes none of them.
func branchReads(t *Team, d, i int, routes []Route) []string {
	name := t.Tasks[i].Name
	if _, isRoute := routeOf(routes, name); isRoute {
		return []string{t.Tasks[d].Name}
	}
	var between []string
	for _, tk := range t.Tasks[d+1 : i] {
		if _, isRoute := routeOf(routes, tk.Name); isRoute {
			between = append(between, tk.Name)
		}
	}
	for _, r := range routes {
		if !slices.ContainsFunc(between, func(n string) bool { return slices.Contains(r.Next, n) }) {
			return append([]string{t.Tasks[d].Name}, between...)
		}
	}
	return between
}

// readsWhat says what branchReads reads, for the task named name.
func readsWhat(routes []Route, name string) string {
	if _, isRoute := routeOf(routes, name); isRoute {
		return "the decision that routes to it"
	}
	return "whichever branch ran"
}

// routeOf is the first answer of routes that runs the task named name.
func routeOf(routes []Route, name string) (string, bool) {
	for _, r := range routes {
		if slices.Contains(r.Next, name) {
			return r.Value, true
		}
	}
	return "", false
}
