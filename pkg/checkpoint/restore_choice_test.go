package checkpoint_test

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// chain is a -> b -> c -> d, each reading the one before, plus x reading a
// only; edited names the tasks whose key differs from the checkpoint's.
func chain(edited ...string) []spec.TaskDef {
	var ds []spec.TaskDef
	for i, n := range []string{"a", "b", "c", "d", "x"} {
		d := spec.TaskDef{ID: i, Name: n, Agent: "w", Description: n, Key: "k-" + n, OwnKey: "own-" + n}
		switch n {
		case "a":
		case "x":
			d.Context = []string{"a"}
		default:
			d.Context = []string{ds[i-1].Name}
		}
		if slices.Contains(edited, n) {
			d.Description += " edited"
			d.Key += "-edited"
			d.OwnKey += "-edited"
		}
		if len(d.Context) > 0 {
			d.Key += "<" + ds[slices.IndexFunc(ds, func(p spec.TaskDef) bool { return p.Name == d.Context[0] })].Key // as spec's keys cover their context's
		}
		ds = append(ds, d)
	}
	return ds
}

// finished is a session where every task of chain() completed with its
// name as the result.
func finished() *checkpoint.Session {
	s := checkpoint.NewSession("s", "team.yaml", "t", spec.Sequential, chain(), "fp", time.Unix(0, 0))
	for i := range s.Team.Tasks {
		t := &s.Team.Tasks[i]
		t.Status, t.Result, t.Attempts = checkpoint.StatusCompleted, t.Name+"\n", 1
		t.Usage = &checkpoint.Usage{TotalTokens: 10}
	}
	return s
}

