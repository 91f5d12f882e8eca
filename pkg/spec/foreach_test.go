package spec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestExpandForeach(t *testing.T) {
	src := `variables:
  topics: [go, rust]
agents:
  w: {shell: cat}
tasks:
  intro: {description: Intro, agent: w}
  research:
    description: Research {topic} for {who}
    expected_output: Notes on {topic}
    agent: w
    foreach: {over: topics, as: topic}
    output_variable: notes
    output_file: notes.json
  summary: {description: Sum up, agent: w}
`
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		state     map[string]any
		names     []string
		descs     []string
		contexts  [][]string
		wantError string
	}{
		{"a list variable", team.InitialState(nil),
			[]string{"intro", "research[0]", "research[1]", "research", "summary"},
			[]string{"Intro", "Research go for {who}", "Research rust for {who}", "the results of research[0..1] as a JSON array", "Sum up"},
			[][]string{nil, {"intro"}, {"intro"}, {"research[0]", "research[1]"}, {"research"}}, ""},
		{"a --var JSON array", team.InitialState(map[string]string{"topics": `["a", 1, {"k": "v"}]`}),
			[]string{"intro", "research[0]", "research[1]", "research[2]", "research", "summary"},
			[]string{"Intro", "Research a for {who}", "Research 1 for {who}", `Research {"k":"v"} for {who}`, "the results of research[0..2] as a JSON array", "Sum up"},
			nil, ""},
		{"an empty list", map[string]any{"topics": []any{}},
			[]string{"intro", "research", "summary"}, nil, [][]string{nil, nil, {"research"}}, ""},
		{"not a list", map[string]any{"topics": "go"}, nil, nil, nil,
			`a.yaml:11:5: tasks.research.foreach: foreach over topics: expected a list (or a JSON array such as '["a", "b"]'), got "go"`},
		{"a null", map[string]any{"topics": nil}, nil, nil, nil,
			`a.yaml:11:5: tasks.research.foreach: foreach over topics: expected a list (or a JSON array such as '["a", "b"]'), got null (nothing)`},
		{"no such variable", map[string]any{}, nil, nil, nil,
			`a.yaml:11:5: tasks.research.foreach: foreach over topics: no variable topics; set it under variables: or with --var topics='["a", "b"]'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := team.Expand(tt.state)
			if tt.wantError != "" {
				if err == nil || err.Error() != tt.wantError {
					t.Fatalf("err = %v, want %s", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names, descs []string
			for _, tk := range x.Tasks {
				names, descs = append(names, tk.Name), append(descs, x.Render(tk.Description, tk.Scope(nil)))
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("tasks %q, want %q", names, tt.names)
			}
			if tt.descs != nil && !slices.Equal(descs, tt.descs) {
				t.Errorf("descriptions %q, want %q", descs, tt.descs)
			}
			for i, want := range tt.contexts {
				if got := x.ContextOf(i); !slices.Equal(got, want) {
					t.Errorf("context of %s = %q, want %q", names[i], got, want)
				}
			}
			join := x.Tasks[x.TaskIndex("research")]
			if join.OutputVariable != "notes" || join.OutputFile() != "notes.json" || join.Expanded().ForeachOf != "research" {
				t.Errorf("the join task carries output_variable and output_file: %+v", join)
			}
			for _, tk := range x.Tasks {
				if strings.HasPrefix(tk.Name, "research[") && (tk.OutputVariable != "" || tk.OutputFile() != "") {
					t.Errorf("instance %s writes the task's output", tk.Name)
				}
			}
			if a := x.Agents[len(x.Agents)-1]; a.Kind != JoinAgent || a.Name != "foreach:research" {
				t.Errorf("join agent %+v", a)
			}
			// One item's edit changes only that instance's key.
			if tt.name == "a list variable" {
				y, _ := team.Expand(map[string]any{"topics": []any{"go", "zig"}})
				dx, dy := x.TaskDefs(nil), y.TaskDefs(nil)
				for i := range dx {
					changed := dx[i].Key != dy[i].Key
					want := dx[i].Name == "research[1]" || dx[i].Name == "research" || dx[i].Name == "summary"
					if changed != want {
						t.Errorf("%s: key changed %v, want %v", dx[i].Name, changed, want)
					}
				}
			}
		})
	}
	if same, _ := (&Team{Tasks: []*Task{{Name: "a"}}}).Expand(nil); same == nil || len(same.Tasks) != 1 {
		t.Error("a team without foreach expands to itself")
	}
}

func TestForeachRefused(t *testing.T) {
	head := "agents: {w: {shell: cat}}\ntasks:\n"
	tests := []struct{ name, tasks, want string }{
		{"human", "  d: {description: \"ok?\", agent: human, options: [yes, no], foreach: {over: xs}}\n", "a human task cannot run once per item"},
		{"condition", "  a: {description: a, agent: w, foreach: {over: xs}, condition: {x: [b]}}\n  b: {description: b, agent: w}\n", "a foreach task cannot route"},
		{"a later task's output_variable", "  b: {description: b, agent: w, foreach: {over: xs}}\n  a: {description: a, agent: w, output_variable: xs}\n", `xs is the output_variable of task "a", which comes after (or is) this one: move the task that makes the list before the foreach task`},
		{"its own output_variable", "  b: {description: b, agent: w, foreach: {over: xs}, output_variable: xs}\n", `xs is the output_variable of task "b", which comes after (or is) this one`},
		{"unknown key", "  a: {description: a, agent: w, foreach: {over: xs, var_name: y}}\n", `unknown key "var_name"`},
		// No over: the schema's error, not a panic.
		{"no over", "  a: {description: a, agent: w, foreach: {from: xs}}\n", `missing required key "over"`},
		{"no over, and routing", "  a: {description: a, agent: w, foreach: {from: xs}, condition: {x: [b]}}\n  b: {description: b, agent: w}\n", "a foreach task cannot route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(head+tt.tasks))
			var list ErrorList
			if !errors.As(err, &list) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	team, err := Parse("a.yaml", []byte(head+"  a: {description: a, agent: w, foreach: {over: xs}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Whether --var gives the list is known when the variables are.
	if ws := team.UndefinedPlaceholders(nil); len(ws) != 1 || !strings.Contains(ws[0].Message, "the run needs --var xs=") {
		t.Errorf("warnings %v", ErrorList(ws))
	}
	if ws := team.UndefinedPlaceholders(map[string]any{"xs": `["a"]`}); len(ws) != 0 {
		t.Errorf("with --var xs: warnings %v", ErrorList(ws))
	}
}

// TestExpandForeachWorkflow: in a workflow the instances read only the
// task's own context, so they are independent and run in parallel.
func TestExpandForeachWorkflow(t *testing.T) {
	src := "process: workflow\nvariables: {xs: [a, b, c]}\nagents: {w: {shell: cat}}\ntasks:\n  t: {description: '{item}', agent: w, foreach: {over: xs}}\n  u: {description: u, agent: w, context: [t]}\n"
	team, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x, err := team.Expand(team.InitialState(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if c, d := x.ContextOf(i), x.Render(x.Tasks[i].Description, x.Tasks[i].Scope(nil)); len(c) != 0 || d != []string{"a", "b", "c"}[i] {
			t.Errorf("%s: context %q, description %q", x.Tasks[i].Name, c, d)
		}
	}
	if c := x.ContextOf(4); !slices.Equal(c, []string{"t"}) {
		t.Errorf("u reads %q", c)
	}
}

// TestForeachListErrorsAtOnce: every foreach over a list the file gives
// that is none is said at once, in line order, by Expand when the file
// loads, and with the file's other errors (Refusal.Lists) when they keep
// it from loading, where only validate says them (--var may give a list).
func TestForeachListErrorsAtOnce(t *testing.T) {
	const lp = `expected a list (or a JSON array such as '["a", "b"]')`
	tests := []struct {
		name, src string
		errs      []string // the file's own errors; none: it loads
		lists     []string
	}{
		{"two native foreach", "variables: {xs: 'a, b', n: 3, ok: [a]}\nagents: {w: {shell: cat}}\ntasks:\n" +
			"  a: {description: a, agent: w, foreach: {over: xs}}\n" +
			"  b: {description: b, agent: w, foreach: {over: ok}}\n" +
			"  c: {description: c, agent: w, foreach: {over: n}}\n", nil,
			[]string{`a.yaml:4:33: tasks.a.foreach: foreach over xs: ` + lp + `, got "a, b"`,
				`a.yaml:6:33: tasks.c.foreach: foreach over n: ` + lp + `, got "3"`}},
		{"two loop steps", "input: hi\nvariables: {xs: 'a, b', ys: 7}\nagents: {a: {role: A, llm: m}}\nsteps:\n" +
			"  - {name: l, agent: a, action: '{{item}}', loop: {over: xs}}\n" +
			"  - {name: l2, agent: a, action: '{{item}}', loop: {over: ys}}\n", nil,
			[]string{`a.yaml:5:45: steps[0].loop: foreach over xs: ` + lp + `, got "a, b"; PraisonAI would run the whole text as one item: to keep that, write it as a list of one, ["a, b"]`,
				`a.yaml:6:46: steps[1].loop: foreach over ys: ` + lp + `, got "7"`}},
		{"loop steps beside bad repeat values", "input: hi\nvariables: {xs: 'a, b', ys: 7}\nagents: {a: {role: A, llm: m}}\nsteps:\n" +
			"  - {name: l, agent: a, action: '{{item}}', loop: {over: xs}}\n" +
			"  - {name: r, agent: a, action: go, repeat: {until: 100, max_iterations: '3'}}\n" +
			"  - {name: l2, agent: a, action: '{{item}}', loop: {over: ys}}\n",
			[]string{`a.yaml:6:53: steps[1].repeat.until: expected the text that ends the repeat`,
				`a.yaml:6:74: steps[1].repeat.max_iterations: expected a number of iterations from 1 to 100`},
			[]string{`a.yaml:5:45: steps[0].loop: foreach over xs: ` + lp + `, got "a, b"`,
				`a.yaml:7:46: steps[2].loop: foreach over ys: ` + lp + `, got "7"`}},
		{"a native foreach beside an unknown agent", "variables: {xs: 'a, b', ok: '[\"a\"]'}\nagents: {w: {shell: cat}}\ntasks:\n" +
			"  a: {description: a, agent: w, foreach: {over: xs}}\n" +
			"  b: {description: b, agent: nobody}\n" +
			"  c: {description: c, agent: w, foreach: {over: ok}}\n" +
			"  d: {description: d, agent: w, foreach: {over: unset}}\n",
			[]string{`a.yaml:5:30: tasks.b.agent: unknown agent "nobody"`},
			[]string{`a.yaml:4:33: tasks.a.foreach: foreach over xs: ` + lp + `, got "a, b"`}},
	}
	lines := func(l ErrorList) []string {
		var out []string
		for _, d := range l {
			out = append(out, d.String())
		}
		return out
	}
	prefixes := func(got, want []string) bool { // got[i] starts with want[i]
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if !strings.HasPrefix(got[i], want[i]) {
				return false
			}
		}
		return true
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("a.yaml", []byte(tt.src))
			if tt.errs == nil {
				if err != nil {
					t.Fatal(err)
				}
				_, err = team.Expand(team.InitialState(nil))
				if got := strings.Split(fmt.Sprint(err), "\n"); err == nil || !prefixes(got, tt.lists) {
					t.Errorf("Expand: %v\nwant:\n%s", err, strings.Join(tt.lists, "\n"))
				}
				return
			}
			var list ErrorList
			if !errors.As(err, &list) || !prefixes(lines(list), tt.errs) {
				t.Errorf("errors:\n%v\nwant:\n%s", err, strings.Join(tt.errs, "\n"))
			}
			if got := lines(ListErrorsOf(err)); !prefixes(got, tt.lists) {
				t.Errorf("list errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.lists, "\n"))
			}
		})
	}
}

// TestInstanceNameTaken: a task named as an instance of a foreach task is
// (each[1] beside foreach task each) is refused when the file loads, by
// its shape, whatever the list holds or is yet to hold: a list an earlier
// task makes, one --var may make longer, one too short to reach it.
func TestInstanceNameTaken(t *testing.T) {
	native := "variables: {xs: [a, b]}\nagents: {w: {shell: cat}}\ntasks:\n  produce: {description: p, agent: w, output_variable: lst}\n"
	steps := "input: go\nvariables: {xs: [a, b]}\nagents: {a: {role: A, llm: m}}\nsteps:\n  - {name: make, agent: a, action: list}\n"
	tests := []struct{ name, src, want string }{
		{"a list a task makes", native + "  each: {description: \"{item}\", agent: w, foreach: {over: lst}}\n  each[1]: {description: x, agent: w}\n",
			`a.yaml:6:3: tasks.each[1]: task name "each[1]" is the name teamrun gives the instance of item 1 of foreach task "each" (line 5), whatever its list holds: rename one of them`},
		{"before the foreach", native + "  each[0]: {description: x, agent: w}\n  each: {description: \"{item}\", agent: w, foreach: {over: lst}}\n",
			`a.yaml:5:3: tasks.each[0]: task name "each[0]" is the name teamrun gives the instance of item 0 of foreach task "each" (line 6), whatever its list holds: rename one of them`},
		{"beyond a variable's list", native + "  each: {description: \"{item}\", agent: w, foreach: {over: xs}}\n  each[7]: {description: x, agent: w}\n",
			`a.yaml:6:3: tasks.each[7]: task name "each[7]" is the name teamrun gives the instance of item 7 of foreach task "each"`},
		{"a loop over a step's output", steps + "  - {name: each, agent: a, action: \"{{item}}\", loop: {over: make_output}}\n  - {name: \"each[1]\", agent: a, action: z}\n",
			`a.yaml:7:12: steps[2].name: step name "each[1]" is the name teamrun gives the instance of item 1 of loop step "each" (line 6), whatever its list holds: rename one of them`},
		{"a loop over a variable", steps + "  - {name: each, agent: a, action: \"{{item}}\", loop: {over: xs}}\n  - {name: \"each[2]\", agent: a, action: z}\n",
			`step name "each[2]" is the name teamrun gives the instance of item 2 of loop step "each"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	// Names no instance has load.
	for _, name := range []string{"each[01]", "each[+1]", "each[-1]", "each[]", "other[1]", "each[1]x"} {
		src := native + "  each: {description: \"{item}\", agent: w, foreach: {over: lst}}\n  \"" + name + "\": {description: x, agent: w}\n"
		if _, err := Parse("a.yaml", []byte(src)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
