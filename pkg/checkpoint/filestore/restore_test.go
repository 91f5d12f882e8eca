package filestore

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

func reusedNames(r *checkpoint.Restored) []string { return append([]string{}, r.Reused...) }

// restoredRecords are r's records, found by name (Task) among every name
// one can have: a restore takes its records from sess (nil: none), at the
// places of the tasks of now.
func restoredRecords(r *checkpoint.Restored, sess *checkpoint.Session, now []spec.TaskDef) []*checkpoint.TaskRecord {
	var names []string
	if sess != nil {
		for _, t := range sess.Team.Tasks {
			names = append(names, t.Name)
		}
	}
	for _, d := range now {
		names = append(names, d.Name)
	}
	seen := map[string]bool{}
	var out []*checkpoint.TaskRecord
	for _, n := range names {
		if rec, ok := r.Task(n); ok && !seen[n] {
			seen[n] = true
			out = append(out, rec)
		}
	}
	return out
}

func TestRestoreSeed(t *testing.T) {
	s := newStore(t)
	base := seed()
	editedPolish := defs(taskSpec{name: "draft", desc: "Write the intro about Go"},
		taskSpec{name: "polish", desc: "Polish the draft harder", context: []string{"draft"}})
	editedDraft := defs(taskSpec{name: "draft", desc: "Write the intro about Rust"},
		taskSpec{name: "polish", desc: "Polish the draft", context: []string{"draft"}})
	added := defs(taskSpec{name: "draft", desc: "Write the intro about Go"},
		taskSpec{name: "polish", desc: "Polish the draft", context: []string{"draft"}},
		taskSpec{name: "publish", desc: "Publish", context: []string{"polish"}})
	removed := defs(taskSpec{name: "draft", desc: "Write the intro about Go"})

	tests := []struct {
		name      string
		done      int // tasks of base completed in the session
		now       []spec.TaskDef
		reuse     checkpoint.Reuse
		kind      checkpoint.RestoreKind
		reused    []string
		warnParts []string // each must appear in the single warning
	}{
		{"match full", 2, base, checkpoint.ReuseStrict, checkpoint.RestoreFull, []string{"draft", "polish"}, nil},
		{"match half done", 1, base, checkpoint.ReuseStrict, checkpoint.RestoreFull, []string{"draft"}, nil},
		{"match with reuse unchanged is still full", 2, base, checkpoint.ReuseUnchanged, checkpoint.RestoreFull, []string{"draft", "polish"}, nil},
		{"polish edited strict", 2, editedPolish, checkpoint.ReuseStrict, checkpoint.RestorePartial, nil,
			[]string{"session seed-1", `task "polish": description changed`, "not restored"}},
		{"polish edited unchanged", 2, editedPolish, checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, []string{"draft"},
			[]string{"session seed-1", `task "polish": description changed`, "reused 1"}},
		{"draft edited unchanged invalidates polish", 2, editedDraft, checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, nil,
			[]string{`task "draft": description changed`, `task "polish": an upstream task or a setting changed`}},
		{"task added strict", 2, added, checkpoint.ReuseStrict, checkpoint.RestorePartial, nil, []string{`task "publish" added`}},
		{"task added unchanged", 2, added, checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, []string{"draft", "polish"}, []string{`task "publish" added`}},
		{"task removed unchanged", 2, removed, checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, []string{"draft"}, []string{`task "polish" removed`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sess := runSession(t, s, "seed-1", base, tc.done)
			sess.Team.State["topic"] = "Go"
			r := checkpoint.Restore(sess, tc.now, fp(tc.now), tc.reuse)
			if r.Kind != tc.kind {
				t.Fatalf("kind = %v, want %v", r.Kind, tc.kind)
			}
			if got := reusedNames(r); !slices.Equal(got, tc.reused) && !(len(got) == 0 && len(tc.reused) == 0) {
				t.Errorf("reused = %v, want %v", got, tc.reused)
			}
			for _, name := range tc.reused {
				if rec, _ := r.Task(name); rec == nil || rec.Status != checkpoint.StatusCompleted || rec.Result != "out-"+name {
					t.Errorf("task %s restored as %+v", name, rec)
				}
			}
			for _, rec := range restoredRecords(r, sess, tc.now) {
				if name := rec.Name; !slices.Contains(tc.reused, name) && (rec.Status == checkpoint.StatusCompleted || rec.Result != "") {
					t.Errorf("task %s: output not refused: %+v", name, rec)
				}
			}
			if r.State["topic"] != "Go" {
				t.Errorf("shared state not restored: %v", r.State)
			}
			if len(tc.warnParts) == 0 && len(r.Warnings) != 0 {
				t.Errorf("unexpected warnings %q", r.Warnings)
			}
			if len(tc.warnParts) > 0 {
				if len(r.Warnings) != 1 {
					t.Fatalf("warnings = %q, want one", r.Warnings)
				}
				for _, p := range tc.warnParts {
					if !strings.Contains(r.Warnings[0], p) {
						t.Errorf("warning %q lacks %q", r.Warnings[0], p)
					}
				}
			}
			for _, rec := range restoredRecords(r, sess, tc.now) {
				if name := rec.Name; !slices.ContainsFunc(tc.now, func(d spec.TaskDef) bool { return d.Name == name }) {
					t.Errorf("task %s is not in the spec but was restored", name)
				}
			}
		})
	}
}