func heldNames(r *checkpoint.Restored) []string {
	var out []string
	for n := range r.Held {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func TestRestoreChoice(t *testing.T) {
	tests := []struct {
		name     string
		now      []spec.TaskDef
		fp       string
		ch       checkpoint.Choice
		reused   []string
		rerun    []string
		held     []string
		kept     []string
		failed   []string // failed last time (the session's record), not --rerun
		keptRead []string // --keep pins them though what they read runs: said
		// --keep pins them though what they read changed, not they
		keptReadChanged []string
		warnings        []string // each must be in some warning
		unwarned        []string // each in no warning
		notes           []string // each must be in some note, and in no warning
	}{
		{name: "nothing asked: full restore", now: chain(), fp: "fp", reused: []string{"a", "b", "c", "d", "x"}},
		{name: "rerun b holds what reads it", now: chain(), fp: "fp", ch: checkpoint.Choice{Rerun: []string{"b"}},
			reused: []string{"a", "x"}, rerun: []string{"b"}, held: []string{"c", "d"},
			notes: []string{"re-running b on request", "early cut-off: c, d will run only if what they read changes; otherwise their recorded results are reused"}},
		{name: "rerun-from b forces everything downstream", now: chain(), fp: "fp", ch: checkpoint.Choice{RerunFrom: []string{"b"}},
			reused: []string{"a", "x"}, rerun: []string{"b", "c", "d"}},
		{name: "rerun a and c", now: chain(), fp: "fp", ch: checkpoint.Choice{Rerun: []string{"a", "c"}},
			rerun: []string{"a", "c"}, held: []string{"b", "d", "x"}},
		{name: "keep pins a changed task (unchanged reuse)", now: chain("b"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"b"}},
			reused: []string{"a", "b", "x"}, kept: []string{"b"}, held: []string{"c", "d"},
			warnings: []string{"--keep: the recorded output of b is kept although its definition changed"}},
		{name: "an edited task holds what reads it (unchanged reuse)", now: chain("b"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged},
			reused: []string{"a", "x"}, held: []string{"c", "d"}},
		{name: "an edited task under strict holds nothing", now: chain("b"), fp: "fp2"},
		{name: "a task whose own definition changed is not held", now: chain("b", "c"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged},
			reused: []string{"a", "x"}, held: []string{"d"}},
		{name: "keep under strict keeps only it", now: chain("b"), fp: "fp2", ch: checkpoint.Choice{Keep: []string{"b"}},
			reused: []string{"b"}, kept: []string{"b"}, keptRead: []string{"b"},
			warnings: []string{"--keep b: kept, though what it reads runs again (a)"}},
		// Only a changed, not b: b's definition is said to have changed
		// in no warning, and plan neither (W F7).
		{name: "keep of a task only what it reads changed (unchanged reuse)", now: chain("a"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"b"}},
			reused: []string{"b"}, held: []string{"c", "d", "x"}, keptRead: []string{"b"}, keptReadChanged: []string{"b"},
			warnings: []string{"--keep b: kept, though what it reads runs again (a)"}, unwarned: []string{"definition changed"}},
		{name: "keep of a task only what it reads changed (strict)", now: chain("a"), fp: "fp2", ch: checkpoint.Choice{Keep: []string{"b"}},
			reused: []string{"b"}, keptRead: []string{"b"}, keptReadChanged: []string{"b"},
			warnings: []string{"--keep b: kept, though what it reads runs again (a)"}, unwarned: []string{"definition changed"}},
		// What b reads changed, and is kept too: a's change is said, and
		// b's result was made from a's kept one.
		{name: "keep of a task and what it reads, which changed", now: chain("a"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"a", "b"}},
			reused: []string{"a", "b"}, kept: []string{"a"}, held: []string{"c", "d", "x"}, keptReadChanged: []string{"b"},
			warnings: []string{"--keep: the recorded output of a is kept although its definition changed"},
			unwarned: []string{"runs again", "--keep b"}},
		{name: "keep of an unchanged task is no news", now: chain("b"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"a"}},
			reused: []string{"a", "x"}, held: []string{"c", "d"}},
		{name: "keep stops the hold below it", now: chain(), fp: "fp", ch: checkpoint.Choice{Rerun: []string{"b"}, Keep: []string{"c"}},
			reused: []string{"a", "c", "d", "x"}, rerun: []string{"b"}, keptRead: []string{"c"},
			warnings: []string{"--keep c: kept, though what it reads runs again (b)"}},
		{name: "keep of a reader of a task that failed last time is said", now: chain(), fp: "fp", ch: checkpoint.Choice{Keep: []string{"b"}},
			failed: []string{"a"}, reused: []string{"b", "c", "d", "x"}, keptRead: []string{"b"},
			warnings: []string{"--keep b: kept, though what it reads runs again (a)"}},
		{name: "keep of a reader of a task that failed last time is said (unchanged reuse)", now: chain("d"), fp: "fp2",
			ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"b"}}, failed: []string{"a"},
			reused: []string{"b", "c"}, keptRead: []string{"b"}, warnings: []string{"--keep b: kept, though what it reads runs again (a)"}},
		{name: "rerun of a changed task under unchanged reuse", now: chain("d"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Rerun: []string{"a"}},
			rerun: []string{"a"}, held: []string{"b", "c", "x"}},
		{name: "rerun of a held task runs it, not cut off", now: chain("b"), fp: "fp2", ch: checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Rerun: []string{"c"}},
			reused: []string{"a", "x"}, rerun: []string{"c"}, held: []string{"d"}, notes: []string{"re-running c on request"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sess := finished()
			for _, n := range tc.failed {
				f, _ := sess.Task(n)
				f.Status, f.Result, f.Error = checkpoint.StatusFailed, "", "exit status 1"
			}
			r := checkpoint.RestoreChoice(sess, tc.now, tc.fp, tc.ch)
			if !slices.Equal(r.Reused, tc.reused) {
				t.Errorf("reused = %v, want %v", r.Reused, tc.reused)
			}
			if !slices.Equal(r.Rerun, tc.rerun) {
				t.Errorf("rerun = %v, want %v", r.Rerun, tc.rerun)
			}
			if got := heldNames(r); !slices.Equal(got, tc.held) {
				t.Errorf("held = %v, want %v", got, tc.held)
			}
			if !slices.Equal(r.Kept, tc.kept) {
				t.Errorf("kept = %v, want %v", r.Kept, tc.kept)
			}
			if !slices.Equal(r.KeptRead, tc.keptRead) {
				t.Errorf("kept though what they read runs = %v, want %v (warnings %q)", r.KeptRead, tc.keptRead, r.Warnings)
			}
			for _, n := range append(slices.Clone(tc.rerun), tc.held...) {
				if r.Done(n) || rec(r, n).Attempts != 1 || r.Recorded[n].Text != n+"\n" || rec(r, n).PreviousOutcome().Text != n+"\n" {
					t.Errorf("%s: done %v, attempts %d, recorded %q, previous %q; want pending with its attempts and its recorded result", n, r.Done(n), rec(r, n).Attempts, r.Recorded[n].Text, rec(r, n).PreviousOutcome().Text)
				}
				if u := rec(r, n).Usage; u == nil || u.TotalTokens != 10 {
					t.Errorf("%s: usage %+v, want what it cost kept (10 tokens)", n, u)
				}
			}
			if !slices.Equal(r.KeptReadChanged, tc.keptReadChanged) {
				t.Errorf("kept though what they read changed = %v, want %v (warnings %q)", r.KeptReadChanged, tc.keptReadChanged, r.Warnings)
			}
			all := strings.Join(r.Warnings, "\n")
			for _, w := range tc.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", r.Warnings, w)
				}
			}
			for _, w := range tc.unwarned {
				if strings.Contains(all, w) {
					t.Errorf("warnings %q say %q", r.Warnings, w)
				}
			}
			// What the user asked for, and what the early cut-off may
			// spare, are notes: --quiet leaves them out of cron's mail.
			notes := strings.Join(r.Notes, "\n")
			for _, n := range tc.notes {
				if !strings.Contains(notes, n) || strings.Contains(all, n) {
					t.Errorf("%q: notes %q, warnings %q; want it a note", n, r.Notes, r.Warnings)
				}
			}
		})
	}
}

