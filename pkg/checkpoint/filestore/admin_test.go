package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// adminSession writes a finished session of two tasks (a command task and
// a human one) through the public API, as a run would.
func adminSession(t testing.TB, s *Store, id, specPath string) {
	t.Helper()
	ds := []spec.TaskDef{
		{ID: 0, Name: "build", Agent: "sh", Description: "build it", Key: "k0", AgentKey: "a0"},
		{ID: 1, Name: "approve", Agent: spec.HumanAgent, Description: "ship?", Context: []string{"build"}, Key: "k1", AgentKey: "a1"},
	}
	sess := checkpoint.NewSession(id, specPath, "team", spec.Sequential, ds, spec.FingerprintOf(ds), time.Now())
	l, err := s.Lock(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	j, err := s.Begin(bg, l, sess)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "build", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// age sets the file times of a session's files to d ago.
func age(t *testing.T, s *Store, id string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	for _, p := range []string{s.Path(id), s.journalPath(id)} {
		if err := os.Chtimes(p, when, when); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

func newAdmin(t *testing.T) (*Store, *Project, string) {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return s, OpenProject(dir), filepath.Join(dir, "agents.yaml")
}

func TestHeld(t *testing.T) {
	s, _, specPath := newAdmin(t)
	adminSession(t, s, "a", specPath)
	if h, err := s.Held(bg, "never-locked"); h != nil || err != nil {
		t.Fatalf("Held(no lock file) = %v, %v", h, err)
	}
	if h, err := s.Held(bg, "a"); h != nil || err != nil {
		t.Fatalf("Held(released) = %v, %v", h, err)
	}
	l, err := s.Lock(context.Background(), "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Held(bg, "a")
	if err != nil || h == nil || h.PID != os.Getpid() {
		t.Fatalf("Held(locked) = %+v, %v; want the holder with our pid", h, err)
	}
	l.Release()
	// The probe must not have taken the lock for good.
	if l, err := s.Lock(context.Background(), "a", 0); err != nil {
		t.Fatalf("lock after probes: %v", err)
	} else {
		l.Release()
	}
	if _, err := s.Held(bg, "../x"); !errors.Is(err, checkpoint.ErrBadID) {
		t.Fatalf("Held(bad id) = %v, want ErrBadID", err)
	}
}

func TestResolveActive(t *testing.T) {
	s, p, specPath := newAdmin(t)
	other := filepath.Join(filepath.Dir(specPath), "other.yaml")
	elsewhere := filepath.Join(t.TempDir(), "agents.yaml")
	adminSession(t, s, "old", specPath)
	adminSession(t, s, "new", specPath)
	adminSession(t, s, "neighbour", other)
	adminSession(t, s, "far", elsewhere)
	age(t, s, "old", time.Hour)

	// Entries decides recency by file time, but latestOf by updated_at:
	// make new's updated_at the latest by writing it last (it was).
	tests := []struct {
		name, active, spec string
		wantID             string
		missing, adopted   bool
	}{
		{name: "no state.json", active: "", spec: specPath},
		{name: "present", active: "old", spec: specPath, wantID: "old"},
		{name: "missing, same spec adopted", active: "gone", spec: specPath, wantID: "new", missing: true, adopted: true},
		{name: "missing, no spec: any spec of the folder", active: "gone", spec: "", wantID: "neighbour", missing: true, adopted: true},
		{name: "missing, nothing to adopt", active: "gone", spec: filepath.Join(t.TempDir(), "x.yaml"), missing: true},
	}
	audits := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.active != "" {
				if err := p.SetActive(bg, tc.active); err != nil {
					t.Fatal(err)
				}
			}
			a, err := checkpoint.ResolveActive(bg, s, p, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != tc.wantID || a.Missing != tc.missing || a.Adopted != tc.adopted || a.Named != tc.active {
				t.Fatalf("got %+v, want id %q missing %v adopted %v", a, tc.wantID, tc.missing, tc.adopted)
			}
			recs, err := p.AuditRecords(bg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.missing {
				audits++
				if len(a.Notes) != 2 || !strings.Contains(a.Notes[0], "gone, which is missing from "+s.Dir()) {
					t.Fatalf("notes %q", a.Notes)
				}
				last := recs[len(recs)-1]
				if last.Event != checkpoint.EventMissing || last.Session != "gone" || last.Store != s.Dir() {
					t.Fatalf("audit record %+v", last)
				}
			} else if len(a.Notes) != 0 {
				t.Fatalf("unexpected notes %q", a.Notes)
			}
			if len(recs) != audits {
				t.Fatalf("%d audit records, want %d", len(recs), audits)
			}
		})
	}
}

func TestAbsentSessions(t *testing.T) {
	s, _, specPath := newAdmin(t)
	adminSession(t, s, "here", specPath)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(ev, id string, min int) checkpoint.AuditRecord {
		return checkpoint.AuditRecord{Time: t0.Add(time.Duration(min) * time.Minute), Event: ev, Session: id, Store: "/a/sessions", PID: 7, User: "u"}
	}
	recs := []checkpoint.AuditRecord{
		rec(checkpoint.EventResumed, "elsewhere", 0), // the creation was logged before the log was rotated
		rec(checkpoint.EventCreated, "here", 1),
		rec(checkpoint.EventCreated, "elsewhere2", 2),
		rec(checkpoint.EventResumed, "elsewhere", 3),
		rec(checkpoint.EventCreated, "deleted", 4),
		rec(checkpoint.EventDeleted, "deleted", 5),
		rec(checkpoint.EventMissing, "deleted", 5), // state.json still named it
		rec(checkpoint.EventCreated, "pruned", 6),
		rec(checkpoint.EventPruned, "pruned", 7),
		rec(checkpoint.EventMissing, "", 8),
		rec(checkpoint.EventCreated, "../bad", 9),
		rec(checkpoint.EventCreated, "elsewhere", 10),
		// A run that lost its lock ends after its session was deleted
		// (or pruned): its end record does not bring the session back.
		rec(checkpoint.EventCreated, "stale", 11),
		rec(checkpoint.EventDeleted, "stale", 12),
		rec(checkpoint.EventFailed, "stale", 13),
		rec(checkpoint.EventCreated, "stale2", 11),
		rec(checkpoint.EventPruned, "stale2", 12),
		rec(checkpoint.EventResumed, "stale2", 13),
		rec(checkpoint.EventHalted, "stale2", 14),
		// Created again after its deletion: that one is missing.
		rec(checkpoint.EventCreated, "again", 14),
		rec(checkpoint.EventDeleted, "again", 15),
		rec(checkpoint.EventCreated, "again", 16),
	}
	got, err := checkpoint.AbsentSessions(bg, s, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// With the ids known from Entries, the answer is the same.
	entries, err := s.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.ID] = true
	}
	if got2, err := checkpoint.AbsentSessions(bg, s, recs, have); err != nil || len(got2) != len(got) || got2[0].ID != got[0].ID {
		t.Fatalf("with have: %+v, %v; without: %+v", got2, err, got)
	}
	if len(got) != 3 || got[0].ID != "elsewhere" || got[1].ID != "elsewhere2" || got[2].ID != "again" {
		t.Fatalf("got %+v", got)
	}
	if got[0].Created.Event != checkpoint.EventCreated || !got[0].Created.Time.Equal(t0.Add(10*time.Minute)) || !got[0].Last.Time.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("elsewhere: created %+v last %+v", got[0].Created, got[0].Last)
	}
	if d := got[1].Describe(); d != "audit.log: created elsewhere2 at 2026-01-02T03:06:05Z in /a/sessions by u (pid 7)" {
		t.Fatalf("Describe: %s", d)
	}
	if a, ok, err := checkpoint.FindAbsent(bg, s, recs, "elsewhere2"); !ok || err != nil || a.ID != "elsewhere2" {
		t.Fatalf("FindAbsent(bg, elsewhere2) = %+v %v %v", a, ok, err)
	}
	if !got[2].Created.Time.Equal(t0.Add(16 * time.Minute)) {
		t.Fatalf("again: created %+v, want the creation after its deletion", got[2].Created)
	}
	for _, id := range []string{"here", "deleted", "never", "stale", "stale2"} {
		if _, ok, err := checkpoint.FindAbsent(bg, s, recs, id); ok || err != nil {
			t.Fatalf("FindAbsent(bg, %s) = %v, %v; want not absent", id, ok, err)
		}
	}
}

func TestPrune(t *testing.T) {
	for _, dry := range []bool{false, true} {
		t.Run(map[bool]string{false: "real", true: "dry-run"}[dry], func(t *testing.T) {
			s, p, specPath := newAdmin(t)
			for _, id := range []string{"active", "locked", "old1", "old2", "fresh", "corrupt"} {
				adminSession(t, s, id, specPath)
			}
			if err := os.WriteFile(s.Path("corrupt"), []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"active", "locked", "old1", "old2", "corrupt"} {
				age(t, s, id, 40*24*time.Hour)
			}
			age(t, s, "fresh", 20*24*time.Hour)
			l, err := s.Lock(context.Background(), "locked", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()

			stale, newer, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: time.Now().Add(-30 * 24 * time.Hour), Active: "active", DryRun: dry})
			if err != nil {
				t.Fatal(err)
			}
			if newer != 1 {
				t.Errorf("newer = %d, want 1 (fresh)", newer)
			}
			got := map[string]string{}
			for _, st := range stale {
				r := st.Reason
				if st.Removed {
					r = "removed"
				}
				got[st.ID] = r
			}
			want := map[string]string{"active": "the project's active session", "old1": "removed", "old2": "removed"}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: %q, want %q", id, got[id], w)
				}
			}
			if !strings.HasPrefix(got["locked"], "held by a run (pid ") {
				t.Errorf("locked: %q", got["locked"])
			}
			if !strings.HasPrefix(got["corrupt"], "unreadable") {
				t.Errorf("corrupt: %q", got["corrupt"])
			}
			if len(got) != 5 {
				t.Errorf("stale = %v", got)
			}
			recs, err := p.AuditRecords(bg)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"old1", "old2"} {
				ok, _ := s.Exists(bg, id)
				if ok != dry {
					t.Errorf("%s exists = %v after prune (dry run %v)", id, ok, dry)
				}
			}
			for _, id := range []string{"active", "locked", "fresh", "corrupt"} {
				if ok, _ := s.Exists(bg, id); !ok {
					t.Errorf("%s was removed", id)
				}
			}
			wantAudits := 2
			if dry {
				wantAudits = 0
			}
			if len(recs) != wantAudits {
				t.Fatalf("audit records %+v, want %d", recs, wantAudits)
			}
			for _, r := range recs {
				if r.Event != checkpoint.EventPruned || r.Store != s.Dir() {
					t.Errorf("audit %+v", r)
				}
			}
			if _, err := os.Stat(s.journalPath("old1")); !dry && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("old1's journal left behind: %v", err)
			}
		})
	}
}

