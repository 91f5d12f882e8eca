package spec

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An if: step's condition means what PraisonAI's evaluator makes of it,
// on the variables and the previous step's output as a run holds them:
// whole, whatever their size, and with one case rule (Lower), whatever
// the machine's locale.
func TestCondition(t *testing.T) {
	big := strings.Repeat("word ", 40_000) + "DONE" // over what one environment string may hold
	tests := []struct {
		cond string
		vars map[string]any
		prev string // the previous step's output
		want string // then or else
	}{
		{"{{score}} >= 80", map[string]any{"score": "92"}, "", "then"},
		{"{{score}} >= 80", map[string]any{"score": "41"}, "", "else"},
		{"{{score}} >= 80", map[string]any{"score": 92}, "", "then"},      // a number variable
		{"{{score}} > 80", map[string]any{"score": "  92\n"}, "", "then"}, // an answer's whitespace
		{"{{score}} > 9", map[string]any{"score": "10"}, "", "then"},      // numbers, not text
		{"{{score}} > 9", map[string]any{"score": "10x"}, "", "else"},     // text: "10x" < "9"
		{"{{score}} == 80", map[string]any{"score": "80.0"}, "", "then"},
		{"{{score}} < 80", nil, "", "else"}, // unset: no comparison holds
		{"{{status}} == approved", map[string]any{"status": "approved"}, "", "then"},
		{"{{status}} == 'approved'", map[string]any{"status": "approved"}, "", "then"},
		{"{{status}} == approved", map[string]any{"status": "Approved"}, "", "else"}, // == is exact
		{"{{status}} != approved", map[string]any{"status": "rejected"}, "", "then"},
		{"{{status}} contains success", map[string]any{"status": "Build SUCCESS"}, "", "then"},
		{"{{status}} contains success", map[string]any{"status": "failed"}, "", "else"},
		{"error in {{message}}", map[string]any{"message": "An Error occurred"}, "", "then"},
		{"error in {{message}}", map[string]any{"message": "all fine"}, "", "else"},
		{"{{previous_output}} contains approved", nil, "APPROVED: clear and accurate", "then"},
		{"{{previous_output}} contains approved", nil, "NEEDS IMPROVEMENT", "else"},
		{"{{flag}}", map[string]any{"flag": "true"}, "", "then"},
		{"{{flag}}", map[string]any{"flag": "False"}, "", "else"},
		{"{{flag}}", map[string]any{"flag": "0"}, "", "then"}, // PraisonAI: a non-empty text is true
		{"{{flag}}", map[string]any{"flag": true}, "", "then"},
		{"{{flag}}", nil, "", "else"},
		// Python's str.lower() on both sides, not ASCII only (awk) nor
		// by the locale.
		{"{{mood}} contains ärger", map[string]any{"mood": "ÄRGER"}, "", "then"},
		{"ÉTÉ in {{season}}", map[string]any{"season": "un été chaud"}, "", "then"},
		{"{{word}} contains οδος", map[string]any{"word": "ΟΔΟΣ"}, "", "then"}, // a final sigma
		{"{{list}} contains beta", map[string]any{"list": []any{"alpha", "BETA"}}, "", "then"},
		// Whole values: past the 128 KiB an environment string may hold.
		{"{{previous_output}} contains DONE", nil, big, "then"},
		{"{{report}} contains done", map[string]any{"report": big}, "", "then"},
		{"{{report}} contains missing", map[string]any{"report": big}, "", "else"},
	}
	for _, tt := range tests {
		c, err := parseCondition(tt.cond)
		if err != nil {
			t.Errorf("%s: %v", tt.cond, err)
			continue
		}
		d := &Decision{If: c, Prev: []string{"check"}}
		got, err := d.Decide(func() (string, error) { return tt.prev, nil }, func(name string) string { return FormatValue(tt.vars[name]) })
		if err != nil || got != tt.want {
			t.Errorf("%s with %.40v, previous %.40q: %q (%v), want %s", tt.cond, tt.vars, tt.prev, got, err, tt.want)
		}
	}
}

// A previous output that cannot be read fails the decision: it is never
// taken for a condition that does not hold, nor a route for default.
func TestDecisionUnreadable(t *testing.T) {
	broken := errors.New("blob gone")
	c, err := parseCondition("{{previous_output}} contains DONE")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Decision{{If: c}, {Labels: []string{"done"}}} {
		if got, err := d.Decide(func() (string, error) { return "", broken }, func(string) string { return "" }); !errors.Is(err, broken) {
			t.Errorf("%+v: %q, %v; want the error", d, got, err)
		}
	}
}

// A route picks the first label found as a word in the previous output,
// with the case rule of if's contains (Lower), the same in every locale:
// a word is letters, digits and _ in every script.
func TestRouteLabels(t *testing.T) {
	tests := []struct {
		labels []string
		out    string
		want   string
	}{
		{[]string{"technical", "billing"}, "This is a Technical issue", "technical"},
		{[]string{"technical", "billing"}, "billing, then technical", "technical"}, // the first label, not the first word
		{[]string{"technical"}, "technicality", "default"},
		{[]string{"ärger"}, "ÄRGER", "ärger"},
		{[]string{"ärger"}, "Verärgert", "default"},
		{[]string{"caf"}, "café", "default"}, // é is a letter: no word ends at caf
		{[]string{"café"}, "CAFÉ au lait", "café"},
		{[]string{"needs work"}, "it NEEDS  work", "default"},
		{[]string{"needs work"}, "it Needs Work.", "needs work"},
		{[]string{"ok"}, "not_ok ok_not", "default"}, // _ is part of a word
		{[]string{"ok"}, "not_ok, ok", "ok"},         // a later place where it is a word
		{[]string{"x"}, strings.Repeat("y ", 100_000) + "X", "x"},
	}
	for _, tt := range tests {
		d := &Decision{Labels: tt.labels}
		got, err := d.Decide(func() (string, error) { return tt.out, nil }, nil)
		if err != nil || got != tt.want {
			t.Errorf("%q in %.40q: %q (%v), want %s", tt.labels, tt.out, got, err, tt.want)
		}
	}
}

// Conditions teamrun cannot evaluate are refused when the file loads.
func TestConditionScriptRefused(t *testing.T) {
	for _, cond := range []string{"{{item.score}} >= 60", "score is high"} {
		if _, err := parseCondition(cond); err == nil {
			t.Errorf("%s: accepted", cond)
		}
	}
}