func TestChoiceCheck(t *testing.T) {
	names := []string{"draft", "review", "publish"}
	tests := []struct {
		ch   checkpoint.Choice
		want string // "" for no error
	}{
		{checkpoint.Choice{Rerun: []string{"draft", "review"}, RerunFrom: []string{"review"}, Keep: []string{"publish"}}, ""},
		{checkpoint.Choice{Rerun: []string{"reveiw"}}, `--rerun: unknown task "reveiw" (did you mean "review"?)`},
		{checkpoint.Choice{RerunFrom: []string{"zzzzzz"}}, `--rerun-from: unknown task "zzzzzz" (known: draft, review, publish)`},
		{checkpoint.Choice{Keep: []string{"drafts"}}, `--keep: unknown task "drafts" (did you mean "draft"?)`},
		{checkpoint.Choice{Rerun: []string{"draft[1]"}}, `--rerun: draft[1] is one of task draft's instances or iterations, which are named together: --rerun draft`},
		{checkpoint.Choice{Keep: []string{"review#2"}}, `--keep: review#2 is one of task review's instances or iterations, which are named together: --keep review`},
		{checkpoint.Choice{Rerun: []string{"draft"}, Keep: []string{"draft"}}, "--keep draft and --rerun draft contradict"},
		{checkpoint.Choice{RerunFrom: []string{"draft"}, Keep: []string{"draft"}}, "--keep draft and --rerun-from draft contradict"},
	}
	for _, tc := range tests {
		err := tc.ch.Check(func() []string { return names })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.ch, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.ch, err, tc.want)
		}
	}
}

func TestDownstream(t *testing.T) {
	ds := chain()
	for _, tc := range []struct{ from, want []string }{
		{[]string{"b"}, []string{"b", "c", "d"}},
		{[]string{"a"}, []string{"a", "b", "c", "d", "x"}},
		{[]string{"x", "c"}, []string{"c", "d", "x"}},
		{nil, nil},
	} {
		if got := (checkpoint.Choice{}).Downstream(ds, tc.from); !slices.Equal(got, tc.want) {
			t.Errorf("Downstream(%v) = %v, want %v", tc.from, got, tc.want)
		}
	}
}

