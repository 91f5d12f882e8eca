package checkpoint

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/spec"
)

// completedSession is a decoded session of n completed tasks, each reading
// the one before, and their defs; with vars, every third task set a
// variable.
func completedSession(t *testing.T, n int, vars bool) (*Session, []spec.TaskDef, []byte) {
	t.Helper()
	var defs []spec.TaskDef
	for i := range n {
		d := spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "w", Key: fmt.Sprintf("k%d", i), OwnKey: fmt.Sprintf("o%d", i)}
		if i > 0 {
			d.Context = []string{defs[i-1].Name}
		}
		defs = append(defs, d)
	}
	done := NewSession("s", "team.yaml", "t", spec.Sequential, defs, "fp", time.Unix(0, 0))
	for i := range done.Team.Tasks {
		r := &done.Team.Tasks[i]
		r.Status, r.Result, r.Attempts, r.Variables = StatusCompleted, r.Name, 1, map[string]any{}
		if vars && i%3 == 0 {
			r.Variables = map[string]any{"v": r.Name}
		}
		at := time.Unix(int64(i), 0).UTC()
		r.StartedAt, r.FinishedAt = &at, &at
		r.History = []Attempt{{N: 1, Start: at, End: &at, Outcome: StatusCompleted, Digest: Digest(r.Result)}}
	}
	data, err := EncodeSession(done)
	if err != nil {
		t.Fatal(err)
	}
	return decoded(t, data), defs, data
}

