package filestore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"nightly-2026-11-30", true},
		{"A.b_c-9", true},
		{strings.Repeat("x", 128), true},
		{strings.Repeat("x", 129), false},
		{"", false},
		{".hidden", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/b", false},
		{"a\\b", false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
		{"/abs", false},
	}
	for _, tc := range tests {
		err := checkpoint.ValidateID(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, checkpoint.ErrBadID) || !strings.Contains(err.Error(), checkpoint.IDRule)) {
			t.Errorf("ValidateID(%q): %v does not wrap ErrBadID with the rule", tc.id, err)
		}
	}
}

// Whatever the id, nothing outside the store is read, written or removed.
func TestBadIDsTouchNothingOutside(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	// Bait files where a careless join would land.
	for _, p := range []string{"x.json", "x.lock", "x.journal", "home/x.json", "home/sessions/.hidden.json", "b.json"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(`{"format_version":1,"session_id":"x"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshotTree(t, root)
	ids := []string{"../x", "../../x", ".hidden", "a/b", "", strings.Repeat("y", 129), "/tmp/x", "..", "x/../../x"}
	ctx := context.Background()
	for _, id := range ids {
		if _, err := s.Exists(bg, id); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Exists(%q): %v", id, err)
		}
		if _, err := s.Load(bg, id); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Load(%q): %v", id, err)
		}
		if _, err := s.Lock(ctx, id, 0); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Lock(%q): %v", id, err)
		}
		if err := s.Delete(bg, id); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Delete(%q): %v", id, err)
		}
		if err := checkpoint.Decide(bg, s, id, "t", "v"); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Decide(%q): %v", id, err)
		}
		if _, err := s.Begin(bg, &FileLock{store: s, id: id}, &checkpoint.Session{ID: id}); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Begin(%q): %v", id, err)
		}
		if err := OpenProject(root).SetActive(bg, id); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("SetActive(%q): %v", id, err)
		}
	}
	if after := snapshotTree(t, root); !equalTrees(before, after) {
		t.Fatalf("files changed:\nbefore %v\nafter  %v", before, after)
	}
}

func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		} else {
			m[p] = "<dir>"
		}
		return nil
	})
	return m
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^(.*)-(\d{8}-\d{6})-[0-9a-f]{4}$`)
	tests := []struct{ name, prefix string }{
		{"release-notes", "release-notes"},
		{"my team/ü", "my-team"},
		{"", "session"},
		{"...dots", "dots"},
		// Never a leading '-': the commands teamrun prints would read the
		// id as a flag.
		{"отчёт", "session"},
		{"---", "session"},
		{"-x- y", "x-y"},
		{strings.Repeat("n", 200), strings.Repeat("n", 107)},
	}
	for _, tc := range tests {
		id := checkpoint.NewID(tc.name, t0)
		if err := checkpoint.ValidateID(id); err != nil {
			t.Errorf("NewID(%q) = %q: %v", tc.name, id, err)
		}
		m := re.FindStringSubmatch(id)
		if m == nil || m[1] != tc.prefix || m[2] != "20261130-010203" {
			t.Errorf("NewID(%q) = %q, want prefix %q and the time", tc.name, id, tc.prefix)
		}
	}
	// Two ids of one name and second differ (2 random bytes: 1 in 65,536
	// pairs collide, so try a few).
	seen := map[string]bool{}
	for range 4 {
		seen[checkpoint.NewID("a", t0)] = true
	}
	if len(seen) < 2 {
		t.Error("NewID is not random")
	}
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestPermissions(t *testing.T) {
	home := filepath.Join(t.TempDir(), "store")
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if s.Home() != home {
		t.Errorf("Home() = %q", s.Home())
	}
	l := mustLock(t, s, "p")
	j := mustBegin(t, s, l, checkpoint.NewSession("p", "a.yaml", "team", spec.Sequential, seed(), fp(seed()), t0))
	record(t, j, complete("draft", "x")...)
	for p, want := range map[string]os.FileMode{
		home: 0o700, s.Dir(): 0o700, s.Path("p"): 0o600, s.journalPath("p"): 0o600, s.lockPath("p"): 0o600,
	} {
		if got := mode(t, p); got != want {
			t.Errorf("%s: mode %04o, want %04o", p, got, want)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, s.Path("p")); got != 0o600 {
		t.Errorf("after compaction: mode %04o", got)
	}
}

func TestOpenError(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	s, err := Open(filepath.Join(f, "home"))
	if err != nil {
		t.Fatalf("Open writes nothing, so it cannot fail here: %v", err)
	}
	// The first write says what is wrong with the path.
	_, err = s.Lock(context.Background(), "x", 0)
	if err == nil || !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), f) {
		t.Fatalf("Lock under a file: %v", err)
	}
}

// The JSON payload of DESIGN §5, field by field.
func TestSessionFileShape(t *testing.T) {
	s := newStore(t)
	sess := runSession(t, s, "shape", seed(), 2)
	_ = sess
	b, err := os.ReadFile(s.Path("shape"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := jsonUnmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format_version", "session_id", "spec_path", "created_at", "updated_at", "checkpoint", "team"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	if _, ok := m["status"]; ok {
		t.Error("a session has no status field")
	}
	cp := m["checkpoint"].(map[string]any)
	for _, k := range []string{"current_task", "decisions", "memory_summary", "timestamp"} {
		if _, ok := cp[k]; !ok {
			t.Errorf("no checkpoint.%s", k)
		}
	}
	team := m["team"].(map[string]any)
	for _, k := range []string{"state", "agents", "process", "tasks", "tasks_fingerprint"} {
		if _, ok := team[k]; !ok {
			t.Errorf("no team.%s", k)
		}
	}
	task := team["tasks"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "name", "agent", "description", "expected_output", "key", "agent_key", "context",
		"status", "result", "retry_count", "attempts", "variables", "started_at", "finished_at"} {
		if _, ok := task[k]; !ok {
			t.Errorf("no task.%s", k)
		}
	}
	if task["status"] != "completed" || task["result"] != "out-draft" {
		t.Errorf("task = %v", task)
	}
}

func TestRoundTripBytes(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "bytes")
	j := mustBegin(t, s, l, checkpoint.NewSession("bytes", "a.yaml", "team", spec.Sequential, seed(), fp(seed()), t0))
	results := map[string]string{
		"draft":  "ok \xff\xfe binary \x00 <b>&</b>",
		"polish": "plain UTF-8 ✓ with \"quotes\" and <html>",
	}
	record(t, j,
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "draft"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "draft", Result: results["draft"], Variables: map[string]any{"n": 3, "big": int64(1) << 60, "f": 1.5, "s": "\xc3\x28"},
			State: map[string]any{"words": "\xff", "list": []any{"a", 2}}, Usage: &checkpoint.Usage{TotalTokens: 42}},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "polish"},
		checkpoint.Record{Kind: checkpoint.TaskFailed, Task: "polish", Error: "stderr: \xfe oops", RetryCount: 1},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "polish"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "polish", Result: results["polish"]},
		checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "polish", Agent: "writer", Messages: []checkpoint.Message{{Role: "assistant", Content: "\xff raw", Task: "draft"}}},
	)
	check := func(when string, sess *checkpoint.Session) {
		t.Helper()
		for name, want := range results {
			tr, ok := sess.Task(name)
			if !ok || tr.Result != want || tr.Status != checkpoint.StatusCompleted {
				t.Errorf("%s: %s = %q (%v), want %q", when, name, tr.Result, tr.Status, want)
			}
		}
		d, _ := sess.Task("draft")
		if d.Variables["n"] != int64(3) || d.Variables["big"] != int64(1)<<60 || d.Variables["f"] != 1.5 || d.Variables["s"] != "\xc3\x28" {
			t.Errorf("%s: variables %#v", when, d.Variables)
		}
		if d.Usage == nil || d.Usage.TotalTokens != 42 {
			t.Errorf("%s: usage %+v", when, d.Usage)
		}
		if sess.Team.State["words"] != "\xff" {
			t.Errorf("%s: state %#v", when, sess.Team.State)
		}
		p, _ := sess.Task("polish")
		if p.Attempts != 2 || p.RetryCount != 1 || p.Error != "" {
			t.Errorf("%s: polish %+v", when, p)
		}
		if m := sess.Memory["writer"]; len(m) != 1 || m[0].Content != "\xff raw" || sess.Checkpoint.MemorySummary["writer"] != 1 {
			t.Errorf("%s: memory %+v", when, sess.Memory)
		}
		if sess.Summary.Done != 2 || sess.Summary.Total != 2 {
			t.Errorf("%s: summary %+v", when, sess.Summary)
		}
	}
	// Before compaction the records come from the journal ...
	sess, err := s.Load(bg, "bytes")
	if err != nil {
		t.Fatal(err)
	}
	check("journal", sess)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.journalPath("bytes")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("journal left after Close: %v", err)
	}
	// ... after it, from the snapshot.
	sess, err = s.Load(bg, "bytes")
	if err != nil {
		t.Fatal(err)
	}
	check("snapshot", sess)
	raw, _ := os.ReadFile(s.Path("bytes"))
	if !strings.Contains(string(raw), `"$base64"`) {
		t.Error("non-UTF-8 result not stored with the base64 marker")
	}
	if strings.Contains(string(raw), "\\u003c") {
		t.Error("results are HTML-escaped")
	}
}