// How steps map onto tasks, where PraisonAI's meaning needs care.
func TestPraisonStepsMapping(t *testing.T) {
	const agents = "agents:\n  a: {role: A, llm: m}\n  b: {role: B, llm: m}\n"
	tests := []struct {
		name     string
		src      string
		err      string            // the one error, when refused
		descs    map[string]string // task -> description
		process  Process
		warnings []string // texts some warning holds
	}{
		{name: "a later step without action is fed the previous output",
			src:   agents + "steps:\n  - {agent: a, action: Do it}\n  - {agent: b}\n",
			descs: map[string]string{"step_1": "Do it", "step_2": "Carry on from the previous step's output."}, process: Sequential},
		{name: "the first step without action takes the input",
			src:   "input: tides\n" + agents + "steps:\n  - {agent: a}\n  - {agent: b}\n",
			descs: map[string]string{"step_1": "{{input}}", "step_2": "Carry on from the previous step's output."}, process: Sequential},
		{name: "the first step of a branch takes the input",
			src:   "input: tides\n" + agents + "steps:\n  - {agent: a, action: Score, output_variable: s}\n  - if:\n      condition: \"{{s}} > 1\"\n      then: [{agent: b}, {agent: a}]\n",
			descs: map[string]string{"step_2_then_1": "{{input}}", "step_2_then_2": "Carry on from the previous step's output."}, process: Workflow},
		// PraisonAI's action defaults to {{input}}, which its --input
		// gives when the file has no input: (--var input= here).
		{name: "the first step without action or input: is given the input a --var gives",
			src: agents + "steps:\n  - {agent: a}\n", descs: map[string]string{"step_1": "{{input}}"}, process: Sequential},
		{name: "a parallel loop runs its instances at once",
			src:     "variables: {xs: [p, q]}\n" + agents + "steps:\n  - {agent: a, action: \"Do {{item}}\", loop: {over: xs, parallel: true, max_workers: 2}}\n",
			descs:   map[string]string{"step_1": "Do {{item}}"},
			process: Workflow, warnings: []string{"steps[0].loop.max_workers: ignored: --max-parallel (default 4) bounds how many instances run at once"}},
		{name: "a loop's from_csv beside over is PraisonAI's, which over wins over",
			src:   "variables: {xs: [p, q]}\n" + agents + "steps:\n  - {agent: a, action: \"Do {{item}}\", loop: {over: xs, from_csv: data.csv}}\n",
			descs: map[string]string{"step_1": "Do {{item}}"}, process: Sequential,
			warnings: []string{"steps.yaml:6:56: steps[0].loop.from_csv: ignored: over: wins, as in PraisonAI, which loops over the variable and does not read the file"}},
		{name: "a loop's step: names its agent",
			src:   "variables: {xs: [p, q]}\n" + agents + "steps:\n  - loop: {over: xs, step: a}\n",
			descs: map[string]string{"step_1": "{{item}}"}, process: Sequential},
		{name: "a loop's step: runs it",
			src:   "variables: {xs: [p, q]}\n" + agents + "steps:\n  - loop: {over: xs}\n    step: {agent: a, action: \"Do {{item}}\"}\n",
			descs: map[string]string{"step_1": "Do {{item}}"}, process: Sequential},
		{name: "a loop's step: as an agent's name, fed the input",
			src:   "input: tides\nvariables: {xs: [p, q]}\n" + agents + "steps:\n  - loop: {over: xs}\n    step: a\n",
			descs: map[string]string{"step_1": "{{input}}"}, process: Sequential},
		{name: "a loop of one step beside an agent runs that step",
			src:   "variables: {xs: [p, q]}\n" + agents + "steps:\n  - agent: a\n    action: outer\n    loop: {over: xs}\n    steps:\n      - {agent: b, action: inner}\n",
			descs: map[string]string{"step_1": "inner"}, process: Sequential,
			warnings: []string{"steps.yaml:6:5: steps[0].agent: ignored: PraisonAI runs the loop's step (line 10), not this one's agent", "steps.yaml:7:5: steps[0].action: ignored: PraisonAI runs the loop's step (line 10), not this one's action"}},
		{name: "a loop of several steps",
			src: "variables: {xs: [p, q]}\n" + agents + "steps:\n  - loop: {over: xs}\n    steps:\n      - {agent: a, action: x}\n      - {agent: b, action: y}\n",
			err: "steps.yaml:6:5: steps[0].loop: a loop of several steps is not supported yet"},
		{name: "a loop of nothing",
			src: "variables: {xs: [p, q]}\n" + agents + "steps:\n  - loop: {over: xs}\n",
			err: "steps.yaml:6:5: steps[0].loop: the loop names no step to run"},
		{name: "a loop over a CSV file",
			src: agents + "steps:\n  - agent: a\n    action: Do {{item}}\n    loop: {from_csv: items.csv}\n",
			err: "steps.yaml:7:12: steps[0].loop.from_csv: a loop over a file (from_csv) is not supported: teamrun loops over a list variable; give the items under variables: (items: [a, b]) or as --var items='[\"a\", \"b\"]' (a JSON array) and write loop: {over: items}"},
		{name: "a loop over a file's lines",
			src: agents + "steps:\n  - agent: a\n    action: Do {{item}}\n    loop:\n      from_file: items.txt\n",
			err: "steps.yaml:8:7: steps[0].loop.from_file: a loop over a file (from_file) is not supported"},
		{name: "the agent teamrun makes for a route is none of the file's",
			src: agents + "steps:\n  - {agent: a, action: Classify}\n  - name: routing\n    route: {x: [b], default: [a]}\n  - {agent: \"route:routing\", action: hi}\n",
			err: "steps.yaml:8:13: steps[2].agent: unknown agent \"route:routing\" (known: a, b)"},
		{name: "nor is it known to a route",
			src: agents + "steps:\n  - {agent: a, action: Classify}\n  - name: routing\n    route: {x: [nobody], default: [a]}\n",
			err: "unknown agent \"nobody\" (known: a, b)"},
		{name: "a sequential loop",
			src:     "variables: {xs: [p, q]}\n" + agents + "steps:\n  - {agent: a, action: \"Do {{x}}\", loop: {over: xs, var_name: x, parallel: false, notes: n}}\n",
			descs:   map[string]string{"step_1": "Do {{x}}"},
			process: Sequential, warnings: []string{"steps[0].loop.notes: not supported by teamrun, ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("steps.yaml", []byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("want error %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.descs {
				i := slices.Index(team.TaskNames(), name)
				if i < 0 {
					t.Fatalf("no task %s in %v", name, team.TaskNames())
				}
				if got := team.Tasks[i].Description; got != want {
					t.Errorf("%s: description %q, want %q", name, got, want)
				}
			}
			if team.Process != tt.process {
				t.Errorf("process %s, want %s", team.Process, tt.process)
			}
			all := ErrorList(team.Warnings).Error()
			for _, w := range tt.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("no warning says %q:\n%s", w, all)
				}
			}
		})
	}
}

