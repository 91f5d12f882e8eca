package spec

import "testing"

// nameIndex stands for the maps of names it replaced: check's kept the
// last task of a name, TaskDefs' the first.
func TestNameIndexFirstAndLast(t *testing.T) {
	names := []string{"b", "a", "c", "a", "b", "a"}
	x := newNameIndex(len(names), func(i int) string { return names[i] })
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
		f, ok1 := x.first(tc.name)
		l, ok2 := x.last(tc.name)
		if ok1 != tc.found || ok2 != tc.found || (tc.found && (f != tc.first || l != tc.last)) {
			t.Errorf("%q: first %d %v, last %d %v; want %d, %d, %v", tc.name, f, ok1, l, ok2, tc.first, tc.last, tc.found)
		}
	}
	if _, ok := newNameIndex(0, nil).first("a"); ok {
		t.Error("an empty index found a name")
	}
}