func TestVariablesDegrade(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "deg")
	j := mustBegin(t, s, l, checkpoint.NewSession("deg", "a.yaml", "team", spec.Sequential, seed(), fp(seed()), t0))
	tests := []struct {
		name string
		vars map[string]any
		ok   bool
	}{
		{"nan", map[string]any{"x": math.NaN(), "y": 1}, false},
		{"inf", map[string]any{"x": math.Inf(-1)}, false},
		{"yaml map", map[string]any{"x": map[any]any{1: "one"}}, false},
		{"nested nan", map[string]any{"x": []any{map[string]any{"z": math.Inf(1)}}}, false},
		{"fine", map[string]any{"x": []any{1, "two", map[string]any{"three": true}}, "n": nil}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "draft"},
				checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "draft", Result: "kept", Variables: tc.vars, State: map[string]any{"bad": math.NaN(), "good": "g"}})
			warns := j.Warnings()
			sess, err := s.Load(bg, "deg")
			if err != nil {
				t.Fatal(err)
			}
			d, _ := sess.Task("draft")
			if d.Result != "kept" {
				t.Errorf("result lost: %q", d.Result)
			}
			if tc.ok {
				if len(d.Variables) != len(tc.vars) || d.Variables["x"] == nil {
					t.Errorf("variables = %#v", d.Variables)
				}
			} else {
				if len(d.Variables) != 0 || d.Variables == nil {
					t.Errorf("variables = %#v, want {}", d.Variables)
				}
				if !containsAll(warns, `task "draft"`, "stored as {}") {
					t.Errorf("warnings %q", warns)
				}
			}
			if sess.Team.State["good"] != "g" || len(sess.Team.State["bad"].(map[string]any)) != 0 {
				t.Errorf("state = %#v", sess.Team.State)
			}
			if !containsAll(warns, `shared state "bad"`) {
				t.Errorf("warnings %q", warns)
			}
			// The in-memory view agrees with the disk.
			mem, _ := j.Task("draft")
			if len(mem.Variables) != len(d.Variables) {
				t.Errorf("memory %#v vs disk %#v", mem.Variables, d.Variables)
			}
		})
	}
	// Begin degrades a session's initial state the same way.
	l2 := mustLock(t, s, "deg2")
	sess := checkpoint.NewSession("deg2", "a.yaml", "team", spec.Sequential, seed(), fp(seed()), t0)
	sess.Team.State["topic"] = "Go"
	sess.Team.State["weird"] = map[any]any{true: 1}
	j2 := mustBegin(t, s, l2, sess)
	if w := j2.Warnings(); !containsAll(w, `"weird"`) {
		t.Errorf("Begin warnings %q", w)
	}
	got, err := s.Load(bg, "deg2")
	if err != nil || got.Team.State["topic"] != "Go" {
		t.Fatalf("%v %#v", err, got)
	}
	j.Close()
	j2.Close()
}

