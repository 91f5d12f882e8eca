package spec

import (
	"slices"
	"sort"
	"strings"
)

// TaskFinder finds a team's tasks by name, the one way every reader of
// Team.Tasks (or of their TaskDefs, the same names in the same order) does:
// at a guessed position first; at the first miss by a pass over the tasks;
// from the second miss on by halves in their positions sorted by name, a
// list of int32 made then (a map of a 10,000-task team's names is 0.43 MB,
// the list 40 KB, and a restore, which collects nothing while it loads,
// keeps what it makes). Most lookups guess right: a sequential team's
// context is the task before, and a team without conditions, repeats or
// foreach looks up no other name, so its 10,000 tasks sort nothing; a
// single lookup (TaskIndex) makes no list either.
type TaskFinder struct {
	tasks  []*Task
	order  []int32 // positions sorted by name, from the second miss on
	missed bool
}

// Finder finds t's tasks by name (TaskFinder). It is valid while t.Tasks
// does not change.
func (t *Team) Finder() TaskFinder { return TaskFinder{tasks: t.Tasks} }

// Find is the position of the task named name: guess when that task is
// so named (guess < 0: none), else the first of that name. The names of
// a team the spec loaded differ (it refuses a repeated one).
func (x *TaskFinder) Find(name string, guess int) (int, bool) {
	if guess >= 0 && guess < len(x.tasks) && x.tasks[guess].Name == name {
		return guess, true
	}
	return x.search(name, false)
}

// last is the last task named name: check's lookups, which ran over a map
// of the names that kept the last of each.
func (x *TaskFinder) last(name string) (int, bool) { return x.search(name, true) }

func (x *TaskFinder) search(name string, last bool) (int, bool) {
	if !x.missed {
		x.missed = true
		for k := range x.tasks {
			i := k
			if last {
				i = len(x.tasks) - 1 - k
			}
			if x.tasks[i].Name == name {
				return i, true
			}
		}
		return 0, false
	}
	if x.order == nil {
		x.order = make([]int32, len(x.tasks))
		for i := range x.order {
			x.order[i] = int32(i)
		}
		slices.SortStableFunc(x.order, func(a, b int32) int { return strings.Compare(x.tasks[a].Name, x.tasks[b].Name) })
	}
	if last {
		k := sort.Search(len(x.order), func(k int) bool { return x.tasks[x.order[k]].Name > name })
		if k > 0 && x.tasks[x.order[k-1]].Name == name {
			return int(x.order[k-1]), true
		}
		return 0, false
	}
	k := sort.Search(len(x.order), func(k int) bool { return x.tasks[x.order[k]].Name >= name })
	if k < len(x.order) && x.tasks[x.order[k]].Name == name {
		return int(x.order[k]), true
	}
	return 0, false
}

// TaskIndex returns the position of the task named name, or -1.
func (t *Team) TaskIndex(name string) int {
	x := t.Finder()
	if i, ok := x.Find(name, -1); ok {
		return i
	}
	return -1
}
