package spec

import (
	"slices"
	"strings"
	"testing"
)

// TestExpandForeachOverOutput: a foreach over an earlier task's
// output_variable is deferred until that task produced it, then expands
// like a static one; its instances and join wait for the producer.
func TestExpandForeachOverOutput(t *testing.T) {
	src := `process: workflow
agents:
  w: {shell: cat}
tasks:
  list: {description: List, agent: w, output_variable: topics}
  other: {description: Other, agent: w}
  research:
    description: Research {topic}
    agent: w
    context: [other]
    foreach: {over: topics, as: topic}
  summary: {description: Sum up, agent: w, context: [research]}
`
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Warnings) != 0 {
		t.Errorf("warnings %v", ErrorList(team.Warnings))
	}
	tests := []struct {
		name        string
		produced    map[string]any
		names       []string
		expandsWhen string
		joinError   string
	}{
		{"not produced yet", nil, []string{"list", "other", "research", "summary"}, "list", ""},
		{"a list", map[string]any{"topics": []any{"go", "zig"}}, []string{"list", "other", "research[0]", "research[1]", "research", "summary"}, "", ""},
		{"a JSON array in a string", map[string]any{"topics": `["go"]` + "\n"}, []string{"list", "other", "research[0]", "research", "summary"}, "", ""},
		{"not a list", map[string]any{"topics": "go and zig"}, []string{"list", "other", "research", "summary"}, "",
			`a.yaml:11:5: tasks.research.foreach: foreach over topics: expected a list (or a JSON array such as '["a", "b"]'), got "go and zig" (the output of task list)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := team.ExpandWith(team.InitialState(nil), tt.produced)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tk := range x.Tasks {
				names = append(names, tk.Name)
				if strings.HasPrefix(tk.Name, "research") && !slices.Equal(tk.Expanded().After, []string{"list"}) {
					t.Errorf("%s does not wait for list: after %q", tk.Name, tk.Expanded().After)
				}
				if strings.HasPrefix(tk.Name, "research[") && !slices.Equal(tk.Context, []string{"other"}) {
					t.Errorf("%s reads %q, want its task's context", tk.Name, tk.Context)
				}
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("tasks %q, want %q", names, tt.names)
			}
			join := x.Tasks[x.TaskIndex("research")].Expanded()
			if join.ExpandsWhen != tt.expandsWhen || join.JoinError != tt.joinError {
				t.Errorf("join: expands when %q, error %q; want %q, %q", join.ExpandsWhen, join.JoinError, tt.expandsWhen, tt.joinError)
			}
		})
	}
}

// TestExpandForeachOverForeach: a foreach over the results of another
// foreach (its JSON array) waits for that one's join.
func TestExpandForeachOverForeach(t *testing.T) {
	src := "variables: {xs: [a, b]}\nagents: {w: {shell: cat}}\ntasks:\n  first: {description: '{item}', agent: w, foreach: {over: xs}, output_variable: ys}\n  second: {description: 'again {item}', agent: w, foreach: {over: ys}}\n"
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x, err := team.ExpandWith(team.InitialState(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if j := x.Tasks[x.TaskIndex("second")].Expanded(); j.ExpandsWhen != "first" {
		t.Errorf("second expands when %q, want first", j.ExpandsWhen)
	}
	x, err = team.ExpandWith(team.InitialState(nil), map[string]any{"ys": `["a!","b!"]`})
	if err != nil {
		t.Fatal(err)
	}
	if i := x.TaskIndex("second[1]"); i < 0 || x.Tasks[i].Description != "again b!" {
		t.Errorf("tasks %v", x.TaskNames())
	}
}