func containsAll(list []string, parts ...string) bool {
	all := strings.Join(list, "\n")
	for _, p := range parts {
		if !strings.Contains(all, p) {
			return false
		}
	}
	return true
}

func TestLoadErrors(t *testing.T) {
	s := newStore(t)
	if _, err := s.Load(bg, "nope"); !errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), s.Dir()) {
		t.Errorf("missing: %v", err)
	}
	if ok, err := s.Exists(bg, "nope"); ok || err != nil {
		t.Errorf("Exists: %v %v", ok, err)
	}
	tests := []struct {
		name, snapshot, journal, want string
	}{
		{"not json", "{oops", "", "not a session file"},
		{"empty", "", "", "not a session file"},
		{"trailing", `{"format_version":1,"session_id":"bad"} x`, "", "after the JSON"},
		{"no version", `{"session_id":"bad"}`, "", "format_version"},
		{"other id", `{"format_version":1,"session_id":"other"}`, "", `holds session "other"`},
		{"bad result", `{"format_version":1,"session_id":"bad","team":{"tasks":[{"name":"a","result":{"x":1}}]}}`, "", "team.tasks[0].result: expected a text"},
		{"journal damaged mid-file", `{"format_version":1,"session_id":"bad","journal_epoch":"e"}`,
			string(headerLine("e", 0)) + "00000000 {}\n" + string(frame([]byte(`{"k":"state","at":"2026-01-01T00:00:00Z"}`))), "fails its checksum"},
		{"journal bad record", `{"format_version":1,"session_id":"bad","journal_epoch":"e"}`,
			string(headerLine("e", 0)) + string(frame([]byte(`{"k":"completed","at":"2026-01-01T00:00:00Z"}`))), "completed record without a task"},
		// Not the json package's "cannot unmarshal string into Go struct field".
		{"journal record of another shape", `{"format_version":1,"session_id":"bad","journal_epoch":"e"}`,
			string(headerLine("e", 0)) + string(frame([]byte(`{"k":"completed","task":"a","attempt":"2","at":"2026-01-01T00:00:00Z"}`))), "record 1: attempt: expected a whole number, got the text \"2\""},
		{"journal bad header", `{"format_version":1,"session_id":"bad","journal_epoch":"e"}`, string(frame([]byte(`{"hello":1}`))), "bad header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(s.Path("bad"), []byte(tc.snapshot), 0o600)
			os.Remove(s.journalPath("bad"))
			if tc.journal != "" {
				os.WriteFile(s.journalPath("bad"), []byte(tc.journal), 0o600)
			}
			_, err := s.Load(bg, "bad")
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, checkpoint.ErrStore) {
				t.Fatalf("err = %v, want a CorruptError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad") ||
				!strings.Contains(err.Error(), "left untouched") {
				t.Errorf("err = %v, want it to name the file, say %q and what to do", err, tc.want)
			}
			wantFile := s.Path("bad")
			if tc.journal != "" && strings.HasPrefix(tc.name, "journal") {
				wantFile = s.journalPath("bad")
			}
			if ce.Path != wantFile || !strings.Contains(err.Error(), wantFile) {
				t.Errorf("names %q, want %q", ce.Path, wantFile)
			}
			// Nothing touched it: List reports it, and it is still there as written.
			list, err := s.List(bg)
			if err != nil || len(list) != 1 || list[0].Err == nil {
				t.Errorf("List: %v %+v", err, list)
			}
			if b, _ := os.ReadFile(s.Path("bad")); string(b) != tc.snapshot {
				t.Error("corrupt session was modified")
			}
		})
	}
}

// A journal record of a kind this teamrun does not know, intact (its
// checksum holds), was written by a newer teamrun: Load, List and prune
// say to upgrade, never that the session is corrupt or to delete it (what
// a teamrun from before request_paid said of a journal holding one).
func TestLoadNewerRecordKind(t *testing.T) {
	s, p, _ := newAdmin(t)
	adminSession(t, s, "newer", "/specs/a.yaml")
	sess, err := s.Load(bg, "newer")
	if err != nil {
		t.Fatal(err)
	}
	before := append(headerLine(sess.Epoch, 0), frame([]byte(`{"k":"explode","task":"build","at":"2026-01-01T00:00:00Z"}`))...)
	if err := os.WriteFile(s.journalPath("newer"), before, 0o600); err != nil {
		t.Fatal(err)
	}
	const want = `holds a "explode" record, which this teamrun does not know: a newer teamrun wrote it; upgrade teamrun to read the session (the file was left untouched: do not delete it)`
	_, err = s.Load(bg, "newer")
	var ne *checkpoint.NewerError
	if !errors.As(err, &ne) || !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), "session newer: "+s.journalPath("newer")+" "+want) {
		t.Fatalf("Load = %v; want a NewerError naming the journal, saying to upgrade", err)
	}
	if strings.Contains(err.Error(), "corrupt") || strings.Contains(err.Error(), "session delete") {
		t.Errorf("Load = %v; it is no damage", err)
	}
	list, err := s.List(bg)
	if err != nil || len(list) != 1 || !errors.As(list[0].Err, &ne) {
		t.Errorf("List = %+v, %v; want newer listed with its NewerError", list, err)
	}
	stale, _, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: time.Now().Add(time.Hour)})
	if err != nil || len(stale) != 1 || stale[0].Removed || !strings.Contains(stale[0].Reason, want) || strings.Contains(stale[0].Reason, "session delete") {
		t.Errorf("Prune = %+v, %v; want newer kept, saying to upgrade, not to delete", stale, err)
	}
	if after, _ := os.ReadFile(s.journalPath("newer")); string(after) != string(before) {
		t.Error("the journal was changed")
	}
}