func TestRestoreNone(t *testing.T) {
	r := checkpoint.Restore(nil, seed(), fp(seed()), checkpoint.ReuseStrict)
	records := len(restoredRecords(r, nil, seed()))
	if r.Kind != checkpoint.RestoreNone || records != 0 || r.Kind.String() != "none" {
		t.Fatalf("got %+v", r)
	}
}

func TestRestoreKindString(t *testing.T) {
	for k, want := range map[checkpoint.RestoreKind]string{checkpoint.RestoreNone: "none", checkpoint.RestoreFull: "full", checkpoint.RestorePartial: "partial", checkpoint.RestorePerTask: "per-task"} {
		if k.String() != want {
			t.Errorf("%d: %q", k, k.String())
		}
	}
}

func TestRestore12(t *testing.T) {
	s := newStore(t)
	base := chain12()
	tests := []struct {
		name   string
		done   int
		now    []spec.TaskDef
		reuse  checkpoint.Reuse
		kind   checkpoint.RestoreKind
		reused int // t01..t<reused> reused
	}{
		{"died on 9 resumes at 9", 8, base, checkpoint.ReuseStrict, checkpoint.RestoreFull, 8},
		{"all done", 12, base, checkpoint.ReuseStrict, checkpoint.RestoreFull, 12},
		{"t05 edited strict", 12, chain12(5), checkpoint.ReuseStrict, checkpoint.RestorePartial, 0},
		{"t05 edited unchanged", 12, chain12(5), checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, 4},
		{"t12 edited unchanged", 12, chain12(12), checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, 11},
		{"t01 edited unchanged", 12, chain12(1), checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, 0},
		{"t10 edited, died on 9", 8, chain12(10), checkpoint.ReuseUnchanged, checkpoint.RestorePerTask, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sess := runSession(t, s, "twelve", base, tc.done)
			r := checkpoint.Restore(sess, tc.now, fp(tc.now), tc.reuse)
			if r.Kind != tc.kind {
				t.Fatalf("kind %v, want %v", r.Kind, tc.kind)
			}
			if len(r.Reused) != tc.reused {
				t.Fatalf("reused %v, want the first %d", r.Reused, tc.reused)
			}
			for i, d := range tc.now {
				if got, want := r.Done(d.Name), i < tc.reused; got != want {
					t.Errorf("%s done = %v, want %v", d.Name, got, want)
				}
			}
		})
	}
}

// A DAG: a change invalidates its descendants only, not its siblings.
func TestRestoreDAGDownstream(t *testing.T) {
	s := newStore(t)
	mk := func(editB bool) []spec.TaskDef {
		b := "b"
		if editB {
			b = "b edited"
		}
		return defs(taskSpec{name: "a", desc: "a"},
			taskSpec{name: "b", desc: b, context: []string{"a"}},
			taskSpec{name: "c", desc: "c", context: []string{"a"}},
			taskSpec{name: "d", desc: "d", context: []string{"b"}},
			taskSpec{name: "e", desc: "e", context: []string{"c", "d"}},
			taskSpec{name: "f", desc: "f", context: []string{"c"}})
	}
	sess := runSession(t, s, "dag", mk(false), 6)
	now := mk(true)
	r := checkpoint.Restore(sess, now, fp(now), checkpoint.ReuseUnchanged)
	got := reusedNames(r)
	sort.Strings(got)
	if want := []string{"a", "c", "f"}; !slices.Equal(got, want) {
		t.Fatalf("reused %v, want %v", got, want)
	}
	// Even with an unchanged key, a task whose upstream re-runs is re-run.
	sess2 := runSession(t, s, "dag2", mk(false), 6)
	sess2.Team.Tasks[1].Status = checkpoint.StatusFailed // b failed last time, d/e somehow completed
	r = checkpoint.Restore(sess2, mk(false), "other", checkpoint.ReuseUnchanged)
	got = reusedNames(r)
	sort.Strings(got)
	if want := []string{"a", "c", "f"}; !slices.Equal(got, want) {
		t.Fatalf("reused %v, want %v", got, want)
	}
}