// Prune run in one project keeps another project's active session, which
// it reads from that project's state.json: one it cannot read keeps the
// session, saying which file and what to do; no state.json at all is no
// active session there.
func TestPruneOtherProjectState(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state func(t *testing.T, path string) // makes the other project's state.json
		kept  []string                        // what the reason says; nil: removed
	}{
		{"cut short", writeState(`{"active_session":"s"`), []string{"its state.json cannot be read", "state.json", "the JSON ends early", "fix it or remove it"}},
		{"a folder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"its state.json cannot be read", "state.json"}},
		{"names it", writeState(`{"active_session":"s"}`), []string{"the active session of the project in "}},
		{"names another", writeState(`{"active_session":"other"}`), nil},
		{"none", func(*testing.T, string) {}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, here, _ := newAdmin(t)
			there := filepath.Join(t.TempDir(), "there")
			if err := os.MkdirAll(filepath.Join(there, ".teamrun"), 0o700); err != nil {
				t.Fatal(err)
			}
			adminSession(t, s, "s", filepath.Join(there, "agents.yaml"))
			age(t, s, "s", time.Hour)
			state := filepath.Join(there, ".teamrun", "state.json")
			tc.state(t, state)
			for _, dry := range []bool{true, false} {
				stale, _, err := checkpoint.Prune(bg, s, here, checkpoint.PruneOptions{Before: time.Now(), DryRun: dry})
				if err != nil || len(stale) != 1 {
					t.Fatalf("dry run %v: Prune = %+v, %v", dry, stale, err)
				}
				st := stale[0]
				if tc.kept == nil {
					if !st.Removed {
						t.Errorf("dry run %v: kept (%s), want removed", dry, st.Reason)
					}
					continue
				}
				if st.Removed {
					t.Fatalf("dry run %v: removed, want kept", dry)
				}
				for _, w := range tc.kept {
					if !strings.Contains(st.Reason, w) {
						t.Errorf("dry run %v: reason %q, want it to say %q", dry, st.Reason, w)
					}
				}
				if strings.Contains(tc.kept[0], "cannot be read") && !strings.Contains(st.Reason, state) {
					t.Errorf("dry run %v: reason %q does not name %s", dry, st.Reason, state)
				}
			}
			if ok, _ := s.Exists(bg, "s"); ok != (tc.kept != nil) {
				t.Errorf("exists after prune: %v, want %v", ok, tc.kept != nil)
			}
		})
	}
}