// TestLoadPermissionError: a session file that cannot be read is a store
// error naming the file and what to do, never "corrupt".
func TestLoadPermissionError(t *testing.T) {
	s := newStore(t)
	runSession(t, s, "perm", seed(), 1)
	path, want := s.Path("perm"), "permissions"
	if os.Geteuid() == 0 {
		// root reads any file (so the test does not skip there): a folder
		// where the journal goes cannot be read either, and is said to be
		// one.
		path, want = s.journalPath("perm"), "a folder, not a regular file"
		os.Remove(path)
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
	} else {
		os.Chmod(path, 0)
	}
	_, err := s.Load(bg, "perm")
	var se *checkpoint.StoreError
	if !errors.As(err, &se) || !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v", err)
	}
	var ce *checkpoint.CorruptError
	if errors.As(err, &ce) {
		t.Fatalf("an unreadable file is called corrupt: %v", err)
	}
}

func TestStoreErrorAdvice(t *testing.T) {
	for errno, want := range map[error]string{
		errENOSPC: "disk is full", fs.ErrPermission: "permissions", errors.New("io"): "check the disk",
	} {
		err := storeErr("write", "/s/x.json", &fs.PathError{Op: "write", Path: "/s/x.json", Err: errno})
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "/s/x.json") || !errors.Is(err, checkpoint.ErrStore) {
			t.Errorf("%v: %v", errno, err)
		}
	}
}

// A crash between the snapshot's rename and the journal's restart leaves the
// old journal beside the new snapshot: it must not be applied twice.
func TestStaleJournalIgnored(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "st")
	j := mustBegin(t, s, l, checkpoint.NewSession("st", "a.yaml", "team", spec.Sequential, seed(), fp(seed()), t0))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "draft"}, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: "draft", Error: "x"})
	old, _ := os.ReadFile(s.journalPath("st"))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "draft"}, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "draft", Result: "r"})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.journalPath("st"), old, 0o600)
	sess, err := s.Load(bg, "st")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := sess.Task("draft"); d.Status != checkpoint.StatusCompleted || d.Attempts != 2 {
		t.Fatalf("stale journal applied: %+v", d)
	}
}

func TestCompactionWhenJournalOutgrowsSnapshot(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "big")
	ds := chain12()
	j := mustBegin(t, s, l, checkpoint.NewSession("big", "a.yaml", "team", spec.Sequential, ds, fp(ds), t0))
	epoch := j.Session().Epoch
	res := strings.Repeat("r", 64<<10)
	var compactions int
	for i := 0; i < 40; i++ {
		record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: ds[i%12].Name, Result: res + string(rune('a'+i%26))})
		if j.Session().Epoch != epoch {
			compactions++
			epoch = j.Session().Epoch
		}
	}
	if compactions == 0 {
		t.Fatal("the journal never compacted")
	}
	fi, _ := os.Stat(s.journalPath("big"))
	si, _ := os.Stat(s.Path("big"))
	if fi.Size() > 2*si.Size()+minCompact {
		t.Errorf("journal %d bytes beside a %d-byte snapshot", fi.Size(), si.Size())
	}
	sess, err := s.Load(bg, "big")
	if err != nil {
		t.Fatal(err)
	}
	for i := 28; i < 40; i++ {
		if tr, _ := sess.Task(ds[i%12].Name); tr.Result != res+string(rune('a'+i%26)) {
			t.Fatalf("%s lost its last result", ds[i%12].Name)
		}
	}
	j.Close()
}

func TestListAndSummaries(t *testing.T) {
	s := newStore(t)
	runSession(t, s, "b-done", seed(), 2)
	runSession(t, s, "a-twelve", chain12(), 5)
	// A session in progress: its journal holds records the head does not count yet.
	l := mustLock(t, s, "c-live")
	j := mustBegin(t, s, l, checkpoint.NewSession("c-live", "/p/live.yaml", "team", spec.Sequential, seed(), fp(seed()), t0))
	record(t, j, complete("draft", "x")...)
	os.WriteFile(filepath.Join(s.Dir(), "d-bad.json"), []byte("garbage"), 0o600)
	os.WriteFile(filepath.Join(s.Dir(), ".tmp.json"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), []byte("x"), 0o600)

	list, err := s.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	if want := []string{"a-twelve", "b-done", "c-live", "d-bad"}; !sort.StringsAreSorted(ids) || strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	want := map[string][2]int{"a-twelve": {5, 12}, "b-done": {2, 2}, "c-live": {1, 2}}
	for _, x := range list {
		if x.ID == "d-bad" {
			if x.Err == nil {
				t.Error("corrupt session listed without error")
			}
			continue
		}
		if x.Err != nil || [2]int{x.Done, x.Total} != want[x.ID] || x.SpecPath == "" || x.UpdatedAt.IsZero() {
			t.Errorf("%+v, want done/total %v", x, want[x.ID])
		}
	}
	j.Close()
}

