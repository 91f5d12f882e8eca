package checkpoint

import (
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// How the variables a task sets or reads changed since its completed
// record is said by name: which variable, and which task sets it now or
// did before; nothing when it did not change, or no record tells.
func TestVariableChanges(t *testing.T) {
	const head = "agents:\n  w: {shell: cat}\ntasks:\n"
	for _, tt := range []struct {
		name  string
		tasks string            // the file's tasks now
		set   map[string]string // by completed task, the variable it set ("" none)
		want  map[string]string
	}{
		{"moved to another task",
			"  a: {description: a, agent: w}\n  b: {description: b, agent: w, output_variable: v}\n",
			map[string]string{"a": "v", "b": ""},
			map[string]string{"a": "output_variable v moved to b", "b": "output_variable v moved to it from a"}},
		{"no longer set by one of two: no move", // a set it before and still does
			"  a: {description: a, agent: w, output_variable: v}\n  b: {description: b, agent: w}\n",
			map[string]string{"a": "v", "b": "v"},
			map[string]string{"b": "it no longer sets output_variable v"}},
		{"set by one more: no move", // a set it before and still does
			"  a: {description: a, agent: w, output_variable: v}\n  b: {description: b, agent: w, output_variable: v}\n",
			map[string]string{"a": "v", "b": ""},
			map[string]string{"b": "it sets output_variable v now"}},
		{"dropped", "  a: {description: a, agent: w}\n", map[string]string{"a": "v"},
			map[string]string{"a": "it no longer sets output_variable v"}},
		{"added", "  a: {description: a, agent: w, output_variable: v}\n", map[string]string{"a": ""},
			map[string]string{"a": "it sets output_variable v now"}},
		{"renamed", "  a: {description: a, agent: w, output_variable: u}\n", map[string]string{"a": "v"},
			map[string]string{"a": "output_variable v is u now"}},
		{"unchanged", "  a: {description: a, agent: w, output_variable: v}\n  b: {description: b, agent: w}\n", map[string]string{"a": "v", "b": ""},
			map[string]string{}},
		{"not completed: no record tells", "  a: {description: a, agent: w, output_variable: v}\n", map[string]string{},
			map[string]string{}},
		{"a reader's variable moved",
			"  a: {description: a, agent: w}\n  b: {description: b, agent: w, output_variable: v}\n  c: {description: 'from {v}', agent: w}\n",
			map[string]string{"a": "v", "b": "", "c": ""},
			map[string]string{"a": "output_variable v moved to b", "b": "output_variable v moved to it from a", "c": "{v} is set by b now, not a"}},
		{"a reader's variable set where nothing set it",
			"  a: {description: a, agent: w, output_variable: v}\n  c: {description: 'from {v}', agent: w}\n",
			map[string]string{"a": "", "c": ""},
			map[string]string{"a": "it sets output_variable v now", "c": "{v} is set by a now, where no task set it"}},
		{"a reader's variable no longer set",
			"  a: {description: a, agent: w}\n  c: {description: 'from {v}', agent: w}\n",
			map[string]string{"a": "v", "c": ""},
			map[string]string{"a": "it no longer sets output_variable v", "c": "no task sets {v} before it now (a did)"}},
		{"a task that reads and sets a variable", // what it set itself is not what it read
			"  a: {description: a, agent: w, output_variable: v}\n  b: {description: 'improve {v}', agent: w, output_variable: v}\n",
			map[string]string{"a": "v", "b": "v"},
			map[string]string{}},
		{"moved after its reader: it never set what the reader read",
			"  c: {description: 'from {v}', agent: w}\n  a: {description: a, agent: w, output_variable: v}\n",
			map[string]string{"c": "", "a": "v"},
			map[string]string{}},
		{"a producer a route skipped last time", // what it sets, its record does not tell
			"  g: {description: g, agent: w}\n  b: {description: b, agent: w, output_variable: v}\n  c: {description: 'from {v}', agent: w}\n",
			map[string]string{"g": "", "c": ""},
			map[string]string{}},
		{"a reader of an unchanged variable", "  a: {description: a, agent: w, output_variable: v}\n  c: {description: 'from {v}', agent: w}\n",
			map[string]string{"a": "v", "c": ""},
			map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			team, err := spec.Parse("agents.yaml", []byte(head+tt.tasks))
			if err != nil {
				t.Fatal(err)
			}
			defs := team.TaskDefs(team.InitialState(nil))
			sess := NewSession("s1", "/p/agents.yaml", "t", team.Process, defs, spec.FingerprintOf(defs), time.Now())
			for i := range sess.Team.Tasks {
				rec := &sess.Team.Tasks[i]
				v, ok := tt.set[rec.Name]
				if !ok {
					rec.Status = StatusSkipped
					continue
				}
				rec.Status, rec.Result = StatusCompleted, "ok"
				if v != "" {
					rec.Variables = map[string]any{v: "ok"}
				}
			}
			got := VariableChanges(team, sess)
			if len(got) != len(tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			for k, w := range tt.want {
				if got[k] != w {
					t.Errorf("%s: %q, want %q", k, got[k], w)
				}
			}
		})
	}
}
