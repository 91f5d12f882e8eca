package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// The history keeps why each failed attempt failed, for the timeline.
func TestHistoryKeepsFailures(t *testing.T) {
	defs := []spec.TaskDef{{ID: 0, Name: "work", Agent: "sh", Key: "k1"}}
	s := NewSession("s1", "/x/team.yaml", "team", spec.Sequential, defs, "fp", time.Unix(0, 0))
	at := func(n int) time.Time { return time.Unix(int64(n), 0).UTC() }
	for _, r := range []Record{
		{Kind: TaskStarted, Task: "work", Attempt: 1, At: at(1)},
		{Kind: TaskFailed, Task: "work", Error: "exit status 3", At: at(2)},
		{Kind: TaskStarted, Task: "work", Attempt: 2, At: at(3)},
		{Kind: TaskFailed, Task: "work", Error: "interrupted", At: at(4)},
		{Kind: TaskStarted, Task: "work", Attempt: 3, At: at(5)},
		{Kind: TaskCompleted, Task: "work", Result: "ok", At: at(6)},
	} {
		p, err := EncodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRecord(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(back)
	}
	tr, _ := s.Task("work")
	want := []struct {
		outcome Status
		err     string
	}{{StatusFailed, "exit status 3"}, {StatusFailed, "interrupted"}, {StatusCompleted, ""}}
	if len(tr.History) != len(want) {
		t.Fatalf("history %+v", tr.History)
	}
	for i, w := range want {
		a := tr.History[i]
		if a.N != i+1 || a.Outcome != w.outcome || a.Error != w.err || a.End == nil || !a.End.Equal(at(2*i+2)) {
			t.Errorf("attempt %d: %+v, want outcome %s error %q", i+1, a, w.outcome, w.err)
		}
	}
}

// The digest of an empty result is a constant; it must be the one sha256
// gives, as every other result's is.
func TestDigestOfEmptyResult(t *testing.T) {
	for _, r := range []string{"", "x", "\x00"} {
		sum := sha256.Sum256([]byte(r))
		if got, want := Digest(r), "sha256:"+hex.EncodeToString(sum[:]); got != want {
			t.Errorf("Digest(%q) = %s, want %s", r, got, want)
		}
	}
}

// A new session finds its tasks by name in any order, without an index
// while they are asked for in order, and keeps a record of a task it did
// not list.
func TestSessionTaskLookup(t *testing.T) {
	defs := []spec.TaskDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}, {ID: 2, Name: "c"}, {ID: 3, Name: "d"}}
	s := NewSession("s1", "/x/team.yaml", "team", spec.Sequential, defs, "fp", time.Unix(0, 0))
	for _, name := range []string{"a", "a", "b", "c", "b", "c", "d", "c", "d", "a", "b"} {
		if tk, ok := s.Task(name); !ok || tk.Name != name {
			t.Fatalf("Task(%q) = %v, %v", name, tk, ok)
		}
	}
	if s.index != nil {
		t.Errorf("tasks asked for in order built the index")
	}
	for _, name := range []string{"d", "a", "c", "b", "b"} {
		if tk, ok := s.Task(name); !ok || tk.Name != name {
			t.Fatalf("Task(%q) = %v, %v", name, tk, ok)
		}
	}
	if _, ok := s.Task("e"); ok {
		t.Fatalf("Task(e) found a task the session does not have")
	}
	s.Apply(Record{Kind: TaskStarted, Task: "e", Attempt: 1, At: time.Unix(1, 0)})
	if tk, ok := s.Task("e"); !ok || tk.Name != "e" || tk.Status != StatusRunning {
		t.Fatalf("Task(e) after its record = %v, %v", tk, ok)
	}
}
