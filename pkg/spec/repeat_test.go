package spec

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestExpandRepeat(t *testing.T) {
	src := `agents:
  w: {shell: cat}
tasks:
  intro: {description: Intro, agent: w}
  draft:
    description: 'Improve: {previous_output}'
    agent: w
    repeat: {until: Approved, max_iterations: 3}
    output_variable: final
    output_file: final.txt
  publish: {description: '{final}', agent: w}
`
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Warnings) != 0 {
		t.Errorf("{previous_output} of a repeat task is bound, yet warned about: %v", ErrorList(team.Warnings))
	}
	x, err := team.Expand(nil)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"intro", "draft#1", "draft#2", "draft#3", "draft", "publish"}
	wantCtx := [][]string{nil, {"intro"}, {"intro", "draft#1"}, {"intro", "draft#2"}, {"draft#1", "draft#2", "draft#3"}, {"draft"}}
	wantUntil := []string{"", "", "Approved", "Approved", "", ""}
	var names []string
	for i, tk := range x.Tasks {
		names = append(names, tk.Name)
		if got := x.ContextOf(i); i < len(wantCtx) && !slices.Equal(got, wantCtx[i]) {
			t.Errorf("context of %s = %q, want %q", tk.Name, got, wantCtx[i])
		}
		if i < len(wantUntil) && tk.Expanded().Until != wantUntil[i] {
			t.Errorf("%s: until %q, want %q", tk.Name, tk.Expanded().Until, wantUntil[i])
		}
		if strings.HasPrefix(tk.Name, "draft#") && (tk.OutputVariable != "" || tk.OutputFile() != "" || tk.Repeat != nil || tk.Expanded().RepeatOf != "draft") {
			t.Errorf("iteration %s: %+v", tk.Name, tk)
		}
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tasks %q, want %q", names, wantNames)
	}
	join := x.Tasks[4]
	if join.OutputVariable != "final" || join.OutputFile() != "final.txt" || join.Expanded().RepeatOf != "draft" || join.Expanded().Iteration != 0 {
		t.Errorf("the join carries the task's outputs: %+v", join)
	}
	if a := x.Agents[len(x.Agents)-1]; a.Kind != JoinAgent || a.Name != "repeat:draft" {
		t.Errorf("join agent %+v", a)
	}
	// The fingerprint is over the declared tasks: max_iterations is not in it.
	more, err := Parse("a.yaml", []byte(strings.Replace(src, "max_iterations: 3", "max_iterations: 4", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if team.Fingerprint(nil) != more.Fingerprint(nil) {
		t.Error("max_iterations changed the fingerprint")
	}
	// until is in an iteration's key, from the second on.
	other, err := Parse("a.yaml", []byte(strings.Replace(src, "until: Approved", "until: Done", 1)))
	if err != nil {
		t.Fatal(err)
	}
	y, _ := other.Expand(nil)
	dx, dy := x.TaskDefs(nil), y.TaskDefs(nil)
	for i := range dx {
		if changed, want := dx[i].OwnKey != dy[i].OwnKey, dx[i].Name == "draft#2" || dx[i].Name == "draft#3"; changed != want {
			t.Errorf("%s: own key changed %v, want %v", dx[i].Name, changed, want)
		}
	}
}

func TestRepeatDefaultsAndPlaceholders(t *testing.T) {
	team, err := Parse("a.yaml", []byte("agents: {w: {shell: cat}}\ntasks:\n  a: {description: a, agent: w, repeat: {}}\n  b: {description: '{previous_output}', agent: w}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := team.Tasks[0].Repeat; r == nil || r.MaxIterations != DefaultMaxIterations || r.Until != "" {
		t.Errorf("repeat: {} is %+v, want %d iterations without until", r, DefaultMaxIterations)
	}
	if d := team.UndefinedPlaceholders(nil); len(d) != 1 || d[0].Path != "tasks.b.description" {
		t.Errorf("{previous_output} outside a repeat: %v, want one warning on tasks.b", ErrorList(d))
	}
}

func TestRepeatRefused(t *testing.T) {
	head := "variables: {xs: [a]}\nagents: {w: {shell: cat}}\ntasks:\n"
	tests := []struct{ name, tasks, want string }{
		{"zero iterations", "  a: {description: a, agent: w, repeat: {max_iterations: 0}}\n", "tasks.a.repeat.max_iterations: expected at least 1"},
		{"too many", "  a: {description: a, agent: w, repeat: {max_iterations: 101}}\n", "tasks.a.repeat.max_iterations: expected at most 100"},
		{"not a mapping", "  a: {description: a, agent: w, repeat: 3}\n", "tasks.a.repeat: expected a mapping"},
		{"unknown key", "  a: {description: a, agent: w, repeat: {until: x, steps: []}}\n", `unknown key "steps"`},
		{"foreach", "  a: {description: a, agent: w, repeat: {until: x}, foreach: {over: xs}}\n", "cannot both repeat and run once per item"},
		{"human", "  d: {description: \"ok?\", agent: human, options: [yes, no], repeat: {until: yes}}\n", "a human task cannot repeat"},
		{"condition", "  a: {description: a, agent: w, repeat: {until: x}, condition: {x: [b]}}\n  b: {description: b, agent: w}\n", "a repeat task cannot route"},
		{"a name taken", "  a: {description: a, agent: w, repeat: {max_iterations: 2}}\n  'a#2': {description: b, agent: w}\n", "iteration a#2 has the name of another task"},
		{"an empty until", "  a: {description: a, agent: w, repeat: {until: \"\", max_iterations: 3}}\n", `a.yaml:4:49: tasks.a.repeat.until: expected the text that ends the repeat, got "", which every result holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("a.yaml", []byte(head+tt.tasks))
			if err == nil {
				_, err = team.Expand(team.InitialState(nil))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("more than one line: %v", err)
			}
		})
	}
}

// TestPraisonAIRepeatStep: a PraisonAI step's repeat: {until,
// max_iterations} is the native repeat; a repeat of steps, or a bad count,
// is refused in one line.
func TestPraisonAIRepeatStep(t *testing.T) {
	head := "framework: praisonai\nagents:\n  gen: {role: Writer, goal: write, backstory: b}\n  ev: {role: Judge, goal: judge, backstory: b}\nsteps:\n  - agent: gen\n    action: Write\n"
	team, err := Parse("p.yaml", []byte(head+"  - agent: ev\n    action: 'Evaluate: {{previous_output}}'\n    repeat: {until: approved, max_iterations: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := team.Tasks[1].Repeat; r == nil || r.Until != "approved" || r.MaxIterations != 3 {
		t.Fatalf("repeat %+v", r)
	}
	// Without max_iterations, each format's own default.
	for _, d := range []struct {
		name, src string
		want      int
	}{
		{"PraisonAI", head + "  - agent: ev\n    action: a\n    repeat: {until: approved}\n", 5},
		{"native", "agents:\n  w: {shell: cat}\ntasks:\n  t: {description: d, agent: w, repeat: {until: x}}\n", DefaultMaxIterations},
	} {
		team, err := Parse("p.yaml", []byte(d.src))
		if err != nil {
			t.Fatal(err)
		}
		if r := team.Tasks[len(team.Tasks)-1].Repeat; r == nil || r.MaxIterations != d.want {
			t.Errorf("%s: repeat without max_iterations: %+v, want %d iterations", d.name, r, d.want)
		}
	}
	tests := []struct{ name, step, want string }{
		{"a repeat of steps", "  - repeat: {until: x, steps: [{agent: ev, action: a}]}\n", "a repeat of steps is not supported yet"},
		{"zero", "  - agent: ev\n    action: a\n    repeat: {until: x, max_iterations: 0}\n", "max_iterations: expected a number of iterations from 1 to 100, got integer 0"},
		{"not a mapping", "  - agent: ev\n    action: a\n    repeat: twice\n", "repeat: expected a mapping such as {until: TEXT, max_iterations: N}"},
		{"an empty until", "  - agent: ev\n    action: a\n    repeat: {until: '', max_iterations: 3}\n", `p.yaml:10:21: steps[1].repeat.until: expected the text that ends the repeat, got "", which every result holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(head+tt.step))
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one error containing %q", err, tt.want)
			}
		})
	}
}

