package checkpoint

import (
	"slices"
	"testing"
)

// A full restore of a decoded session looks each task up in the defs'
// order: when no name repeats, Session.Task finds it by position and no
// index of the old session is built (0.43 MB at 10,000 tasks); when one
// does, the index keeps the first record of the name, as before.
func TestRestoreOfDistinctNamesBuildsNoIndex(t *testing.T) {
	sess, defs, data := completedSession(t, 50, false)
	r := RestoreChoice(sess, defs, "fp", Choice{})
	if r.Kind != RestoreFull || len(r.Reused) != len(defs) {
		t.Fatalf("restore %v, %d reused; want full, %d", r.Kind, len(r.Reused), len(defs))
	}
	if sess.index != nil {
		t.Errorf("the restore built an index of the old session's %d tasks", len(sess.index))
	}
	if got, ok := sess.Task("t7"); !ok || got != &sess.Team.Tasks[7] {
		t.Errorf("Task(t7) = %p, %v; want the 8th record", got, ok)
	}

	// A hand-edited file repeats a name: Task keeps its first record.
	sess = decoded(t, data)
	sess.Team.Tasks[9].Name = "t3"
	RestoreChoice(sess, defs, "fp", Choice{})
	if got, ok := sess.Task("t3"); !ok || got != &sess.Team.Tasks[3] {
		t.Errorf("Task(t3) = %p, %v with t3 repeated; want the first record, %p", got, ok, &sess.Team.Tasks[3])
	}
}

// A session whose file repeats a name (edited by hand) is read by the
// restore as by every other reader (Session.Task): the first record of
// the name is the task's. The second record of t3 here is t9's, with
// t9's definition: taken as t3's, it made t3 run again.
func TestRestoreOfARepeatedNameTakesItsFirstRecord(t *testing.T) {
	_, defs, data := completedSession(t, 12, false)
	sess := decoded(t, data)
	sess.Team.Tasks[9].Name = "t3"
	r := RestoreChoice(sess, defs, "fp", Choice{})
	if got := r.rec("t3"); got == nil || got.Result != "t3" {
		t.Errorf("restored t3 = %+v; want its first record, whose result is t3", got)
	}
	if !slices.Contains(r.Reused, "t3") {
		t.Errorf("t3 is not reused (reused: %v); its first record is its own, unchanged", r.Reused)
	}
	for _, d := range r.Diffs {
		if d.Task == "t3" {
			t.Errorf("t3 is said to differ from its record: %+v", d)
		}
	}
}

// rec is the restored record of the named task, nil for none.
func (r *Restored) rec(name string) *TaskRecord {
	t, _ := r.Task(name)
	return t
}

// A restore's records are asked for in the defs' order, pass after pass
// (the refuser, Continue, the engine): each pass finds them by position,
// and no index of them is made (0.42 MB at 10,000 tasks). Out of order,
// they are found all the same.
func TestRestoredRecordsFoundByPosition(t *testing.T) {
	sess, defs, _ := completedSession(t, 100, false)
	r := RestoreChoice(sess, defs, "fp", Choice{})
	for range 3 {
		for _, d := range defs {
			if !r.Done(d.Name) {
				t.Fatalf("%s not restored", d.Name)
			}
		}
	}
	if r.index != nil {
		t.Error("passes over the tasks in their order made an index of them")
	}
	if got := r.rec("t57"); got == nil || got.Result != "t57" {
		t.Errorf("t57 out of order: %+v", got)
	}
	if got := r.rec("none"); got != nil {
		t.Errorf("a task the session does not hold: %+v", got)
	}
}