// What the session paid stays its own whatever a resumed run takes over:
// a task that runs again keeps its usage, one no longer in the spec
// leaves it in DroppedUsage, and the session file keeps that.
func TestContinueKeepsUsage(t *testing.T) {
	removeX := func(ds []spec.TaskDef) []spec.TaskDef {
		return slices.DeleteFunc(ds, func(d spec.TaskDef) bool { return d.Name == "x" })
	}
	tests := []struct {
		name    string
		defs    []spec.TaskDef
		reuse   checkpoint.Reuse
		dropped int // tokens
	}{
		{"a full restore", chain(), checkpoint.ReuseStrict, 0},
		{"a partial restore", chain("c"), checkpoint.ReuseStrict, 0},
		{"--reuse unchanged", chain("c"), checkpoint.ReuseUnchanged, 0},
		{"a task removed, partial", removeX(chain("c")), checkpoint.ReuseStrict, 10},
		{"a task removed, --reuse unchanged", removeX(chain()), checkpoint.ReuseUnchanged, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := finished()
			old.Team.DroppedUsage = &checkpoint.Usage{TotalTokens: 5} // an earlier run's
			fp := "other"
			if tc.name == "a full restore" {
				fp = "fp"
			}
			r := checkpoint.RestoreChoice(old, tc.defs, fp, checkpoint.Choice{Reuse: tc.reuse})
			s := checkpoint.Continue(old, r, spec.Sequential, tc.defs, fp, time.Unix(1, 0))
			if got := s.Team.DroppedUsage; got == nil || got.TotalTokens != 5+tc.dropped {
				t.Errorf("dropped usage %+v, want %d tokens", got, 5+tc.dropped)
			}
			for _, d := range tc.defs {
				if tr, _ := s.Task(d.Name); tr.Usage == nil || tr.Usage.TotalTokens != 10 {
					t.Errorf("task %s: usage %+v, want what it paid before", d.Name, tr.Usage)
				}
			}
			data, err := checkpoint.EncodeSession(s)
			if err != nil {
				t.Fatal(err)
			}
			back, err := checkpoint.DecodeSession("s", "test", data)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.Usage(); got == nil || got.TotalTokens != 55 {
				t.Errorf("the session's usage read back %+v, want all 55 tokens paid", got)
			}
		})
	}
}

// rec is r's record of the named task, nil for none.
func rec(r *checkpoint.Restored, name string) *checkpoint.TaskRecord {
	t, _ := r.Task(name)
	return t
}

// TestKeepPinsPreviousResult: --keep pins the result a task had before a
// run set it to run again and stopped (a --rerun that failed or was
// killed, a held task), under a full and a per-task restore; a task with
// no earlier result has nothing to pin, and that is said.
func TestKeepPinsPreviousResult(t *testing.T) {
	earlier := &checkpoint.PreviousResult{Outcome: checkpoint.Outcome{Text: "b\n"}}
	for _, tc := range []struct {
		name     string
		status   checkpoint.Status
		previous *checkpoint.PreviousResult
		kept     bool
	}{
		{"completed", checkpoint.StatusCompleted, nil, true},
		{"held, pending", checkpoint.StatusPending, earlier, true},
		{"killed while running", checkpoint.StatusRunning, earlier, true},
		{"its rerun failed", checkpoint.StatusFailed, earlier, true},
		{"failed, never completed", checkpoint.StatusFailed, nil, false},
		{"skipped", checkpoint.StatusSkipped, earlier, false},
		{"previously skipped", checkpoint.StatusPending, &checkpoint.PreviousResult{Outcome: checkpoint.Outcome{Skipped: true}}, false},
	} {
		for _, fp := range []string{"fp", "other"} {
			t.Run(tc.name+"/"+fp, func(t *testing.T) {
				s := finished()
				b := &s.Team.Tasks[1]
				b.Status, b.Previous = tc.status, tc.previous
				if tc.status != checkpoint.StatusCompleted {
					b.Result = ""
				}
				r := checkpoint.RestoreChoice(s, chain(), fp, checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"b"}})
				rec, _ := r.Task("b")
				if got := r.Done("b"); got != tc.kept {
					t.Fatalf("Done(b) = %v, want %v (warnings %q)", got, tc.kept, r.Warnings)
				}
				unkept := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "no recorded output") })
				if unkept == tc.kept {
					t.Errorf("a 'no recorded output' warning is %v, want %v: %q", unkept, !tc.kept, r.Warnings)
				}
				if tc.kept && rec.Result != "b\n" {
					t.Errorf("kept result %q, want %q", rec.Result, "b\n")
				}
				if previous := slices.Contains(r.KeptPrevious, "b"); previous != (tc.kept && tc.status != checkpoint.StatusCompleted) {
					t.Errorf("KeptPrevious = %q", r.KeptPrevious)
				}
			})
		}
	}
}