func decoded(t *testing.T, data []byte) *Session {
	t.Helper()
	sess, err := DecodeSession("s", "s.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

func encoded(t *testing.T, s *Session) []byte {
	t.Helper()
	data, err := EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A full restore that takes every record over as it is makes no copy of
// the session's list (3.1 MB at 10,000 tasks, where a restore collects
// nothing): Continue takes the decoded list itself, and the session it
// makes is the one a copy made. Seen failing before shareRecords: 561
// bytes a task.
func TestFullRestoreSharesTheSessionsRecords(t *testing.T) {
	const n = 2000
	old, defs, data := completedSession(t, n, true)
	now := time.Unix(99, 0)

	// The reference: the restore's own copy of every record (own), as
	// before shareRecords.
	ref := decoded(t, data)
	rr := RestoreChoice(ref, defs, "fp", Choice{})
	rr.own()
	want := encoded(t, Continue(ref, rr, spec.Sequential, defs, "fp", now))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := RestoreChoice(old, defs, "fp", Choice{})
	first := &old.Team.Tasks[0]
	s := Continue(old, r, spec.Sequential, defs, "fp", now)
	runtime.ReadMemStats(&after)
	if r.Kind != RestoreFull || len(r.Reused) != n {
		t.Fatalf("restore %v, %d reused; want full, %d", r.Kind, len(r.Reused), n)
	}
	if &s.Team.Tasks[0] != first {
		t.Errorf("the continued session's records are a copy, not the decoded list")
	}
	if old.Team.Tasks != nil {
		t.Errorf("the old session still lists %d tasks after Continue took them", len(old.Team.Tasks))
	}
	if got := encoded(t, s); !bytes.Equal(got, want) {
		t.Errorf("the continued session differs from the one a copy makes:\n%.400s\nwant\n%.400s", got, want)
	}
	// Left: the restore's list of the reused names, the new session's
	// small maps (16 bytes a task; 71 while the restore kept a map of
	// every task's name, which it finds now by position: Restored.Task).
	allocatedAtMost(t, "a full restore", (after.TotalAlloc-before.TotalAlloc)/n, 40)
}

// What changes a restored record (--rerun, a refused result, a foreach
// instance that changed) changes the restore's own copy: the session is
// read as recorded until Continue (uncoveredWarnings, unkept, HoldAgain,
// the dropped usage), and plan prints it beside the restore.
func TestRestoreChangesNoRecordOfTheSession(t *testing.T) {
	_, defs, data := completedSession(t, 20, true)
	refuse := func(r *Restored) []Refusal {
		out := make([]Refusal, len(defs))
		out[4].Why = "its file is gone"
		return out
	}
	for _, tc := range []struct {
		name string
		ch   Choice
		task string // runs again
	}{
		{"rerun", Choice{Rerun: []string{"t7"}}, "t7"},
		{"rerun-from", Choice{RerunFrom: []string{"t15"}}, "t16"},
		{"refused", Choice{Refuse: refuse}, "t4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := decoded(t, data)
			r := RestoreChoice(sess, defs, "fp", tc.ch)
			if got := r.rec(tc.task); got == nil || got.Status != StatusPending || got.Result != "" {
				t.Fatalf("restored %s: %+v; want it pending, to run again", tc.task, got)
			}
			if got, ok := sess.Task(tc.task); !ok || got.Status != StatusCompleted || got.Result != tc.task {
				t.Errorf("the session's own %s changed with the restore's: %+v", tc.task, got)
			}
			if &sess.Team.Tasks[0] == r.rec("t0") {
				t.Errorf("the restore changed records and still shares the session's list")
			}
			if got := encoded(t, sess); !bytes.Equal(got, data) {
				t.Errorf("the restored session encodes differently after the restore")
			}
		})
	}
}

// A restore that cannot take every record over as it is (a task failed,
// the defs hold another task) copies the list: the session keeps its own.
func TestRestoreCopiesWhatItChanges(t *testing.T) {
	_, defs, data := completedSession(t, 10, true)
	sess := decoded(t, data)
	sess.Team.Tasks[3].Status, sess.Team.Tasks[3].Result = StatusFailed, ""
	r := RestoreChoice(sess, defs, "fp", Choice{})
	if r.shared || &sess.Team.Tasks[0] == r.rec("t0") {
		t.Fatalf("a restore of a session with a failed task shares its list")
	}
	s := Continue(sess, r, spec.Sequential, defs, "fp", time.Unix(99, 0))
	if len(sess.Team.Tasks) != 10 || sess.Team.Tasks[3].Status != StatusFailed {
		t.Errorf("Continue changed the old session: %d tasks", len(sess.Team.Tasks))
	}
	if got, _ := s.Task("t3"); got.Status != StatusFailed {
		t.Errorf("t3 continued as %s; want failed", got.Status)
	}

	more := append(defs, spec.TaskDef{ID: 10, Name: "t10", Agent: "w", Key: "k10", Context: []string{"t9"}})
	sess = decoded(t, data)
	r = RestoreChoice(sess, more, "fp", Choice{})
	if r.shared {
		t.Errorf("a restore for defs with one more task shares the session's list")
	}
}

// A restore for defs in the order of the session's tasks finds each
// record where it is (Session.Task, by position) and makes no map of them
// (0.43 MB at 10,000 tasks). Seen failing before lookUpByName: 129 bytes a
// task.
func TestRestoreInTheSessionsOrderMakesNoMap(t *testing.T) {
	const n = 2000
	sess, defs, data := completedSession(t, n, false)
	sess.Team.Tasks[5].Status = StatusFailed // not shared: the copy is the restore's
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := RestoreChoice(sess, defs, "fp", Choice{})
	runtime.ReadMemStats(&after)
	if r.Kind != RestoreFull || len(r.Reused) != n-1 || r.rec("t5").Status != StatusFailed {
		t.Fatalf("restore %v, %d reused; want full, %d, t5 failed", r.Kind, len(r.Reused), n-1)
	}
	if sess.index != nil {
		t.Errorf("the restore built an index of the old session's %d tasks", len(sess.index))
	}
	// Out of order, the records are found by name all the same.
	sess = decoded(t, data)
	swapped := slices.Clone(defs)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	r = RestoreChoice(sess, swapped, "fp", Choice{})
	if got := r.rec("t3"); got == nil || got.Result != "t3" {
		t.Errorf("restored t3 out of order: %+v", got)
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	// Left: the copy of the records (320 bytes a task) and the list of
	// the reused names (~3 bytes a task besides them; 58 while the
	// restore kept a map of the names: Restored.Task).
	if per := (after.TotalAlloc-before.TotalAlloc)/n - 320; per > 30 {
		t.Errorf("a restore of %d tasks allocated %d bytes a task besides its records; want at most 30", n, per)
	} else {
		t.Logf("%d bytes a task besides the records", per)
	}
}
