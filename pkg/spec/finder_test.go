package spec

import "testing"

// TaskFinder stands for the lookups it replaced: check's map kept the last
// task of a name, TaskDefs' and TaskIndex the first, schedule's the guessed
// position when it held the name. Each answer is asked of a fresh finder
// (its first miss: a pass over the tasks) and of one that already missed
// (then: the tasks sorted by name).
func TestTaskFinder(t *testing.T) {
	names := []string{"b", "a", "c", "a", "b", "a"}
	team := &Team{}
	for _, n := range names {
		team.Tasks = append(team.Tasks, &Task{Name: n})
	}
	for _, tc := range []struct {
		name        string
		first, last int
		found       bool
	}{
		{"a", 1, 5, true},
		{"b", 0, 4, true},
		{"c", 2, 2, true},
		{"", 0, 0, false},
		{"aa", 0, 0, false},
		{"d", 0, 0, false},
	} {
		missed := team.Finder()
		missed.Find("none", -1)
		for _, how := range []string{"a pass", "by halves"} {
			x, y := team.Finder(), team.Finder()
			if how == "by halves" {
				x, y = missed, missed
			}
			f, ok1 := x.Find(tc.name, -1)
			l, ok2 := y.last(tc.name)
			if ok1 != tc.found || ok2 != tc.found || (tc.found && (f != tc.first || l != tc.last)) {
				t.Errorf("%q, %s: first %d %v, last %d %v; want %d, %d, %v", tc.name, how, f, ok1, l, ok2, tc.first, tc.last, tc.found)
			}
			if g, ok := x.Find(tc.name, 3); ok != tc.found || (ok && names[3] == tc.name && g != 3) || (ok && names[3] != tc.name && g != tc.first) {
				t.Errorf("%q, %s, guessing 3: %d %v", tc.name, how, g, ok)
			}
		}
		if i := team.TaskIndex(tc.name); (i >= 0) != tc.found || (tc.found && i != tc.first) {
			t.Errorf("TaskIndex(%q) = %d", tc.name, i)
		}
	}
	empty := (&Team{}).Finder()
	for range 2 {
		if _, ok := empty.Find("a", 0); ok {
			t.Error("an empty finder found a name")
		}
	}
}
