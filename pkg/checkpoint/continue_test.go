package checkpoint

import (
	"bytes"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/teamrun/teamrun/pkg/spec"
)

// continueDefs are n tasks t0… each reading the one before; edited
// names the ones whose definition changed since the checkpoint.
func continueDefs(n int, edited ...string) []spec.TaskDef {
	ds := make([]spec.TaskDef, n)
	for i := range ds {
		name := fmt.Sprintf("t%d", i)
		ds[i] = spec.TaskDef{ID: i, Name: name, Agent: "w", Description: "task " + name, Key: "k-" + name, OwnKey: "own-" + name}
		if i > 0 {
			ds[i].Context = []string{ds[i-1].Name}
		}
		if slices.Contains(edited, name) {
			ds[i].Description += " edited"
			ds[i].Key += "-edited"
			ds[i].OwnKey += "-edited"
		}
	}
	return ds
}

// continuedFrom is a session of continueDefs(n) in every state a restore
// tells apart: completed (one result stored out of line, over 1 MB), failed,
// skipped, running and pending.
func continuedFrom(n int) *Session {
	at := time.Unix(1700000000, 0).UTC()
	s := NewSession("s", "team.yaml", "t", spec.Workflow, continueDefs(n), "fp", at)
	for i := range s.Team.Tasks {
		t := &s.Team.Tasks[i]
		t.Attempts, t.StartedAt = 1, &at
		t.History = []Attempt{{N: 1, Start: at, End: &at, Outcome: StatusCompleted, Digest: Digest(t.Name)}}
		switch i % 5 {
		case 0, 1:
			t.Status, t.Result, t.FinishedAt = StatusCompleted, t.Name+"\n", &at
			t.Variables = map[string]any{"v": t.Name}
		case 2:
			t.Status, t.Error = StatusFailed, "exit status 1"
			t.History[0].Outcome, t.History[0].Digest, t.History[0].Error = StatusFailed, "", "exit status 1"
		case 3:
			t.Status = StatusSkipped
		case 4:
			t.Status = StatusRunning
		}
	}
	s.Team.Tasks[0].Result, s.Team.Tasks[0].Blob = "", &Blob{Digest: Digest("big"), Size: 2 << 20}
	return s
}