func TestDelete(t *testing.T) {
	s := newStore(t)
	runSession(t, s, "del", seed(), 1)
	l := mustLock(t, s, "del")
	if err := s.Delete(bg, "del"); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("Delete while locked: %v", err)
	}
	l.Release()
	// Leave a journal and a temp file behind as a crash would.
	os.WriteFile(s.journalPath("del"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(s.Dir(), ".del.json.tmp-123"), []byte("x"), 0o600)
	runSession(t, s, "keep", seed(), 1)
	if err := s.Delete(bg, "del"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if strings.Contains(e.Name(), "del") {
			t.Errorf("%s left behind", e.Name())
		}
	}
	if ok, _ := s.Exists(bg, "keep"); !ok {
		t.Error("Delete removed another session")
	}
	if err := s.Delete(bg, "del"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	// A lock taken on the deleted lock file's old inode is not a lock.
	if l, err := s.Lock(context.Background(), "del", 0); err != nil {
		t.Fatal(err)
	} else {
		l.Release()
	}
}

func TestLockInProcess(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "lk")
	_, err := s.Lock(context.Background(), "lk", 0)
	var he *checkpoint.HeldError
	if !errors.As(err, &he) || !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("second Lock: %v", err)
	}
	host, _ := os.Hostname()
	if he.PID != os.Getpid() || he.Host != host || he.Started.IsZero() {
		t.Errorf("holder %+v", he)
	}
	for _, part := range []string{"lk", "pid", host, "--wait"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("%q lacks %q", err, part)
		}
	}
	// Waiting: the lock comes free while we wait.
	go func() { time.Sleep(50 * time.Millisecond); l.Release() }()
	l2, err := s.Lock(context.Background(), "lk", time.Minute)
	if err != nil {
		t.Fatalf("waiting Lock: %v", err)
	}
	// Waiting that times out says so.
	_, err = s.Lock(context.Background(), "lk", 30*time.Millisecond)
	if !errors.As(err, &he) || he.Waited == 0 || !strings.Contains(err.Error(), "after waiting") {
		t.Errorf("timed-out Lock: %v", err)
	}
	// A cancelled context ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Lock(ctx, "lk", time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Lock: %v", err)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(); err != nil {
		t.Fatal("second Release:", err)
	}
	// Begin wants the session's own lock.
	l3 := mustLock(t, s, "other")
	if _, err := s.Begin(bg, l3, checkpoint.NewSession("lk", "a", "t", spec.Sequential, seed(), "f", t0)); err == nil {
		t.Error("Begin with another session's lock")
	}
}

// A lock whose file is removed or replaced at its path while it is held is
// lost: another run may have made a new file there and hold the session.
// The holder learns it before a snapshot (Close here), and on a timer
// once it watches (Lost), and writes nothing more: the session another
// run may hold keeps what it had. Its own removal (Discard) is no loss.
func TestLockFileRemoved(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, path string)
		removed bool
	}{
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"replaced", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			runSession(t, s, "s", seed(), 1)
			before, err := os.ReadFile(s.Path("s"))
			if err != nil {
				t.Fatal(err)
			}
			l := mustLock(t, s, "s")
			sess, err := s.Load(bg, "s")
			if err != nil {
				t.Fatal(err)
			}
			j := mustBegin(t, s, l, sess)
			record(t, j, complete("polish", "out")...)
			begun, err := os.ReadFile(s.Path("s"))
			if err != nil {
				t.Fatal(err)
			}
			if string(begun) == string(before) {
				t.Fatal("Begin wrote no snapshot: the test proves nothing")
			}
			tc.change(t, l.Path())
			select {
			case <-l.Lost():
			case <-time.After(time.Minute): // a bound, not a time asserted
				t.Fatal("the watched lock never noticed its file went")
			}
			for what, err := range map[string]error{
				"LostErr": l.LostErr(),
				"Record":  j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "draft"}),
				"Close":   j.Close(),
			} {
				var lost *LostError
				if !errors.Is(err, checkpoint.ErrLost) || !errors.Is(err, checkpoint.ErrStore) || !errors.As(err, &lost) || lost.Removed != tc.removed {
					t.Fatalf("%s = %v, want a LostError (removed %v)", what, err, tc.removed)
				}
				for _, part := range []string{"session s", l.Path(), "another run may hold the session", "this run stops writing", "teamrun session show s"} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("%s: %q lacks %q", what, err, part)
					}
				}
			}
			if after, _ := os.ReadFile(s.Path("s")); string(after) != string(begun) {
				t.Error("the lost run's Close replaced the session's snapshot")
			}
		})
	}
	// Close checks without a watch: no timer needed before a snapshot.
	s := newStore(t)
	l := mustLock(t, s, "c")
	j := mustBegin(t, s, l, checkpoint.NewSession("c", "/p/agents.yaml", "team", spec.Sequential, seed(), fp(seed()), t0))
	if err := os.Remove(l.Path()); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); !errors.Is(err, checkpoint.ErrLost) {
		t.Fatalf("Close after the lock file went = %v, want ErrLost", err)
	}
	// Discard removes its own lock file: no loss.
	l = mustLock(t, s, "d")
	gone := l.Lost()
	if err := s.Discard(bg, l); err != nil {
		t.Fatal(err)
	}
	if err := l.check(); err != nil || l.LostErr() != nil {
		t.Fatalf("after Discard: check %v, LostErr %v", err, l.LostErr())
	}
	select {
	case <-gone:
		t.Fatal("Discard lost the lock")
	default:
	}
}

