package runner

import (
	"slices"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

// TestVarCollisions: a --var whose TEAMRUN_VAR_<NAME> another name
// already takes is a warning naming both (F7).
func TestVarCollisions(t *testing.T) {
	team, err := spec.Parse("agents.yaml", []byte("variables: {topic: Go}\nagents: {w: {shell: cat}}\ntasks:\n  a: {description: a, agent: w, output_variable: words}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		order []string
		want  []string
	}{
		{"none", []string{"who", "topic"}, nil},
		{"two flags", []string{"who", "Who"}, []string{"--var who and --var Who both reach command agents as TEAMRUN_VAR_WHO, so they see only one of them: rename one"}},
		{"a spec variable", []string{"TOPIC"}, []string{"--var TOPIC and variable topic both reach command agents as TEAMRUN_VAR_TOPIC, so they see only one of them: rename one"}},
		{"an output_variable", []string{"Words"}, []string{`--var Words and output_variable words of task "a" both reach command agents as TEAMRUN_VAR_WORDS, so they see only one of them: rename one`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{}
			for _, k := range tt.order {
				vars[k] = "v"
			}
			if got := varCollisions(team, vars, tt.order); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}
