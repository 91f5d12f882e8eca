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

// TestUnusedVars: a --var nothing reads is a warning; one a placeholder or
// a command names is not.
func TestUnusedVars(t *testing.T) {
	llmTeam := "variables: {topic: Go}\nagents: {w: {llm: m}}\ntasks:\n  a: {description: 'About {topic}', agent: w}\n"
	cmdTeam := "agents: {c: {shell: 'echo $TEAMRUN_VAR_WHO'}}\ntasks:\n  a: {description: a, agent: c}\n"
	tests := []struct {
		name, src string
		vars      []string
		want      []string
	}{
		{"used by a placeholder", llmTeam, []string{"topic"}, nil},
		{"unused, LLM team", llmTeam, []string{"topik"}, []string{"--var topik: no placeholder {topik} uses it, so it changes nothing; the team's variables: topic"}},
		{"used by a command", cmdTeam, []string{"who"}, nil},
		{"used by a field placeholder", "agents: {a: {role: A}}\nsteps:\n  - {agent: a, action: 'Greet {{user.name}}'}\n", []string{"user"}, nil},
		{"used by a foreach", "agents: {w: {llm: m}}\ntasks:\n  a: {description: 'About {item}', agent: w, foreach: {over: topics}}\n", []string{"topics"}, nil},
		{"unused, command team", cmdTeam, []string{"what"}, []string{"--var what: no placeholder {what} uses it and no command mentions TEAMRUN_VAR_WHAT (a script a command runs may still read it)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := spec.Parse("agents.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			for _, k := range tt.vars {
				vars[k] = "v"
			}
			if got := unusedVars(team, vars, tt.vars); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}