func TestDecide(t *testing.T) {
	s := newStore(t)
	ds := defs(taskSpec{name: "draft", desc: "d"}, taskSpec{name: "review", agent: "human", desc: "ok?", context: []string{"draft"}})
	l := mustLock(t, s, "dec")
	j := mustBegin(t, s, l, checkpoint.NewSession("dec", "a.yaml", "t", spec.Sequential, ds, fp(ds), t0))
	record(t, j, complete("draft", "text")...)
	if err := checkpoint.Decide(bg, s, "dec", "review", "approve"); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("Decide during a run: %v", err)
	}
	// The run halted: it exits without compaction (a crash would do the same).
	l.Release()
	if err := checkpoint.Decide(bg, s, "dec", "nope", "approve"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown task: %v", err)
	}
	if err := checkpoint.Decide(bg, s, "missing", "review", "approve"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := os.Stat(s.lockPath("missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Decide on a missing session left a lock file: %v", err)
	}
	if err := checkpoint.Decide(bg, s, "dec", "review", "approve"); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Load(bg, "dec")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Checkpoint.Decisions["review"] != "approve" {
		t.Errorf("decisions %v", sess.Checkpoint.Decisions)
	}
	if d, _ := sess.Task("draft"); d.Result != "text" {
		t.Errorf("the journal's records were lost: %+v", d)
	}
}

func TestRecordValidation(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "v")
	j := mustBegin(t, s, l, checkpoint.NewSession("v", "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
	for _, r := range []checkpoint.Record{{Kind: "bogus"}, {Kind: checkpoint.TaskStarted}, {Kind: "memory", Agent: "writer"}, {Kind: checkpoint.CurrentTask, Task: "x", Messages: []checkpoint.Message{{Role: "user"}}}, {Kind: checkpoint.TaskFailed, Task: "x", RetryCount: -1}} {
		if err := j.Record(r); err == nil {
			t.Errorf("Record(%+v) accepted", r)
		}
	}
	// A task the snapshot did not list is kept, not dropped.
	record(t, j, complete("extra", "e")...)
	record(t, j, checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "polish"}, checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "polish", State: map[string]any{"k": "v"}})
	j.Close()
	if err := j.Record(checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "polish"}); err == nil {
		t.Error("Record after Close accepted")
	}
	sess, err := s.Load(bg, "v")
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := sess.Task("extra"); !ok || e.Result != "e" {
		t.Error("extra task lost")
	}
	if sess.Checkpoint.CurrentTask != "polish" || sess.Team.State["k"] != "v" {
		t.Errorf("checkpoint %+v state %v", sess.Checkpoint, sess.Team.State)
	}
}

func TestSessionIsACopy(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "cp")
	j := mustBegin(t, s, l, checkpoint.NewSession("cp", "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
	view := j.Session()
	view.Team.Tasks[0].Status = checkpoint.StatusCompleted
	view.Team.State["x"] = 1
	if tr, _ := j.Task("draft"); tr.Status != checkpoint.StatusPending {
		t.Error("Session() shares its tasks")
	}
	if _, ok := j.Session().Team.State["x"]; ok {
		t.Error("Session() shares its state")
	}
	j.Close()
}

// A completion can carry the agent's turns: one durable step for both.
func TestCompletionCarriesMemory(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "cm")
	j := mustBegin(t, s, l, checkpoint.NewSession("cm", "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "draft"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "draft", Result: "r", Agent: "writer", Messages: []checkpoint.Message{{Role: "user", Content: "q", Task: "draft"}, {Role: "assistant", Content: "r", Task: "draft"}}})
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "draft", Messages: []checkpoint.Message{{Role: "user"}}}); err == nil {
		t.Error("messages without an agent accepted")
	}
	sess, err := s.Load(bg, "cm")
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Memory["writer"]) != 2 || sess.Checkpoint.MemorySummary["writer"] != 2 {
		t.Fatalf("memory %+v", sess.Memory)
	}
	j.Close()
}

// A failed append is reported, is not applied, and breaks nothing that was
// acknowledged: the in-memory view and the disk agree on what was.
func TestRecordWriteFailure(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "wf")
	j := mustBegin(t, s, l, checkpoint.NewSession("wf", "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
	record(t, j, complete("draft", "kept")...)
	j.f.Close() // the disk goes away under the journal
	err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "polish"})
	if err == nil || !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), s.journalPath("wf")) {
		t.Fatalf("Record on a dead file: %v", err)
	}
	if tr, _ := j.Task("polish"); tr.Status != checkpoint.StatusPending {
		t.Errorf("a failed record was applied: %+v", tr)
	}
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "polish"}); err == nil {
		t.Error("a broken journal accepted a record")
	}
	// Close still folds every acknowledged record into the snapshot.
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Load(bg, "wf")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := sess.Task("draft"); d.Result != "kept" {
		t.Errorf("acknowledged record lost: %+v", d)
	}
	if p, _ := sess.Task("polish"); p.Status != checkpoint.StatusPending {
		t.Errorf("unacknowledged record written: %+v", p)
	}
}

func TestOpenTightensSessionsFolder(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "sessions"), 0o755)
	os.Chmod(filepath.Join(home, "sessions"), 0o755)
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	// The folder is teamrun's from the first write on (Open writes nothing).
	mustLock(t, s, "probe").Release()
	if m := mode(t, s.Dir()); m != 0o700 {
		t.Fatalf("sessions folder %04o", m)
	}
	// Begin sweeps the temp files a killed snapshot write left.
	tmp := filepath.Join(s.Dir(), ".tt.json.tmp-99")
	os.WriteFile(tmp, []byte("half"), 0o600)
	other := filepath.Join(s.Dir(), ".tt2.json.tmp-99")
	os.WriteFile(other, []byte("half"), 0o600)
	l := mustLock(t, s, "tt")
	j := mustBegin(t, s, l, checkpoint.NewSession("tt", "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Error("temp file left")
	}
	if _, err := os.Stat(other); err != nil {
		t.Error("another session's temp file removed")
	}
	j.Close()
}