func TestRestoreRunningAndFailed(t *testing.T) {
	s := newStore(t)
	ds := chain12()
	l := mustLock(t, s, "r")
	j := mustBegin(t, s, l, checkpoint.NewSession("r", "p", "team", spec.Sequential, ds, fp(ds), t0))
	record(t, j, complete("t01", "one")...)
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t02"}, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: "t02", Error: "boom", RetryCount: 2},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t02", Attempt: 4}) // died while running attempt 4
	sess := j.Session()
	r := checkpoint.Restore(sess, ds, fp(ds), checkpoint.ReuseStrict)
	if r.Kind != checkpoint.RestoreFull || !r.Done("t01") || r.Done("t02") {
		t.Fatalf("got %+v", r)
	}
	if got := restored(r, "t02"); got.Status != checkpoint.StatusPending || got.Attempts != 4 || got.Result != "" {
		t.Fatalf("running task restored as %+v; want pending with attempts 4", got)
	}
	// A failed task stays failed (it runs again) and keeps its retry count.
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: "t02", Error: "boom again", RetryCount: 3})
	r = checkpoint.Restore(j.Session(), ds, fp(ds), checkpoint.ReuseStrict)
	if got := restored(r, "t02"); got.Status != checkpoint.StatusFailed || got.RetryCount != 3 || got.Attempts != 4 {
		t.Fatalf("failed task restored as %+v", got)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRestoreUnknownTasksSkipped(t *testing.T) {
	s := newStore(t)
	sess := runSession(t, s, "u", chain12(), 12)
	now := chain12()[:3]
	for _, reuse := range []checkpoint.Reuse{checkpoint.ReuseStrict, checkpoint.ReuseUnchanged} {
		r := checkpoint.Restore(sess, now, fp(now), reuse)
		for _, rec := range restoredRecords(r, sess, now) {
			if name := rec.Name; name > "t03" {
				t.Errorf("%v: task %s not in the spec came back", reuse, name)
			}
		}
		removed := 0
		for _, d := range r.Diffs {
			if d.How == "removed" {
				removed++
			}
		}
		if removed != 9 {
			t.Errorf("%v: %d removed diffs, want 9: %v", reuse, removed, r.Diffs)
		}
	}
}

func TestRestoreDecisionsAndMemory(t *testing.T) {
	s := newStore(t)
	ds := defs(taskSpec{name: "draft", desc: "d"}, taskSpec{name: "review", agent: "human", desc: "ok?", context: []string{"draft"}},
		taskSpec{name: "publish", desc: "p", context: []string{"review"}})
	l := mustLock(t, s, "m")
	j := mustBegin(t, s, l, checkpoint.NewSession("m", "p", "team", spec.Sequential, ds, fp(ds), t0))
	record(t, j, complete("draft", "text")...)
	record(t, j, checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "draft", Agent: "writer", Messages: []checkpoint.Message{{Role: "user", Content: "q", Task: "draft"}, {Role: "assistant", Content: "a", Task: "draft"}}},
		checkpoint.Record{Kind: checkpoint.DecisionRecorded, Task: "review", Value: "approve"})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
	sess, err := s.Load(bg, "m")
	if err != nil {
		t.Fatal(err)
	}
	r := checkpoint.Restore(sess, ds, fp(ds), checkpoint.ReuseStrict)
	if r.Decisions["review"] != "approve" || len(r.Memory["writer"]) != 2 {
		t.Fatalf("full: decisions %v memory %v", r.Decisions, r.Memory)
	}
	// publish edited: draft reused with its memory, decision kept (its task is unchanged).
	ds2 := defs(taskSpec{name: "draft", desc: "d"}, taskSpec{name: "review", agent: "human", desc: "ok?", context: []string{"draft"}},
		taskSpec{name: "publish", desc: "p2", context: []string{"review"}})
	r = checkpoint.Restore(sess, ds2, fp(ds2), checkpoint.ReuseUnchanged)
	if r.Decisions["review"] != "approve" || len(r.Memory["writer"]) != 2 || !r.Done("draft") {
		t.Fatalf("per-task: decisions %v memory %v reused %v", r.Decisions, r.Memory, r.Reused)
	}
	r = checkpoint.Restore(sess, ds2, fp(ds2), checkpoint.ReuseStrict)
	if len(r.Memory) != 0 || r.Done("draft") {
		t.Fatalf("partial kept outputs: memory %v reused %v", r.Memory, r.Reused)
	}
	// draft edited: its memory and the decision downstream of it go.
	ds3 := defs(taskSpec{name: "draft", desc: "d2"}, taskSpec{name: "review", agent: "human", desc: "ok?", context: []string{"draft"}},
		taskSpec{name: "publish", desc: "p", context: []string{"review"}})
	r = checkpoint.Restore(sess, ds3, fp(ds3), checkpoint.ReuseUnchanged)
	if len(r.Decisions) != 0 || len(r.Memory) != 0 {
		t.Fatalf("decisions %v memory %v survived an upstream change", r.Decisions, r.Memory)
	}
}