// writeState writes body at a state.json's path.
func writeState(body string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHumanTask(t *testing.T) {
	s, _, specPath := newAdmin(t)
	adminSession(t, s, "a", specPath)
	sess, err := s.Load(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ task, want string }{
		{"approve", ""},
		{"build", `task "build" of session a is done by agent "sh", not by a human`},
		{"nope", `session a has no task "nope"; its human tasks: approve`},
		{"aprove", `session a has no task "aprove"; its human tasks: approve (did you mean "approve"?)`},
	} {
		err := checkpoint.HumanTask(sess, tc.task)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("HumanTask(%s) = %v, want %q", tc.task, err, tc.want)
		}
	}
}

// Entries reads the store concurrently; it must say what List says.
func TestHeadMatchesList(t *testing.T) {
	s, _, specPath := newAdmin(t)
	for _, id := range []string{"c", "a", "b"} {
		adminSession(t, s, id, specPath)
	}
	// A session whose journal holds records not folded into the snapshot.
	ds := []spec.TaskDef{{ID: 0, Name: "x", Agent: "sh", Description: "x", Key: "k"}, {ID: 1, Name: "y", Agent: "sh", Description: "y", Key: "k2"}}
	sess := checkpoint.NewSession("journaled", specPath, "team", spec.Sequential, ds, spec.FingerprintOf(ds), time.Now())
	l, err := s.Lock(context.Background(), "journaled", 0)
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Begin(bg, l, sess)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "x", Result: "done"}); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := os.WriteFile(s.Path("corrupt"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), ".hidden.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := s.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 {
		t.Fatalf("List has %d entries, want 5", len(entries))
	}
	for i, e := range entries {
		head, err := s.Head(bg, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if (e.Err == nil) != (head.Err == nil) {
			t.Fatalf("%s: List's Err %v vs Head's %v", e.ID, e.Err, head.Err)
		}
		e.Err, head.Err = nil, nil
		if head != e {
			t.Errorf("List[%d] = %+v, Head = %+v", i, e, head)
		}
		if e.Touched.IsZero() {
			t.Errorf("%s: no file time", e.ID)
		}
	}
	if entries[4].ID != "journaled" || entries[4].Done != 1 || entries[4].Total != 2 {
		t.Errorf("journaled: %+v", entries[4])
	}
}

