package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// removed, emptied or cut inside its header: every reader says so (exit 5
// naming it), in Load, a prefetched Load, Head and List alike. Read as a
// session with nothing recorded, its finished tasks would run, and be
// paid for, again. No crash leaves such a journal: Begin puts it in place
// whole, header and all (TestCrashWindowsOfBegin).
func TestJournalRemovedIsCorrupt(t *testing.T) {
	runs := []struct {
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
	}
	const missing, headerless = "it is missing: ", "it has no header (it is empty, or cut inside its first line): "
	damages := []struct {
		name   string
		damage func(path string) error
		says   string
	}{
		{"removed", os.Remove, missing},
		{"emptied", func(path string) error { return os.Truncate(path, 0) }, headerless},
		{"cut after its first byte", func(path string) error { return os.Truncate(path, 1) }, headerless},
		{"cut inside its header", func(path string) error { return os.Truncate(path, 50) }, headerless},
		{"cut just before its header's last byte", func(path string) error {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.Truncate(path, int64(bytes.IndexByte(data, '\n')-1))
		}, headerless},
	}
	for _, tt := range runs {
		for _, d := range damages {
			t.Run(tt.name+"/"+d.name, func(t *testing.T) {
				s := newStore(t)
				const id = "gone"
				tt.run(t, s, id)
				if _, err := s.Load(bg, id); err != nil {
					t.Fatalf("before the journal was %s: %v", d.name, err)
				}
				if err := d.damage(s.journalPath(id)); err != nil {
					t.Fatal(err)
				}
				damaged, _ := os.ReadFile(s.journalPath(id))
				check := func(what string, err error) {
					t.Helper()
					var ce *checkpoint.CorruptError
					if !errors.As(err, &ce) || ce.ID != id || ce.Path != s.journalPath(id) ||
						!strings.Contains(err.Error(), d.says+"the snapshot beside it ("+id+".json) was written by a run that went on recording its tasks there") {
						t.Errorf("%s: %v, want the journal %s named corrupt (%s)", what, err, s.journalPath(id), d.says)
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
				if now, _ := os.ReadFile(s.journalPath(id)); !bytes.Equal(now, damaged) {
					t.Error("the damaged journal was changed")
				}
				// Still the user's to delete.
				if err := s.Delete(bg, id); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// beginSteps are Begin's steps a kill -9 may fall between (Store.testStep):
// both files staged and nothing renamed; one renamed (and synced), not the
// other; both renamed.
var beginSteps = []string{"begin staged", "begin renamed", "begun"}

// beginImages begins a run of sess in s and returns what a kill -9 at each
// of Begin's steps leaves: a copy of the store's folder taken there (a
// power cut leaves the same: Begin syncs the folder after each rename).
// The run is then killed: its lock let go, nothing folded.
func beginImages(t *testing.T, s *Store, sess *checkpoint.Session) map[string]*Store {
	t.Helper()
	images := map[string]*Store{}
	s.testStep = func(step string) {
		if slices.Contains(beginSteps, step) {
			images[step] = crashImage(t, s)
		}
	}
	defer func() { s.testStep = nil }()
	l := mustLock(t, s, sess.ID)
	j := mustBegin(t, s, l, sess)
	j.f.Close()
	l.Release()
	for _, step := range beginSteps {
		if images[step] == nil {
			t.Fatalf("Begin never reached %q", step)
		}
	}
	return images
}

// Whatever instant a kill -9 hits a run's start, what it leaves loads with
// exactly what was acknowledged before (or is no session yet), and a next
// run goes on from it: Begin never leaves a journal without its header
// beside a snapshot that records on in it (journal_open), which Load
// refuses as damage (TestJournalRemovedIsCorrupt), nor a journal that
// such a snapshot does not own.
func TestCrashWindowsOfBegin(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before readies the store and says how many tasks it finished
		// (-1: no session); the run under test then begins and is killed.
		before func(t *testing.T, s *Store, id string) int
	}{
		{"a first run", func(*testing.T, *Store, string) int { return -1 }},
		// Its journal holds records: it stays until the new snapshot,
		// which absorbs it, is in place.
		{"a run resuming a killed one", func(t *testing.T, s *Store, id string) int {
			killedRun(t, s, id, "draft")
			return 1
		}},
		{"a run resuming one killed before its first record", func(t *testing.T, s *Store, id string) int {
			killedRun(t, s, id, "draft")
			killedRun(t, s, id)
			return 1
		}},
		// No journal: the new one goes first, beside the old snapshot.
		{"a run resuming a finished one", func(t *testing.T, s *Store, id string) int {
			runSession(t, s, id, seed(), 1)
			return 1
		}},
		// What a kill between the renames leaves, resumed in turn.
		{"a run resuming one killed between its renames", func(t *testing.T, s *Store, id string) int {
			killedRun(t, s, id, "draft")
			adopt(t, s, beginImages(t, s, load(t, s, id))["begin renamed"])
			return 1
		}},
		{"a run resuming a finished one killed between its renames", func(t *testing.T, s *Store, id string) int {
			runSession(t, s, id, seed(), 1)
			adopt(t, s, beginImages(t, s, load(t, s, id))["begin renamed"])
			return 1
		}},
		// A journal a power cut brought back after a run's end (the
		// removal is not synced): the snapshot absorbed it whole.
		{"a run resuming a finished one whose journal came back", func(t *testing.T, s *Store, id string) int {
			l := mustLock(t, s, id)
			j := mustBegin(t, s, l, checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
			record(t, j, complete("draft", "out-draft")...)
			old, err := os.ReadFile(s.journalPath(id))
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			l.Release()
			if err := os.WriteFile(s.journalPath(id), old, 0o600); err != nil {
				t.Fatal(err)
			}
			return 1
		}},
		// What a kill in an older teamrun's Begin left beside the snapshot
		// of a run that had ended: an empty journal.
		{"a run resuming a finished one beside an empty journal", func(t *testing.T, s *Store, id string) int {
			runSession(t, s, id, seed(), 1)
			if err := os.WriteFile(s.journalPath(id), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return 1
		}},
	} {
		for _, continued := range []bool{false, true} {
			name := tt.name + "/loaded"
			if continued {
				name = tt.name + "/continued"
			}
			t.Run(name, func(t *testing.T) {
				crashWindowsOfBegin(t, tt.before, continued)
			})
		}
	}
}

// crashWindowsOfBegin is a case of TestCrashWindowsOfBegin: the run under
// test begins the session as loaded (session decide does), or continued
// from it (run --continue does: checkpoint.Continue).
func crashWindowsOfBegin(t *testing.T, before func(t *testing.T, s *Store, id string) int, continued bool) {
	s := newStore(t)
	const id = "win"
	done := before(t, s, id)
	sess := checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0)
	if done >= 0 {
		sess = load(t, s, id)
		if continued {
			sess = checkpoint.Continue(sess, checkpoint.Restore(sess, seed(), fp(seed()), checkpoint.ReuseStrict), spec.Sequential, seed(), fp(seed()), t0)
		}
	}
	images := beginImages(t, s, sess)
	for _, step := range beginSteps {
		img := images[step]
		if open, _ := snapshotOpen(img.Path(id)); open {
			data, err := os.ReadFile(img.journalPath(id))
			if _, payloads, jerr := journalRecords(data); err != nil || jerr != nil || len(payloads) == 0 {
				t.Errorf("killed at %q: beside a snapshot that records on in it, the journal has no header (%d bytes): %v, %v", step, len(data), err, jerr)
			}
		}
		next := checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0)
		want := 0
		if _, err := img.Load(bg, id); done < 0 && step != "begun" {
			// No snapshot yet: no session, and a run of it starts anew.
			if !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("killed at %q: Load: %v, want no session", step, err)
			}
		} else {
			want = max(done, 0)
			next = loadDone(t, img, id, want)
			if tk, _ := next.Task("draft"); want > 0 && tk.Result != "out-draft" {
				t.Fatalf("killed at %q: draft lost its acknowledged result: %+v", step, tk)
			}
			if e, err := img.Head(bg, id); err != nil || e.Err != nil {
				t.Errorf("killed at %q: Head: %v, %v", step, e.Err, err)
			}
		}
		// A next run goes on from there, and loses nothing.
		j := mustBegin(t, img, mustLock(t, img, id), next)
		record(t, j, complete("polish", "out-polish")...)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		loadDone(t, img, id, want+1)
	}
}

// load is s.Load that must succeed.
func load(t *testing.T, s *Store, id string) *checkpoint.Session {
	t.Helper()
	sess, err := s.Load(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// snapshotOpen says whether the snapshot at path says the run records on
// in its journal; a missing snapshot does not.
func snapshotOpen(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var h struct {
		Open bool `json:"journal_open"`
	}
	return h.Open, json.Unmarshal(data, &h)
}

// adopt makes s's folder hold the files img's holds, as a store a kill
// left so.
func adopt(t *testing.T, s, img *Store) {
	t.Helper()
	for _, dir := range []string{s.dir, img.dir} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(s.dir, e.Name())
			if dir == s.dir {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			data, err := os.ReadFile(filepath.Join(img.dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}