// {{NAME_output}} reads an earlier step's output: the step keeps it as that
// variable, or the placeholder reads the output_variable it already has. A
// later step's, a variable's or an unknown name's stays as written. NAME is
// the step's name, else its agent's key or PraisonAI's name for the agent:
// its name: in an agents: file, its role text in a roles: file.
func TestStepOutputPlaceholders(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // per task: output_variable|description
		warnings  []string // exactly
	}{
		{"names and variables", `variables: {given_output: x}
agents:
  a: {role: A, llm: m}
  b: {role: B, llm: m}
steps:
  - agent: a
    action: "first {{b_output}}"
  - name: second
    agent: b
    action: "read {{a_output}}"
    output_variable: notes
  - agent: a
    action: "{{second_output}} {{given_output}} {{nobody_output}}"
`, []string{"a_output|first {{b_output}}", "notes|read {{a_output}}", "|{{notes}} {{given_output}} {{nobody_output}}"}, nil},
		{"an agent's name: and its key", `agents:
  researcher: {name: Researcher, role: Analyst, llm: m}
  w: {role: W, llm: m}
steps:
  - {agent: researcher, action: dig}
  - {agent: w, action: "R={{Researcher_output}} r={{researcher_output}}"}
`, []string{"Researcher_output|dig", "|R={{Researcher_output}} r={{Researcher_output}}"}, nil},
		{"a role's text in a roles: file", `roles:
  researcher: {role: Analyst, llm: m}
  w: {role: W, llm: m}
steps:
  - {agent: researcher, action: dig}
  - {agent: w, action: "{{Analyst_output}}"}
`, []string{"Analyst_output|dig", "|{{Analyst_output}}"}, nil},
		{"a role's text with a space", `roles:
  researcher: {role: Research Analyst, llm: m}
  w: {role: W, llm: m}
steps:
  - {agent: researcher, action: dig}
  - {agent: w, action: "{{Research Analyst_output}}"}
`, []string{"Research_Analyst_output|dig", "|{{Research_Analyst_output}}"}, nil},
		{"a name with a hyphen", `agents:
  a: {role: A, llm: m}
  b: {role: B, llm: m}
steps:
  - {name: fetch-data, agent: a, action: get}
  - {agent: b, action: "{{fetch-data_output}} {{ fetch-data_output }} {{fetch-dta_output}}"}
`, []string{"fetch_data_output|get", "|{{fetch_data_output}} {{fetch_data_output}} {{fetch-dta_output}}"}, []string{
			`s.yaml:6:24: steps[1].action: {{fetch-dta_output}}: no step before it is named "fetch-dta" (a step's name:, else its agent's), so the text keeps it as written`}},
		// Two names that come out the same with _ for what a variable name
		// cannot hold (調査 and 分析, fetch-data and fetch data) each read
		// their own step: one variable each, numbered, and the spelling
		// both come out as reads neither (the placeholder check says so).
		{"names that come out the same", `agents:
  a: {role: A, llm: m}
steps:
  - {name: 調査, agent: a, action: research}
  - {name: 分析, agent: a, action: analyse}
  - {name: fetch-data, agent: a, action: dash}
  - {name: fetch data, agent: a, action: space}
  - {agent: a, action: "{{調査_output}} {{分析_output}} {{fetch-data_output}} {{fetch data_output}} {{fetch_data_output}}"}
`, []string{"_______output_1|research", "_______output_2|analyse", "fetch_data_output_1|dash", "fetch_data_output_2|space",
			"|{{_______output_1}} {{_______output_2}} {{fetch_data_output_1}} {{fetch_data_output_2}} {{fetch_data_output}}"}, nil},
		// A step named as the variable another's name comes out as keeps
		// that name (PraisonAI's); a variable's name is not taken either.
		{"a step or a variable has the name", `variables: {x_y_output: given}
agents:
  a: {role: A, llm: m}
steps:
  - {name: fetch-data, agent: a, action: dash}
  - {name: fetch_data, agent: a, action: under}
  - {name: x-y, agent: a, action: xy}
  - {agent: a, action: "{{fetch-data_output}} {{fetch_data_output}} {{x-y_output}} {{x_y_output}}"}
`, []string{"fetch_data_output_1|dash", "fetch_data_output|under", "x_y_output_1|xy",
			"|{{fetch_data_output_1}} {{fetch_data_output}} {{x_y_output_1}} {{x_y_output}}"}, nil},
		// One _ a byte, as sessions recorded it: one a character gave
		// Étape another variable, and so another key, and ran it again.
		{"a name of several bytes a character", `agents:
  a: {role: A, llm: m}
steps:
  - {name: Étape, agent: a, action: one}
  - {agent: a, action: "{{Étape_output}}"}
`, []string{"__tape_output|one", "|{{__tape_output}}"}, nil},
		// The _ spelling reads the one step whose name comes out so, but
		// not when a step has that very name, later in the file.
		{"the _ spelling", `agents:
  a: {role: A, llm: m}
steps:
  - {name: fetch-data, agent: a, action: dash}
  - {agent: a, action: "{{fetch_data_output}}"}
`, []string{"fetch_data_output|dash", "|{{fetch_data_output}}"}, nil},
		{"the _ spelling, a step of that name later", `agents:
  a: {role: A, llm: m}
steps:
  - {name: fetch-data, agent: a, action: dash}
  - {agent: a, action: "{{fetch_data_output}}"}
  - {name: fetch_data, agent: a, action: under}
`, []string{"|dash", "|{{fetch_data_output}}", "|under"}, nil},
		// {{STEP_loop_outputs}} with STEP as written binds as
		// {{STEP_output}} does; one that names no loop before it is said.
		{"a loop's outputs by its name as written", `variables: {xs: [p, q]}
agents:
  a: {role: A, llm: m}
steps:
  - {name: fetch-x, agent: a, action: "{{item}}", loop: {over: xs}}
  - {name: 調査, agent: a, action: "{{item}}", loop: {over: xs}}
  - {name: 分析, agent: a, action: "{{item}}", loop: {over: xs}}
  - {agent: a, action: "{{fetch-x_loop_outputs}} {{fetch_x_loop_outputs}} {{調査_loop_outputs}} {{ 分析_loop_outputs }} {{fetch-y_loop_outputs}} {{step_1_loop_outputs}}"}
`, []string{"fetch_x_loop_outputs|{{item}}", "_______loop_outputs_1|{{item}}", "_______loop_outputs_2|{{item}}",
			"|{{fetch_x_loop_outputs}} {{fetch_x_loop_outputs}} {{_______loop_outputs_1}} {{_______loop_outputs_2}} {{fetch-y_loop_outputs}} {{step_1_loop_outputs}}"}, []string{
			`s.yaml:8:24: steps[3].action: {{fetch-y_loop_outputs}}: no loop step before it is named "fetch-y", so the text keeps it as written`}},
		// A repeat's is its last iteration's (the join's), by its name or,
		// as PraisonAI names it, its agent's.
		{"a repeat", `agents:
  w: {role: W, llm: m}
  a: {role: A, llm: m}
steps:
  - {name: draft, agent: w, action: Write, repeat: {until: done, max_iterations: 2}}
  - {agent: a, action: "{{draft_output}} {{w_output}}"}
`, []string{"draft_output|Write", "|{{draft_output}} {{draft_output}}"}, nil},
		// A loop keeps none: PraisonAI runs its items on a copy of the
		// variables, so the name reads the step before it.
		{"a loop", `variables: {xs: [p]}
agents:
  w: {role: W, llm: m}
  a: {role: A, llm: m}
steps:
  - {agent: w, action: first}
  - {agent: w, action: "{{item}}", loop: {over: xs}}
  - {agent: a, action: "{{w_output}}"}
`, []string{"w_output|first", "|{{item}}", "|{{w_output}}"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tk := range team.Tasks {
				got = append(got, tk.OutputVariable+"|"+tk.Description)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			var said []string
			for _, w := range team.Warnings {
				said = append(said, w.String())
			}
			if strings.Join(said, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
}

// A route right after a parallel step routes on their joined outputs, as
// PraisonAI does: the route task reads them all, and so does the branch.
func TestRouteAfterParallel(t *testing.T) {
	team, err := Parse("r.yaml", []byte(`agents:
  r: {role: R, llm: m}
  x: {role: X, llm: m}
  z: {role: Z, llm: m}
steps:
  - name: research
    parallel:
      - {agent: r, action: Trends}
      - {agent: r, action: Rivals}
  - name: routing
    route: {technical: [x], default: [z]}
`))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(team.TaskNames(), "routing")
	if i < 0 || !slices.Equal(team.Tasks[i].Context, []string{"research_1", "research_2"}) {
		t.Fatalf("the route task reads %v, want both parallel steps", team.Tasks[i].Context)
	}
	d := team.Agent("route:routing").Decides
	if d == nil || !slices.Equal(d.Prev, []string{"research_1", "research_2"}) || !slices.Equal(d.Labels, []string{"technical"}) {
		t.Fatalf("the route decides by %+v, want the label technical on both parallel steps' outputs", d)
	}
}

// After a route without default the next step reads the output of the
// branch that ran, as PraisonAI passes it on, not the classifier's too: a
// label that runs no agent (default, when not given) runs a task that
// passes the classifier's output on.
func TestRouteWithoutDefault(t *testing.T) {
	team, err := Parse("r.yaml", []byte(`agents:
  c: {role: C, llm: m}
  x: {role: X, llm: m}
  f: {role: F, llm: m}
steps:
  - {name: classify, agent: c, action: Classify}
  - name: routing
    route: {technical: [x], none: []}
  - {agent: f, action: Wrap up}
`))
	if err != nil {
		t.Fatal(err)
	}
	names := team.TaskNames()
	if want := []string{"classify", "routing", "routing_technical", "routing_default", "step_3"}; !slices.Equal(names, want) {
		t.Fatalf("tasks %v, want %v", names, want)
	}
	rt := team.Tasks[1]
	var routes []string
	for _, r := range rt.Condition() {
		routes = append(routes, r.Value+"->"+strings.Join(r.Next, ","))
	}
	if got := strings.Join(routes, " "); got != "technical->routing_technical none->routing_default default->routing_default" {
		t.Errorf("routes %s", got)
	}
	if got := team.Tasks[4].Context; !slices.Equal(got, []string{"routing_technical", "routing_default"}) {
		t.Errorf("the step after the route reads %v, want the branches' outputs only", got)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "classify"), []byte("unsure"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", team.Agent(team.Tasks[3].Agent).Shell)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TEAMRUN_CONTEXT_DIR=" + dir}
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "unsure" {
		t.Errorf("routing_default passes on %q (%v), want the classifier's output", out, err)
	}
}

// A step's context: adds the steps it names to the one before it, which
// it still reads and waits for: PraisonAI runs steps in file order and
// reads none of a step's context. In a file run as a workflow (here with a
// parallel step), taking context for the whole of it let the step run as
// soon as the step it names was done, before the steps between.
func TestStepContextKeepsFileOrder(t *testing.T) {
	for _, tt := range []struct {
		name, context string
		want          []string
	}{
		{"an earlier step", "[first]", []string{"third", "first"}},
		{"the step before", "[third]", []string{"third"}},
		{"one name", "first", []string{"third", "first"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("c.yaml", []byte(`agents:
  a: {role: A, llm: m}
steps:
  - {name: first, agent: a, action: one}
  - parallel:
      - {agent: a, action: two}
  - {name: third, agent: a, action: three}
  - {name: last, agent: a, action: sum, context: `+tt.context+`}
`))
			if err != nil {
				t.Fatal(err)
			}
			if team.Process != Workflow {
				t.Fatalf("process %v: the test wants a workflow", team.Process)
			}
			last := team.Tasks[slices.Index(team.TaskNames(), "last")]
			if !slices.Equal(last.Context, tt.want) {
				t.Errorf("last reads %v, want %v", last.Context, tt.want)
			}
		})
	}
}

// The task a route without default runs to pass the classifier's output on
// keeps the outputs of a parallel step before it apart, as the route reads
// them, not run together.
func TestRoutePassKeepsParallelOutputsApart(t *testing.T) {
	team, err := Parse("r.yaml", []byte(`agents:
  r: {role: R, llm: m}
  x: {role: X, llm: m}
steps:
  - name: research
    parallel:
      - {agent: r, action: Trends}
      - {agent: r, action: Rivals}
  - name: routing
    route: {technical: [x]}
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"research_1": "one", "research_2": "two"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", team.Agent("route:routing_default").Shell)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TEAMRUN_CONTEXT_DIR=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "one\n\ntwo" {
		t.Errorf("passed on %q (%v), want %q", out, err, "one\n\ntwo")
	}
}

// TestLoopIndex: in a PraisonAI loop, {{loop_index}} is each item's
// position from 0, in its texts, as PraisonAI binds it; a native foreach
// binds no such name.
func TestLoopIndex(t *testing.T) {
	tests := []struct {
		name, src string
		descs     []string // the instances'
		warned    bool     // nothing defines loop_index
	}{
		{"PraisonAI", "variables: {xs: [p, q]}\nagents: {a: {role: A, llm: m}}\nsteps:\n  - agent: a\n    action: 'Do {{item}} as {{loop_index}}'\n    expected_output: 'Item {{loop_index}}'\n    loop: {over: xs}\n",
			[]string{"Do p as 0|Item 0", "Do q as 1|Item 1"}, false},
		{"PraisonAI, named loop_index", "variables: {xs: [p, q]}\nagents: {a: {role: A, llm: m}}\nsteps:\n  - agent: a\n    action: 'Do {{loop_index}}'\n    loop: {over: xs, var_name: loop_index}\n",
			[]string{"Do 0|", "Do 1|"}, false},
		{"native", "variables: {xs: [p, q]}\nagents: {w: {shell: cat}}\ntasks:\n  t: {description: 'Do {item} as {loop_index}', agent: w, foreach: {over: xs}}\n",
			[]string{"Do p as {loop_index}|", "Do q as {loop_index}|"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			warns := ErrorList(team.UndefinedPlaceholders(nil)).Error()
			if strings.Contains(warns, "nothing defines loop_index") != tt.warned {
				t.Errorf("warnings: %s", warns)
			}
			if strings.Contains(warns, "PraisonAI sets") {
				t.Errorf("a native file's warning speaks of PraisonAI: %s", warns)
			}
			x, err := team.Expand(team.InitialState(nil))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tk := range x.Tasks[:len(tt.descs)] {
				got = append(got, x.Render(tk.Description, tk.Scope(nil))+"|"+x.Render(tk.ExpectedOutput, tk.Scope(nil)))
			}
			if !slices.Equal(got, tt.descs) {
				t.Errorf("instances %q, want %q", got, tt.descs)
			}
		})
	}
}

// TestLoopItemsChained: as PraisonAI runs a loop that is not parallel,
// each item after the first is fed the previous item's output in place of
// the previous step's (a step's context: names stay); a parallel loop
// feeds every item the previous step's output.
func TestLoopItemsChained(t *testing.T) {
	const head = "variables: {xs: [p, q, r]}\nagents:\n  a: {role: A, llm: m}\n  b: {role: B, llm: m}\nsteps:\n"
	tests := []struct {
		name, steps string
		contexts    [][]string // of the loop's instances
	}{
		{"sequential", "  - {name: plan, agent: a, action: Plan}\n  - {name: each, agent: b, action: '{{item}}', loop: {over: xs}}\n",
			[][]string{{"plan"}, {"each[0]"}, {"each[1]"}}},
		{"parallel: false", "  - {name: plan, agent: a, action: Plan}\n  - {name: each, agent: b, action: '{{item}}', loop: {over: xs, parallel: false}}\n",
			[][]string{{"plan"}, {"each[0]"}, {"each[1]"}}},
		{"parallel", "  - {name: plan, agent: a, action: Plan}\n  - {name: each, agent: b, action: '{{item}}', loop: {over: xs, parallel: true}}\n",
			[][]string{{"plan"}, {"plan"}, {"plan"}}},
		{"with a context:", "  - {name: notes, agent: a, action: Notes}\n  - {name: plan, agent: a, action: Plan}\n  - {name: each, agent: b, action: '{{item}}', context: [notes], loop: {over: xs}}\n",
			[][]string{{"plan", "notes"}, {"each[0]", "notes"}, {"each[1]", "notes"}}},
		{"the first step", "  - {name: each, agent: b, action: '{{item}}', loop: {over: xs}}\n",
			[][]string{{}, {"each[0]"}, {"each[1]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(head+tt.steps))
			if err != nil {
				t.Fatal(err)
			}
			x, err := team.Expand(team.InitialState(nil))
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.contexts {
				i := x.TaskIndex(InstanceName("each", k))
				if got := x.ContextOf(i); !slices.Equal(got, want) {
					t.Errorf("each[%d] reads %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestParallelOutputs: {{parallel_outputs}} in a step after a parallel
// step reads the outputs of the last one before it, as PraisonAI sets it:
// a join named after the parallel step makes their JSON array into a
// variable of its own, and the step reads (so waits for) the join, in
// place of the parallel's steps when it read them.
func TestParallelOutputs(t *testing.T) {
	src := `agents:
  a: {role: A, llm: m}
  b: {role: B, llm: m}
steps:
  - {agent: a, action: "Start {{parallel_outputs}}"}
  - name: fan
    parallel:
      - {agent: a, action: X}
      - {agent: b, action: Y}
  - {agent: a, action: "Join {{parallel_outputs}}", expected_output: "{{parallel_outputs}}, joined"}
  - {agent: b, action: "Again {{parallel_outputs}}"}
  - parallel:
      - {agent: a, action: Z}
  - {agent: b, action: "Then {{parallel_outputs}}"}
`
	team, err := Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range team.Tasks {
		got = append(got, fmt.Sprintf("%s %s %q %s|%s -> %s", tk.Name, tk.Agent, tk.Context, tk.Description, tk.ExpectedOutput, tk.OutputVariable))
	}
	want := []string{
		`step_1 a [] Start {{parallel_outputs}}| -> `,
		`fan_1 a ["step_1"] X| -> `,
		`fan_2 b ["step_1"] Y| -> `,
		`fan parallel:fan ["fan_1" "fan_2"] the outputs of fan_1, fan_2 as a JSON array| -> fan_parallel_outputs`,
		`step_3 a ["fan"] Join {{fan_parallel_outputs}}|{{fan_parallel_outputs}}, joined -> `,
		`step_4 b ["fan" "step_3"] Again {{fan_parallel_outputs}}| -> `,
		`step_5_1 a ["step_4"] Z| -> `,
		`step_5 parallel:step_5 ["step_5_1"] the outputs of step_5_1 as a JSON array| -> step_5_parallel_outputs`,
		`step_6 b ["step_5"] Then {{step_5_parallel_outputs}}| -> `,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var undefined []string
	for _, d := range team.UndefinedPlaceholders(nil) {
		undefined = append(undefined, d.Path)
	}
	if !slices.Equal(undefined, []string{"steps[0].action"}) {
		t.Errorf("undefined placeholders in %q", undefined)
	}
	if a := team.Agent("parallel:fan"); a == nil || a.Kind != JoinAgent {
		t.Errorf("the join's agent: %+v", a)
	}
	// A file that reads no parallel_outputs has no join.
	team, err = Parse("s.yaml", []byte("agents:\n  a: {role: A, llm: m}\nsteps:\n  - parallel: [{agent: a, action: X}, {agent: a, action: Y}]\n  - {agent: a, action: Join}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if names := strings.Join(team.TaskNames(), " "); names != "step_1_1 step_1_2 step_2" {
		t.Errorf("tasks %s", names)
	}
}

// TestLoopOverParallelOutputs: a loop over parallel_outputs runs once per
// output of the parallel step before it, as in PraisonAI.
func TestLoopOverParallelOutputs(t *testing.T) {
	team, err := Parse("s.yaml", []byte("agents:\n  a: {role: A, llm: m}\nsteps:\n  - name: fan\n    parallel: [{agent: a, action: X}, {agent: a, action: Y}]\n  - {name: each, agent: a, action: 'Check {{item}}', loop: {over: parallel_outputs}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Warnings) != 0 {
		t.Errorf("warnings: %v", ErrorList(team.Warnings))
	}
	x, err := team.ExpandWith(team.InitialState(nil), map[string]any{"fan_parallel_outputs": `["x out","y out"]`})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range x.Tasks {
		got = append(got, fmt.Sprintf("%s %q %s", tk.Name, tk.Context, x.Render(tk.Description, tk.Scope(nil))))
	}
	want := []string{`fan_1 [] X`, `fan_2 [] Y`, `fan ["fan_1" "fan_2"] the outputs of fan_1, fan_2 as a JSON array`,
		`each[0] ["fan"] Check x out`, `each[1] ["each[0]"] Check y out`, `each ["each[0]" "each[1]"] the results of each[0..1] as a JSON array`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLoopOutputs: {{loop_outputs}} after a loop step reads its items'
// outputs, as PraisonAI sets it once a loop is done: the loop's
// output_variable (its join's JSON array), named after it when it has
// none; a loop over loop_outputs loops over them. Before any loop (or in
// the first loop's own texts) nothing sets it, as in PraisonAI.
func TestLoopOutputs(t *testing.T) {
	src := `variables: {xs: [p, q]}
agents:
  a: {role: A, llm: m}
steps:
  - {agent: a, action: "Before {{loop_outputs}}"}
  - {name: each, agent: a, action: "Do {{item}} {{loop_outputs}}", loop: {over: xs}}
  - {agent: a, action: "All {{loop_outputs}}", expected_output: "{{ loop_outputs.x }}"}
  - {name: again, agent: a, action: "Redo {{item}}", loop: {over: loop_outputs}, output_variable: redone}
  - {agent: a, action: "Then {{loop_outputs}}"}
`
	team, err := Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range team.Tasks {
		over := ""
		if tk.Foreach != nil {
			over = tk.Foreach.Over
		}
		got = append(got, fmt.Sprintf("%s %s|%s over %s -> %s", tk.Name, tk.Description, tk.ExpectedOutput, over, tk.OutputVariable))
	}
	want := []string{
		"step_1 Before {{loop_outputs}}| over  -> ",
		"each Do {{item}} {{loop_outputs}}| over xs -> each_loop_outputs",
		"step_3 All {{each_loop_outputs}}|{{each_loop_outputs.x}} over  -> ",
		"again Redo {{item}}| over each_loop_outputs -> redone",
		"step_5 Then {{redone}}| over  -> ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var undefined []string
	for _, d := range team.UndefinedPlaceholders(nil) {
		undefined = append(undefined, d.Path)
		if !strings.Contains(d.Message, "; PraisonAI sets it once a loop step is done, for the steps after it") {
			t.Errorf("the warning does not say where PraisonAI sets it: %s", d.Message)
		}
	}
	if !slices.Equal(undefined, []string{"steps[0].action", "steps[1].action"}) {
		t.Errorf("undefined placeholders in %q", undefined)
	}
	// The second loop's items are the first's outputs.
	x, err := team.ExpandWith(team.InitialState(nil), map[string]any{"each_loop_outputs": `["P","Q"]`})
	if err != nil {
		t.Fatal(err)
	}
	if i := x.TaskIndex("again[1]"); i < 0 || x.Render(x.Tasks[i].Description, x.Tasks[i].Scope(nil)) != "Redo Q" {
		t.Errorf("tasks %v", x.TaskNames())
	}
}

// TestIfConditionBindings: an if condition reads the variables PraisonAI
// binds as a workflow runs as a step's text does ({{NAME_output}},
// {{repeat_iterations}}, {{parallel_outputs}}, {{loop_outputs}}): it
// reads the variable they are bound to, which the step it follows
// sets ({{previous_output}} reads the steps before it, defined so); a
// placeholder nothing defines is reported at the condition, by its key
// path.
func TestIfConditionBindings(t *testing.T) {
	const before = `variables: {xs: [p]}
agents:
  a: {role: A, llm: m}
steps:
  - {name: draft, agent: a, action: Write, repeat: {until: done, max_iterations: 2}, output_variable: notes}
  - {name: each, agent: a, action: "{{item}}", loop: {over: xs}}
  - name: fan
    parallel: [{agent: a, action: X}, {agent: a, action: Y}]
  - name: check
    if: {condition: "%s", then: [{agent: a, action: yes}]}
`
	tests := []struct {
		cond    string
		env     string // the variable the condition reads
		context []string
		warning string // the one undefined placeholder's place and path
	}{
		{"{{draft_output}} contains done", "notes", []string{"fan_1", "fan_2"}, ""},
		{"{{repeat_iterations}} >= 2", "draft_repeat_iterations", []string{"fan_1", "fan_2"}, ""},
		{"{{loop_outputs}} contains p", "each_loop_outputs", []string{"fan_1", "fan_2"}, ""},
		{"{{parallel_outputs}} contains X", "fan_parallel_outputs", []string{"fan_1", "fan_2", "fan"}, ""},
		{"{{score}} > 1", "score", []string{"fan_1", "fan_2"}, "s.yaml:10:22: steps[3].if.condition"},
		{"{{previous_output}} contains X", "previous_output", []string{"fan_1", "fan_2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(fmt.Sprintf(before, tt.cond)))
			if err != nil {
				t.Fatal(err)
			}
			if a := team.Agent("if:check"); a == nil || a.Decides == nil || a.Decides.If.Left.Var != tt.env ||
				!slices.Equal(a.Decides.Prev, []string{"fan_1", "fan_2"}) {
				t.Errorf("the condition does not read %s (and previous_output fan_1, fan_2): %+v", tt.env, a)
			}
			if i := team.TaskIndex("check"); i < 0 || !slices.Equal(team.Tasks[i].Context, tt.context) {
				t.Errorf("check reads %q, want %q", team.Tasks[i].Context, tt.context)
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(nil) {
				said = append(said, fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Path))
			}
			if strings.Join(said, "\n") != tt.warning {
				t.Errorf("warnings %q, want %q", said, tt.warning)
			}
		})
	}
}

// {{previous_output}} in a step with no output before it (the first, or the
// first of a parallel that opens the file) stays as written, as PraisonAI
// sends it, with a warning; a later step's points at the context teamrun
// appends.
func TestFirstStepPreviousOutput(t *testing.T) {
	team, err := Parse("p.yaml", []byte(`agents:
  a: {role: A, llm: m}
steps:
  - parallel:
      - {agent: a, action: "{{previous_output}} one"}
      - {agent: a, action: "two", expected_output: "{{previous_output}}"}
  - {agent: a, action: "Sum {{previous_output}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range team.Tasks {
		if tk.Agent == "a" {
			got = append(got, tk.Description+" / "+tk.ExpectedOutput)
		}
	}
	want := []string{"{{previous_output}} one / ", "two / {{previous_output}}", "Sum the previous step's output (below) / "}
	if !slices.Equal(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
	if n := len(team.UndefinedPlaceholders(nil)); n != 2 {
		t.Errorf("%d warnings, want 2 (one per first-step {{previous_output}}): %v", n, team.UndefinedPlaceholders(nil))
	}
}

// A step without action is given what PraisonAI gives it, in a parallel
// that opens the file too: the first the input, a later one
// {{previous_output}}, which nothing sets there, so it is sent as written
// with a warning saying to write the action, as a first step's
// {{previous_output}} is; it was refused as missing its action.
func TestParallelFirstWithoutAction(t *testing.T) {
	const head = "agents:\n  a: {role: A, llm: m}\n  c: {role: C, llm: m}\n"
	tests := []struct {
		name, src string
		vars      map[string]string // --var
		texts     []string          // as sent
		warned    []string
	}{
		{"with input", "input: cars\n" + head + "steps:\n  - name: research\n    parallel:\n      - {agent: a, action: \"Market of {{input}}\"}\n      - agent: c\n",
			nil, []string{"Market of cars", "{{previous_output}}"},
			[]string{"p.yaml:9:9: steps[0].parallel[1]: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; the step has no action:, and PraisonAI sends a later step of a parallel that opens the file {{previous_output}}, which nothing sets there: write the step's action; known: date, input, month, now, timestamp, today, uuid, year"}},
		{"without input", head + "steps:\n  - parallel:\n      - agent: a\n      - agent: c\n",
			nil, []string{"{{input}}", "{{previous_output}}"},
			[]string{"p.yaml:6:9: steps[0].parallel[0]: {{input}}: nothing defines input", "p.yaml:7:9: steps[0].parallel[1]: {{previous_output}}: nothing defines previous_output"}},
		// Its first step is given the input, as with input:, when --var
		// gives it; else it carries on from the step before, warned about.
		{"later in the file", head + "steps:\n  - {agent: a, action: intro}\n  - parallel:\n      - agent: a\n      - agent: c\n",
			nil, []string{"intro", carryOn, carryOn},
			[]string{`p.yaml:7:9: steps[1].parallel[0]: {{input}}: nothing defines input (variables:, an output_variable or --var input=VALUE), so the step, which has no action:, is sent "Carry on from the previous step's output." instead; it is the workflow's input`}},
		{"later in the file, --var input", head + "steps:\n  - {agent: a, action: intro}\n  - parallel:\n      - agent: a\n      - agent: c\n",
			map[string]string{"input": "cars"}, []string{"intro", "cars", carryOn}, nil},
		{"a loop", "variables: {xs: [1, 2]}\n" + head + "steps:\n  - parallel:\n      - {agent: a, action: go}\n      - {agent: c, loop: {over: xs}}\n",
			nil, []string{"go", "{{item}}"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			state := team.InitialState(tt.vars)
			var texts []string
			for _, tk := range team.Tasks {
				if tk.Agent == "a" || tk.Agent == "c" {
					texts = append(texts, team.RenderTask(tk, DescriptionText, state))
				}
			}
			if !slices.Equal(texts, tt.texts) {
				t.Errorf("texts %q, want %q", texts, tt.texts)
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(state) {
				said = append(said, d.String())
			}
			ok := len(said) == len(tt.warned)
			for i := range min(len(said), len(tt.warned)) {
				ok = ok && strings.HasPrefix(said[i], tt.warned[i])
			}
			if !ok {
				t.Errorf("warnings:\n%s\nwant, starting:\n%s", strings.Join(said, "\n"), strings.Join(tt.warned, "\n"))
			}
		})
	}
}

// The first step of a parallel that has no action is recorded (TaskDefs,
// from the starting state) as it is sent (RenderTask, from the live state,
// where an earlier step's output_variable may have set input): its
// recorded text renders, in the live state, to what is sent.
func TestFirstStepInputRecordedAsSent(t *testing.T) {
	const head = "agents:\n  a: {role: A, llm: m}\n  c: {role: C, llm: m}\n"
	const fan = "  - parallel:\n      - agent: a\n      - agent: c\n"
	tests := []struct {
		name, src string
		vars      map[string]string // --var
		sent      string            // fan's first step, input set to "OUT" as it runs
	}{
		{"input:", "input: cars\n" + head + "steps:\n  - {agent: a, action: intro}\n" + fan, nil, "cars"},
		{"--var input", head + "steps:\n  - {agent: a, action: intro}\n" + fan, map[string]string{"input": "cars"}, "cars"},
		{"output_variable: input", head + "steps:\n  - {agent: a, action: intro, output_variable: input}\n" + fan, nil, "OUT"},
		{"nothing", head + "steps:\n  - {agent: a, action: intro}\n" + fan, nil, carryOn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			state := team.InitialState(tt.vars)
			defs := team.TaskDefs(state)
			live := maps.Clone(state)
			if team.Tasks[0].OutputVariable != "" {
				live[team.Tasks[0].OutputVariable] = "OUT"
			}
			tk := team.Tasks[1]
			sent := team.RenderTask(tk, DescriptionText, live)
			if sent != tt.sent {
				t.Errorf("sent %q, want %q", sent, tt.sent)
			}
			if got := team.Render(defs[1].Description, live); got != sent {
				t.Errorf("recorded %q, which renders to %q; sent %q", defs[1].Description, got, sent)
			}
		})
	}
}

// Step shapes that cannot run as written are refused naming the key and
// what to write: a route label that every output (or none) would pick, an
// empty parallel or steps list, an agent's name where a step goes.
func TestStepShapesRefused(t *testing.T) {
	const head = "llm: m\nagents:\n  c: {role: C}\n  x: {role: X}\n"
	for _, tt := range []struct{ name, steps, want string }{
		{"an empty route label", "steps:\n  - {agent: c, action: classify}\n  - route: {\"\": [x], default: [c]}\n",
			`a.yaml:7:13: steps[1].route.: expected a label to find in the output, got "": a word or words, without a space at either end or a line break`},
		{"a route label with a space at its end", "steps:\n  - {agent: c, action: classify}\n  - route: {\"yes \": [x]}\n",
			`a.yaml:7:13: "steps[1].route.yes ": expected a label to find in the output, got "yes "`},
		{"a route label with a line break", "steps:\n  - {agent: c, action: classify}\n  - route: {\"yes\\nno\": [x]}\n",
			`a.yaml:7:13: "steps[1].route.yes\nno": expected a label to find in the output, got "yes\nno"`},
		{"route labels alike but for case", "steps:\n  - {agent: c, action: classify}\n  - route:\n      Yes: [x]\n      yes: [c]\n",
			`a.yaml:9:7: steps[1].route.yes: label "yes" is label "Yes" (line 8) but for case, and labels are found ignoring case, so only the first could ever be picked: keep one`},
		{"a route label holding an earlier one", "steps:\n  - {agent: c, action: classify}\n  - route:\n      no: [x]\n      No Way: [c]\n",
			`a.yaml:9:7: steps[1].route.No Way: label "No Way" holds label "no" (line 8) as a word, so an output that holds it holds that one too, which comes first and is picked: it could never be picked; put it before "no"`},
		{"route labels alike but for case, beyond ASCII", "steps:\n  - {agent: c, action: classify}\n  - route:\n      ÉTÉ: [x]\n      été: [c]\n",
			`a.yaml:9:7: steps[1].route.été: label "été" is label "ÉTÉ" (line 8) but for case`},
		{"an empty parallel", "steps:\n  - parallel: []\n",
			`a.yaml:6:15: steps[0].parallel: expected a list of steps to run at once, got an empty list`},
		{"no steps", "steps: []\n",
			`a.yaml:5:8: steps: the workflow has no steps: list at least one, such as - {agent: NAME, action: TEXT}`},
		{"an agent's name as a step", "steps:\n  - {agent: c, action: a}\n  - if: {condition: \"{{previous_output}}\", then: [x]}\n",
			`a.yaml:7:51: steps[1].if.then[0]: expected a step (a mapping with agent and action), got string "x": write {agent: x} to run that agent`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(head+tt.steps))
			var l ErrorList
			if !errors.As(err, &l) || !strings.HasPrefix(l[0].String(), tt.want) {
				t.Fatalf("got\n%v\nwant first\n%s", err, tt.want)
			}
		})
	}
}

// A loop step's output_file is written once, by its join, with the array
// of the items' answers: a {{item}} (or {{loop_index}}) in it, which the
// loop defines, is said to have no value there, not that nothing defines
// it; another name nothing defines is said as such.
func TestLoopOutputFileItem(t *testing.T) {
	team, err := Parse("l.yaml", []byte(`variables: {topics: [alpha, beta]}
agents: {c: {role: C, goal: gc, instructions: ic}}
steps:
  - name: each
    agent: c
    action: "Write {{item}}"
    loop: {over: topics}
    output_file: "out/{{item}}-{{loop_index}}-{{nope}}.md"
`))
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, w := range team.Warnings {
		said = append(said, w.String())
	}
	want := []string{
		"l.yaml:8:18: steps[0].output_file: {{item}}: a loop step's output_file is written once, when its items are done, with the JSON array of their answers, so {{item}} has no value there and the file's name keeps it as written: name one file for the whole loop",
		"l.yaml:8:18: steps[0].output_file: {{loop_index}}: a loop step's output_file is written once, when its items are done, with the JSON array of their answers, so {{loop_index}} has no value there and the file's name keeps it as written: name one file for the whole loop",
	}
	if !slices.Equal(said, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(want, "\n"))
	}
	var undefined []string
	for _, d := range team.UndefinedPlaceholders(nil) {
		undefined = append(undefined, d.Message)
	}
	if len(undefined) != 1 || !strings.HasPrefix(undefined[0], "{{nope}}: nothing defines nope") {
		t.Errorf("undefined placeholders %q, want {{nope}}'s only", undefined)
	}
}

// The task that passes the output on past an if without else, after the
// branches of another, reads the branch that ran: the one not taken was
// skipped and has no output, which is no failure.
func TestPassAfterBranches(t *testing.T) {
	team, err := Parse("p.yaml", []byte(`agents:
  a: {role: A, llm: m}
steps:
  - {name: first, agent: a, action: x, output_variable: v}
  - name: one
    if: {condition: "{{v}} contains y", then: [{name: yes, agent: a, action: y}], else: [{name: no, agent: a, action: n}]}
  - name: two
    if: {condition: "{{v}} contains z", then: [{name: zed, agent: a, action: z}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	pass := team.Agent("if:two_else")
	if pass == nil || team.Tasks[team.TaskIndex("two_else")].Agent != pass.Name {
		t.Fatalf("no task passes the output on past two: %v", team.TaskNames())
	}
	for _, ran := range []string{"yes", "no"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ran), []byte(ran+" output"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", pass.Shell)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TEAMRUN_CONTEXT_DIR=" + dir}
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != ran+" output" {
			t.Errorf("with %s run: passed on %q (%v), want its output", ran, out, err)
		}
	}
}

// A step teamrun refuses is one error among the file's others, which are
// all said at once (DESIGN §2), and none that only its absence causes (a
// context naming it).
func TestStepRefusalsWithOtherErrors(t *testing.T) {
	const head = "input: go\nagents:\n  w: {role: W, llm: m}\nsteps:\n"
	for _, tt := range []struct {
		name, steps string
		want        []string
	}{
		{"a loop that is no mapping", `  - {agent: w, action: "Process {{item}}", loop: people}
  - {agent: x, action: "Process {{item}}", repeat: 3}
  - {agent: w, route: nope}
`, []string{
			`a.yaml:5:44: steps[0].loop: expected a mapping such as {over: VAR}, got string "people": write loop: {over: people}`,
			`a.yaml:6:13: steps[1].agent: unknown agent "x" (known: w)`,
			`a.yaml:6:52: steps[1].repeat: expected a mapping such as {until: TEXT, max_iterations: N}, got integer 3`,
			`a.yaml:7:23: steps[2].route: expected a mapping of labels to agents, got string "nope"`,
		}},
		{"a loop over a file, then another refusal", `  - {agent: w, action: x, loop: {from_file: people.csv}}
  - {agent: w, action: y, loop: people}
`, []string{
			`a.yaml:5:34: steps[0].loop.from_file: a loop over a file (from_file) is not supported`,
			`a.yaml:6:27: steps[1].loop: expected a mapping such as {over: VAR}, got string "people"`,
		}},
		{"nested workflows", `  - {agent: w, action: a}
  - workflow: other.yaml
  - include: third.yaml
  - {agent: y, action: b}
`, []string{
			`a.yaml:6:5: steps[1].workflow: nested workflows are not supported`,
			`a.yaml:7:5: steps[2].include: nested workflows are not supported`,
			`a.yaml:8:13: steps[3].agent: unknown agent "y" (known: w)`,
		}},
		{"a refused step that another reads", `  - {name: each, agent: w, action: "Do {{item}}", loop: people}
  - {name: after, agent: w, action: "Sum", context: [each]}
  - parallel:
      - {agent: w, run: ls}
      - {agent: z, action: x}
`, []string{
			`a.yaml:5:51: steps[0].loop: expected a mapping such as {over: VAR}`,
			`a.yaml:8:20: steps[2].parallel[0].run: shell steps (run:) are not supported`,
			`a.yaml:9:17: steps[2].parallel[1].agent: unknown agent "z" (known: w)`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(head+tt.steps))
			var l ErrorList
			if !errors.As(err, &l) {
				t.Fatalf("got %v, want errors", err)
			}
			var got []string
			for _, d := range l {
				got = append(got, d.String())
			}
			ok := len(got) == len(tt.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.HasPrefix(got[i], tt.want[i])
			}
			if !ok {
				t.Errorf("got\n%s\nwant (each a line's start)\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// {{STEP_loop_outputs}} reads the outputs of the loop step STEP before
// it (its output_variable when it has one) whether or not another step
// reads {{loop_outputs}}; a variable of that name, and a text before the
// loop, keep it as written.
func TestLoopOutputsByName(t *testing.T) {
	const head = "agents:\n  a: {role: A, llm: m}\nsteps:\n"
	for _, tt := range []struct {
		name, vars, steps string
		want              []string // per task: name description over -> output_variable
	}{
		{"read by name alone", "variables: {xs: [p, q]}\n", `  - {name: per, agent: a, action: "Do {{item}}", loop: {over: xs}}
  - {name: sum, agent: a, action: "Sum up {{per_loop_outputs}}", expected_output: "{{ per_loop_outputs.x }}"}
`, []string{
			"per Do {{item}} over xs -> per_loop_outputs",
			"sum Sum up {{per_loop_outputs}}|{{per_loop_outputs.x}} over  -> ",
		}},
		{"a loop with an output_variable", "variables: {xs: [p, q]}\n", `  - {name: per, agent: a, action: "Do {{item}}", loop: {over: xs}, output_variable: done}
  - {name: sum, agent: a, action: "Sum up {{per_loop_outputs}}"}
`, []string{
			"per Do {{item}} over xs -> done",
			"sum Sum up {{done}} over  -> ",
		}},
		{"a loop over it, a name with a dash", "variables: {xs: [p, q]}\n", `  - {name: fetch-data, agent: a, action: "Do {{item}}", loop: {over: xs}}
  - {name: again, agent: a, action: "Redo {{item}}", loop: {over: fetch_data_loop_outputs}}
`, []string{
			"fetch-data Do {{item}} over xs -> fetch_data_loop_outputs",
			"again Redo {{item}} over fetch_data_loop_outputs -> ",
		}},
		{"a variable of that name", "variables: {xs: [p, q], per_loop_outputs: mine}\n", `  - {name: per, agent: a, action: "Do {{item}}", loop: {over: xs}}
  - {name: sum, agent: a, action: "Sum up {{per_loop_outputs}}"}
`, []string{
			"per Do {{item}} over xs -> ",
			"sum Sum up {{per_loop_outputs}} over  -> ",
		}},
		{"a text before the loop", "variables: {xs: [p, q]}\n", `  - {name: pre, agent: a, action: "Before {{per_loop_outputs}}"}
  - {name: per, agent: a, action: "Do {{item}}", loop: {over: xs}}
`, []string{
			"pre Before {{per_loop_outputs}} over  -> ",
			"per Do {{item}} over xs -> ",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(tt.vars+head+tt.steps))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tk := range team.Tasks {
				over, text := "", tk.Description
				if tk.Foreach != nil {
					over = tk.Foreach.Over
				}
				if tk.ExpectedOutput != "" {
					text += "|" + tk.ExpectedOutput
				}
				got = append(got, fmt.Sprintf("%s %s over %s -> %s", tk.Name, text, over, tk.OutputVariable))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// A step named as a task teamrun names itself (a route's branch, a pass,
// an unnamed step) is one error at the user's name: saying what teamrun
// names so and what to rename, whichever comes first in the file; no
// other error follows from the two names (a cycle through the route).
func TestStepNameTakenByTeamrun(t *testing.T) {
	const head = "input: go\nagents:\n  a: {role: A, llm: m}\n  c: {role: C, llm: m}\nsteps:\n"
	for _, tt := range []struct {
		name, steps string
		want        []string
	}{
		{"a route's branch, named first", `  - {name: pick_technical, agent: a, action: early}
  - {name: cls, agent: c, action: classify}
  - {name: pick, route: {technical: [a], default: [c]}}
`, []string{
			`a.yaml:6:12: steps[0].name: step name "pick_technical" is the name teamrun gives the task that runs agent a for the label "technical" of route step "pick" (line 8): rename this step`,
		}},
		{"a route's branch, named after", `  - {name: cls, agent: c, action: classify}
  - {name: pick, route: {technical: [a], default: [c]}}
  - {name: pick_technical, agent: a, action: late}
`, []string{
			`a.yaml:8:12: steps[2].name: step name "pick_technical" is the name teamrun gives the task that runs agent a for the label "technical" of route step "pick" (line 7): rename this step`,
		}},
		{"a route's pass", `  - {name: pick_default, agent: a, action: early}
  - {name: cls, agent: c, action: classify}
  - {name: pick, route: {technical: [a]}}
`, []string{
			`a.yaml:6:12: steps[0].name: step name "pick_default" is the name teamrun gives the task of route step "pick" that passes the output on when the route runs no agent (line 8): rename this step`,
		}},
		{"an if's pass", `  - {name: g_else, agent: a, action: early}
  - {name: g, if: {condition: "{{previous_output}}", then: [{agent: a, action: t}]}}
`, []string{
			`a.yaml:6:12: steps[0].name: step name "g_else" is the name teamrun gives the task of if step "g" that passes the output on when the else branch runs no step (line 7): rename this step`,
		}},
		{"an unnamed step of a parallel", `  - {name: par, parallel: [{agent: a, action: one}, {agent: c, action: two}]}
  - {name: par_1, agent: a, action: three}
`, []string{
			`a.yaml:7:12: steps[1].name: step name "par_1" is the name teamrun gives the unnamed step steps[0].parallel[0] (line 6): rename this step, or give that one a name`,
		}},
		{"an unnamed step", `  - {agent: a, action: one}
  - {name: step_1, agent: a, action: two}
`, []string{
			`a.yaml:7:12: steps[1].name: step name "step_1" is the name teamrun gives the unnamed step steps[0] (line 6): rename this step, or give that one a name`,
		}},
		{"two names the user gave", `  - {name: w, agent: a, action: one}
  - {name: w, agent: a, action: two}
`, []string{
			`a.yaml:7:5: steps[1]: duplicate step name "w" (first at line 6): give the steps different names`,
		}},
		{"two names teamrun made", `  - {name: cls, agent: c, action: classify}
  - {name: pick, route: {x: [a, c], x_2: [a]}}
`, []string{
			`a.yaml:7:43: steps[1].route.x_2[0]: teamrun gives the name "pick_x_2" to the task that runs agent c for the label "x" of route step "pick" (line 7) and to the task that runs agent a for the label "x_2" of route step "pick" (line 7): rename the step or route label one of them comes from`,
		}},
		{"a made name and an unnamed step's", `  - {name: cls, agent: c, action: classify}
  - {agent: a, action: two}
  - {name: step, route: {"2": [a]}}
`, []string{
			`a.yaml:8:32: steps[2].route.2[0]: teamrun gives the name "step_2" to the unnamed step steps[1] (line 7) and to the task that runs agent a for the label "2" of route step "step" (line 8): rename the step or route label one of them comes from, or give the unnamed step a name`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(head+tt.steps))
			var l ErrorList
			if !errors.As(err, &l) {
				t.Fatalf("got %v, want errors", err)
			}
			var got []string
			for _, d := range l {
				got = append(got, d.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestStepNameRefusedOnce: a step name that is no name is said once, at
// the step, not again for each name teamrun makes of it (a route's
// STEP_LABEL and STEP_default, a parallel's or a branch's STEP_K), which
// the user never wrote; a name made bad by a part of its own (a route
// label with a slash) is still said.
func TestStepNameRefusedOnce(t *testing.T) {
	const head = "input: go\nagents:\n  a: {role: A, llm: m}\n  c: {role: C, llm: m}\nsteps:\n"
	const bad = "expected a step name without slashes or control characters, not starting with a dot or a space, got "
	for _, tt := range []struct {
		name, steps string
		want        []string
	}{
		{"a route", `  - {agent: c, action: classify}
  - name: "lang/route"
    route: {alpha: [a], beta: [a, c], default: [c]}
`, []string{`a.yaml:7:5: steps[1]: ` + bad + `"lang/route"`}},
		{"a route without default", `  - {agent: c, action: classify}
  - {name: "lang/route", route: {alpha: [a]}}
`, []string{`a.yaml:7:5: steps[1]: ` + bad + `"lang/route"`}},
		{"a parallel", `  - {name: "p/q", parallel: [{agent: a, action: x}, {agent: c, action: y}]}
`, []string{`a.yaml:6:5: steps[0]: ` + bad + `"p/q"`}},
		{"an if", `  - name: ".if"
    if: {condition: "{{input}} == go", then: [{agent: a, action: t}]}
`, []string{`a.yaml:6:5: steps[0]: ` + bad + `".if"`}},
		{"the name twice", `  - {name: "lang/route", agent: c, action: classify}
  - {name: "lang/route", route: {alpha: [a]}}
`, []string{`a.yaml:6:5: steps[0]: ` + bad + `"lang/route"`,
			`a.yaml:7:5: steps[1]: duplicate step name "lang/route" (first at line 6): give the steps different names`}},
		{"a label with a slash", `  - {agent: c, action: classify}
  - {name: "l/r", route: {"x/y": [a]}}
`, []string{`a.yaml:7:5: steps[1]: ` + bad + `"l/r"`,
			`a.yaml:7:35: steps[1].route.x/y[0]: ` + bad + `"l/r_x/y"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", []byte(head+tt.steps))
			var l ErrorList
			if !errors.As(err, &l) {
				t.Fatalf("got %v, want errors", err)
			}
			var got []string
			for _, d := range l {
				got = append(got, d.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// A placeholder the steps' bindings made read a variable of teamrun's
// ({{repeat_iterations}} the count of the repeat before it) is sent as
// the file writes it when that variable has no value as the task runs
// (a branch not taken), never as teamrun's name for it; a value fills it.
// A text that writes teamrun's name itself keeps that.
func TestRenderTaskKeepsWritten(t *testing.T) {
	team, err := Parse("s.yaml", []byte(`variables: {xs: [p], flag: no}
agents: {a: {role: A, llm: m}}
steps:
  - {name: fetch-data, agent: a, action: get}
  - name: gate
    if:
      condition: "{{flag}} == yes"
      then:
        - {name: lp, agent: a, action: "{{item}}", loop: {over: xs}}
        - {name: rep, agent: a, action: again, repeat: {until: done, max_iterations: 2}}
        - {name: fan, parallel: [{agent: a, action: x}, {agent: a, action: y}]}
  - {name: end, agent: a, action: "{{repeat_iterations}} {{loop_outputs}} {{parallel_outputs}} {{fetch-data_output}} {{rep_output}}"}
  - {name: own, agent: a, action: "{{loop_outputs}} {{lp_loop_outputs}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	tk := team.Tasks[team.TaskIndex("end")]
	if want := "{{rep_repeat_iterations}} {{lp_loop_outputs}} {{fan_parallel_outputs}} {{fetch_data_output}} {{rep_output}}"; tk.Description != want {
		t.Fatalf("bound as %q, want %q", tk.Description, want)
	}
	tests := []struct {
		name  string
		task  string
		state map[string]any
		want  string
	}{
		{"nothing set", "end", map[string]any{}, "{{repeat_iterations}} {{loop_outputs}} {{parallel_outputs}} {{fetch-data_output}} {{rep_output}}"},
		{"all set", "end", map[string]any{"rep_repeat_iterations": 2, "lp_loop_outputs": "[1]", "fan_parallel_outputs": "[2]", "fetch_data_output": "go", "rep_output": "r"}, "2 [1] [2] go r"},
		{"teamrun's name written too", "own", map[string]any{}, "{{loop_outputs}} {{lp_loop_outputs}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := team.Tasks[team.TaskIndex(tt.task)]
			if got := team.RenderTask(tk, DescriptionText, tt.state); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// Each placeholder of a text that does not resolve is sent as that one is
// written, whichever other spelling of the same variable the text has
// ({{hi-loop_loop_outputs}} beside {{loop_outputs}}: the second was sent
// as the first); each text of a task keeps its own.
func TestRenderTaskEachAsWritten(t *testing.T) {
	team, err := Parse("s.yaml", []byte(`variables: {xs: [p], flag: no}
agents: {a: {role: A, llm: m}}
steps:
  - name: gate
    if:
      condition: "{{flag}} == yes"
      then:
        - {name: hi-loop, agent: a, action: "hi {{item}}", loop: {over: xs}}
  - {name: both, agent: a, action: "A={{hi-loop_loop_outputs}} B={{loop_outputs}}"}
  - {name: swapped, agent: a, action: "B={{ loop_outputs }} A={{hi-loop_loop_outputs}} C={{loop_outputs}}"}
  - {name: own, agent: a, action: "{{loop_outputs}} {{hi_loop_loop_outputs}} {{hi-loop_loop_outputs}}"}
  - {name: texts, agent: a, action: "{{loop_outputs}}", expected_output: "{{hi-loop_loop_outputs}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		task     string
		expected bool // the expected output, not the description
		state    map[string]any
		want     string
	}{
		{"both", "both", false, map[string]any{}, "A={{hi-loop_loop_outputs}} B={{loop_outputs}}"},
		{"the other first, spaced", "swapped", false, map[string]any{}, "B={{ loop_outputs }} A={{hi-loop_loop_outputs}} C={{loop_outputs}}"},
		{"teamrun's name written too", "own", false, map[string]any{}, "{{loop_outputs}} {{hi_loop_loop_outputs}} {{hi-loop_loop_outputs}}"},
		{"set", "swapped", false, map[string]any{"hi_loop_loop_outputs": "[1]"}, "B=[1] A=[1] C=[1]"},
		{"description", "texts", false, map[string]any{}, "{{loop_outputs}}"},
		{"expected output", "texts", true, map[string]any{}, "{{hi-loop_loop_outputs}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := team.Tasks[team.TaskIndex(tt.task)]
			w := DescriptionText
			if tt.expected {
				w = ExpectedOutputText
			}
			if got := team.RenderTask(tk, w, tt.state); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
