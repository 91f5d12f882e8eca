package spec

import "fmt"

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