// TestExpandRecordsWhatMadeEachTask: every task Team.Expand makes carries
// an Expansion of its own, saying what made it; a task as declared carries
// none, and expanding leaves the declared team as it was, so it expands
// the same again.
func TestExpandRecordsWhatMadeEachTask(t *testing.T) {
	src := `process: workflow
agents:
  w: {shell: cat}
tasks:
  list: {description: List, agent: w, output_variable: topics}
  research:
    description: Research {topic}
    agent: w
    foreach: {over: topics, as: topic}
  draft:
    description: 'Improve: {previous_output}'
    agent: w
    repeat: {until: Approved, max_iterations: 2}
`
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	produced := map[string]any{"topics": []any{"go", "zig"}}
	want := map[string]Expansion{
		"list":        {},
		"research[0]": {ForeachOf: "research", After: []string{"list"}, Item: "go", As: "topic"},
		"research[1]": {ForeachOf: "research", After: []string{"list"}, Item: "zig", As: "topic", Index: 1},
		"research":    {ForeachOf: "research", After: []string{"list"}},
		"draft#1":     {RepeatOf: "draft", Iteration: 1},
		"draft#2":     {RepeatOf: "draft", Iteration: 2, Until: "Approved"},
		"draft":       {RepeatOf: "draft"},
	}
	for round := 1; round <= 2; round++ {
		x, err := team.ExpandWith(team.InitialState(nil), produced)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[*Expansion]string{}
		var names []string
		for _, tk := range x.Tasks {
			names = append(names, tk.Name)
			w, ok := want[tk.Name]
			if !ok {
				t.Errorf("round %d: unexpected task %s", round, tk.Name)
				continue
			}
			if got := tk.Expanded(); !reflect.DeepEqual(got, w) {
				t.Errorf("round %d: %s was made by %+v, want %+v", round, tk.Name, got, w)
			}
			if (tk.Expansion == nil) != (tk.Name == "list") {
				t.Errorf("round %d: %s: Expansion %v", round, tk.Name, tk.Expansion)
			}
			if tk.Expansion != nil {
				if other, dup := seen[tk.Expansion]; dup {
					t.Errorf("round %d: %s shares its Expansion with %s", round, tk.Name, other)
				}
				seen[tk.Expansion] = tk.Name
			}
		}
		if len(names) != len(want) {
			t.Errorf("round %d: tasks %q, want %d", round, names, len(want))
		}
		for _, tk := range team.Tasks {
			if tk.Expansion != nil {
				t.Errorf("round %d: declared task %s got an Expansion: %+v", round, tk.Name, *tk.Expansion)
			}
		}
	}
}

