package runner

import (
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The warning that --continue keeps a session's value of a variable the
// spec now sets otherwise shows where the two differ, not two prefixes
// cut at one place, and a list a --var gave as text as that list; a --var
// list equal to the spec's is no change.
func TestKeptVariablesSayWhatDiffers(t *testing.T) {
	team, err := spec.Parse("k.yaml", []byte(`variables:
  topics: ["Artificial Intelligence", "Machine Learning", "Neural Networks", "Natural Language Processing", "Deep Learning"]
  short: [a, b]
agents: {a: {shell: cat}}
tasks:
  t: {description: "{topics} {short}", agent: a}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		state map[string]any
		want  string // the warning's start, "" for none
	}{
		{"an item added at the end",
			map[string]any{"topics": []any{"Artificial Intelligence", "Machine Learning", "Neural Networks", "Natural Language Processing"}, "short": []any{"a", "b"}},
			`variable topics: session s1 started with …Language Processing"] (the spec says …Language Processing","Deep Learning"])`},
		{"a list a --var gave",
			map[string]any{"topics": `["y","x","z"]`, "short": []any{"a", "b"}},
			`variable topics: session s1 started with ["y","x","z"] (the spec says ["Artificial Intelligence","Machine Learning","Neural Networ…)`},
		{"the spec's list, given as a --var", map[string]any{"topics": `["Artificial Intelligence", "Machine Learning", "Neural Networks", "Natural Language Processing", "Deep Learning"]`, "short": `["a", "b"]`}, ""},
		{"a text", map[string]any{"topics": "AI", "short": []any{"a", "b"}}, `variable topics: session s1 started with "AI" (the spec says ["Artificial Intelligence"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := &checkpoint.Session{ID: "s1"}
			old.Team.InitialState = tt.state
			warns := keptVariables(team, old, nil)
			if tt.want == "" {
				if len(warns) > 0 {
					t.Errorf("warnings %q, want none", warns)
				}
				return
			}
			if len(warns) != 1 || !strings.HasPrefix(warns[0], tt.want) {
				t.Errorf("warnings %q, want one starting %q", warns, tt.want)
			}
		})
	}
}
