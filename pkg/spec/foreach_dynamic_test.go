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
	if i := x.TaskIndex("second[1]"); i < 0 || x.Render(x.Tasks[i].Description, x.Tasks[i].Scope(nil)) != "again b!" {
		t.Errorf("tasks %v", x.TaskNames())
	}
}

// TestPraisonList: a PraisonAI loop over a text takes the list as
// PraisonAI's _parse_list_from_string does (each want is what it returns).
func TestPraisonList(t *testing.T) {
	tests := []struct {
		name, text string
		want       []any
	}{
		{"a JSON array", ` ["a", "b"] ` + "\n", []any{"a", "b"}},
		{"an empty array", "[]", []any{}},
		{"an empty text", " \n", []any{}},
		{"an array in a sentence", `Here are topics: ["a", "b"]. Enjoy.`, []any{"a", "b"}},
		{"an array in a json block", "Sure:\n```json\n[\"x\", {\"k\": 1}]\n```\n", []any{"x", map[string]any{"k": float64(1)}}},
		{"single quotes", `Topics: ['a', 'b']`, []any{"a", "b"}},
		// The pattern's quirks, as PraisonAI has them: a [ in quotes is
		// read, a ] ends the match there.
		{"an opening bracket inside quotes", `x ["a[b", "c"] y`, []any{"a[b", "c"}},
		{"a closing bracket inside quotes", `List: ["a]b", "c"]`, []any{`List: ["a]b", "c"]`}},
		{"an apostrophe before the array", `It's ['a', 'b']`, []any{"a", "b"}},
		{"the first non-empty array", `none [] here, [not json] and then [1, 2] and [3]`, []any{float64(1), float64(2)}},
		// PraisonAI's pattern sees no nested arrays: the first inner one.
		{"nested arrays", `Pairs: [["a", 1], ["b", 2]]`, []any{"a", float64(1)}},
		{"a JSON object", `{"items": ["a"]}`, []any{"a"}},
		{"no array", "Go, Rust and Zig.", []any{"Go, Rust and Zig."}},
		{"no array, trimmed", "  one line\n", []any{"one line"}},
		{"JSON that is no array", `"just a string"`, []any{`"just a string"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := foreachItems(&Foreach{Over: "xs", Text: true}, map[string]any{"xs": tt.text}, true)
			if err != nil {
				t.Fatal(err)
			}
			if FormatValue(got) != FormatValue(tt.want) || len(got) != len(tt.want) {
				t.Errorf("items %s, want %s", FormatValue(got), FormatValue(tt.want))
			}
		})
	}
}

// TestForeachItemsOfText: what a foreach makes of a text is one rule for
// both formats. A text the user gives (variables:, --var) is a list only
// when it is a JSON array, for a PraisonAI loop too, whose line says how
// to keep PraisonAI's one item; only a task's output that a PraisonAI loop
// reads is read as PraisonAI reads a model's answer.
func TestForeachItemsOfText(t *testing.T) {
	tests := []struct {
		name           string
		praison        bool
		produced       bool
		value          any
		want           []any
		err, errSuffix string
	}{
		{"native, given text", false, false, "AI, ML", nil, `got "AI, ML"`, `got "AI, ML"`},
		{"PraisonAI, given text", true, false, "AI, ML", nil, `got "AI, ML"`, `write it as a list of one, ["AI, ML"]`},
		{"native, output text", false, true, "AI, ML", nil, `got "AI, ML"`, `got "AI, ML"`},
		{"PraisonAI, output text", true, true, "AI, ML", []any{"AI, ML"}, "", ""},
		{"native, given JSON array", false, false, ` ["AI", "ML"]`, []any{"AI", "ML"}, "", ""},
		{"PraisonAI, given JSON array", true, false, `["AI", "ML"]` + "\n", []any{"AI", "ML"}, "", ""},
		{"PraisonAI, given array in a sentence", true, false, `Topics: ["AI", "ML"]`, nil, `got "Topics: [\"AI\", \"ML\"]"`, `["Topics: [\"AI\", \"ML\"]"]`},
		{"PraisonAI, given number", true, false, 7, nil, `got "7"`, `got "7"`},
		{"PraisonAI, given list", true, false, []any{"AI"}, []any{"AI"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := foreachItems(&Foreach{Over: "xs", Text: tt.praison}, map[string]any{"xs": tt.value}, tt.produced)
			if tt.err == "" {
				if err != nil || FormatValue(got) != FormatValue(tt.want) || len(got) != len(tt.want) {
					t.Errorf("items %s, %v; want %s", FormatValue(got), err, FormatValue(tt.want))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasSuffix(err.Error(), tt.errSuffix) {
				t.Errorf("error %v; want one with %s, ending %s", err, tt.err, tt.errSuffix)
			}
		})
	}
}

// TestPraisonLoopOverStepOutput: a loop over NAME_output loops over the
// output of the step NAME before it (its output_variable when it has one),
// expanded when that step finishes; a variable of that name wins.
func TestPraisonLoopOverStepOutput(t *testing.T) {
	const agents = "agents:\n  a: {role: A, llm: m}\n  b: {role: B, llm: m}\n"
	tests := []struct {
		name, src      string
		over, producer string
	}{
		{"a named step", agents + "steps:\n  - {name: plan, agent: a, action: List}\n  - {agent: b, action: '{{item}}', loop: {over: plan_output}}\n", "plan_output", "plan"},
		{"an agent's step", agents + "steps:\n  - {agent: a, action: List}\n  - {agent: b, action: '{{item}}', loop: {over: a_output}}\n", "a_output", "step_1"},
		{"a step with an output_variable", agents + "steps:\n  - {name: plan, agent: a, action: List, output_variable: topics}\n  - {agent: b, action: '{{item}}', loop: {over: plan_output}}\n", "topics", "plan"},
		{"a variable of that name", "variables: {plan_output: [x]}\n" + agents + "steps:\n  - {name: plan, agent: a, action: List}\n  - {agent: b, action: '{{item}}', loop: {over: plan_output}}\n", "plan_output", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(team.Warnings) != 0 {
				t.Errorf("warnings: %v", ErrorList(team.Warnings))
			}
			f := team.Tasks[1].Foreach
			if f.Over != tt.over || team.Producer(f) != tt.producer {
				t.Errorf("loop over %q made by %q, want %q made by %q", f.Over, team.Producer(f), tt.over, tt.producer)
			}
			if tt.producer == "" {
				return
			}
			x, err := team.ExpandWith(team.InitialState(nil), map[string]any{tt.over: "Topics:\n```json\n[\"go\", \"zig\"]\n```"})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(x.TaskNames(), " "); got != tt.producer+" step_2[0] step_2[1] step_2" {
				t.Errorf("tasks %s", got)
			}
		})
	}
}

// TestDeferredJoin: a name is an instance of a deferred foreach only when
// its foreach waits for its producer and the name is one InstanceName
// makes; plan lists such a record as made anew, not as removed.
func TestDeferredJoin(t *testing.T) {
	src := `process: workflow
agents:
  w: {shell: cat}
tasks:
  list: {description: List, agent: w, output_variable: topics}
  research:
    description: Research {topic}
    agent: w
    foreach: {over: topics, as: topic}
`
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	deferred, err := team.ExpandWith(team.InitialState(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := team.ExpandWith(team.InitialState(nil), map[string]any{"topics": []any{"go"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		team *Team
		name string
		want string
	}{
		{deferred, "research[0]", "research"},
		{deferred, "research[12]", "research"},
		{deferred, "research", ""},
		{deferred, "research[-1]", ""},
		{deferred, "research[01]", ""},
		{deferred, "research[x]", ""},
		{deferred, "list[0]", ""},
		{deferred, "gone", ""},
		{expanded, "research[1]", ""}, // expanded: a name it lacks is removed
	}
	for _, tt := range tests {
		got := ""
		if j := tt.team.DeferredJoin(tt.name); j != nil {
			got = j.Name
		}
		if got != tt.want {
			t.Errorf("DeferredJoin(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