// TestRepeatIterations: after a PraisonAI repeat step, {{repeat_iterations}}
// is how many iterations ran: the repeat's expansion counts them (a task
// the join reads first) into a variable of that repeat's, which the texts
// after it read; before any repeat, or inside the first, nothing sets it,
// as in PraisonAI.
func TestRepeatIterations(t *testing.T) {
	src := `agents:
  w: {role: W, llm: m}
steps:
  - {agent: w, action: "Before {{repeat_iterations}}"}
  - {name: draft, agent: w, action: "Draft {{repeat_iterations}}", repeat: {until: done, max_iterations: 2}}
  - {agent: w, action: "After {{repeat_iterations}}", expected_output: "{{repeat_iterations}} drafts"}
  - {name: polish, agent: w, action: Polish, repeat: {until: done, max_iterations: 2}}
  - {agent: w, action: "Last {{repeat_iterations}}"}
`
	team, err := Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range team.Tasks {
		got = append(got, tk.Description+"|"+tk.ExpectedOutput)
	}
	want := []string{"Before {{repeat_iterations}}|", "Draft {{repeat_iterations}}|", "After {{draft_repeat_iterations}}|{{draft_repeat_iterations}} drafts", "Polish|", "Last {{polish_repeat_iterations}}|"}
	if !slices.Equal(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
	var undefined []string
	for _, d := range team.UndefinedPlaceholders(nil) {
		undefined = append(undefined, d.Path)
		if !strings.Contains(d.Message, "; PraisonAI sets it once a repeat step is done, for the steps after it") {
			t.Errorf("the warning does not say where PraisonAI sets it: %s", d.Message)
		}
	}
	if !slices.Equal(undefined, []string{"steps[0].action", "steps[1].action"}) {
		t.Errorf("undefined placeholders in %q", undefined)
	}
	x, err := team.Expand(team.InitialState(nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range x.Tasks {
		names = append(names, tk.Name)
	}
	if want := "step_1 draft#1 draft#2 draft#iterations draft step_3 polish#1 polish#2 polish#iterations polish step_5"; strings.Join(names, " ") != want {
		t.Errorf("tasks %s, want %s", strings.Join(names, " "), want)
	}
	count := x.Tasks[x.TaskIndex("draft#iterations")]
	if !slices.Equal(count.Context, []string{"draft#1", "draft#2"}) || count.OutputVariable != "draft_repeat_iterations" || !count.Expanded().Counts {
		t.Errorf("count %+v", count)
	}
	if join := x.Tasks[x.TaskIndex("draft")]; !slices.Equal(join.Context, []string{"draft#iterations", "draft#1", "draft#2"}) {
		t.Errorf("the join reads %q", join.Context)
	}
}

// Every name an expansion makes that another task has is said at once,
// each on its line naming the step, not one per run of validate.
func TestExpandSaysEveryNameTaken(t *testing.T) {
	team, err := Parse("n.yaml", []byte(`variables: {xs: [p, q]}
agents: {a: {role: A, llm: m}}
steps:
  - {name: ev, agent: a, action: x, repeat: {until: done, max_iterations: 2}}
  - {name: "ev#iterations", agent: a, action: "{{repeat_iterations}}"}
  - {name: "ev#2", agent: a, action: y}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = team.Expand(team.InitialState(nil))
	want := "n.yaml:4:5: steps[0]: ev#iterations has the name of another task: rename one\n" +
		"n.yaml:4:5: steps[0]: iteration ev#2 has the name of another task: rename one"
	if err == nil || err.Error() != want {
		t.Errorf("err:\n%v\nwant:\n%s", err, want)
	}
}