// Parallel tasks of a workflow record at once: every record lands.
func TestRecordConcurrent(t *testing.T) {
	s := newStore(t)
	ds := chain12()
	l := mustLock(t, s, "par")
	j := mustBegin(t, s, l, checkpoint.NewSession("par", "a.yaml", "t", spec.Workflow, ds, fp(ds), t0))
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 5; k++ {
				if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: d.Name, State: map[string]any{d.Name: k}}); err != nil {
					t.Error(err)
				}
				_ = j.Session()
			}
			if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: d.Name, Result: "r-" + d.Name}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sess, err := s.Load(bg, "par")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		tr, _ := sess.Task(d.Name)
		if tr.Status != checkpoint.StatusCompleted || tr.Result != "r-"+d.Name || tr.Attempts != 5 || sess.Team.State[d.Name] != int64(4) {
			t.Errorf("%s: %+v state %v", d.Name, tr, sess.Team.State[d.Name])
		}
	}
	j.Close()
}

// A new session never replaces a file in the store, corrupt or not.
func TestBeginNeverOverwrites(t *testing.T) {
	s := newStore(t)
	runSession(t, s, "ex", seed(), 1)
	os.WriteFile(s.Path("bad"), []byte("{corrupt"), 0o600)
	for _, id := range []string{"ex", "bad"} {
		before, _ := os.ReadFile(s.Path(id))
		l := mustLock(t, s, id)
		_, err := s.Begin(bg, l, checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
		if !errors.Is(err, checkpoint.ErrExists) || !strings.Contains(err.Error(), id) {
			t.Errorf("%s: Begin over an existing file: %v", id, err)
		}
		if after, _ := os.ReadFile(s.Path(id)); string(after) != string(before) {
			t.Errorf("%s: file changed", id)
		}
		l.Release()
	}
	// A continuation of a loaded session may replace its file.
	old, err := s.Load(bg, "ex")
	if err != nil {
		t.Fatal(err)
	}
	l := mustLock(t, s, "ex")
	r := checkpoint.Restore(old, seed(), fp(seed()), checkpoint.ReuseStrict)
	j := mustBegin(t, s, l, checkpoint.Continue(old, r, spec.Sequential, seed(), fp(seed()), t0))
	j.Close()
}

// A session file without journal_epoch (hand-made, or a format-1 file of a
// tool that wrote none) is a session like any: plan restores its finished
// tasks, and a run that loads it (session decide) or continues it (run
// --continue) goes on from there. Begin refused it as a new session over
// an existing file ("already exists … continue it instead"), after plan
// had said it resumes.
func TestSessionWithoutEpoch(t *testing.T) {
	for _, tt := range []struct {
		name      string
		continued bool
		journal   bool // a stale journal beside it, of no epoch it names
	}{
		{"loaded", false, false},
		{"continued", true, false},
		{"continued, beside a journal", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			const id = "old"
			runSession(t, s, id, seed(), 1)
			data, err := os.ReadFile(s.Path(id))
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range []string{`"journal_epoch":"[0-9a-f]+",`, `"folded_epoch":"[0-9a-f]+",`, `,"checksum":"crc32c-[0-9a-f]+"`} {
				data = regexp.MustCompile(re).ReplaceAll(data, nil)
			}
			data = bytes.Replace(data, []byte(`"format_version":2`), []byte(`"format_version":1`), 1)
			if bytes.Contains(data, []byte("_epoch")) {
				t.Fatalf("an epoch is left: %s", data)
			}
			if err := os.WriteFile(s.Path(id), data, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.journal {
				if err := os.WriteFile(s.journalPath(id), headerLine("0123456789abcdef", 1), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			sess := loadDone(t, s, id, 1)
			if tt.continued {
				sess = checkpoint.Continue(sess, checkpoint.Restore(sess, seed(), fp(seed()), checkpoint.ReuseStrict), spec.Sequential, seed(), fp(seed()), t0)
			}
			j, err := s.Begin(bg, mustLock(t, s, id), sess)
			if err != nil {
				t.Fatalf("Begin: %v", err)
			}
			record(t, j.(*FileJournal), complete("polish", "out-polish")...)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			back := loadDone(t, s, id, 2)
			if tk, _ := back.Task("draft"); tk.Result != "out-draft" {
				t.Errorf("draft lost its result: %+v", tk)
			}
			if epoch, _, _ := snapshotHead(t, s.Path(id)); epoch == "" {
				t.Error("the new snapshot has no epoch")
			}
		})
	}
}

// TestLoadShapeErrors: a session file that is JSON of the wrong shape is a
// *CorruptError naming the file, the key path, what belongs there and what
// to do; never the json package's Go type names.
func TestLoadShapeErrors(t *testing.T) {
	s := newStore(t)
	const head = `{"format_version":1,"session_id":"bad",`
	tests := []struct {
		name, body, want string
	}{
		{"tasks a text", head + `"team":{"tasks":"notalist"}}`, `team.tasks: expected a list, got the text "notalist"`},
		{"task a number", head + `"team":{"tasks":[{"name":"a"},7]}}`, `team.tasks[1]: expected an object, got the number 7`},
		{"retry count a text", head + `"team":{"tasks":[{"name":"a","retry_count":"2"}]}}`, `team.tasks[0].retry_count: expected a whole number, got the text "2"`},
		{"attempts a fraction", head + `"team":{"tasks":[{"name":"a","attempts":1.5}]}}`, `team.tasks[0].attempts: expected a whole number, got the number 1.5`},
		{"time", head + `"created_at":"yesterday"}`, `created_at: expected a time such as 2026-03-01T10:15:00Z, got the text "yesterday"`},
		{"started_at", head + `"team":{"tasks":[{"name":"a","started_at":5}]}}`, `team.tasks[0].started_at: expected a time such as 2026-03-01T10:15:00Z, got the number 5`},
		{"decisions", head + `"checkpoint":{"decisions":{"review":true}}}`, `checkpoint.decisions.review: expected a text, got true`},
		{"state a list", head + `"team":{"state":[1]}}`, `team.state: expected an object, got a list`},
		{"memory content", head + `"memory":{"w":[{"role":"user","content":[]}]}}`, `memory.w[0].content: expected a text (or {"$base64": ...} for bytes that are not UTF-8), got a list`},
		{"whole file a list", `[1,2]`, `expected an object, got a list`},
		{"version a text", `{"format_version":"1","session_id":"bad"}`, `format_version: expected a whole number, got the text "1"`},
		{"truncated", head + `"team":{"tasks":[`, `the JSON ends early (the file is cut short)`},
		{"garbage", "{\n  \"format_version\": 1,\n  oops}", `not valid JSON at line 3, column 3`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(s.Path("bad"), []byte(tc.body), 0o600)
			_, err := s.Load(bg, "bad")
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, checkpoint.ErrStore) {
				t.Fatalf("err = %v, want a CorruptError", err)
			}
			want := "session bad: " + s.Path("bad") + " is corrupt: not a session file: " + tc.want +
				"; it was left untouched: restore it from a backup, or delete the session with `teamrun session delete bad`"
			if err.Error() != want {
				t.Errorf("got  %s\nwant %s", err, want)
			}
			if m := regexp.MustCompile(`Go |checkpoint\.[A-Z]|json: |\[\]|struct|unmarshal`).FindString(err.Error()); m != "" {
				t.Errorf("Go-internal %q in %s", m, err)
			}
		})
	}
}

// TestLoadNewer: a session written by a newer teamrun is not called corrupt:
// the message says to upgrade, whatever the rest of the file looks like.
func TestLoadNewer(t *testing.T) {
	s := newStore(t)
	for _, body := range []string{
		`{"format_version":99,"session_id":"new"}`,
		`{"format_version":99,"session_id":"new","team":{"tasks":"a new shape"}}`,
	} {
		os.WriteFile(s.Path("new"), []byte(body), 0o600)
		_, err := s.Load(bg, "new")
		var ne *checkpoint.NewerError
		if !errors.As(err, &ne) || !errors.Is(err, checkpoint.ErrStore) || ne.Version != 99 {
			t.Fatalf("%s: err = %#v, want a NewerError", body, err)
		}
		var ce *checkpoint.CorruptError
		if errors.As(err, &ce) || strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%s: called corrupt: %v", body, err)
		}
		want := "session new: " + s.Path("new") + " was written by a newer teamrun (format 99; this one reads up to " + strconv.Itoa(checkpoint.FormatVersion) + "): upgrade teamrun; the file was left untouched"
		if err.Error() != want {
			t.Errorf("got  %s\nwant %s", err, want)
		}
		list, err := s.List(bg)
		if err != nil || len(list) != 1 || !errors.As(list[0].Err, &ne) {
			t.Errorf("List: %v %+v", err, list)
		}
		if b, _ := os.ReadFile(s.Path("new")); string(b) != body {
			t.Error("newer session was modified")
		}
	}
}

