package checkpoint_test

import (
	"slices"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// foreachDefs is a foreach t over items (t[0], t[1], … joined by t), then
// u reading t and v reading u; edit changes item k's text.
func foreachDefs(items ...string) []spec.TaskDef {
	var ds []spec.TaskDef
	var join []string
	for k, it := range items {
		n := spec.InstanceName("t", k)
		ds = append(ds, spec.TaskDef{ID: k, Name: n, Agent: "w", Description: "do " + it, Key: "k-" + it, Expansion: &spec.Expansion{ForeachOf: "t"}})
		join = append(join, n)
	}
	ds = append(ds, spec.TaskDef{ID: len(ds), Name: "t", Agent: "foreach:t", Description: "join", Context: join, Key: "k-join", Expansion: &spec.Expansion{ForeachOf: "t"}},
		spec.TaskDef{ID: len(ds) + 1, Name: "u", Agent: "w", Description: "u", Context: []string{"t"}, Key: "k-u"},
		spec.TaskDef{ID: len(ds) + 2, Name: "v", Agent: "w", Description: "v", Context: []string{"u"}, Key: "k-v"})
	return ds
}

// TestFullRestoreChangedInstances: under a fingerprint match (over the
// declared tasks, so the items are not in it), an instance whose rendered
// definition changed runs again; what reads it is held for the early
// cut-off (reused if what it reads comes out the same); --keep pins a task
// and spares what reads only it.
func TestFullRestoreChangedInstances(t *testing.T) {
	old := checkpoint.NewSession("s", "team.yaml", "team", spec.Sequential, foreachDefs("a", "b", "c"), "fp", time.Now())
	for i := range old.Team.Tasks {
		old.Team.Tasks[i].Status, old.Team.Tasks[i].Result = checkpoint.StatusCompleted, "r"
		old.Checkpoint.Decisions[old.Team.Tasks[i].Name] = "approve"
	}
	old.Checkpoint.Decisions["gone"] = "approve" // a task no longer in the spec
	tests := []struct {
		name   string
		items  []string
		keep   []string
		reused []string
		held   []string
	}{
		{"same items", []string{"a", "b", "c"}, nil, []string{"t[0]", "t[1]", "t[2]", "t", "u", "v"}, nil},
		{"one item edited", []string{"a", "B", "c"}, nil, []string{"t[0]", "t[2]"}, []string{"t", "u", "v"}},
		{"one item more", []string{"a", "b", "c", "d"}, nil, []string{"t[0]", "t[1]", "t[2]"}, []string{"u", "v"}},
		{"one item less", []string{"a", "b"}, nil, []string{"t[0]", "t[1]"}, []string{"u", "v"}},
		{"edited, u kept", []string{"a", "B", "c"}, []string{"u"}, []string{"t[0]", "t[2]", "u", "v"}, []string{"t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checkpoint.RestoreChoice(old, foreachDefs(tt.items...), "fp", checkpoint.Choice{Keep: tt.keep})
			if r.Kind != checkpoint.RestoreFull {
				t.Fatalf("restore %s, want full", r.Kind)
			}
			if !slices.Equal(r.Reused, tt.reused) {
				t.Errorf("reused %v, want %v", r.Reused, tt.reused)
			}
			var held []string
			for n := range r.Held {
				held = append(held, n)
			}
			if !sameSet(held, tt.held) {
				t.Errorf("held %v, want %v", held, tt.held)
			}
			// Each held task and each changed one has its recorded result
			// to compare with.
			for _, n := range append(held, "t[1]") {
				if _, ok := r.Recorded[n]; !ok && !slices.Contains(tt.reused, n) {
					t.Errorf("%s: no recorded result to compare with", n)
				}
			}
			for _, n := range []string{"t", "u", "v"} {
				if slices.Contains(tt.reused, n) != r.Done(n) {
					t.Errorf("%s: done %v", n, r.Done(n))
				}
			}
			// A decision stays with a task carried over, and only then.
			var decided []string
			for n := range r.Decisions {
				decided = append(decided, n)
			}
			if !sameSet(decided, tt.reused) {
				t.Errorf("decisions kept for %v, want %v", decided, tt.reused)
			}
			// One says what changed and one that u is kept though t,
			// which it reads, may run; what is held is a note.
			want := 0
			if !slices.Equal(tt.reused, tests[0].reused) {
				want = 1
			}
			if len(tt.keep) > 0 {
				want++
			}
			if len(r.Warnings) != want {
				t.Errorf("warnings %q, want %d", r.Warnings, want)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}
