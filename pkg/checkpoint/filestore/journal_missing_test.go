package filestore

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// killedRun begins a run of session id (a new session, or the one the
// store has) and records the completions of tasks, then lets go of its
// lock without Close: a kill -9.
func killedRun(t *testing.T, s *Store, id string, tasks ...string) {
	t.Helper()
	sess, err := s.Load(bg, id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		sess, err = checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0), nil
	}
	if err != nil {
		t.Fatal(err)
	}
	l := mustLock(t, s, id)
	j := mustBegin(t, s, l, sess)
	for _, task := range tasks {
		record(t, j, complete(task, "out-"+task)...)
	}
	l.Release()
}

// A journal that holds what a run recorded and no snapshot absorbed is
// removed: every reader says so (exit 5 naming it), in Load, a prefetched
// Load, Head and List alike. Read as a session with nothing recorded, its
// finished tasks would run, and be paid for, again.
func TestJournalRemovedIsCorrupt(t *testing.T) {
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, s *Store, id string)
	}{
		{"a first run killed", func(t *testing.T, s *Store, id string) {
			killedRun(t, s, id, "draft")
		}},
		// Its snapshot absorbed the first run's journal (folded_epoch), as
		// a finished run's last one does: only journal_open tells them apart.
		{"a resumed run killed", func(t *testing.T, s *Store, id string) {
			killedRun(t, s, id, "draft")
			killedRun(t, s, id, "polish")
		}},
		{"a resumed run killed before its first record", func(t *testing.T, s *Store, id string) {
			killedRun(t, s, id, "draft")
			killedRun(t, s, id)
		}},
		{"a run killed after a finished one", func(t *testing.T, s *Store, id string) {
			runSession(t, s, id, seed(), 1)
			killedRun(t, s, id, "polish")
		}},
		{"a run killed after a compaction", func(t *testing.T, s *Store, id string) {
			s.compactMin = 1
			j, names := compactTeam(t, s, id)
			for i := 0; ; i++ {
				record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: names[i%len(names)], Result: fmt.Sprintf("%06d %s", i, kib)})
				waitCompacted(j)
				if _, _, absorbed := snapshotHead(t, s.Path(id)); absorbed > 0 {
					break
				}
				if i > 100000 {
					t.Fatal("the journal never compacted")
				}
			}
			j.lock.Release()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			const id = "gone"
			tt.run(t, s, id)
			if _, err := s.Load(bg, id); err != nil {
				t.Fatalf("before the journal's removal: %v", err)
			}
			if err := os.Remove(s.journalPath(id)); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				var ce *checkpoint.CorruptError
				if !errors.As(err, &ce) || ce.ID != id || ce.Path != s.journalPath(id) ||
					!strings.Contains(err.Error(), "it is missing: the snapshot beside it ("+id+".json) was written by a run that went on recording its tasks there") {
					t.Errorf("%s: %v, want the journal %s named corrupt", what, err, s.journalPath(id))
				}
			}
			_, err := s.Load(bg, id)
			check("Load", err)
			s.Prefetch(id)
			_, err = s.Load(bg, id)
			check("a prefetched Load", err)
			e, err := s.Head(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			check("Head", e.Err)
			list, err := s.List(bg)
			if err != nil || len(list) != 1 {
				t.Fatalf("List: %v, %v", list, err)
			}
			check("List", list[0].Err)
			// Still the user's to delete.
			if err := s.Delete(bg, id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Whatever instant a kill -9 hits a run's start or end, what it leaves
// loads (or is no session yet): the journal a snapshot names is made
// before it, and removed only after a snapshot absorbed it.
func TestCrashWindowsOfJournalLoad(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before readies the store; the run under test then begins,
		// records polish and ends.
		before func(t *testing.T, s *Store, id string)
		// fresh: before leaves no session.
		fresh bool
	}{
		{"a first run", func(*testing.T, *Store, string) {}, true},
		{"a run resuming a killed one", func(t *testing.T, s *Store, id string) { killedRun(t, s, id, "draft") }, false},
		{"a run resuming a finished one", func(t *testing.T, s *Store, id string) { runSession(t, s, id, seed(), 1) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			const id = "win"
			tt.before(t, s, id)
			images := map[string]*Store{}
			s.testStep = func(step string) {
				switch step {
				case "journal created", "begun", "folded":
					images[step] = crashImage(t, s)
				}
			}
			var sess *checkpoint.Session
			if tt.fresh {
				sess = checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0)
			} else {
				var err error
				if sess, err = s.Load(bg, id); err != nil {
					t.Fatal(err)
				}
			}
			l := mustLock(t, s, id)
			j := mustBegin(t, s, l, sess)
			record(t, j, complete("polish", "out-polish")...)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			s.testStep = nil
			for _, step := range []string{"journal created", "begun", "folded"} {
				img := images[step]
				if img == nil {
					t.Fatalf("no crash image at %q", step)
				}
				_, err := img.Load(bg, id)
				if tt.fresh && step == "journal created" && errors.Is(err, checkpoint.ErrNotFound) {
					continue // no snapshot yet: no session
				}
				if err != nil {
					t.Errorf("killed at %q: Load: %v", step, err)
				}
				if e, err := img.Head(bg, id); err != nil || e.Err != nil {
					t.Errorf("killed at %q: Head: %v, %v", step, e.Err, err)
				}
			}
			// And the finished session, its journal folded and removed.
			if _, err := os.Lstat(s.journalPath(id)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the journal is still there after Close: %v", err)
			}
			back, err := s.Load(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			if tk, _ := back.Task("polish"); tk.Result != "out-polish" {
				t.Errorf("polish: %+v", tk)
			}
			if e, err := s.Head(bg, id); err != nil || e.Err != nil {
				t.Errorf("Head: %v, %v", e.Err, err)
			}
		})
	}
}