// Held only reads the lock file: on a store this user cannot write (a
// read-only mount, a store shared read-only) it still answers, and says
// nothing failed. Root writes any file whatever its mode: there the lock
// file is made immutable (chattr +i), which refuses root's writes too.
func TestHeldReadOnly(t *testing.T) {
	s, _, specPath := newAdmin(t)
	adminSession(t, s, "a", specPath)
	held, err := s.Lock(bg, "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	for _, id := range []string{"a", "b"} {
		path := s.lockPath(id)
		if os.Geteuid() == 0 {
			if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
				t.Skipf("root, and no immutable file here: %v %s", err, out)
			}
			t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
		} else if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			f.Close()
			t.Fatalf("%s still opens for writing: the test proves nothing", path)
		}
	}
	if h, err := s.Held(bg, "a"); h != nil || err != nil {
		t.Errorf("Held(released, read-only) = %+v, %v; want not held, no error", h, err)
	}
	if h, err := s.Held(bg, "b"); err != nil || h == nil || h.PID != os.Getpid() {
		t.Errorf("Held(held, read-only) = %+v, %v; want the holder with our pid", h, err)
	}
}

// Held trusts a note naming a process gone from this host, without probing;
// a note naming a live process is checked with a probe.
func TestHeldNote(t *testing.T) {
	s, _, specPath := newAdmin(t)
	adminSession(t, s, "a", specPath)
	host, _ := os.Hostname()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	dead := cmd.Process.Pid
	f, err := os.OpenFile(s.lockPath("a"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The flock is held (by f), but the note says its holder is dead: an
	// impossible state that shows Held did not probe.
	if ok, err := flock(f); !ok || err != nil {
		t.Fatal(ok, err)
	}
	write := func(h checkpoint.Holder) {
		b, _ := json.Marshal(h)
		if err := f.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	write(checkpoint.Holder{PID: dead, Host: host})
	if h, err := s.Held(bg, "a"); h != nil || err != nil {
		t.Fatalf("dead holder: Held = %+v, %v; want not held, unprobed", h, err)
	}
	write(checkpoint.Holder{PID: os.Getpid(), Host: host})
	if h, err := s.Held(bg, "a"); err != nil || h == nil || h.PID != os.Getpid() {
		t.Fatalf("live holder: Held = %+v, %v; want held", h, err)
	}
	write(checkpoint.Holder{PID: dead, Host: host + "-elsewhere"})
	if h, err := s.Held(bg, "a"); err != nil || h == nil {
		t.Fatalf("holder on another host: Held = %+v, %v; want probed and held", h, err)
	}
}

// Deleting a session that is not there writes nothing: its lock file was
// made and removed again (the folder changed on an exit 2; a read-only
// store said "cannot create nosuch.lock").
func TestDeleteMissingWritesNothing(t *testing.T) {
	s := newStore(t)
	if err := s.makeDir(); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(bg, "nosuch"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Delete: %v, want ErrNotFound", err)
	}
	if after, err := os.Stat(s.Dir()); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the store's folder changed: %v -> %v (%v)", before.ModTime(), after.ModTime(), err)
	}
}

// What a session whose file is gone left beside it — its journal (a
// delete cut short between its two removals), its stored results, logs
// or scratch, with or without a lock — is listed with what it is, and
// prune removes it once older than the cut-off, saying what it removed in
// its audit record; a lock alone stays a lock, a folder named <id>.lock
// is not teamrun's, and what is younger stays.
func TestPruneLeftovers(t *testing.T) {
	s, p, specPath := newAdmin(t)
	adminSession(t, s, "kept", specPath)
	old := time.Now().Add(-40 * 24 * time.Hour)
	for _, f := range []struct {
		name   string
		folder bool
	}{
		{"gone.journal", false}, {"gone.lock", false}, {"gone.logs", true},
		{"results.blobs", true},
		{"lockonly.lock", false},
		{"notours.lock", true},
		{"young.journal", false},
		{"kept.logs", true},
	} {
		path := filepath.Join(s.Dir(), f.name)
		var err error
		if f.folder {
			err = os.Mkdir(path, 0o700)
		} else {
			err = os.WriteFile(path, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(f.name, "young") {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	orphans, err := s.OrphanLocks(bg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range orphans {
		got[o.ID] = checkpoint.Leftovers(o.Left)
	}
	want := map[string]string{"gone": "the journal, logs and lock", "results": "the stored results", "lockonly": "", "young": "the journal"}
	if !maps.Equal(got, want) {
		t.Errorf("OrphanLocks: %q; want %q", got, want)
	}
	stale, _, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: time.Now().Add(-30 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, st := range stale {
		removed[st.ID] = st.Removed && st.Lock
	}
	if !maps.Equal(removed, map[string]bool{"gone": true, "results": true, "lockonly": true}) {
		t.Errorf("prune removed %v; want gone, results and lockonly", removed)
	}
	entries, _ := os.ReadDir(s.Dir())
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"kept.json", "kept.lock", "kept.logs", "notours.lock", "young.journal"}) {
		t.Errorf("left in the store: %v", left)
	}
	recs, err := p.AuditRecords(bg)
	if err != nil {
		t.Fatal(err)
	}
	details := map[string]string{}
	for _, r := range recs {
		details[r.Session] = r.Detail
	}
	if !strings.HasPrefix(details["gone"], "the journal, logs and lock of a session whose file is gone (a run or a delete cut short), last written ") ||
		!strings.HasPrefix(details["lockonly"], "a lock with no session (its run ended before it wrote the session)") {
		t.Errorf("audit details: %q", details)
	}
}