// Opening a store creates nothing (a command that exits 2 writes nothing);
// reading an empty store works; the first lock makes the folder 0700.
func TestOpenCreatesNothing(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(bg); err != nil || len(list) != 0 {
		t.Fatalf("List of an unwritten store: %v %v", list, err)
	}
	if _, err := s.Load(bg, "x"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Load: %v", err)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open or a read created %s: %v", home, err)
	}
	l := mustLock(t, s, "x")
	defer l.Release()
	if fi, err := os.Stat(s.Dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("sessions folder after the first lock: %v %v", fi, err)
	}
}

// A store whose folder cannot be made says to point the store elsewhere
// as well as to fix the owner: in a container whose $HOME is / and not its
// user's, the owner is not the user's to fix. Root is refused only by an
// immutable folder (chattr +i).
func TestStoreFolderNotMade(t *testing.T) {
	parent := t.TempDir()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", parent).CombinedOutput(); err != nil {
			t.Skipf("root, and no immutable folder here: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", parent).Run() })
	} else {
		if err := os.Chmod(parent, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(parent, 0o700) })
	}
	s, err := Open(filepath.Join(parent, "home"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.makeDir()
	const want = "; point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) at a folder this user can write, or fix the owner and permissions of the folder it is made in"
	if !errors.Is(err, checkpoint.ErrStore) || !strings.HasSuffix(err.Error(), want) || strings.Count(err.Error(), parent) != 1 {
		t.Errorf("making the store in a folder that refuses it: %v\nwant ErrStore, naming the folder once and ending %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(parent, "home")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the store's folder: %v, want none", err)
	}
}

// A store folder that is a symbolic link to a folder that is not there is
// said so, not "file exists".
func TestDanglingHomeLink(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "homelink")
	if err := os.Symlink(filepath.Join(dir, "nohome"), home); err != nil {
		t.Fatal(err)
	}
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	err = s.makeDir()
	want := home + " is a symbolic link to " + filepath.Join(dir, "nohome") + ", a folder that does not exist; create that folder"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("makeDir: %v, want it to say %q", err, want)
	}
}