// Continue takes over the restore's records as the new session's: the
// session it makes is byte for byte the one it made from copies of them,
// whatever the restore decided, and Restored.Tasks then points at its
// records.
func TestContinueTakesRestoredRecords(t *testing.T) {
	const n = 40
	at := time.Unix(1800000000, 0)
	tests := []struct {
		name string
		defs []spec.TaskDef
		fp   string
		ch   Choice
	}{
		{"full", continueDefs(n), "fp", Choice{}},
		{"partial", continueDefs(n, "t6"), "fp2", Choice{}},
		{"per task", continueDefs(n, "t6"), "fp2", Choice{Reuse: ReuseUnchanged}},
		{"rerun", continueDefs(n), "fp", Choice{Rerun: []string{"t5"}, RerunFrom: []string{"t20"}}},
		{"keep", continueDefs(n, "t1"), "fp2", Choice{Reuse: ReuseUnchanged, Keep: []string{"t1"}}},
		{"refused", continueDefs(n), "fp", Choice{Refuse: func(r *Restored) []Refusal {
			out := make([]Refusal, n)
			out[10], out[11] = Refusal{Why: "no longer fits"}, Refusal{Why: "reads one", Held: true}
			return out
		}}},
		{"tasks added and gone", slices.Concat(continueDefs(n)[5:], []spec.TaskDef{{ID: n, Name: "new", Key: "k-new"}}), "fp3", Choice{Reuse: ReuseUnchanged}},
		{"reordered", slices.Concat(continueDefs(n)[20:], continueDefs(n)[:20]), "fp", Choice{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.defs {
				tt.defs[i].ID = i
			}
			taken := RestoreChoice(continuedFrom(n), tt.defs, tt.fp, tt.ch)
			got := Continue(continuedFrom(n), taken, spec.Workflow, tt.defs, tt.fp, at)
			copied := RestoreChoice(continuedFrom(n), tt.defs, tt.fp, tt.ch)
			copied.taken = true // as after another Continue took them: copies
			want := Continue(continuedFrom(n), copied, spec.Workflow, tt.defs, tt.fp, at)

			g, err := EncodeSession(got)
			if err != nil {
				t.Fatal(err)
			}
			w, err := EncodeSession(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(g, w) {
				t.Errorf("the session made from the restore's own records differs from the one made from copies:\n%s\nwant\n%s", g, w)
			}
			for i := range got.Team.Tasks {
				rec := &got.Team.Tasks[i]
				if p, ok := taken.Task(rec.Name); ok && p != rec {
					t.Errorf("Restored.Task(%q) is not the session's record", rec.Name)
				}
			}
			if !taken.taken {
				t.Error("the restore does not know Continue took its records")
			}
		})
	}
}

// A restored 2,000-task session's continuation holds one list of records,
// the restore's: Continue allocated a second one (640 KB) and copied every
// record into it.
func TestContinueAllocatesNoSecondRecordList(t *testing.T) {
	const n = 2000
	defs := continueDefs(n)
	old := continuedFrom(n)
	r := RestoreChoice(old, defs, "fp", Choice{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sess := Continue(old, r, spec.Workflow, defs, "fp", time.Unix(1800000000, 0))
	runtime.ReadMemStats(&after)
	list := uint64(n) * uint64(unsafe.Sizeof(TaskRecord{}))
	if got := after.TotalAlloc - before.TotalAlloc; got >= list/2 {
		t.Errorf("Continue allocated %d bytes for %d tasks: a list of their records is %d", got, n, list)
	}
	runtime.KeepAlive(sess)
}

// A task restored as it is under a matching fingerprint although its
// agent definition or context changed keeps, in the session Continue
// makes, the keys and context its result was made under, so the next
// restore still tells; one --keep pins adopts today's, and one that runs
// (asked for, or read by a task that runs: never held then) takes today's.
func TestContinueKeepsUncoveredKeys(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	defs := []spec.TaskDef{
		{ID: 0, Name: "a", Agent: "w", AgentKey: "ak", Key: "ka", OwnKey: "oa"},
		{ID: 1, Name: "b", Agent: "v", AgentKey: "av", Key: "kb", OwnKey: "ob", Context: []string{"a"}},
		{ID: 2, Name: "c", Agent: "w", AgentKey: "ak", Key: "kc", OwnKey: "oc", Context: []string{"a"}},
	}
	recorded := func() *Session { // each its own: Continue may take its records over
		s := NewSession("s", "team.yaml", "t", spec.Workflow, defs, "fp", at)
		for i := range s.Team.Tasks {
			s.Team.Tasks[i].Status, s.Team.Tasks[i].Result = StatusCompleted, "r"
		}
		return s
	}
	today := slices.Clone(defs)
	today[1].AgentKey, today[1].Key, today[1].OwnKey = "av2", "kb2", "ob2" // b's agent changed
	today[2].Context, today[2].Key, today[2].OwnKey = []string{"a", "b"}, "kc2", "oc2"
	tests := []struct {
		name string
		ch   Choice
		kept []string // the tasks whose recorded keys stay
		runs []string // the tasks that run, held by none
	}{
		{"restored", Choice{}, []string{"b", "c"}, nil},
		{"kept", Choice{Keep: []string{"b"}}, []string{"c"}, nil},
		{"rerun", Choice{Rerun: []string{"c"}}, []string{"b"}, []string{"c"}},
		{"read by a rerun", Choice{Rerun: []string{"a"}}, nil, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := recorded()
			r := RestoreChoice(old, today, "fp", tt.ch)
			if r.Kind != RestoreFull {
				t.Fatalf("restore %s, want full", r.Kind)
			}
			s := Continue(old, r, spec.Workflow, today, "fp", at)
			for i, d := range today {
				rec, _ := s.Task(d.Name)
				want := d
				if slices.Contains(tt.kept, d.Name) {
					want = defs[i]
				}
				if rec.Key != want.Key || rec.AgentKey != want.AgentKey || rec.OwnKey != want.OwnKey || !slices.Equal(rec.Context, want.Context) {
					t.Errorf("%s: record's keys %s %s %s %v, want %s %s %s %v", d.Name, rec.Key, rec.AgentKey, rec.OwnKey, rec.Context,
						want.Key, want.AgentKey, want.OwnKey, want.Context)
				}
				if runs := slices.Contains(tt.runs, d.Name); runs != (rec.Status == StatusPending) || runs && len(r.Held) > 0 {
					t.Errorf("%s: status %s, held %v; want it to run, held by none: %v", d.Name, rec.Status, slices.Sorted(maps.Keys(r.Held)), runs)
				}
			}
		})
	}
}