// A human task held by a stopped --rerun, with a decision equal to the
// result it completed with: that one was used, unless the task halted
// since for a new decision (its input changed), which the halt's record
// says: a decision recorded after it is about the new input.
func TestDecisionAfterHalt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		halted     bool
		wantDecide bool
	}{
		{"held, no halt since: the used decision goes", false, false},
		{"halted since: the decision is a new one", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := finished()
			b, _ := s.Task("b")
			prev := checkpoint.PreviousResult{Outcome: checkpoint.Outcome{Text: "approve"}}
			b.Status, b.Result, b.Previous = checkpoint.StatusPending, "", &prev
			s.Hold = &checkpoint.Hold{Tasks: map[string]checkpoint.Digested{"b": {Digest: checkpoint.Digest("approve"), Size: 7}},
				Inputs: map[string]checkpoint.Digested{"a": {Digest: checkpoint.Digest("a\n"), Size: 2}}}
			if tc.halted {
				s.Apply(checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "b", At: time.Unix(1, 0)})
			}
			s.Apply(checkpoint.Record{Kind: checkpoint.DecisionRecorded, Task: "b", Value: "approve", At: time.Unix(2, 0)})
			r := checkpoint.RestoreChoice(s, chain(), "fp", checkpoint.Choice{Human: func(i int) bool { return i == 1 }})
			if _, ok := r.Decisions["b"]; ok != tc.wantDecide {
				t.Errorf("decision kept = %v, want %v (held %v)", ok, tc.wantDecide, heldNames(r))
			}
			if _, held := r.Held["b"]; held == tc.wantDecide {
				t.Errorf("b held = %v, want %v", held, !tc.wantDecide)
			}
		})
	}
}

// --keep of the previous result of a task edited since it was made says
// it is kept although it changed, as --keep of a completed one does: the
// previous result keeps the key it was made under.
func TestKeepPreviousResultOfEditedTask(t *testing.T) {
	made := chain()[1].Key // b's key when its result was made
	for _, tc := range []struct {
		name    string
		edited  bool
		changed bool
	}{
		{"same definition", false, false},
		{"edited since", true, true},
	} {
		for _, fp := range []string{"fp", "other"} {
			t.Run(tc.name+"/"+fp, func(t *testing.T) {
				var defs []spec.TaskDef
				if defs = chain(); tc.edited {
					defs = chain("b")
				}
				s := finished()
				b := &s.Team.Tasks[1]
				// The stopped run set b to run again under today's key.
				b.Status, b.Result, b.Key = checkpoint.StatusFailed, "", defs[1].Key
				b.Previous = &checkpoint.PreviousResult{Outcome: checkpoint.Outcome{Text: "b\n"}, Key: made}
				r := checkpoint.RestoreChoice(s, defs, fp, checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"b"}})
				if !slices.Contains(r.KeptPrevious, "b") {
					t.Fatalf("KeptPrevious = %v, want b", r.KeptPrevious)
				}
				if got := slices.Contains(r.Kept, "b"); got != tc.changed {
					t.Errorf("kept although changed = %v, want %v (warnings %q)", got, tc.changed, r.Warnings)
				}
				warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "kept although its definition changed") })
				if warned != tc.changed {
					t.Errorf("warned %v, want %v: %q", warned, tc.changed, r.Warnings)
				}
			})
		}
	}
}