func TestContinueBuildsNextSession(t *testing.T) {
	s := newStore(t)
	base := chain12()
	sess := runSession(t, s, "c", base, 8)
	sess.Team.State["x"] = "y"
	r := checkpoint.Restore(sess, base, fp(base), checkpoint.ReuseStrict)
	next := checkpoint.Continue(sess, r, spec.Sequential, base, fp(base), t0.Add(time.Hour))
	if next.CreatedAt != sess.CreatedAt || next.ID != "c" || next.Team.State["x"] != "y" {
		t.Fatalf("next = %+v", next)
	}
	for i, tr := range next.Team.Tasks {
		if (i < 8) != (tr.Status == checkpoint.StatusCompleted) {
			t.Errorf("%s: %s", tr.Name, tr.Status)
		}
		if tr.Key != base[i].Key {
			t.Errorf("%s: key not today's", tr.Name)
		}
	}
	l := mustLock(t, s, "c")
	j := mustBegin(t, s, l, next)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(bg, "c")
	if err != nil || got.Summary.Done != 8 || got.Summary.Total != 12 {
		t.Fatalf("reload: %v %+v", err, got.Summary)
	}
}

func TestRestoredOutput(t *testing.T) {
	s := newStore(t)
	sess := runSession(t, s, "o", seed(), 2)
	r := checkpoint.Restore(sess, seed(), fp(seed()), checkpoint.ReuseStrict)
	want := checkpoint.TaskOutput{Description: "Polish the draft", Raw: "out-polish", Agent: "writer", OutputFormat: "RAW"}
	if got := restored(r, "polish").Output(); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

// TestTaskDiffString: the mismatch warning says how a task differs in user
// terms, never an internal field name such as "key".
func TestTaskDiffString(t *testing.T) {
	tests := []struct {
		diff checkpoint.TaskDiff
		want string
	}{
		{checkpoint.TaskDiff{Task: "b", How: "changed", Fields: []string{"description"}}, `task "b": description changed`},
		{checkpoint.TaskDiff{Task: "d", How: "changed", Fields: []string{"key"}}, `task "d": an upstream task or a setting changed`},
		{checkpoint.TaskDiff{Task: "d", How: "changed", Fields: []string{"key"}, Reads: []string{"b"}}, `task "d": b, which it reads, changed`},
		{checkpoint.TaskDiff{Task: "d", How: "changed", Fields: []string{"key"}, Reads: []string{"a", "b", "c"}}, `task "d": a, b and c, which it reads, changed`},
		{checkpoint.TaskDiff{Task: "d", How: "changed", Fields: []string{"condition"}}, `task "d": condition changed`},
		{checkpoint.TaskDiff{Task: "d", How: "changed", Fields: []string{"a setting"}}, `task "d": a setting of its own (the session keeps their digest, not what they were: ` +
			`condition, options, output_schema, output_variable, route_on, until or its foreach item; or, recorded by an older teamrun, max_retries or timeout) changed`},
		{checkpoint.TaskDiff{Task: "b", How: "changed", Fields: []string{"description", "expected_output"}}, `task "b": description and expected output changed`},
		{checkpoint.TaskDiff{Task: "b", How: "changed", Fields: []string{"position", "agent", "context"}}, `task "b": position, agent and context changed`},
		{checkpoint.TaskDiff{Task: "b", How: "changed", Fields: []string{"agent definition"}}, `task "b": its agent's definition changed`},
		{checkpoint.TaskDiff{Task: "n", How: "added"}, `task "n" added`},
		{checkpoint.TaskDiff{Task: "o", How: "removed"}, `task "o" removed`},
	}
	for _, tc := range tests {
		if got := tc.diff.String(); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.diff, got, tc.want)
		}
	}
}

// restored is r's record of the named task, nil for none.
func restored(r *checkpoint.Restored, name string) *checkpoint.TaskRecord {
	t, _ := r.Task(name)
	return t
}
