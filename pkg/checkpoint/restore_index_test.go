package checkpoint

import (
	"fmt"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// A full restore of a decoded session looks each task up in the defs'
// order: when no name repeats, Session.Task finds it by position and no
// index of the old session is built (0.43 MB at 10,000 tasks); when one
// does, the index keeps the first record of the name, as before.
func TestRestoreOfDistinctNamesBuildsNoIndex(t *testing.T) {
	var defs []spec.TaskDef
	for i := range 50 {
		d := spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "w", Key: fmt.Sprintf("k%d", i), OwnKey: fmt.Sprintf("o%d", i)}
		if i > 0 {
			d.Context = []string{defs[i-1].Name}
		}
		defs = append(defs, d)
	}
	done := NewSession("s", "team.yaml", "t", spec.Sequential, defs, "fp", time.Unix(0, 0))
	for i := range done.Team.Tasks {
		r := &done.Team.Tasks[i]
		r.Status, r.Result, r.Attempts = StatusCompleted, r.Name, 1
	}
	data, err := EncodeSession(done)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := DecodeSession("s", "s.json", data)
	if err != nil {
		t.Fatal(err)
	}
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
	sess, err = DecodeSession("s", "s.json", data)
	if err != nil {
		t.Fatal(err)
	}
	sess.Team.Tasks[9].Name = "t3"
	RestoreChoice(sess, defs, "fp", Choice{})
	if got, ok := sess.Task("t3"); !ok || got != &sess.Team.Tasks[3] {
		t.Errorf("Task(t3) = %p, %v with t3 repeated; want the first record, %p", got, ok, &sess.Team.Tasks[3])
	}
}