// --rerun b --keep c, c reading b: c is kept for that run, and the session
// says what it was made from until b ends in it (completes or is skipped).
// A run that stopped before then (b failed, halted, was killed) leaves c
// to the next restore as any reader of b: held, compared with b's result
// before that run, unless that restore pins it again (--keep c) or runs it
// (--rerun c), or c changed since.
func TestKeptHeldAfterStop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stop  []checkpoint.Record // what the run did before it stopped
		now   []spec.TaskDef
		ch    checkpoint.Choice
		held  bool // c is held by the next restore
		kept  bool // the session still says what c was made from
		rerun bool // c runs on request
		// keptRead: the next restore pins c (--keep c) though b, which
		// it reads, runs: said, as after --rerun b.
		keptRead bool
	}{
		{name: "b failed", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}, {Kind: checkpoint.TaskFailed, Task: "b", Error: "exit 1"}},
			now: chain(), held: true, kept: true},
		{name: "killed while b ran", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}},
			now: chain(), held: true, kept: true},
		{name: "halted at b", stop: []checkpoint.Record{{Kind: checkpoint.CurrentTask, Task: "b"}},
			now: chain(), held: true, kept: true},
		{name: "nothing ran", now: chain(), held: true, kept: true},
		{name: "b completed: adopted", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}, {Kind: checkpoint.TaskCompleted, Task: "b", Result: "b changed\n"}},
			now: chain()},
		{name: "b skipped: adopted", stop: []checkpoint.Record{{Kind: checkpoint.TaskSkipped, Task: "b"}},
			now: chain()},
		{name: "pinned again", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}},
			now: chain(), ch: checkpoint.Choice{Keep: []string{"c"}}, kept: true, keptRead: true},
		{name: "pinned again after b failed", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}, {Kind: checkpoint.TaskFailed, Task: "b", Error: "exit 1"}},
			now: chain(), ch: checkpoint.Choice{Keep: []string{"c"}}, kept: true, keptRead: true},
		{name: "pinned again, b completed", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}, {Kind: checkpoint.TaskCompleted, Task: "b", Result: "b changed\n"}},
			now: chain(), ch: checkpoint.Choice{Keep: []string{"c"}}},
		{name: "run on request", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}},
			now: chain(), ch: checkpoint.Choice{Rerun: []string{"c"}}, kept: true, rerun: true},
		{name: "c edited since", stop: []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "b"}},
			now: chain("c"), kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkpoint.RestoreChoice(finished(), chain(), "fp", checkpoint.Choice{Rerun: []string{"b"}, Keep: []string{"c"}})
			if !r.Done("c") || !slices.Equal(r.KeptReads["c"], []string{"b"}) {
				t.Fatalf("--rerun b --keep c: c done %v, kept over %v; want done, over b", r.Done("c"), r.KeptReads["c"])
			}
			s := checkpoint.Continue(finished(), r, spec.Sequential, chain(), "fp", time.Unix(1, 0))
			for k, rec := range tc.stop {
				rec.At = time.Unix(int64(2+k), 0)
				s.Apply(rec)
			}
			if kept := s.Hold != nil && len(s.Hold.Kept["c"]) > 0; kept != tc.kept {
				t.Errorf("after the stop, the session keeps c over b: %v, want %v (hold %+v)", kept, tc.kept, s.Hold)
			}
			next := checkpoint.RestoreChoice(s, tc.now, "fp", tc.ch)
			if _, held := next.Held["c"]; held != tc.held {
				t.Errorf("the next restore holds c: %v, want %v (held %v, warnings %q)", held, tc.held, heldNames(next), next.Warnings)
			}
			if tc.held {
				if next.Done("c") {
					t.Error("c is held and restored as done")
				}
				if v, ok := next.Recorded["b"]; !ok || !v.Same(checkpoint.Outcome{Text: "b\n"}) {
					t.Errorf("c is compared with b's %+v, want its result before the --rerun", v)
				}
				if v, ok := next.Recorded["c"]; !ok || !v.Same(checkpoint.Outcome{Text: "c\n"}) {
					t.Errorf("what reads c is compared with %+v, want c's kept result", v)
				}
			}
			if got := slices.Contains(next.Rerun, "c"); got != tc.rerun {
				t.Errorf("c runs on request: %v, want %v", got, tc.rerun)
			}
			said := slices.Contains(next.Warnings, "--keep c: kept, though what it reads runs again (b)")
			if got := slices.Contains(next.KeptRead, "c"); got != tc.keptRead || said != tc.keptRead {
				t.Errorf("c kept though b runs: %v, said %v, want %v (warnings %q)", got, said, tc.keptRead, next.Warnings)
			}
		})
	}
}
